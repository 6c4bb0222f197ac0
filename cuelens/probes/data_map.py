"""Dataset map from training dynamics (Dataset Cartography, Swayamdipta et al. 2020): the measures
and the files written: docs/methods.md §6, "Training dynamics"."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cuelens.data.readers import jsonl_objects
from cuelens.errors import UserError
from cuelens.jsonio import write_jsonl
from cuelens.models.finetune import Dynamics

MAP_FILE = "data_map.jsonl"
DYNAMICS_DIR = "training_dynamics"


def dataset_map(dynamics: Dynamics) -> list[dict]:
    """Cartography coordinates of every training example, in training-file order."""
    probs = dynamics.gold_probs
    confidence = probs.mean(axis=0)
    variability = probs.std(axis=0)
    correctness = dynamics.correct.mean(axis=0)
    return [{"guid": guid, "confidence": round(float(c), 6), "variability": round(float(v), 6),
             "correctness": round(float(k), 6)}
            for guid, c, v, k in zip(dynamics.guids, confidence, variability, correctness)]


def write_dynamics(directory: str | Path, dynamics: Dynamics) -> None:
    """Write the per-epoch dynamics files and ``data_map.jsonl`` into ``directory``."""
    directory = Path(directory)
    for epoch, logits in enumerate(dynamics.logits):
        key = f"logits_epoch_{epoch}"
        write_jsonl(directory / DYNAMICS_DIR / f"dynamics_epoch_{epoch}.jsonl",
                    ({"guid": guid, key: [round(float(x), 6) for x in row], "gold": int(gold)}
                     for guid, row, gold in zip(dynamics.guids, logits, dynamics.gold)))
    write_jsonl(directory / MAP_FILE, dataset_map(dynamics))


def read_data_map(directory: str | Path) -> list[dict] | None:
    """The data map stored in a model directory, or ``None`` when it has none."""
    path = Path(directory) / MAP_FILE
    if not path.is_file():
        return None
    points = []
    for line_no, row in jsonl_objects(path):
        try:
            points.append({"guid": str(row["guid"]),
                           **{key: float(row[key])
                              for key in ("confidence", "variability", "correctness")}})
        except (ValueError, KeyError, TypeError):
            raise UserError("malformed data-map line", path=str(path), line=line_no) from None
    return points


def other_data_note(points: list[dict], train_ids: list[str] | None,
                    model_dir: str | Path) -> str | None:
    """A note when the data map of ``model_dir`` (``points``) is not of the probed dataset's
    training split (``train_ids``; None: it has none), i.e. the model was trained on other data;
    None when the map's items are that split's."""
    guids = {p["guid"] for p in points}
    if train_ids is not None and guids == set(train_ids):
        return None
    shared = "it has none" if not train_ids else \
        f"{sum(i in guids for i in train_ids):,} of its {len(train_ids):,} items are on the map"
    return (f"the data map is of the {len(points):,} items {model_dir} was trained on, not of "
            f"this dataset's training split ({shared}): it shows how the model learnt its own "
            "training data")


def regions(points: list[dict]) -> np.ndarray:
    """Cartography region of each point: ``easy-to-learn`` / ``ambiguous`` / ``hard-to-learn``
    (variability above its median → ambiguous; else confidence ≥ 0.5 → easy, below → hard)."""
    conf = np.asarray([p["confidence"] for p in points])
    var = np.asarray([p["variability"] for p in points])
    return np.where(var > np.median(var), "ambiguous",
                    np.where(conf >= 0.5, "easy-to-learn", "hard-to-learn"))
