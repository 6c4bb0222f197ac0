""":class:`ProbeConfig`, the one place holding the probe's option defaults, names and checks
(docs/methods.md §6); numpy only on purpose, as ``audit probe --help`` reads it."""

from __future__ import annotations

from dataclasses import dataclass

from cuelens.errors import check_seed
from cuelens.audit.config import check_minimum, check_types, option_name
from cuelens.audit.metrics import METRICS
from cuelens.errors import UserError

MIN_SUPPORT = 20  # fitting instances a tested word cue needs
NORM_UNITS = ("chars", "bytes")  # what --norm divides an lm-eval log's log-likelihoods by
NORMS = ("none", *NORM_UNITS)  # norm= of the Python API and the evaluation-log readers


def check_norm(norm: object, option: str = "norm", choices: tuple[str, ...] = NORMS) -> None:
    """Raise :class:`UserError` naming ``option`` and ``choices`` unless ``norm`` is one of
    them (checked before any work, as the other probe options)."""
    if norm not in choices:
        raise UserError(f"unknown {option} {norm!r}; choose from {', '.join(choices)}")


def check_log_options(id_field: str | None, norm: bool, reads_file: bool) -> None:
    """Raise :class:`UserError` when ``id_field`` or ``norm`` (of evaluation logs) is given
    without a predictions file or log to read (``reads_file``): a model, an LLM or a prediction
    source predicts itself, and they would be ignored."""
    given = [option_name(name) for name, value in (("id_field", id_field is not None),
                                                   ("norm", norm)) if value]
    if given and not reads_file:
        raise UserError(f"{' and '.join(given)} read{'s' * (len(given) == 1)} evaluation logs "
                        "(lm-evaluation-harness samples, Inspect logs) given as predictions; a "
                        "model or a prediction source predicts itself, so there is nothing for "
                        f"{'it' if len(given) == 1 else 'them'} to change")


@dataclass
class ProbeConfig:
    """Options of a probe; the defaults here are the CLI's and the API's defaults.

    >>> ProbeConfig().rank_by, ProbeConfig().top
    ('z', 5)
    """

    top: int = 5  # word cues per label
    rank_by: str = "z"  # cue metric ranking them; z: significant cues only
    min_support: int = MIN_SUPPORT  # fitting instances of a tested word cue
    bootstrap: int = 1000  # resamples of the ΔAcc intervals
    min_items: int = 10  # test items with and without a cue
    seed: int = 0

    def validate(self) -> None:
        """Raise :class:`UserError` naming the offending field's CLI option."""
        check_types(self)
        if self.rank_by not in METRICS:
            raise UserError(f"{option_name('rank_by')}: unknown metric {self.rank_by!r} (choose "
                            f"from {METRICS.choices()})")
        for name in ("top", "bootstrap", "min_items", "min_support"):
            check_minimum(name, getattr(self, name), 1)
        check_seed(self.seed)
