"""Assemble and write a scan's outputs (docs/results-schema.md).

``results.json`` is deterministic (same inputs and seed → identical bytes); run metadata
(timestamp, durations, command line, versions, input paths) goes to ``run.json``. Every file is
streamed into a temporary renamed at the end (:func:`cuelens.atomic.atomic_open`, together inside
:func:`cuelens.atomic.output_set`), so a failed run leaves no partial results.
"""

from __future__ import annotations

import csv
import platform
import sys
import time
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from cuelens.errors import UserError
from cuelens.atomic import atomic_open, atomic_open_text
from cuelens.jsonio import write_json
from cuelens.outputs import check_outputs
from cuelens.version import __version__

SCHEMA_VERSION = "1.0"


class Section:
    """A results.json section as a dataclass (docs/results-schema.md): its fields in the file's
    key order, ``None`` ones absent from it; its repr one line per field, never the rows."""

    key: typing.ClassVar[str] = ""  # the section's results.json key (a top-level one)

    def to_json(self) -> dict:
        """The section as results.json holds it (its lists and dicts shared, not copied)."""
        return {key: value.to_json() if isinstance(value, Section) else value
                for key, value in vars(self).items() if value is not None}

    @classmethod
    def from_json(cls: type[S], data: dict) -> S:
        """The section of a results.json content (keys it does not know left out; a nested
        section read by its own ``from_json``)."""
        hints = typing.get_type_hints(cls)
        parts = {f.name: _read(hints[f.name], data[f.name], f.name)
                 for f in fields(cls) if f.name in data}  # type: ignore[arg-type]
        try:
            return cls(**parts)
        except TypeError as error:  # its keys are another cuelens version's
            raise UserError(f"this results.json is not one this version writes ({error}): "
                            "scan the data again") from error

    @classmethod
    def in_results(cls: type[S], results: dict) -> S | None:
        """This section (results.json key :attr:`key`) of a results.json content; ``None``
        when the file has none (or an empty one)."""
        data = results.get(cls.key)
        return cls.from_json(data) if data else None

    def __repr__(self) -> str:  # bounded: one line per field, never the rows (MBs on SNLI)
        lines = [f"  {key}={_brief(value)}," for key, value in vars(self).items()
                 if value is not None]
        return "\n".join([f"{type(self).__name__}(", *lines, ")"])


S = typing.TypeVar("S", bound=Section)


def _read(hint: object, value: object, name: str) -> object:
    """``value`` as the field typed ``hint`` holds it: a nested :class:`Section` read from its
    dict, anything else as it is."""
    kinds = typing.get_args(hint) or (hint,)
    section = next((k for k in kinds if isinstance(k, type) and issubclass(k, Section)), None)
    if section is None or value is None:
        return value
    if not isinstance(value, dict):
        raise UserError(f"the {name} section of this results.json is not an object: scan the "
                        "data again")
    return section.from_json(value)


def _brief(value: object) -> str:
    """One short line for a field's value: a nested section's name, a list's length, a dict's
    first keys, a scalar (shortened)."""
    if isinstance(value, Section):
        return f"{type(value).__name__}(…)"
    if isinstance(value, list):
        return f"[{len(value)} item{'s' * (len(value) != 1)}]"
    if isinstance(value, dict):
        keys = list(value)
        return "{" + ", ".join(map(repr, keys[:4])) + (", …" if len(keys) > 4 else "") + "}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"


@dataclass(frozen=True, repr=False)
class LeakageSection(Section):
    """``leakage``: the metric × aggregator table, its headline ``best`` and verdict, the
    baselines and the fold groups."""

    key: typing.ClassVar[str] = "leakage"

    majority: float
    table: list[dict]
    best: dict
    flagged: bool
    verdict: str
    baselines: list[dict]
    baseline: dict
    selection: dict
    interval_note: str | None = None
    fold_seed_D: list[float] | None = None
    groups: dict | None = None


@dataclass(frozen=True, kw_only=True, repr=False)
class EasyHardSection(Section):
    """``easy_hard`` (docs/methods.md §4): how many evaluated items the headline cue-only
    classifier answers (easy) in most repetitions, under which folds and model; the settings
    ``None`` in hand-made or older files."""

    key: typing.ClassVar[str] = "easy_hard"

    easy: int
    hard: int
    hard_fraction: float | None = None
    folds: int | None = None
    iterations: int | None = None
    seed: int | None = None
    metric: str | None = None
    aggregator: str | None = None
    split: str | None = None
    # the headline's accuracy interval covers the majority baseline: the split separates
    # lucky from unlucky items, not cue-bearing from clean ones
    chance_level: bool | None = None

    @property
    def easy_share(self) -> float | None:
        """The easy items' share of the evaluated ones (None: no item)."""
        total = self.easy + self.hard
        return self.easy / total if total else None


@dataclass(frozen=True, kw_only=True, repr=False)
class PreferenceSection(Section):
    """``preference`` (docs/preference.md): the records' shape and, per split role, its pair
    counts, the length/formatting/position shortcut rows (Holm-adjusted) and the pair
    checks (the settings ``None`` in hand-made files)."""

    key: typing.ClassVar[str] = "preference"

    shape: str | None = None
    correction: str | None = None
    alpha: float | None = None
    splits: dict[str, dict]

    @property
    def rows(self) -> list[tuple[str, dict]]:
        """Every shortcut row with its split role, in split order."""
        return [(role, row) for role, split in self.splits.items() for row in split["shortcuts"]]


@dataclass(frozen=True, kw_only=True, repr=False)
class SubsetsSection(Section):
    """``subsets`` (docs/methods.md §16): the subset × shortcut table, Holm-adjusted, with each
    subset's own word-cue leakage (``small``: the subsets too small for one) and the subset
    names rewritten to their normal form."""

    key: typing.ClassVar[str] = "subsets"

    field: str
    measure: str
    correction: str
    alpha: float
    n_tests: int
    shortcuts: list[str]
    overall: dict[str, dict]
    rows: list[dict]
    small: dict | None = None
    rewritten: list[dict] | None = None


@dataclass(frozen=True, kw_only=True, repr=False)
class ScanSections(Section):
    """A scan's whole results.json, built once from all its sections (``None``: not computed,
    e.g. no word-cue statistics for MCQ items with varying numbers of choices)."""

    schema_version: str = SCHEMA_VERSION
    tool: dict = field(default_factory=lambda: {"name": "cuelens", "version": __version__})
    config: dict
    dataset: dict
    conclusion: dict | None = None
    segmentation: dict | None = None  # the segmenter used and why (cuelens.audit.segmenters)
    warnings: list[str] | None = None  # e.g. text that looks unsegmented (docs/languages.md)
    hygiene: dict | None = None
    cues: list[dict] | None = None
    cue_stats: dict | None = None
    cue_finding: dict | None = None
    leakage: LeakageSection | None = None
    mcq_baselines: dict | None = None
    easy_hard: EasyHardSection | None = None
    examples: dict | None = None
    features: list[dict] | None = None
    features_config: dict | None = None
    lengths: dict | None = None
    notes: list[str] | None = None
    next_steps: list | None = None
    preference: PreferenceSection | None = None
    subsets: SubsetsSection | None = None

    def advised(self, conclusion: Callable[[dict], dict],
                next_steps: Callable[[dict], list]) -> ScanSections:
        """These sections with their ``conclusion`` and then their ``next_steps`` computed from
        every other section (:func:`cuelens.audit.advice.advise`): call it once the last
        section is in."""
        bare = replace(self, conclusion=None, next_steps=None)
        concluded = replace(bare, conclusion=conclusion(bare.to_json()))
        return replace(concluded, next_steps=next_steps(concluded.to_json()))


@dataclass(frozen=True, kw_only=True, repr=False)
class ProbeSection(Section):
    """``probe`` (docs/methods.md §6–7): the model, its accuracy and the cue tests, built by
    :func:`cuelens.probes.sections.probe_section` (``None``: not computed, or a file of an
    older version)."""

    key: typing.ClassVar[str] = "probe"

    model: dict = field(default_factory=dict)
    accuracy: float | None = None
    sanity: dict | None = None
    cue_selection: dict | None = None
    accuracy_test: dict | None = None
    distribution_test: dict | None = None
    easy_hard: dict | None = None
    data_map: dict | None = None
    short_circuit: dict | None = None
    position_bias: dict | None = None

    @property
    def tested_cues(self) -> list[dict]:
        """The rows of the accuracy test (ΔAcc per cue)."""
        return (self.accuracy_test or {}).get("cues", [])


@dataclass(frozen=True, kw_only=True, repr=False)
class LLMProbeSection(Section):
    """``llm_probe`` (docs/llm-probe.md): the language model, one entry per prompt template
    (:class:`cuelens.probes.llm.pipeline.TemplateSection` as results.json holds it) and the
    verdict, the least cue-reliant template."""

    key: typing.ClassVar[str] = "llm_probe"

    model: dict = field(default_factory=dict)
    templates: list[dict] = field(default_factory=list)
    verdict: dict | None = None

    @property
    def least_cue_reliant(self) -> str | None:
        """The verdict's template (None: no template was tested)."""
        return (self.verdict or {}).get("least_cue_reliant")


@dataclass(frozen=True, kw_only=True, repr=False)
class ProbeSections(ScanSections):
    """A probe's whole results.json: the scan's sections, the probe's own (``probe``: a
    model's; ``llm_probe``: a language model's through prompt templates), then ``next_steps``,
    about the model."""

    probe: ProbeSection | None = None
    llm_probe: LLMProbeSection | None = None

    @classmethod
    def of(cls, scan: ScanSections, next_steps: Callable[[dict], list], *,
           probe: ProbeSection | None = None,
           llm_probe: LLMProbeSection | None = None) -> ProbeSections:
        """``scan``'s sections with the probe's and the ``next_steps`` computed from them all
        (:func:`~cuelens.audit.advice.next_steps`; the scan's own are about the data)."""
        sections = cls(**{**vars(scan), "next_steps": None}, probe=probe, llm_probe=llm_probe)
        return replace(sections, next_steps=next_steps(sections.to_json()))

    def to_json(self) -> dict:
        """The results.json content: the scan's keys, the probe's, ``next_steps`` last."""
        results = super().to_json()
        steps = results.pop("next_steps", None)
        return results if steps is None else {**results, "next_steps": steps}


def model_name(results: dict) -> str:
    """The probed model's name in a probe's results.json content (``the model`` without
    one)."""
    section = ProbeSection.in_results(results) or LLMProbeSection.in_results(results)
    return (section.model.get("name") if section is not None else None) or "the model"


def about_a_model(results: dict) -> bool:
    """Whether a results.json content is a probe's (its next steps are about the model)."""
    return any(kind.key in results for kind in (ProbeSection, LLMProbeSection))


def write_cues_csv(path: Path, cues: list[dict], metric_names: Sequence[str]) -> None:
    """cues.csv: one row per cue (its ``metric_names`` columns in that order), streamed into the
    atomic file."""
    names = list(metric_names)
    with atomic_open_text(path) as text:
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(["token", "label", "count", "label_count", *names])
        writer.writerows([cue["token"], cue["label"], cue["count"], cue["label_count"],
                          *[cue["metrics"][n] for n in names]] for cue in cues)


ITEM_FILES = ("auto", "records", "ids", "none")
RECORDS_MAX_ITEMS = 1_000_000  # above this, ``auto`` writes id lists instead of records


def item_files_mode(mode: str, n_items: int) -> str:
    """``records``/``ids``/``none`` for a requested ``--item-files`` mode."""
    if mode not in ITEM_FILES:
        raise UserError(f"unknown --item-files {mode!r}; choose from {', '.join(ITEM_FILES)}")
    if mode == "auto":
        return "records" if n_items <= RECORDS_MAX_ITEMS else "ids"
    return mode


def scan_output_paths(out_dir: Path, item_files: str = "records") -> dict[str, Path]:
    """The files a scan writes into its output directory (besides the report); ``item_files``
    is a resolved :func:`item_files_mode`."""
    files = {"results": out_dir / "results.json", "cues": out_dir / "cues.csv",
             "run": out_dir / "run.json"}
    if item_files != "none":
        suffix = ".jsonl" if item_files == "records" else ".ids.txt"
        files.update(easy=out_dir / f"easy{suffix}", hard=out_dir / f"hard{suffix}")
    return files


def write_item_files(paths: tuple[Path, Path], lines: Iterable[tuple[str, bool]]) -> None:
    """Stream each ``(line, easy)`` to the easy or the hard file (both atomic)."""
    with atomic_open(paths[0]) as easy, atomic_open(paths[1]) as hard:
        for line, is_easy in lines:
            (easy if is_easy else hard).write(line.encode("utf-8", "surrogatepass") + b"\n")


ItemLines = Callable[[str], Iterable[tuple[str, bool]]]  # mode → (record or id, easy) per item


def write_scan_outputs(out_dir: Path, results: dict, run_info: dict, inputs: list[str],
                       items: ItemLines | None, n_items: int, item_files: str = "auto", *,
                       metric_names: Sequence[str]) -> dict[str, Path]:
    """Write results.json, cues.csv, the easy/hard item files and run.json into ``out_dir``,
    none of them one of the ``inputs`` (``items`` None: no word-cue statistics, so results.json
    and run.json only). ``item_files``: :func:`item_files_mode` of the ``n_items`` evaluated
    items (docs/large-datasets.md, "Easy/hard item files"); ``items(mode)`` streams the lines.
    ``metric_names``: the cues.csv metric columns (:data:`cuelens.audit.metrics.METRICS`)."""
    mode = item_files_mode(item_files, n_items) if items is not None else "none"
    files = scan_output_paths(out_dir, mode)
    if items is None:
        files = {key: files[key] for key in ("results", "run")}
    check_outputs(files.values(), inputs)
    write_json(files["results"], results)
    if items is not None:
        write_cues_csv(files["cues"], results["cues"], metric_names)
        if mode != "none":
            write_item_files((files["easy"], files["hard"]), items(mode))
    write_json(files["run"], run_info)
    return files


def run_info(started: float, argv: list[str] | None = None, **extra) -> dict:
    """Non-deterministic run metadata for run.json."""
    return {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
            "seconds": round(time.time() - started, 3),
            "argv": list(sys.argv if argv is None else argv),
            "python": platform.python_version(), "platform": platform.platform(),
            "cuelens": __version__, **extra}
