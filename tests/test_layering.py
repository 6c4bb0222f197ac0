"""docs/ARCHITECTURE.md layering rules: the layers point one way (no import of a higher layer, no
import cycle between modules); only cuelens/commands and cuelens/cli.py talk to the terminal or
import the commands; every module imports cleanly."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import cuelens

ROOT = Path(cuelens.__file__).parent
FRONT_END = ("commands", "cli.py")  # the only places allowed to print or use rich
FORBIDDEN_IMPORTS = ("cuelens.commands", "cuelens.cli", "rich", "typer")
PRINTING_CALLS = {"print", "input"}


def _library_files() -> list[Path]:
    return [p for p in sorted(ROOT.rglob("*.py"))
            if p.relative_to(ROOT).parts[0] not in FRONT_END]


def _violations(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN_IMPORTS):
                found.append(f"{path.relative_to(root)}:{node.lineno} imports {name}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in PRINTING_CALLS:
            found.append(f"{path.relative_to(root)}:{node.lineno} calls {node.func.id}()")
        if isinstance(node, ast.Attribute) and node.attr in {"stdout", "stderr"} \
                and isinstance(node.value, ast.Name) and node.value.id == "sys":
            found.append(f"{path.relative_to(root)}:{node.lineno} uses sys.{node.attr}")
    return found


def test_library_never_prints_nor_imports_the_front_end():
    files = _library_files()
    assert len(files) > 50 and not any("commands" in p.parts for p in files)
    problems = [v for path in files for v in _violations(path)]
    assert problems == []


def test_the_checker_catches_violations(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nfrom rich.console import Console\nimport cuelens.commands.scan\n"
                   "def f():\n    print('x')\n    sys.stdout.write('y')\n")
    assert len(_violations(bad, root=tmp_path)) == 4


# ------------------------------------------------------------------------------ layer order
# docs/ARCHITECTURE.md "Layers", lowest first. A module may import modules of its own layer or of
# a lower one, never of a higher one. A name covers the module and, for a package, everything in
# it; the most specific name decides. The root package (cuelens/__init__.py: the lazy public API)
# sits with api.py.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # errors, atomic files, output-path rules, JSON text, Markdown text, registries, the version,
    # counts in sentences
    ("base", ("cuelens.errors", "cuelens.atomic", "cuelens.outputs", "cuelens.jsonio",
              "cuelens.markdown", "cuelens.registry", "cuelens.version", "cuelens.wording")),
    # the columns: readers, records → splits, compact splits, chunks, word segmenters, token
    # sequences and their encoder, text keys
    ("columns", ("cuelens.data", "cuelens.engine", "cuelens.audit.tokenize",
                 "cuelens.audit.segmenters", "cuelens.audit.counts", "cuelens.audit.text_keys")),
    # results.json: its schema, validation and writer
    ("results", ("cuelens.reports.schema", "cuelens.audit.results",
                 "cuelens.audit.scan_outputs")),
    # the analyses, ordered among themselves: the one place that loads models; language-model
    # scorers; the dataset statistics; perturbation operators; model probes; from audit to fix
    ("models", ("cuelens.models",)),
    ("lm", ("cuelens.lm",)),
    ("audit", ("cuelens.audit",)),
    ("augment", ("cuelens.augment",)),
    ("probes", ("cuelens.probes",)),
    ("mitigate", ("cuelens.mitigate",)),
    ("views", ("cuelens.frames", "cuelens.reports")),
    # the API and the result objects it returns (views and report on the statistics' results)
    ("api", ("cuelens.api", "cuelens.results", "cuelens")),
    ("front", ("cuelens.commands", "cuelens.cli")),
]


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module → the package modules it imports anywhere in its code (module level, inside
    functions, under ``TYPE_CHECKING``). ``from pkg import name`` points at ``pkg.name`` when that
    is a module, else at ``pkg``; an import of ``a.b.c`` that is no module points at ``a.b``."""
    files = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}

    def resolve(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets: list[str] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parent + ([base] if base else []))
                targets += [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base
                            for a in node.names]
        graph[module] = {t for name in targets if name.split(".")[0] == root.name
                         and (t := resolve(name)) is not None and t != module}
    return graph


def layer_of(module: str, layers=LAYERS) -> int:
    """Index of ``module``'s layer: the layer naming it, or the package nearest to it."""
    best, where = -1, None
    for index, (_, names) in enumerate(layers):
        for name in names:
            covers = module == name or (module.startswith(name + ".") and "." in name)
            if covers and len(name) > best:
                best, where = len(name), index
    if where is None:
        raise AssertionError(f"{module} is in no layer of LAYERS (docs/ARCHITECTURE.md)")
    return where


def upward_imports(graph: dict[str, set[str]], layers=LAYERS) -> set[tuple[str, str]]:
    return {(a, b) for a, targets in graph.items() for b in targets
            if layer_of(b, layers) > layer_of(a, layers)}


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_a_higher_layer():
    graph = import_graph()
    assert len(graph) > 150 and "cuelens.engine.chunks" in graph["cuelens.audit.streamed_hygiene"]
    upward = sorted(upward_imports(graph))
    assert upward == [], "imports of a higher layer (docs/ARCHITECTURE.md):\n" + "\n".join(
        f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})" for a, b in upward)


def test_the_analyses_are_ordered_among_themselves():
    """mitigate sits above audit, probes and models (models never import mitigate: no
    models ↔ mitigate loop); the more specific column and result modules inside audit stay low."""
    order = [layer_of(f"cuelens.{name}.x") for name in
             ("models", "lm", "audit", "augment", "probes", "mitigate")]
    assert order == sorted(order) and len(set(order)) == 6
    assert layer_of("cuelens.audit.counts") < layer_of("cuelens.audit.results") \
        < layer_of("cuelens.models.hub")


def test_no_import_cycles_between_modules():
    assert [sorted(c) for c in cycles(import_graph())] == [], "import cycles"


def test_the_layer_checker_catches_upward_imports_and_cycles(tmp_path):
    package = tmp_path / "pkg"
    (package / "low").mkdir(parents=True)
    files = {"__init__.py": "", "low/__init__.py": "", "top.py": "import pkg.low.a\n",
             "low/a.py": "from . import b\n",
             "low/b.py": "def f():\n    from pkg.low.a import g\n    from pkg import top\n"}
    for name, text in files.items():
        (package / name).write_text(text)
    graph = import_graph(package)
    assert graph == {"pkg": set(), "pkg.low": set(), "pkg.top": {"pkg.low.a"},
                     "pkg.low.a": {"pkg.low.b"}, "pkg.low.b": {"pkg.low.a", "pkg.top"}}
    layers = [("low", ("pkg.low",)), ("top", ("pkg.top", "pkg"))]
    assert upward_imports(graph, layers) == {("pkg.low.b", "pkg.top")}
    assert cycles(graph) == [frozenset({"pkg.top", "pkg.low.a", "pkg.low.b"})]


@pytest.mark.slow
def test_every_module_imports():
    """Import every module under cuelens (no import-time side effects needed, none failing)."""
    names = [m.name for m in pkgutil.walk_packages(cuelens.__path__, "cuelens.")]
    assert len(names) > 60
    for name in names:
        importlib.import_module(name)



def test_architecture_tree_names_every_module_and_package():
    """docs/ARCHITECTURE.md's tree of cuelens/ names every module (its file name without .py,
    or its path) and every package it names exists: it had drifted (cue_change, ruler, the
    commands' modules missing)."""
    import re

    doc = (ROOT.parent / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    tree = doc.split("```")[1]
    words = set(re.findall(r"\w+", tree))
    unnamed = [str(p.relative_to(ROOT)) for p in sorted(ROOT.rglob("*.py"))
               if p.stem != "__init__" and p.stem not in words]
    assert unnamed == [], "modules docs/ARCHITECTURE.md does not name"
    named = re.findall(r"^  (\w+)/ ", tree, flags=re.M)
    assert named and [n for n in named if not (ROOT / n).is_dir()] == []
