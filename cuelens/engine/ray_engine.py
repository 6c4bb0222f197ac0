"""The Ray engine's connection (:func:`connect`) and array packing, shared by the scan's passes and
the probe's scoring (extra ``cuelens[ray]``; docs/large-datasets.md, "The Ray engine")."""

from __future__ import annotations

import io
import socket

import numpy as np

from cuelens.errors import UserError

EXTRA = "the ray engine needs Ray: pip install 'cuelens[ray]'"
REACH_SECONDS = 10.0  # how long a host:port --address may take to accept a connection


def _check_reachable(address: str) -> None:
    """Refuse a ``host:port`` (or ``ray://host:port``) address where nothing accepts a connection
    within :data:`REACH_SECONDS`: Ray itself retries such an address for about ten minutes.
    Other forms ("auto", malformed ones) are left to Ray's own checks."""
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not host or not port.isdigit() or "/" in host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_SECONDS).close()
    except (OSError, OverflowError, ValueError) as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else \
            getattr(exc, "strerror", None) or exc
        raise UserError(f"cannot connect to the Ray cluster at --address {address}: nothing "
                        f"accepts a connection at {host}:{port} ({reason})") from None


def connect(address: str | None = None):
    """The ``ray`` module, connected to ``address`` (None: a local cluster) once per process."""
    try:
        import ray
    except ImportError:
        raise UserError(EXTRA) from None
    if not ray.is_initialized():
        if address:
            _check_reachable(address)
        try:
            ray.init(address=address, include_dashboard=False, configure_logging=False,
                     log_to_driver=False)
        except (ValueError, ConnectionError) as exc:  # a malformed or unreachable --address
            raise UserError(f"cannot connect to the Ray cluster at --address {address}: {exc}"
                            ) from None
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    return ray


def pack_arrays(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def unpack_arrays(blob: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(blob), allow_pickle=False) as data:
        return {key: data[key] for key in data.files}
