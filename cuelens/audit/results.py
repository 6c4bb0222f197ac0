"""Assemble and write a scan's outputs (docs/results-schema.md).

``results.json`` is deterministic (same inputs and seed → identical bytes); run metadata
(timestamp, durations, command line, versions, input paths) goes to ``run.json``. Every file is
streamed into a temporary renamed at the end (:func:`cuelens.atomic.atomic_open`, together inside
:func:`cuelens.atomic.output_set`), so a failed run leaves no partial results.
"""

from __future__ import annotations

import csv
import functools
import platform
import sys
import time
import types
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
    key order, ``None`` ones absent from it (but those of :attr:`nullable`, written as null);
    its repr one line per field, never the rows."""

    key: typing.ClassVar[str] = ""  # the section's results.json key (a top-level one)
    nullable: typing.ClassVar[tuple[str, ...]] = ()  # fields written even when None (null)

    def to_json(self) -> dict:
        """The section as results.json holds it (its lists and dicts shared, not copied, but
        those holding sections)."""
        return {key: _json(value) for key, value in vars(self).items()
                if value is not None or key in self.nullable}

    @classmethod
    def from_json(cls: type[S], data: dict) -> S:
        """The section of a results.json content (keys it does not know left out; a nested
        section, or a list or dict of them, read by its own ``from_json``)."""
        try:
            return cls(**{name: read(data[name], name)
                          for name, read in _readers(typing.cast(type, cls)) if name in data})
        except TypeError as error:  # its keys are another cuelens version's
            raise UserError(f"this results.json is not one this version writes ({error}): "
                            "scan the data again") from error

    @classmethod
    def in_results(cls: type[S], results: dict) -> S | None:
        """This section (results.json key :attr:`key`) of a results.json content; ``None``
        when the file has none (or an empty one)."""
        data = results.get(cls.key)
        return cls.from_json(data) if data else None

    @classmethod
    def required_in(cls: type[S], results: dict) -> S:
        """:meth:`in_results` of a results.json content that must have this section (a scan's
        ``dataset``); one :class:`UserError` when it has none."""
        section = cls.in_results(results)
        if section is None:
            raise UserError(f"this results.json has no {cls.key} section: scan the data again")
        return section

    @classmethod
    def rows_in(cls: type[S], results: dict) -> list[S]:
        """The rows of a section that results.json holds as a list (key :attr:`key`), each
        one of these; none when the file has none."""
        return [cls.from_json(row) for row in results.get(cls.key) or []]

    def __repr__(self) -> str:  # bounded: one line per field, never the rows (MBs on SNLI)
        lines = [f"  {key}={_brief(value)}," for key, value in vars(self).items()
                 if value is not None]
        return "\n".join([f"{type(self).__name__}(", *lines, ")"])


S = typing.TypeVar("S", bound=Section)
Reader = Callable[[object, str], object]


def _json(value: object) -> object:
    """A field's value as results.json holds it: a section (or a list or dict of them) by its
    ``to_json``, anything else as it is."""
    if isinstance(value, Section):
        return value.to_json()
    if isinstance(value, list) and value and isinstance(value[0], Section):
        return [row.to_json() for row in value]
    if isinstance(value, dict) and value and isinstance(next(iter(value.values())), Section):
        return {key: row.to_json() for key, row in value.items()}
    return value


@functools.cache
def _readers(cls: type[Section]) -> tuple[tuple[str, Reader], ...]:
    """Each field of ``cls`` with the function reading it from its results.json value (the
    type hints resolved once per class)."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _reader(hints[f.name])) for f in fields(cls))  # type: ignore[arg-type]


def _section_in(hint: object) -> type[Section] | None:
    kinds = typing.get_args(hint) or (hint,)
    return next((k for k in kinds if isinstance(k, type) and issubclass(k, Section)), None)


def _reader(hint: object) -> Reader:
    """How a field typed ``hint`` is read: a :class:`Section` from its dict, a ``list`` or
    ``dict`` of sections member by member, anything else as it is."""
    optional = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
    inner = next(a for a in typing.get_args(hint) if a is not type(None)) if optional else hint
    origin, args = typing.get_origin(inner), typing.get_args(inner)
    row = _section_in(args[-1]) if origin in (list, dict) and args else None
    section = _section_in(hint)
    if row is not None and origin is list:
        return lambda value, name: None if value is None else [
            row.from_json(_object(v, name)) for v in _typed(value, list, name)]
    if row is not None:
        return lambda value, name: None if value is None else {
            k: row.from_json(_object(v, name)) for k, v in _typed(value, dict, name).items()}
    if section is not None:
        return lambda value, name: None if value is None else section.from_json(
            _object(value, name))
    return lambda value, name: value


def _typed(value: object, kind: type, name: str) -> typing.Any:
    if not isinstance(value, kind):
        raise UserError(f"the {name} section of this results.json is not "
                        f"{'a list' if kind is list else 'an object'}: scan the data again")
    return value


def _object(value: object, name: str) -> dict:
    return typing.cast(dict, _typed(value, dict, name))


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


CONCLUSIONS = ("leakage", "no_meaningful_leakage", "inconclusive")
CONCLUSION_TEXT = dict(zip(CONCLUSIONS, ("Leakage", "No meaningful leakage", "Inconclusive")))


@dataclass(frozen=True, kw_only=True, repr=False)
class SplitSummary(Section):
    """One split of ``dataset.splits``: its file, sizes, label counts (MCQ: right/wrong
    instances), answer-position counts (MCQ; null otherwise) and skipped lines per reason."""

    nullable: typing.ClassVar[tuple[str, ...]] = ("file", "answer_position_counts")

    file: str | None = None
    items: int
    instances: int | None = None
    label_counts: dict[str, int] | None = None  # None: a hand-made file without them
    answer_position_counts: dict[str, int] | None = None
    skipped: dict[str, int] | None = None


@dataclass(frozen=True, kw_only=True, repr=False)
class DatasetSummary(Section):
    """``dataset`` (docs/results-schema.md): the data's name, format, task, labels and one
    :class:`SplitSummary` per split role; ``split_roles``: a role given to a file whose name does
    not say it; ``labels``: the label report (rare and rewritten labels, warnings)."""

    key: typing.ClassVar[str] = "dataset"
    nullable: typing.ClassVar[tuple[str, ...]] = ("n_choices",)

    name: str | None = None
    format: str | None = None
    task: str
    n_choices: int | None = None
    cross_validated: bool | None = None
    label_names: list[str]
    splits: dict[str, SplitSummary]
    split_roles: dict[str, str] | None = None
    labels: dict | None = None

    @property
    def evaluated_role(self) -> str:
        """The role of the split the statistics are measured on ("test", else "all")."""
        return "test" if "test" in self.splits else "all" if "all" in self.splits else \
            next(iter(self.splits), "")

    @property
    def fitting_role(self) -> str:
        """The role the cue statistics are fitted on ("all" when cross-validated)."""
        cross = self.cross_validated if self.cross_validated is not None else \
            "train" not in self.splits
        return "all" if cross else "train"

    @property
    def evaluated_items(self) -> int | None:
        """How many items the evaluated split holds (None: no such split)."""
        split = self.splits.get(self.evaluated_role)
        return None if split is None else split.items


@dataclass(frozen=True, kw_only=True, repr=False)
class SplitHygiene(Section):
    """One split's hygiene counts (docs/methods.md §11): exact copies, near duplicates, label
    conflicts and the deliberate constructions (mirrored MCQ pairs or contrastive NLI pairs,
    permuted copies, shared premises)."""

    items: int
    duplicate_items: int = 0  # 0: a hand-made file without the count
    duplicate_groups: int = 0
    near_duplicate_pairs: int = 0
    label_conflict_groups: int = 0
    label_conflict_items: int = 0
    mirrored_pairs: int | None = None
    contrastive_pairs: int | None = None
    permuted_copies: int | None = None
    shared_premise_items: int | None = None

    @property
    def constructed_pairs(self) -> tuple[str, int]:
        """``("mirrored_pairs", n)`` (MCQ) or ``("contrastive_pairs", n)`` (NLI)."""
        if self.mirrored_pairs is not None:
            return "mirrored_pairs", self.mirrored_pairs
        return "contrastive_pairs", self.contrastive_pairs or 0


@dataclass(frozen=True, kw_only=True, repr=False)
class OverlapRow(Section):
    """Evaluated items (``eval``) that also occur in the fitting split (``fit``): exact and
    near copies, items sharing a premise, and the ``fraction`` of the evaluated ones copied."""

    fit: str
    eval: str
    eval_items: int
    exact: int
    near: int
    shared_premise: int
    fraction: float


@dataclass(frozen=True, kw_only=True, repr=False)
class HygieneSection(Section):
    """``hygiene`` (docs/data-hygiene.md): the near-duplicate settings, one
    :class:`SplitHygiene` per split, the fitting/evaluated :class:`OverlapRow` s, example items
    per finding, the splits whose near duplicates come from a sample (``near_sample``: role →
    sample size) and the warnings."""

    key: typing.ClassVar[str] = "hygiene"

    near_threshold: float | None = None
    num_perm: int | None = None
    splits: dict[str, SplitHygiene]
    overlap: list[OverlapRow] = field(default_factory=list)
    examples: dict[str, list] = field(default_factory=dict)
    near_sample: dict[str, int] | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True, repr=False)
class McqRuleRow(Section):
    """One MCQ artifact rule (docs/mcq-artifacts.md): its accuracy against chance with the
    Bonferroni-corrected intervals, p-value and verdict; ``complement_of``: the rule it mirrors
    with two choices; ``coverage``: the question-only rule's share of questions seen in fitting;
    ``D_equivalence_high``: the cluster-robust equivalence bound (docs/methods.md §17)."""

    name: str
    fitted: bool | None = None
    accuracy: float
    accuracy_ci: list[float]
    chance: float
    D: float
    D_ci: list[float]
    p_value: float
    n_items: int
    complement_of: str | None = None
    significant: bool
    coverage: float | None = None
    D_equivalence_high: float | None = None
    equivalence_clusters: int | None = None


@dataclass(frozen=True, kw_only=True, repr=False)
class GoldPositionTest(Section):
    """Where the right answers of one split sit: counts per position against the balanced
    expectation, the chi-square test and the most common position (docs/mcq-artifacts.md)."""

    counts: list[int]
    expected: list[float]
    shares: list[float] | None = None
    chi2: float
    df: int
    p_value: float
    significant: bool
    most_common: dict | None = None
    warning: str | None = None


@dataclass(frozen=True, kw_only=True, repr=False)
class McqBaselinesSection(Section):
    """``mcq_baselines`` (docs/mcq-artifacts.md): the rules that never read the question, each
    an :class:`McqRuleRow` tested against chance (Bonferroni at ``bonferroni_alpha``), and a
    :class:`GoldPositionTest` per split role."""

    key: typing.ClassVar[str] = "mcq_baselines"

    n_items: int
    chance: float
    choice_counts: dict[str, int] | None = None
    fitted_on: str | None = None
    bonferroni_alpha: float | None = None
    ci_level: float | None = None
    rows: list[McqRuleRow]
    gold_position: dict[str, GoldPositionTest]


@dataclass(frozen=True, kw_only=True, repr=False)
class CueRow(Section):
    """One row of ``cues`` (docs/methods.md §2): a word and a label, their counts, every cue
    metric and whether its z passes the Bonferroni threshold."""

    key: typing.ClassVar[str] = "cues"

    token: str
    label: str
    count: int
    label_count: int
    metrics: dict[str, float | None]
    significant: bool
    excluded: str | None = None  # why the row is never significant (a rare label)

    @property
    def z(self) -> float:
        """The row's z statistic (0 when it has none)."""
        z = self.metrics.get("z")
        return float(z) if isinstance(z, (int, float)) else 0.0


@dataclass(frozen=True, kw_only=True, repr=False)
class CueStats(Section):
    """``cue_stats``: the cue test's Bonferroni threshold, its number of tests and level, the
    minimum count and the split the cues were counted on."""

    key: typing.ClassVar[str] = "cue_stats"

    bonferroni_z: float
    n_tests: int | None = None
    alpha: float | None = None
    min_count: int | None = None
    fitted_on: str | None = None


@dataclass(frozen=True, kw_only=True, repr=False)
class CueFinding(Section):
    """``cue_finding`` (docs/results-schema.md): how many cues are significant, the evaluated
    items they cover (None: not recorded) and the strongest (``token``, ``label``, ``z``)."""

    key: typing.ClassVar[str] = "cue_finding"
    nullable: typing.ClassVar[tuple[str, ...]] = ("items_covered", "share_items",
                                                  "bonferroni_z")

    n_significant: int
    items_covered: int | None = None
    share_items: float | None = None
    bonferroni_z: float | None = None
    top: list[dict]


@dataclass(frozen=True, kw_only=True, repr=False)
class FeatureRow(Section):
    """One row of ``features`` (docs/methods.md §5): an ICQ feature value, its cueness and its
    support and label distribution in the fitting and the evaluated items."""

    key: typing.ClassVar[str] = "features"
    nullable: typing.ClassVar[tuple[str, ...]] = ("value",)

    feature: str
    value: str | None = None
    cueness: float
    train_support: int
    test_support: int
    train_dist: dict[str, float]
    test_dist: dict[str, float]


@dataclass(frozen=True, kw_only=True, repr=False)
class FeaturesSection(Section):
    """``features_config``: the ICQ features scored, their minimum support, whether the
    evaluation was cross-validated, and those skipped for the text's language (each with its
    reason; docs/languages.md)."""

    key: typing.ClassVar[str] = "features_config"

    features: list[str]
    min_support: int | None = None
    cv_folds_used: bool | None = None
    language: str | None = None
    skipped: list[dict] | None = None


@dataclass(frozen=True, repr=False)
class Conclusion(Section):
    """``conclusion`` (docs/methods.md §17): ``status`` (one of :data:`CONCLUSIONS`), the
    ``reason`` a dataset author reads first, the ``margin`` and ``level`` of the interval
    quoted, the headline leakage ``D`` with its interval (fractions, against the prior-matched
    baseline; None without word-cue statistics), the ``evidence`` behind the status and, when
    inconclusive, about how many more evaluated items would settle it (``items_needed``)."""

    key: typing.ClassVar[str] = "conclusion"
    nullable: typing.ClassVar[tuple[str, ...]] = ("D", "ci_low", "ci_high", "items_needed")

    status: str
    reason: str
    margin: float
    level: float
    D: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    evidence: list[dict] = field(default_factory=list)
    items_needed: int | None = None

    @property
    def headline(self) -> str:
        """``Leakage: <reason>`` — the one line every output opens with."""
        return f"{CONCLUSION_TEXT[self.status]}: {self.reason}"


@dataclass(frozen=True, kw_only=True, repr=False)
class ScanSections(Section):
    """A scan's whole results.json, built once from all its sections (``None``: not computed,
    e.g. no word-cue statistics for MCQ items with varying numbers of choices)."""

    schema_version: str = SCHEMA_VERSION
    tool: dict = field(default_factory=lambda: {"name": "cuelens", "version": __version__})
    config: dict
    dataset: DatasetSummary
    conclusion: Conclusion | None = None
    segmentation: dict | None = None  # the segmenter used and why (cuelens.audit.segmenters)
    warnings: list[str] | None = None  # e.g. text that looks unsegmented (docs/languages.md)
    hygiene: HygieneSection | None = None
    cues: list[CueRow] | None = None
    cue_stats: CueStats | None = None
    cue_finding: CueFinding | None = None
    leakage: LeakageSection | None = None
    mcq_baselines: McqBaselinesSection | None = None
    easy_hard: EasyHardSection | None = None
    examples: dict | None = None
    features: list[FeatureRow] | None = None
    features_config: FeaturesSection | None = None
    lengths: dict | None = None
    notes: list[str] | None = None
    next_steps: list | None = None
    preference: PreferenceSection | None = None
    subsets: SubsetsSection | None = None

    def advised(self, conclusion: Callable[[dict], Conclusion],
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


def write_cues_csv(path: Path, cues: list[CueRow], metric_names: Sequence[str]) -> None:
    """cues.csv: one row per cue (its ``metric_names`` columns in that order), streamed into the
    atomic file."""
    names = list(metric_names)
    with atomic_open_text(path) as text:
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(["token", "label", "count", "label_count", *names])
        writer.writerows([cue.token, cue.label, cue.count, cue.label_count,
                          *[cue.metrics[n] for n in names]] for cue in cues)


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
                       metric_names: Sequence[str],
                       cues: list[CueRow] | None = None) -> dict[str, Path]:
    """Write results.json, cues.csv, the easy/hard item files and run.json into ``out_dir``,
    none of them one of the ``inputs`` (``items`` None: no word-cue statistics, so results.json
    and run.json only). ``item_files``: :func:`item_files_mode` of the ``n_items`` evaluated
    items (docs/large-datasets.md, "Easy/hard item files"); ``items(mode)`` streams the lines.
    ``metric_names``: the cues.csv metric columns (:data:`cuelens.audit.metrics.METRICS`);
    ``cues``: the typed rows of ``results["cues"]`` when the caller holds them (default: read)."""
    mode = item_files_mode(item_files, n_items) if items is not None else "none"
    files = scan_output_paths(out_dir, mode)
    if items is None:
        files = {key: files[key] for key in ("results", "run")}
    check_outputs(files.values(), inputs)
    write_json(files["results"], results)
    if items is not None:
        write_cues_csv(files["cues"], CueRow.rows_in(results) if cues is None else cues,
                       metric_names)
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
