"""The classifier layer shared by ``audit train`` and ``audit probe`` (SPEC §6).

Pair tasks (NLI) use ``AutoModelForSequenceClassification``, multiple choice uses
``AutoModelForMultipleChoice`` (one logit per choice, softmax over the question's choices).
Names resolve through :mod:`cuelens.models.hub` (aliases, local directories, hub ids;
``trust_remote_code`` off unless asked). On a GPU the forward pass runs under bf16 autocast
(fp16 when the GPU lacks bf16); on the CPU in float32. Inference uses ``torch.inference_mode``,
length-sorted batches and dynamic padding (:mod:`cuelens.models.batching`).

NLI label mapping: a fine-tuned model's ``config.id2label`` names its output columns; dataset
labels are matched to them case-insensitively. A model whose labels are the generic
``LABEL_0..`` (a fresh head) is mapped by position when it has exactly ``|L|`` outputs, with a
warning; any other mismatch is a user error.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cuelens.data.dataset import Split
from cuelens.errors import UserError
from cuelens.models.batching import EncodedUnits, encode_split, sorted_batches
from cuelens.models.hub import from_pretrained, pick_device, resolve_model_name

HEADS = {"nli": "AutoModelForSequenceClassification", "mcq": "AutoModelForMultipleChoice"}
DEFAULT_BATCH = {"cpu": 64, "cuda": 256}
_GENERIC_LABEL = re.compile(r"^LABEL_\d+$")


@dataclass
class Classifier:
    """A loaded model + tokenizer for one task, on one device."""

    model: object
    tokenizer: object
    task: str
    device: str
    name: str
    resolved: str
    max_length: int = 128

    def autocast(self):
        """bf16 (else fp16) autocast on a GPU; a no-op on the CPU."""
        import torch

        if not self.device.startswith("cuda"):
            return contextlib.nullcontext()
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.autocast("cuda", dtype=dtype)

    def quantize_int8(self) -> None:
        """CPU inference only: dynamic int8 quantisation of every ``nn.Linear`` (about 3× faster
        on x86; probabilities differ slightly from float32)."""
        import torch

        if self.device.startswith("cuda"):
            raise UserError("int8 quantisation is for CPU inference; drop it with --device cuda")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.ao.quantization's deprecation notice
            self.model = torch.ao.quantization.quantize_dynamic(self.model, {torch.nn.Linear},
                                                                dtype=torch.qint8)

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
        """Softmax probabilities of one collated batch."""
        import torch

        self.model.eval()
        with torch.inference_mode():
            with self.autocast():
                logits = self.model(**self.to_device(batch)).logits
            return torch.softmax(logits.float(), dim=-1).cpu().numpy()

    def predict_proba(self, split: Split, batch_size: int | None = None,
                      on_batch: Callable[[int], None] | None = None) -> np.ndarray:
        """Probabilities per item: NLI ``[n, |model labels|]``; MCQ ``[n, k]`` over choices."""
        encoded, batches = self.batch_plan(split, batch_size)
        out: np.ndarray | None = None
        for index in batches:
            probs = self.forward_proba(encoded.collate(index))
            if out is None:
                out = np.empty((len(split), probs.shape[1]), dtype=np.float32)
            out[index] = probs
            if on_batch is not None:
                on_batch(len(index))
        return out


def load_classifier(name: str, task: str, *, label_names: list[str] | None = None,
                    device: str = "auto", trust_remote_code: bool = False,
                    max_length: int = 128) -> Classifier:
    """Load tokenizer and the task's head. ``label_names`` (NLI) sets a fresh head's size and
    its ``id2label``/``label2id`` (training); leave it ``None`` to load a model as saved."""
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    head = getattr(transformers, HEADS[task])
    kwargs = {}
    if task == "nli" and label_names is not None:
        kwargs = {"num_labels": len(label_names),
                  "id2label": dict(enumerate(label_names)),
                  "label2id": {label: i for i, label in enumerate(label_names)}}
    tokenizer = from_pretrained(transformers.AutoTokenizer, name,
                                trust_remote_code=trust_remote_code)
    model = from_pretrained(head, name, trust_remote_code=trust_remote_code, **kwargs)
    if not getattr(tokenizer, "is_fast", False):
        raise UserError(f"model '{name}' has no fast tokenizer (tokenizer.json); cuelens needs one")
    resolved_device = pick_device(device)
    model.to(resolved_device)
    return Classifier(model=model, tokenizer=tokenizer, task=task, device=resolved_device,
                      name=name, resolved=resolve_model_name(name), max_length=max_length)


def label_columns(id2label: dict, label_names: list[str]) -> np.ndarray:
    """For each dataset label (in ``label_names`` order), the model output column that predicts it."""
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
