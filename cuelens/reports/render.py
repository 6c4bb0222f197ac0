"""Render a results file to one self-contained HTML report (docs/methods.md §10; the safety model
for untrusted dataset text: docs/report.md, "Security model")."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from cuelens.audit.results import DatasetSummary, typed_reads
from cuelens.data.dataset import Task
from cuelens.data.display import shown
from cuelens.data.preference import PREFERENCE_TASK
from cuelens.atomic import atomic_write_text
from cuelens.outputs import check_outputs
from cuelens.reports.glossary import GLOSSARY
from cuelens.reports.options import ReportOptions
from cuelens.reports.schema import validate_results
from cuelens.reports.section import pct
from cuelens.reports.text import isolated
from cuelens.wording import plural

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                 "\u2029": "\\u2029"}
_JSON_ESCAPE_TABLE = str.maketrans(_JSON_ESCAPES)


def script_json(obj) -> str:
    """JSON text that is inert inside an HTML ``<script>`` element (no ``<``, ``>``, ``&``,
    U+2028/U+2029 characters; each is written as its ``\\uXXXX`` escape)."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.translate(_JSON_ESCAPE_TABLE)


def _asset(name: str) -> str:
    return resources.files("cuelens.reports").joinpath("templates").joinpath(name).read_text(
        "utf-8")


#: What would end an inline ``<script>`` element (HTML compares tag names ASCII case-insensitively).
_SCRIPT_END = re.compile("</script", re.IGNORECASE | re.ASCII)


@functools.cache
def _plotly_js() -> str:
    """The installed plotly.js bundle (4.8 MB), read and checked once per process."""
    from plotly.offline import get_plotlyjs

    js = get_plotlyjs()
    if _SCRIPT_END.search(js):  # cannot happen with the shipped bundle; never emit broken HTML
        raise RuntimeError("the installed plotly.js bundle contains '</script'")
    return js


def plotly_file_name() -> str:
    """``plotly-<version>.min.js``: the file ``--plotly directory`` writes next to the page."""
    from plotly.offline import get_plotlyjs_version

    return f"plotly-{get_plotlyjs_version()}.min.js"


def plotly_cdn_url() -> str:
    return f"https://cdn.plot.ly/{plotly_file_name()}"


@functools.lru_cache(maxsize=4)  # the plotly.js bundle's hash once per process
def _sha256(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode() + "'"


@functools.cache
def _environment():
    """The report's Jinja2 environment, built once per process: its templates compile once."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("cuelens.reports", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = pct
    env.filters["num"] = lambda x: "n/a" if x is None else f"{x:,}"
    env.filters["shown"] = shown  # a dataset string named in a table: cut to 60 characters
    env.filters["plural"] = plural
    env.filters["isolated"] = isolated  # a sentence naming dataset text: its words in <bdi>
    env.globals["glossary"] = GLOSSARY
    return env


@typed_reads()
def render_html(results: dict, options: ReportOptions | None = None) -> str:
    """The report's HTML text for an already validated results dict. plotly.js is embedded,
    linked from the CDN or from :func:`plotly_file_name` next to the page (``options.plotly``);
    a page without figures carries no plotly.js at all."""
    from cuelens.reports.pages import build_sections

    options = options or ReportOptions()
    sections = build_sections(results, options)
    data: dict = {"figures": {}}
    for sec in sections:
        data.update(sec.client)
        data["figures"].update({fig.id: fig.spec for fig in sec.figures.values()})
    app_js = _asset("report.js")
    plotly_js, plotly_src, sources = None, None, [_sha256(app_js)]
    if data["figures"] and options.plotly == "inline":
        plotly_js = _plotly_js()
        sources.append(_sha256(plotly_js))
    elif data["figures"]:
        plotly_src = plotly_cdn_url() if options.plotly == "cdn" else plotly_file_name()
        # a file next to the page: Chromium matches file: URLs by scheme only
        sources.append(plotly_src if options.plotly == "cdn" else "file:")
    csp = ("default-src 'none'; img-src data: blob:; style-src 'unsafe-inline'; "
           f"script-src {' '.join(sources)}; base-uri 'none'; form-action 'none'")
    return _environment().get_template("report.html.j2").render(
        results=results, sections=sections, data_json=script_json(data), css=_asset("report.css"),
        plotly_js=plotly_js, plotly_src=plotly_src, app_js=app_js, csp=csp,
        title=title(results), brand=brand(results), subtitle=subtitle(results))


# Page titles of the result kinds without a dataset (docs/results-schema.md).
KIND_TITLES = {"score_pairs": "language-model comparison",
               "contrast_judge": "model–human consistency on controversial pairs",
               "contrast_pairs": "controversial sentence pairs",
               "compare": "comparison of two scans"}


def title(results: dict) -> str:
    """The page title: the probed model on the dataset for a probe, else the dataset's name,
    else the file the result reads (a judge log), else what the result kind is about."""
    data = DatasetSummary.in_results(results)
    name = data.name if data is not None else None
    for key, how in (("probe", ""), ("llm_probe", " (prompted)")):
        model = ((results.get(key) or {}).get("model") or {}).get("name")
        if model:
            return f"{model}{how} on {name}" if name else f"{model}{how}"
    return name or results.get("file") or KIND_TITLES.get(str(results.get("kind")), "dataset")


def brand(results: dict) -> str:
    """The line above the title: which kind of report this is."""
    if results.get("probe"):
        return "cuelens model probe report"
    if results.get("llm_probe"):
        return "cuelens LLM probe report"
    return "cuelens scan report" if DatasetSummary.in_results(results) else "cuelens report"


def subtitle(results: dict) -> list[str]:
    """The header's facts: task, labels, tool and schema version."""
    parts = []
    ds = DatasetSummary.in_results(results)
    if ds:
        task = "pair classification (NLI)"
        if ds.task == Task.MCQ:
            task = f"multiple choice ({plural(ds.n_choices, 'choice')})" if ds.n_choices else \
                "multiple choice"
        elif ds.task == PREFERENCE_TASK:
            task = "preference pairs (a prompt, a chosen and a rejected response)"
        parts += [task, "labels: " + ", ".join(ds.label_names)]
    tool = results.get("tool")
    if tool:
        parts.append(f"{tool['name']} {tool['version']}")
    if results.get("schema_version"):
        parts.append(f"results schema {results['schema_version']}")
    return parts


def render_report(results: dict, out_path: str | os.PathLike, *,
                  inputs: Iterable[str | os.PathLike] = (), source: str | None = None,
                  options: ReportOptions | None = None, validate: bool = True) -> Path:
    """Validate ``results`` (``validate=False``: results this process has just built;
    docs/report.md, "Validation"), render it and write the HTML atomically to ``out_path``
    (``--plotly directory``: plotly.js beside it when missing), never over a path in ``inputs``."""
    options = options or ReportOptions()
    out = Path(out_path)
    script = out.parent / plotly_file_name()
    inputs = list(inputs)
    check_outputs([out, script] if options.plotly == "directory" else [out], inputs)
    if validate:
        validate_results(results, source=source)
    page = render_html(results, options)
    if options.plotly == "directory" and not script.exists():
        atomic_write_text(script, _plotly_js())
    atomic_write_text(out, page)
    return out
