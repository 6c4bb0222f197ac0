"""The Python API: ``load_dataset``, ``scan``, ``probe``, ``stress`` and ``augment_dataset``, the
pipelines of ``audit scan/probe/stress/augment`` (docs/api.md). The examples run as doctests in
the test suite (small data, ``folds=3, iterations=1`` to keep them fast)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cuelens.audit.config import check_minimum, checked
from cuelens.augment.augmentation import Augmented
from cuelens.augment.defaults import DEFAULT_STRESS_OPS
from cuelens.augment.stress import StressSet
from cuelens.data.dataset import Dataset
from cuelens.data.schema import FieldMap
from cuelens.errors import UserError
from cuelens.probes.config import ProbeConfig, check_log_options, check_norm
from cuelens.results import ProbeResult, ScanResult

if TYPE_CHECKING:
    from cuelens.probes.sources import PredictionSource

Progress = Callable[[str, float], None]
DataSource = Any  # a path, a pandas.DataFrame, a list of dicts, a datasets.Dataset(Dict), a dict
#: The data arguments of each function, as the error for none or several of them names them.
LOAD_INPUTS = "exactly one of: the data (a path or in-memory records), train= and test=, or hf="
DATASET_INPUTS = "exactly one of: the data (a path, in-memory records or a Dataset) or train= " \
    "and test="
DATA_INPUT = "the data (a path, in-memory records or a Dataset)"


@checked
def load_dataset(source: DataSource = None, *, train: DataSource = None,
                 test: DataSource = None, hf: str | Path | None = None,
                 name: str | None = None, premise_field: str | None = None,
                 hypothesis_field: str | None = None,
                 label_field: str | None = None, choices_field: str | None = None,
                 group_field: str | None = None, skip_bad: bool = False) -> Dataset:
    """Load a dataset from a path, in-memory data or ``train=``/``test=``, or ``hf="snli"`` from
    the hub (docs/api.md, "Data").

    >>> import cuelens
    >>> ds = cuelens.load_dataset([{"premise": "a man sleeps", "hypothesis": "nobody sleeps",
    ...                             "label": "contradiction"},
    ...                            {"sentence1": "a dog runs", "sentence2": "an animal moves",
    ...                             "gold_label": "entailment"}])
    >>> str(ds.task), len(ds.test), ds.label_names, ds.cross_validated
    ('nli', 2, ['contradiction', 'entailment'], True)
    """
    return _load(source, train, test, hf, name, FieldMap(
        premise=premise_field, hypothesis=hypothesis_field, label=label_field,
        choices=choices_field, group=group_field), skip_bad)


def _load(source: DataSource, train: DataSource, test: DataSource, hf: str | Path | None,
          name: str | None, fields: FieldMap, skip_bad: bool,
          inputs: str = LOAD_INPUTS) -> Dataset:
    """:func:`load_dataset` with its field overrides as one :class:`FieldMap`; ``inputs``: the
    caller's data arguments, as an error names them."""
    from cuelens.data.loading import load_dataset as load_files
    from cuelens.data.memory import is_memory_source, load_memory

    _check_inputs(source, train, test, hf, inputs)
    if name is not None and not name.strip():  # it was "data" in memory, "" (no name) for paths
        raise UserError(f"name= is {'empty' if not name else 'blank'}: give the dataset a name, "
                        "or leave it out for the default (the file's or folder's name, 'data' "
                        "for in-memory data)")
    if any(is_memory_source(s) for s in (source, train, test)):
        return load_memory(source, train=train, test=test, name=name or "data", fields=fields,
                           skip_bad=skip_bad)
    dataset = load_files(_text(source), train=_text(train), test=_text(test), hf=_text(hf),
                         fields=fields, skip_bad=skip_bad)
    if name is not None:
        dataset.name = name
    return dataset


def _check_inputs(source: DataSource, train: DataSource, test: DataSource,
                  hf: str | Path | None, inputs: str) -> None:
    """Raise :class:`UserError` unless exactly one of ``source``, ``train=`` with ``test=`` and
    ``hf`` is given (``inputs``: the caller's data arguments, as the error names them)."""
    if (train is None) != (test is None):
        raise UserError("train= and test= must be given together")
    if sum(x is not None and not (isinstance(x, str) and not x) for x in (source, train, hf)) != 1:
        raise UserError(f"give {inputs}")


def _dataset(data: DataSource, train: DataSource, test: DataSource,
             fields: FieldMap = FieldMap(), skip_bad: bool = False,
             inputs: str = DATASET_INPUTS) -> Dataset:
    """``data`` if it is a loaded :class:`Dataset`, else :func:`_load` of the arguments
    (``inputs``: the caller's data arguments, as an error names them)."""
    if isinstance(data, Dataset):
        if train is not None or test is not None:
            raise UserError("give either a Dataset or train=/test=, not both")
        if fields != FieldMap() or skip_bad:
            raise UserError("field overrides and skip_bad apply while loading: give them to "
                            "cuelens.load_dataset, or pass the data itself")
        return data
    return _load(data, train, test, None, None, fields, skip_bad, inputs)


@checked
def scan(data: DataSource = None, *, train: DataSource = None, test: DataSource = None,
         features: str | Sequence[str] | None = None, cache_dir: str | Path | None = None,
         progress: Progress | None = None, stats: str = "exact",
         work_dir: str | Path | None = None, subset_field: str | None = None,
         skip_bad: bool = False, **options: Any) -> ScanResult:
    """Scan a dataset for word cues, cue leakage D, an easy/hard split and ICQ feature cues
    (docs/methods.md §2–5; arguments: docs/api.md), as ``audit scan``. ``features``: ``"all"``,
    ``"none"``/``[]``, feature names or ``None`` (:data:`~cuelens.audit.features.DEFAULT_FEATURES`);
    ``options``: the :class:`~cuelens.audit.scan.ScanConfig` fields (``metric``, ``seed``, …) and
    the field overrides ``premise_field``, ``hypothesis_field``, ``label_field``, ``choices_field``,
    ``group_field``.

    >>> import cuelens
    >>> from cuelens.data.synthetic import make_nli
    >>> result = cuelens.scan(make_nli(300, seed=0), features="none", folds=3, iterations=1)
    >>> result.cues.sort_values("z", ascending=False)["token"].head(3).tolist()
    ['nobody', 'outdoors', 'possibly']
    >>> len(result.easy) + len(result.hard), result.results["easy_hard"]["split"]
    (300, 'all')
    >>> result.leakage.columns.tolist()
    ['metric', 'aggregator', 'accuracy', 'D']
    """
    from cuelens.audit.features import DEFAULT_FEATURES
    from cuelens.audit.icq import parse_feature_option
    from cuelens.audit.pipeline import check_parse_cache, scan_dataset
    from cuelens.audit.preference_scan import scan_preferences
    from cuelens.audit.scan_modes import check_features, scan_mode, split_options
    from cuelens.data.preference import load_preferences

    _check_progress(progress)
    names: list[str] | None
    if features is None:
        names = list(DEFAULT_FEATURES)
    elif isinstance(features, str):
        names = parse_feature_option(features)
    else:
        names = parse_feature_option(_names(features, "features") or "none")
    config, fields = split_options(options, [name for name, parameter in
                                             inspect.signature(scan).parameters.items()
                                             if parameter.kind is parameter.KEYWORD_ONLY])
    _check_inputs(data, train, test, None, DATASET_INPUTS)  # in the API's words, whatever the mode
    mode = scan_mode(data, train, test=test, stats=stats, subset_field=subset_field)
    if features is not None:
        check_features(mode, names)
    used = [] if mode.preference or (mode.streaming and features is None) else names
    if used != []:
        check_parse_cache(cache_dir)  # as audit scan, before any work
    if mode.streaming:
        from cuelens.audit.chunk_scan import scan_files

        return ScanResult.of(scan_files(_text(data), train=_text(train), test=_text(test),
                                        config=config, fields=fields, skip_bad=skip_bad,
                                        work_dir=work_dir, features=used,
                                        cache_dir=cache_dir, progress=progress))
    if mode.preference:
        return ScanResult.of(scan_preferences(
            load_preferences(_text(data), train=_text(train), test=_text(test),
                             subset_field=subset_field),
            config, subset_field=subset_field, progress=progress))
    return ScanResult.of(scan_dataset(_dataset(data, train, test, fields, skip_bad), config,
                                      features=names, cache_dir=cache_dir, progress=progress,
                                      subset_field=subset_field))


def _check_progress(progress: Progress | None) -> None:
    """Raise :class:`UserError` unless ``progress`` can be called as ``progress(stage,
    fraction)`` (a one-argument lambda was a TypeError from inside the scan, once its first
    stage ended); a callable without a signature (a builtin) is taken as it is."""
    if progress is None:
        return
    try:
        signature = inspect.signature(progress)
    except (TypeError, ValueError):
        return
    try:
        signature.bind("stage", 0.0)
    except TypeError:
        raise UserError(f"progress= must be a function of (stage, fraction), not one of "
                        f"{signature}") from None


def _names(value: str | Sequence[str], option: str) -> str:
    """An option of names (``features``, ``ops``) given as ``"a,b"`` or ``["a", "b"]``, as the
    comma-separated text the CLI's parsers read."""
    if isinstance(value, str):
        return value
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{option}= takes a comma-separated text or a list of names, not "
                        f"{value!r}")
    return ",".join(value)


def _text(path: DataSource) -> str | None:
    return None if path is None else str(path)


@checked
def probe(data: DataSource = None, *, model: str | Path | None = None,
          predictions: str | Path | None = None, source: PredictionSource | None = None,
          scan: ScanResult | str | Path | None = None, train: DataSource = None,
          test: DataSource = None, top: int = ProbeConfig.top,
          rank_by: str = ProbeConfig.rank_by, min_support: int = ProbeConfig.min_support,
          bootstrap: int = ProbeConfig.bootstrap, min_items: int = ProbeConfig.min_items,
          seed: int = ProbeConfig.seed, short_circuit: bool = False,
          batch_size: int | None = None, max_length: int | None = None, device: str = "auto",
          trust_remote_code: bool = False, id_field: str | None = None, norm: str = "none",
          allow_untrained: bool = False, progress: Progress | None = None) -> ProbeResult:
    """Probe a model (``model=``), a predictions file or evaluation log (``predictions=``) or any
    prediction source (``source=``) for reliance on the dataset's cues (docs/methods.md §6–7;
    options: docs/api.md), as ``audit probe``. ``scan``: default a word-only scan with ``seed``; a
    ``model`` without a fine-tuned head is a :class:`UserError` unless ``allow_untrained``.

    >>> import cuelens, json, tempfile, pathlib
    >>> from cuelens.data.synthetic import make_nli
    >>> data = make_nli(300, seed=0)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "predictions.jsonl"
    >>> _ = path.write_text("".join(json.dumps({"id": r["id"], "prediction": r["label"]}) + "\\n"
    ...                             for r in data))
    >>> scanned = cuelens.scan(data, features=[], folds=3, iterations=1)
    >>> result = cuelens.probe(scanned.dataset, predictions=path, scan=scanned)
    >>> result.accuracy, float(result.cue_effects["delta"].abs().max())
    (1.0, 0.0)
    >>> result.results["probe"]["cue_selection"]["rank_by"]
    'z'
    """
    from cuelens.probes.pipeline import load_scan, probe_dataset
    from cuelens.probes.short_circuit import ShortCircuitOptions
    from cuelens.probes.sources import ModelSource, file_source

    _check_progress(progress)
    if sum(x is not None for x in (model, predictions, source)) != 1:
        raise UserError("give exactly one of model=, predictions= and source=")
    if source is not None and not callable(getattr(source, "predict", None)):
        raise UserError(f"source= takes a prediction source (cuelens.probes.sources, e.g. "
                        f"LLMPrompt), not a {type(source).__name__}; a predictions file or "
                        "evaluation log is predictions=")
    config = ProbeConfig(top=top, rank_by=rank_by, min_support=min_support, bootstrap=bootstrap,
                         min_items=min_items, seed=seed)
    config.validate()
    check_norm(norm)
    check_log_options(id_field, norm != "none", predictions is not None)
    for name, value in (("batch_size", batch_size), ("max_length", max_length)):
        check_minimum(name, value, 1)  # before the model loads, as audit probe
    sc = ShortCircuitOptions() if short_circuit else None  # its defaults are valid
    dataset = _dataset(data, train, test)
    scanned = load_scan(scan, dataset) if isinstance(scan, (str, Path)) else \
        _scan_of(scan, dataset)
    classifier = None
    if predictions is not None:
        source = file_source(predictions, id_field, norm)
    elif model is not None:
        from cuelens.models.classifier import load_classifier

        classifier = load_classifier(str(model), dataset.task, device=device,
                                     trust_remote_code=trust_remote_code, max_length=max_length)
        classifier.require_trained(allow_untrained)
        source = ModelSource(classifier, str(model), batch_size)
    assert source is not None
    return ProbeResult.of(probe_dataset(
        dataset, source.predict(dataset), scan=scanned, config=config, classifier=classifier,
        short_circuit=sc, inputs=[str(predictions)] if predictions is not None else [],
        progress=progress))


def _scan_of(scan: Any, dataset: Dataset) -> Any:
    """``scan=`` given as a result: ``None`` or a scan whose evaluated items are ``dataset``'s
    test items (its cues and easy/hard flags are read per test item), else a :class:`UserError`
    (as a scan output directory of other data is)."""
    from cuelens.audit.scan_result import Scan

    if scan is None:
        return None
    if not isinstance(scan, Scan):
        raise UserError(f"scan= takes a ScanResult or an audit scan output directory, not a "
                        f"{type(scan).__name__}")
    test = getattr(scan.dataset, "test", None)
    items = len(test) if test is not None else \
        None if scan.item_easy is None else len(scan.item_easy)
    if (test is not None and list(test.ids) != list(dataset.test.ids)) or \
            (items is not None and items != len(dataset.test)):
        raise UserError(f"scan= evaluated {items:,} items that are not the "
                        f"{len(dataset.test):,} test items of {dataset.name}: the scan was made "
                        "from different data")
    return scan


@checked
def stress(data: DataSource, *, ops: str | Sequence[str] = DEFAULT_STRESS_OPS,
           seed: int = 0) -> StressSet:
    """Stress questions of the black-box short-circuit test from MCQ data (docs/methods.md §7): per
    operator, the correct choice against a constructed wrong one; as ``audit stress``.

    >>> import cuelens
    >>> from cuelens.data.synthetic import make_mcq
    >>> questions = cuelens.stress(make_mcq(20, seed=0), ops="co", seed=0)
    >>> questions.counts["co"]["generated"] + questions.counts["co"]["skipped"]
    20
    """
    from cuelens.augment.operators import parse_ops
    from cuelens.augment.stress import build_stress
    operators = parse_ops(_names(ops, "ops"))
    return build_stress(_dataset(data, None, None, inputs=DATA_INPUT).test, operators, seed=seed)


@checked
def augment_dataset(data: DataSource, *, ops: str | Sequence[str] = "crossover,mutation",
                    ratio: float = 1.0, seed: int = 0) -> Augmented:
    """MCQ training data plus ``round(ratio × n)`` generated questions (docs/methods.md §8); as
    ``audit augment`` (the train split of a train/test dataset, else the single split).

    >>> import cuelens
    >>> from cuelens.data.synthetic import make_mcq
    >>> out = cuelens.augment_dataset(make_mcq(30, seed=0), ops="crossover", ratio=0.5, seed=0)
    >>> len(out.rows), out.counts
    (45, {'crossover': 15})
    """
    from cuelens.augment.augmentation import augment as run_augment
    from cuelens.augment.augmentation import parse_augmenters

    names = parse_augmenters(_names(ops, "ops"))
    dataset = _dataset(data, None, None, inputs=DATA_INPUT)
    return run_augment(dataset.train or dataset.test, names, ratio=ratio, seed=seed)
