"""The classifier layer shared by ``audit train`` and ``audit probe`` (docs/methods.md §6; heads,
label mapping and backends: docs/inference.md, "Models and labels")."""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from cuelens.data.dataset import Split, Task
from cuelens.errors import UserError, option_name
from cuelens.models.backends import Runner, backend_name, make_runner, softmax
from cuelens.models.batching import EncodedUnits, encode_split, sorted_batches
from cuelens.models.hub import from_pretrained, pick_device, resolve_model_name

HEADS = {Task.NLI: "AutoModelForSequenceClassification",
         Task.MCQ: "AutoModelForMultipleChoice"}
DEFAULT_BATCH = {"cpu": 64, "cuda": 256}
_GENERIC_LABEL = re.compile(r"^LABEL_\d+$")
HEAD_NOUN = {Task.NLI: "classification", Task.MCQ: "multiple-choice"}
DEFAULT_MAX_LENGTH = 128  # tokens per input unless the model reads fewer (input_limit)


def _weights(names: tuple[str, ...], shown: int = 3) -> str:
    """"classifier.weight, classifier.bias" (then "and N more") for a message."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return f"{', '.join(names[:shown])}{more}"


@dataclass
class Classifier:
    """A loaded model + tokenizer for one task, on one device."""

    model: Any  # a transformers model (torch.nn.Module)
    tokenizer: Any
    task: str
    device: str
    name: str
    resolved: str
    max_length: int = DEFAULT_MAX_LENGTH
    backend: str = "torch"
    untrained: tuple[str, ...] = ()  # weights not in the checkpoint, initialised at random
    reshaped: tuple[str, ...] = ()  # those of them the checkpoint has in another shape
    _runner: Runner | None = field(default=None, repr=False)

    @property
    def _head_absent(self) -> str:
        """Where the untrained weights are: missing, or (a head for another task) reshaped."""
        return "shaped for another task in its checkpoint" if self.reshaped else \
            "missing from its checkpoint"

    def untrained_note(self) -> str | None:
        """Why the predictions are not the model's own (an untrained head), or None."""
        if not self.untrained:
            return None
        where = self._head_absent if self.reshaped else "not in its checkpoint"
        return (f"model '{self.name}' has no fine-tuned {HEAD_NOUN[Task(self.task)]} head: "
                f"{_weights(self.untrained)} {where}, initialised at random, so "
                "its predictions are random guesses, not the model's")

    def require_trained(self, allow_untrained: bool = False) -> None:
        """A :class:`UserError` pointing to ``audit train`` when the head is untrained, unless
        ``allow_untrained`` (then the probe says so: :meth:`untrained_note`)."""
        if self.untrained and not allow_untrained:
            raise UserError(f"model '{self.name}' has no fine-tuned "
                            f"{HEAD_NOUN[Task(self.task)]} head ({_weights(self.untrained)} "
                            f"{self._head_absent}): fine-tune it first with `audit train "
                            f"DATA --model {self.name}`, or pass --allow-untrained "
                            "(allow_untrained=True in the API) to probe its random head anyway")

    def autocast(self):
        """bf16 (else fp16) autocast on a GPU; a no-op on the CPU."""
        import torch

        if not self.device.startswith("cuda"):
            return contextlib.nullcontext()
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.autocast("cuda", dtype=dtype)

    def use_backend(self, name: str) -> None:
        """Run inference through backend ``name`` (:data:`cuelens.models.backends.BACKENDS`)."""
        self._runner = make_runner(self, name)
        self.backend = name

    @property
    def backend_in_use(self) -> str:
        """The backend doing the work (``auto`` names its choice after the first batch)."""
        return backend_name(self.backend, self._runner) if self._runner else self.backend

    def to_device(self, batch: dict[str, np.ndarray]) -> dict:
        import torch

        return {key: torch.from_numpy(value).to(self.device, non_blocking=True)
                for key, value in batch.items()}

    def batch_plan(self, split: Split,
                   batch_size: int | None = None) -> tuple[EncodedUnits, list[np.ndarray]]:
        """The tokenised units of ``split`` and its length-sorted inference batches."""
        encoded = encode_split(self.tokenizer, split, self.max_length)
        size = batch_size or DEFAULT_BATCH["cuda" if self.device.startswith("cuda") else "cpu"]
        return encoded, sorted_batches(encoded.lengths, size)

    def forward_proba(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        """Softmax probabilities of one collated batch, through the classifier's backend."""
        if self._runner is None:
            self.use_backend(self.backend)
        assert self._runner is not None
        return softmax(self._runner(batch))

    def predict_proba(self, split: Split, batch_size: int | None = None,
                      on_batch: Callable[[int], None] | None = None) -> np.ndarray:
        """Probabilities per item: NLI ``[n, |model labels|]``; MCQ ``[n, k]`` over choices."""
        encoded, batches = self.batch_plan(split, batch_size)
        return scatter_batches(len(split), ((index, self.forward_proba(encoded.collate(index)))
                                            for index in batches), on_batch)


def scatter_batches(n_items: int, scored: Iterable[tuple[np.ndarray, np.ndarray]],
                    on_batch: Callable[[int], None] | None = None) -> np.ndarray:
    """One ``[n_items, columns]`` array from ``(item indices, probabilities)`` batches arriving
    in any order (locally, or from Ray actors); ``on_batch(size)`` after each."""
    out: np.ndarray | None = None
    for index, probs in scored:
        if out is None:
            out = np.empty((n_items, probs.shape[1]), dtype=np.float32)
        out[index] = probs
        if on_batch is not None:
            on_batch(len(index))
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)


def backend_agreement(clf: Classifier, split: Split, reference: str = "torch", sample: int = 512,
                      seed: int = 0, batch_size: int | None = None) -> dict:
    """How closely ``clf``'s backend reproduces ``reference`` (float32 torch) on a seeded random
    sample of ``min(sample, n)`` items of ``split``: both backends predict the sample; returns
    ``{"n", "argmax_agreement", "max_abs_difference"}`` (fraction of identical arg-maxes, largest
    probability difference)."""
    chosen = np.sort(np.random.default_rng(seed).choice(len(split), min(sample, len(split)),
                                                        replace=False))
    part = split.subset(chosen.tolist())
    got = clf.predict_proba(part, batch_size=batch_size)
    other = replace(clf, backend=reference, _runner=None)
    expected = other.predict_proba(part, batch_size=batch_size)
    return {"n": len(chosen),
            "argmax_agreement": round(float((got.argmax(1) == expected.argmax(1)).mean()), 6),
            "max_abs_difference": round(float(np.abs(got - expected).max()), 6)}


def load_classifier(name: str, task: str, *, label_names: list[str] | None = None,
                    device: str = "auto", trust_remote_code: bool = False,
                    max_length: int | None = None) -> Classifier:
    """Load tokenizer and the task's head. ``label_names`` (NLI) sets a fresh head's size and
    its ``id2label``/``label2id`` (training); leave it ``None`` to load a model as saved.
    ``max_length``: tokens per input, at most :func:`input_limit` (more is a
    :class:`UserError`); ``None``: :data:`DEFAULT_MAX_LENGTH`, or the limit when lower.
    ``Classifier.untrained``: the weights the checkpoint lacks (transformers' loading info
    ``missing_keys``), e.g. the head of a base encoder, or has in another shape
    (``mismatched_keys``, ``Classifier.reshaped``: a head for another task), both initialised
    at random (:meth:`Classifier.require_trained`)."""
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    head = getattr(transformers, HEADS[Task(task)])
    kwargs = {}
    if task == Task.NLI and label_names is not None:
        kwargs = {"num_labels": len(label_names),
                  "id2label": dict(enumerate(label_names)),
                  "label2id": {label: i for i, label in enumerate(label_names)}}
    tokenizer = from_pretrained(transformers.AutoTokenizer, name,
                                trust_remote_code=trust_remote_code)
    model, info = from_pretrained(head, name, trust_remote_code=trust_remote_code,
                                  output_loading_info=True, ignore_mismatched_sizes=True,
                                  **kwargs)  # a head of another task's shape: a fresh one
    if not getattr(tokenizer, "is_fast", False):
        raise UserError(f"model '{name}' has no fast tokenizer (tokenizer.json); cuelens needs one")
    limit = input_limit(tokenizer, model)
    if max_length is None:
        max_length = DEFAULT_MAX_LENGTH if limit is None else min(DEFAULT_MAX_LENGTH, limit)
    elif limit is not None and max_length > limit:  # a longer item crashed the forward pass
        raise UserError(f"{option_name('max_length')} of {max_length} is more than model "
                        f"'{name}' reads ({limit} tokens); give at most {limit}")
    _ensure_padding(tokenizer, model, name)
    resolved_device = pick_device(device)
    model.to(resolved_device)
    reshaped = {key for key, *_ in info.get("mismatched_keys", ())}
    body = sorted(key for key in reshaped if key.startswith(f"{model.base_model_prefix}."))
    if body:  # only a head may be replaced: the encoder's weights must be the checkpoint's
        raise UserError(f"cannot load model '{name}': {_weights(tuple(body))} in its "
                        "checkpoint have another shape than its config.json says")
    return Classifier(model=model, tokenizer=tokenizer, task=task, device=resolved_device,
                      name=name, resolved=resolve_model_name(name), max_length=max_length,
                      untrained=tuple(sorted({*info.get("missing_keys", ()), *reshaped})),
                      reshaped=tuple(sorted(reshaped)))


def input_limit(tokenizer, model) -> int | None:
    """The most tokens ``model`` reads: its tokenizer's ``model_max_length`` when set (unset, it
    is a huge sentinel), else its absolute position embeddings (RoBERTa's start after the
    padding index); ``None`` when neither says (e.g. relative positions)."""
    if tokenizer.model_max_length < 1_000_000:
        return int(tokenizer.model_max_length)
    config = model.config
    positions = getattr(config, "max_position_embeddings", None)
    if not isinstance(positions, int) or not getattr(config, "position_biased_input", True):
        return None  # DeBERTa-v2 and the like: relative positions, no fixed limit
    offset = getattr(getattr(model.base_model, "embeddings", None), "padding_idx", None)
    return positions - (offset + 1 if isinstance(offset, int) else 0)


def _ensure_padding(tokenizer, model, name: str) -> None:
    """Batches need a padding token, and a decoder's head (e.g. GPT-2's) finds each item's last
    token by it: a tokenizer without one pads with its end-of-text token (the usual choice,
    saved with a trained model); one without either is a :class:`UserError`."""
    if tokenizer.pad_token_id is None:
        if tokenizer.eos_token is None:
            raise UserError(f"model '{name}' has neither a padding nor an end-of-text token in "
                            "its tokenizer, so its items cannot be batched; set pad_token in "
                            "its tokenizer_config.json")
        tokenizer.pad_token = tokenizer.eos_token
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id


def label_columns(id2label: dict, label_names: list[str]) -> np.ndarray:
    """For each dataset label (in ``label_names`` order), the model output column that predicts
    it."""
    model_labels = [str(id2label[i]) for i in sorted(id2label, key=int)]
    lookup = {label.lower(): i for i, label in enumerate(model_labels)}
    if all(name.lower() in lookup for name in label_names):
        return np.asarray([lookup[name.lower()] for name in label_names], dtype=np.int64)
    if len(model_labels) == len(label_names) and all(_GENERIC_LABEL.match(x) for x in model_labels):
        warnings.warn(f"model labels are generic ({', '.join(model_labels)}); mapped by position "
                      f"to {', '.join(label_names)}", stacklevel=2)
        return np.arange(len(label_names), dtype=np.int64)
    raise UserError(f"the model's labels ({', '.join(model_labels)}) do not match the dataset's "
                    f"({', '.join(label_names)})")
