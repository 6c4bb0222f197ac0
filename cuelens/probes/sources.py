"""Where a probe's predictions come from: :class:`PredictionSource` and the registry :data:`SOURCES`
(docs/methods.md §6; docs/api.md, "Probe options and prediction sources").

>>> sorted(SOURCES)
['inspect', 'llm', 'lm-eval', 'model', 'predictions']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol

from cuelens.data.dataset import Dataset
from cuelens.errors import UserError, option_name
from cuelens.probes.evallogs import detect_format, read_eval_log, samples_files
from cuelens.probes.predictions import Predictions, classifier_predictions, read_predictions_file
from cuelens.registry import Registry

OnItems = Callable[[int], None]  # called with the number of items just predicted


class PredictionSource(Protocol):
    """What the probe needs from a source of predictions."""

    name: ClassVar[str]  # its registry name

    def predict(self, dataset: Dataset, on_items: OnItems | None = None) -> Predictions:
        """Predictions of ``dataset.test`` (``info``: the ``probe.model`` section)."""
        ...


SOURCES: Registry[type] = Registry("prediction source")


def register(name: str):
    """Class decorator: register a :class:`PredictionSource` under ``name``."""
    def add(cls: type) -> type:
        cls.name = name  # type: ignore[attr-defined]
        return SOURCES.add(name, cls)
    return add


def make_source(name: str, **options: Any) -> PredictionSource:
    """The registered source ``name`` built from its ``options``."""
    return SOURCES.get(name)(**options)


@register("model")
@dataclass
class ModelSource:
    """A loaded :class:`~cuelens.models.classifier.Classifier` (named ``model``, as the user
    gave it) predicting the test items once; ``predict_proba(split, batch_size, on_batch)``
    replaces ``classifier.predict_proba`` (e.g.
    :func:`cuelens.models.ray_scoring.predict_proba_ray`
    bound to the classifier)."""

    name: ClassVar[str]
    classifier: Any
    model: str
    batch_size: int | None = None
    predict_proba: Callable | None = None

    def predict(self, dataset: Dataset, on_items: OnItems | None = None) -> Predictions:
        predictions = classifier_predictions(self.classifier, dataset, self.batch_size,
                                             on_batch=on_items, predict_proba=self.predict_proba)
        note = self.classifier.untrained_note()  # probed with allow_untrained
        untrained = {} if note is None else {"untrained_head": list(self.classifier.untrained)}
        return replace(predictions, info={"name": self.model,
                                          "resolved": self.classifier.resolved,
                                          "source": "model", **untrained},
                       notes=[*predictions.notes, *([note] if note else [])])


@dataclass
class _File:
    """A file of predictions and the options of evaluation logs (``id_field``, ``norm``,
    ``require_all``: :func:`~cuelens.probes.evallogs.read_eval_log`); read as an evaluation log
    of the format named like the registered source unless :meth:`read` is overridden."""

    name: ClassVar[str]
    path: Path
    id_field: str | None = None
    norm: str = "none"
    require_all: bool = False

    def read(self, dataset: Dataset) -> Predictions:
        return read_eval_log(self.path, dataset, id_field=self.id_field, norm=self.norm,
                             fmt=self.name, require_all=self.require_all)

    def predict(self, dataset: Dataset, on_items: OnItems | None = None) -> Predictions:
        predictions = self.read(dataset)
        info: dict = {"name": Path(self.path).name, "resolved": str(self.path),
                      "source": "predictions"}
        if predictions.log is not None:
            info["log"] = predictions.log
        return replace(predictions, info=info)


@register("predictions")
class PredictionsFile(_File):
    """A JSONL predictions file (:mod:`cuelens.probes.predictions`)."""

    def read(self, dataset: Dataset) -> Predictions:
        if self.id_field is not None or self.norm != "none":
            raise UserError(f"{option_name('id_field')} and {option_name('norm')} apply to "
                            "evaluation logs (lm-evaluation-harness samples, Inspect logs); "
                            "this is a predictions file",
                            path=str(self.path))
        return read_predictions_file(self.path, dataset)


@register("lm-eval")
class LmEvalLog(_File):
    """An lm-evaluation-harness ``--log_samples`` file (JSONL, also gzipped)."""


@register("inspect")
class InspectLog(_File):
    """An Inspect eval log (``.json`` or ``.eval``)."""


@dataclass
class LmEvalDirectory(_File):
    """lm-eval's output directory: its one samples file that matches the dataset
    (:func:`~cuelens.probes.evallogs.samples_files`; the only one, or the only one that
    reads as a log of ``dataset.test``); several or none is one line listing them."""

    name: ClassVar[str] = "lm-eval"

    def predict(self, dataset: Dataset, on_items: OnItems | None = None) -> Predictions:
        found = samples_files(self.path)
        if not found:
            raise UserError("a directory without lm-eval samples_*.jsonl files; give a "
                            "predictions file or an evaluation log", path=str(self.path))
        fits: list[tuple[Path, Predictions]] = []
        for candidate in found:
            try:
                fits.append((candidate, LmEvalLog(candidate, self.id_field, self.norm,
                                                  self.require_all).predict(dataset)))
            except UserError:
                if len(found) == 1:
                    raise
        if len(fits) != 1:
            names = ", ".join(str(p.relative_to(self.path)) for p in found[:5])
            which = "none" if not fits else f"{len(fits)}"
            raise UserError(f"{which} of its {len(found)} lm-eval samples files match this "
                            f"dataset ({names}{' …' if len(found) > 5 else ''}); pass one of "
                            "them", path=str(self.path))
        chosen, predictions = fits[0]
        note = (f"read {chosen.relative_to(self.path)}, the "
                f"{'only samples file' if len(found) == 1 else 'only samples file of this dataset'}"
                f" in {self.path}")
        return replace(predictions, notes=[note, *predictions.notes])


def file_source(path: str | Path, id_field: str | None = None, norm: str = "none",
                require_all: bool = False) -> PredictionSource:
    """The source of a predictions file or evaluation log, chosen by its content (an lm-eval
    output directory: :class:`LmEvalDirectory`)."""
    path = Path(path)
    if not path.exists():
        raise UserError("predictions file not found", path=str(path))
    if path.is_dir():
        return LmEvalDirectory(path, id_field, norm, require_all)
    name = detect_format(path) or "predictions"
    return make_source(name, path=path, id_field=id_field, norm=norm, require_all=require_all)


def read_predictions(path: str | Path, dataset: Dataset, id_field: str | None = None,
                     norm: str = "none", *, require_all: bool = False) -> Predictions:
    """Read and check a predictions file or evaluation log against ``dataset.test`` (a log of
    some test items only gives :attr:`Predictions.covered`)."""
    return file_source(path, id_field, norm, require_all).predict(dataset)


@register("llm")
@dataclass
class LLMPrompt:
    """A language model (:mod:`cuelens.probes.llm.backends` backend) asked every test item
    through one prompt ``template``; answers come from and go to ``cache`` when given."""

    name: ClassVar[str]
    backend: Any
    template: Any
    cache: Any = None
    calibrate: bool = False
    normalize: bool = False

    def __post_init__(self) -> None:
        """A template or backend of another kind (a name given for either) is one
        :class:`UserError` naming the argument, not an AttributeError once the probe runs."""
        from cuelens.probes.llm.templates import TEMPLATES, PromptTemplate

        if not isinstance(self.template, PromptTemplate):
            raise UserError(f"template= takes a prompt template, TEMPLATES[name] of "
                            f"cuelens.probes.llm.templates ({TEMPLATES.choices()}), not "
                            f"{self.template!r}")
        if not all(callable(getattr(self.backend, m, None)) for m in ("run", "info")):
            raise UserError(f"backend= takes a backend, load_backend(spec) of "
                            f"cuelens.probes.llm.backends, not {self.backend!r}")

    def predict(self, dataset: Dataset, on_items: OnItems | None = None) -> Predictions:
        from cuelens.probes.llm.answers import answer

        got = answer(self.backend, self.template, dataset, cache=self.cache,
                     calibrate=self.calibrate, normalize=self.normalize)
        return Predictions(got.pred, got.probs, info={
            **self.backend.info(), "template": self.template.name, "source": "llm"})
