"""Options of the word-cue audit (docs/methods.md §2–4): :class:`ScanConfig`, their checks over
their names and defaults (:class:`~cuelens.audit.results.ScanSettings`, what results.json's
``config`` records), and :func:`checked`, the type check of the Python API's arguments. Light on
purpose (numpy only): ``audit scan --help`` reads it.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

import numpy as np

from cuelens.audit.metrics import METRICS, Z_PRIORS
from cuelens.audit.results import ScanSettings
from cuelens.audit.segmenters import SEGMENTERS
from cuelens.errors import UserError, check_seed, option_name

# SGD/LR/BoW training instances (a seeded, label-stratified subsample); above the largest fitting
# portion of the fidelity datasets (CommonsenseQA train → dev: 53,595 instances), docs/word-cues.md
MAX_FIT_ITEMS = 55_000
# Large scans (docs/methods.md §3, "Large scans"): a run that evaluates at least LARGE_SCAN_ITEMS
# items trains its linear models on at most LARGE_FIT_ITEMS instances, SGD with the large budget;
# one that evaluates at least VERY_LARGE_SCAN_ITEMS on at most VERY_LARGE_FIT_ITEMS
LARGE_SCAN_ITEMS = 50_000
LARGE_FIT_ITEMS = 20_000
VERY_LARGE_SCAN_ITEMS = 100_000
VERY_LARGE_FIT_ITEMS = 10_000
#: A declared field type → the values it takes and how a message names them.
KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "int": ((numbers.Integral,), "a whole number"), "float": ((numbers.Real,), "a number"),
    "bool": ((bool, np.bool_), "True or False"), "str": ((str,), "a text")}


def check_types(options: Any) -> None:
    """Raise :class:`UserError` unless each field of the dataclass ``options`` is of the type it
    is declared with (``cuelens.scan(folds="3")`` was a ``TypeError`` from inside the scan);
    numpy's numbers count as numbers."""
    for f in fields(options):
        check_kind(option_name(f.name), str(f.type), getattr(options, f.name))


def check_kind(named: str, annotation: str, value: Any,
               table: dict[str, tuple[tuple[Any, ...], str]] = KINDS) -> None:
    """Raise :class:`UserError` naming ``named`` unless ``value`` is of the kind its
    ``annotation`` declares in ``table`` (``None`` where it ends in ``| None``; a bool is no
    number); an annotation the table lacks is checked where the value is read."""
    declared = annotation.removesuffix(" | None")
    if declared not in table or (value is None and annotation.endswith("| None")):
        return
    kinds, what = table[declared]
    if not isinstance(value, kinds) or (declared != "bool" and isinstance(value, bool)):
        raise UserError(f"{named} must be {what}, not {value!r}")


def check_minimum(name: str, value: Any, minimum: int, note: str = "") -> None:
    """Raise :class:`UserError` naming option ``name`` (:func:`option_name`), its minimum and
    the value given when ``value`` (``None``: the default) is below ``minimum``."""
    if value is not None and value < minimum:
        raise UserError(f"{option_name(name)} must be at least {minimum}{note}, not {value}")


#: An argument's annotation (less ``| None``) → the values it takes and how a message names
#: them; arguments of other annotations (the data, ``ops``, ``scan``, …) are checked where read.
ARGUMENT_KINDS: dict[str, tuple[tuple[Any, ...], str]] = {
    **KINDS, "str | Path": ((str, os.PathLike), "a text or a pathlib.Path"),
    "Progress": ((Callable,), "a function of (stage, fraction)")}
#: Arguments named without a CLI option: it has none, or another meaning (``save(report=)``).
NO_OPTION = frozenset({"name", "progress", "report", "path", "out_dir", "validate", "options",
                       "report_options"})
Function = TypeVar("Function", bound=Callable[..., Any])


def checked(function: Function) -> Function:
    """``function`` (of the Python API, a result's method) checking its arguments of an
    :data:`ARGUMENT_KINDS` annotation before it runs: a value of another type is one
    :class:`UserError` naming the argument (``progress=3`` was a TypeError from inside the
    scan, ``skip_bad="no"`` skipped bad records). A numpy number is passed on as Python's
    (:func:`plain`; ``folds=np.int64(3)`` scanned, then failed to save its results.json)."""
    return checked_with(ARGUMENT_KINDS)(function)


def checked_with(kinds: dict[str, tuple[tuple[Any, ...], str]]) -> Callable[[Function], Function]:
    """:func:`checked` over the annotations of ``kinds`` (:data:`ARGUMENT_KINDS` and those of a
    higher layer's classes, such as the results' ``ReportOptions``)."""
    return functools.partial(_checked, kinds=kinds)


def _checked(function: Function, kinds: dict[str, tuple[tuple[Any, ...], str]]) -> Function:
    """``function`` checking its arguments against ``kinds`` (:func:`checked`)."""
    signature = inspect.signature(function)
    annotations = {name: str(parameter.annotation)
                   for name, parameter in signature.parameters.items()}
    keywords = {name for name, parameter in signature.parameters.items()
                if parameter.kind is parameter.VAR_KEYWORD}

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            named = f"{name}=" if name in NO_OPTION else option_name(name)
            check_kind(named, annotations[name], value, kinds)
            bound.arguments[name] = {key: plain(v) for key, v in value.items()} \
                if name in keywords else plain(value)
        return function(*bound.args, **bound.kwargs)
    return call  # type: ignore[return-value]


def plain(value: Any) -> Any:
    """``value`` with a numpy scalar (``np.int64(3)``, ``np.bool_(True)``) as the Python value
    it holds, which JSON can write; anything else as it is."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass
class ScoringOptions:
    """The options a fit needs (:class:`~cuelens.audit.fitting.Fit`): a :class:`ScanConfig`'s
    ``scoring``."""

    alpha: float = 1.0
    z_prior: str = "empirical"
    in_sample_features: bool = False
    seed: int = 0
    max_fit_items: int = MAX_FIT_ITEMS
    sgd_large: int = MAX_FIT_ITEMS  # training instances from which SGD runs its large budget


def large_scan(n_evaluated: int) -> bool:
    """Whether a run evaluating ``n_evaluated`` items is large (docs/methods.md §3): its CI is
    narrow enough that the adaptive rules apply (training cap, re-seeded runs)."""
    return n_evaluated >= LARGE_SCAN_ITEMS


def large_fit_items(n_evaluated: int) -> int | None:
    """The training cap of a run evaluating ``n_evaluated`` items (docs/methods.md §3, "Large
    scans"): :data:`VERY_LARGE_FIT_ITEMS` from :data:`VERY_LARGE_SCAN_ITEMS` on,
    :data:`LARGE_FIT_ITEMS` from :data:`LARGE_SCAN_ITEMS` on, None below."""
    if n_evaluated >= VERY_LARGE_SCAN_ITEMS:
        return VERY_LARGE_FIT_ITEMS
    return LARGE_FIT_ITEMS if large_scan(n_evaluated) else None


def adapted(options: ScoringOptions, n_evaluated: int) -> ScoringOptions:
    """The options a run evaluating ``n_evaluated`` items fits with: a large run's training cap
    lowered to :func:`large_fit_items` (an uncapped ``0`` and a lower cap stay), its SGD
    running the large budget from that cap on (docs/methods.md §3, "Large scans")."""
    cap, lowered = options.max_fit_items, large_fit_items(n_evaluated)
    if lowered is None or not 0 < lowered < cap:
        return options
    return replace(options, max_fit_items=lowered, sgd_large=lowered)


@dataclass(frozen=True, kw_only=True)
class ScanConfig(ScanSettings):
    """Options of a scan (:class:`~cuelens.audit.results.ScanSettings`: their names and the
    CLI's and the API's defaults, results.json's ``config``) and their checks."""

    max_fit_items: int = MAX_FIT_ITEMS  # SGD/LR/BoW training instances; 0 = no cap

    def validate(self) -> None:
        """Raise :class:`UserError` naming the offending field and its CLI option; an
        ``hf:PATH`` segmenter is loaded here (once per process), so a bad one fails before any
        data is read."""
        check_types(self)
        METRICS.get(self.metric)  # an unknown name is a UserError
        if self.z_prior not in Z_PRIORS:
            raise UserError(f"{option_name('z_prior')}: unknown z prior {self.z_prior!r}; "
                            f"choose from {', '.join(Z_PRIORS)}")
        if self.segmenter != "auto" and not self.segmenter.startswith("hf:"):
            SEGMENTERS.get(self.segmenter)  # an unknown name is a UserError
        for name, minimum in (("folds", 1), ("iterations", 1), ("min_count", 1), ("ngrams", 1),
                              ("alpha", 0), ("max_fit_items", 0), ("min_label_items", 0)):
            check_minimum(name, getattr(self, name), minimum,
                          " (0 = no cap)" if name == "max_fit_items" else "")
        check_seed(self.seed)
        if not math.isfinite(self.alpha):
            raise UserError(f"alpha (--alpha) must be a finite number, not {self.alpha:g}")
        for name, closed in (("flag_threshold", True), ("margin", False)):
            value = getattr(self, name)
            if not (0 <= value <= 1 if closed else 0 < value < 1):  # also refuses nan
                bounds = "between {} and {}" if closed else "above {} and below {}"
                raise UserError(f"{option_name(name)} must be {bounds.format(0, 1)}, a fraction "
                                f"({bounds.format(0, 100)} points with --"
                                f"{name.replace('_', '-')}), not {value:g} "
                                f"({100 * value:g} points)")
        if self.segmenter.startswith("hf:"):  # its tokenizer loads (or fails) before any data
            from cuelens.audit.segmentation import build_segmenter

            build_segmenter(self.segmenter)

    @property
    def scoring(self) -> ScoringOptions:
        return ScoringOptions(**{f.name: getattr(self, f.name) for f in fields(ScoringOptions)
                                 if hasattr(self, f.name)})  # sgd_large: set by adapted()
