"""Probe scoring on a Ray actor pool (extra ``cuelens[ray]``): :func:`predict_proba_ray`, the
local path's batches scored by actors (docs/large-datasets.md, "Distributed probing")."""

from __future__ import annotations

import numpy as np

from cuelens.engine.ray_engine import connect, pack_arrays, unpack_arrays
from cuelens.models.classifier import load_classifier, scatter_batches


class _Scorer:
    """A Ray actor: loads the model once through the shared classifier layer, scores batches."""

    def __init__(self, model: str, task: str, trust_remote_code: bool, max_length: int,
                 backend: str, threads: int) -> None:
        import torch

        torch.set_num_threads(threads)  # CPU kernels sum in a thread-count-dependent order

        self.clf = load_classifier(model, task, device="auto",
                                   trust_remote_code=trust_remote_code, max_length=max_length)
        self.clf.use_backend(backend)

    def __call__(self, batch: dict) -> dict:
        probs = [pack_arrays({"probs": self.clf.forward_proba(unpack_arrays(blob))})
                 for blob in batch["payload"]]
        return {"batch": batch["batch"], "probs": np.array(probs, dtype=object)}


def predict_proba_ray(clf, split, batch_size: int | None = None, on_batch=None, *,
                      concurrency: int = 2, address: str | None = None,
                      trust_remote_code: bool = False,
                      num_gpus: float | None = None) -> np.ndarray:
    """:meth:`Classifier.predict_proba` with the batches scored on ``concurrency`` Ray actors
    (``num_gpus`` each; default: one GPU per actor when the cluster has GPUs, else none); each
    actor uses ``clf``'s inference backend (:mod:`cuelens.models.backends`)."""
    import torch

    ray = connect(address)
    encoded, batches = clf.batch_plan(split, batch_size)
    rows = [{"batch": i, "payload": pack_arrays(encoded.collate(index))}
            for i, index in enumerate(batches)]
    if num_gpus is None:
        num_gpus = 1.0 if ray.cluster_resources().get("GPU", 0) > 0 else 0.0
    scored = ray.data.from_items(rows, override_num_blocks=min(len(rows), 4 * concurrency))
    scored = scored.map_batches(
        _Scorer, batch_size=1, concurrency=concurrency, num_gpus=num_gpus, num_cpus=1,
        fn_constructor_kwargs={"model": clf.name, "task": split.task,
                               "trust_remote_code": trust_remote_code,
                               "max_length": clf.max_length, "backend": clf.backend,
                               "threads": torch.get_num_threads()})
    return scatter_batches(len(split), ((batches[int(row["batch"])],
                                         unpack_arrays(row["probs"])["probs"])
                                        for row in scored.iter_rows()), on_batch)
