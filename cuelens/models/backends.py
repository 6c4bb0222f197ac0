"""Inference backends of the shared classifier: a registry of ways to turn a padded batch into
logits — ``torch``, ``onnx``, ``torch-int8``, ``auto`` (docs/inference.md)."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cuelens.data.dataset import Task
from cuelens.errors import UserError
from cuelens.registry import Registry

Runner = Callable[[dict[str, np.ndarray]], np.ndarray]
EXACT_TOLERANCE = 1e-4  # max |p_backend - p_torch| for a backend to count as exact
ONNX_OPSET = 17
#: backend name → ``make(clf) -> Runner``
BACKENDS: Registry[Callable[..., Runner]] = Registry("backend", option="--backend")
register_backend = BACKENDS.register


def make_runner(clf, name: str) -> Runner:
    """The runner of backend ``name`` for a loaded classifier (one clear error if unknown)."""
    return BACKENDS.get(name)(clf)


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row softmax in float64, returned as float32."""
    import scipy.special

    return scipy.special.softmax(logits.astype(np.float64), axis=-1).astype(np.float32)


def _torch_runner(clf, model) -> Runner:
    import torch

    def run(batch: dict[str, np.ndarray]) -> np.ndarray:
        with torch.inference_mode(), clf.autocast():
            logits = model(**clf.to_device(batch)).logits
        return logits.float().cpu().numpy()

    return run


@register_backend("torch")
def torch_backend(clf) -> Runner:
    clf.model.eval()
    return _torch_runner(clf, clf.model)


@register_backend("torch-int8")
def torch_int8_backend(clf) -> Runner:
    """Dynamic int8 ``nn.Linear`` on a *copy* of the model (the float32 model stays usable)."""
    import torch

    if not clf.device.startswith("cpu"):
        raise UserError("int8 quantisation is for CPU inference; use --device cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization's deprecation notice
        quantized = torch.ao.quantization.quantize_dynamic(clf.model.eval(), {torch.nn.Linear},
                                                           dtype=torch.qint8, inplace=False)
    return _torch_runner(clf, quantized)


# --- ONNX Runtime ---------------------------------------------------------------------------

def onnx_cache_dir() -> Path:
    """``$CUELENS_ONNX_CACHE``, else ``$XDG_CACHE_HOME/cuelens/onnx``
    (``~/.cache/cuelens/onnx``)."""
    if os.environ.get("CUELENS_ONNX_CACHE"):
        return Path(os.environ["CUELENS_ONNX_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cuelens" / "onnx"


def _import_onnx():
    try:
        import onnx  # noqa: F401  (torch.onnx.export needs it)
        import onnxruntime
    except ImportError:
        raise UserError("the onnx backend needs the extra: pip install 'cuelens[onnx]'") from None
    return onnxruntime


def weights_key(model) -> str:
    """BLAKE2b digest of the model class, config, every parameter/buffer and the exporter."""
    import torch

    digest = hashlib.blake2b(digest_size=16)
    config = model.config.to_dict() if hasattr(model, "config") else {}
    header = {"class": type(model).__name__, "config": config, "torch": torch.__version__,
              "opset": ONNX_OPSET}
    digest.update(json.dumps(header, sort_keys=True, default=str).encode())
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(str(tensor.dtype).encode())
        digest.update(tensor.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


def _example_batch(clf) -> dict[str, np.ndarray]:
    """Two padded pairs (a zero in the attention mask, so the export keeps the masking path)."""
    from cuelens.models.batching import EncodedUnits

    enc = clf.tokenizer(["a b c d", "a"], ["e f", "g"], return_attention_mask=False)
    ids = [np.asarray(x, dtype=np.int64) for x in enc["input_ids"]]
    types = enc.get("token_type_ids")
    type_ids = [np.asarray(x, dtype=np.int64) for x in types] if types is not None else None
    mcq = clf.task == Task.MCQ
    units = EncodedUnits(ids=[ids, ids[::-1]] if mcq else [[ids[0]], [ids[1]]],
                         type_ids=(None if type_ids is None else
                                   [type_ids, type_ids[::-1]] if mcq else
                                   [[type_ids[0]], [type_ids[1]]]),
                         pad_id=clf.tokenizer.pad_token_id or 0, multiple_choice=mcq)
    return units.collate(np.arange(2))


def export_onnx(clf, cache_dir: Path | None = None) -> Path:
    """Export ``clf.model`` to ONNX (float32, dynamic batch/choice/length axes) once per weights
    hash; the file is written to a temporary name and renamed, so concurrent runs are safe."""
    import torch

    _import_onnx()
    path = (cache_dir or onnx_cache_dir()) / weights_key(clf.model) / "model.onnx"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    example = _example_batch(clf)
    axes = {0: "batch", 1: "choices", 2: "length"} if clf.task == Task.MCQ else {0: "batch",
                                                                               1: "length"}
    out_axes = {0: "batch", 1: "choices"} if clf.task == Task.MCQ else {0: "batch"}
    tmp = path.with_name(f".{uuid.uuid4().hex}.onnx.tmp")
    model = clf.model.to("cpu").eval()
    try:
        with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer warnings about Python-bool branches
            torch.onnx.export(model, (), str(tmp), kwargs={k: torch.from_numpy(v)
                                                           for k, v in example.items()},
                              input_names=list(example), output_names=["logits"],
                              dynamic_axes={**{k: axes for k in example}, "logits": out_axes},
                              opset_version=ONNX_OPSET, dynamo=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        model.to(clf.device)
    return path


@register_backend("onnx")
def onnx_backend(clf) -> Runner:
    ort = _import_onnx()
    if not clf.device.startswith("cpu"):
        raise UserError("the onnx backend runs on the CPU; use --device cpu or --backend torch")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # shared CPUs
    import torch

    options.intra_op_num_threads = torch.get_num_threads()
    session = ort.InferenceSession(str(export_onnx(clf)), options,
                                   providers=["CPUExecutionProvider"])
    wanted = {i.name for i in session.get_inputs()}

    def run(batch: dict[str, np.ndarray]) -> np.ndarray:
        feed = {k: v for k, v in batch.items() if k in wanted}
        return np.asarray(session.run(["logits"], feed)[0], dtype=np.float32)

    return run


# --- auto: the fastest exact backend ----------------------------------------------------------

@dataclass
class VerifiedRunner:
    """Run ``candidate`` after checking, on the first batch, that its probabilities are within
    ``tolerance`` of ``reference``'s; otherwise fall back to ``reference`` for good."""

    candidate: Runner
    reference: Runner
    candidate_name: str
    tolerance: float = EXACT_TOLERANCE
    chosen: str | None = None
    max_difference: float | None = None

    def __call__(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        if self.chosen is None:
            expected = self.reference(batch)
            got = self.candidate(batch)
            self.max_difference = float(np.abs(softmax(got) - softmax(expected)).max())
            self.chosen = (self.candidate_name if self.max_difference <= self.tolerance
                           else "torch")
            return got if self.chosen == self.candidate_name else expected
        return (self.candidate if self.chosen == self.candidate_name else self.reference)(batch)


@register_backend("auto")
def auto_backend(clf) -> Runner:
    reference = torch_backend(clf)
    if not clf.device.startswith("cpu"):
        return reference
    try:
        candidate = onnx_backend(clf)
    except (UserError, RuntimeError, ValueError, TypeError, OSError):
        return reference  # no extra, or a model the exporter cannot handle: torch it is
    return VerifiedRunner(candidate, reference, "onnx")


def backend_name(requested: str, runner: Runner) -> str:
    """The backend actually running (``auto`` resolves after its first batch)."""
    if isinstance(runner, VerifiedRunner):
        return runner.chosen or "auto"
    return "torch" if requested == "auto" else requested
