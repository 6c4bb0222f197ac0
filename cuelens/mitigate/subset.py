"""``audit filter``'s library side: a debiased subset of the fitting split by z-filtering or
AFLite, written as a dataset directory the scan reads (docs/mitigation.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cuelens.audit.config import ScanConfig
from cuelens.audit.chunked_data import held_store
from cuelens.audit.counts import instance_texts
from cuelens.audit.passes import TokenChunk
from cuelens.audit.segmentation import scan_segmentation
from cuelens.audit.tokenize import segmenting
from cuelens.data.dataset import Dataset, Split, Task
from cuelens.data.schema import FieldMap
from cuelens.mitigate.aflite import (AFLiteOptions, Encoder, aflite, cue_features,
                                     embedding_features)
from cuelens.mitigate.zfilter import Incidence, z_filter

METHODS = ("z", "aflite")


@dataclass
class Subset:
    """Per fitting item its multiplicity in the output (0 = removed) and what the method
    reports (``filter.json``)."""

    weight: np.ndarray
    report: dict = field(default_factory=dict)


def per_label(weight: np.ndarray, strata: np.ndarray, names: list[str]) -> dict[str, dict]:
    """Items before and after, removed and added, per stratum (NLI label / MCQ gold)."""
    out = {}
    for s, name in enumerate(names):
        mine = strata == s
        w = weight[mine]
        out[name] = {"before": int(mine.sum()), "after": int(w.sum()),
                     "removed": int((w == 0).sum()), "added": int((w - 1).clip(0).sum())}
    return out


def fitting_split(dataset: Dataset) -> Split:
    return dataset.train if dataset.train is not None else dataset.test


def fitting_chunk(dataset: Dataset, config: ScanConfig) -> TokenChunk:
    """The fitting split's items as the scan encodes them (its chunk of
    :func:`~cuelens.audit.chunked_data.held_store`: cue features, instance labels)."""
    store = held_store(dataset, config).store
    return next(store.chunks(fitting=dataset.train is not None))


def filter_dataset(dataset: Dataset, method: str, config: ScanConfig, *, balance: bool = False,
                   aflite_options: AFLiteOptions | None = None,
                   model: str | Encoder | None = None, progress=None) -> Subset:
    """The :class:`Subset` of ``dataset``'s fitting split chosen by ``method`` (z | aflite),
    with the scan options ``config`` (min_count, z prior, n-grams, premise, seed), the words cut
    by the segmenter the scan picks (``config.segmenter``); ``model``: AFLite's sentence encoder
    (a name, or one loaded by :func:`~cuelens.mitigate.aflite.load_encoder`)."""
    with segmenting(scan_segmentation(dataset, config.segmenter).segmenter):
        chunk = fitting_chunk(dataset, config)
    split = fitting_split(dataset)
    strata = split.item_labels(dataset.label_names)
    names = dataset.label_names if dataset.task == Task.NLI else \
        [f"gold position {j}" for j in range(dataset.n_choices or 0)]
    if method == "z":
        inc = Incidence.of(chunk, strata, dataset.label_names)
        found = z_filter(inc, config.min_count, config.z_prior, balance, config.seed)
        report = {"method": "z", "balance": balance, "threshold": round(found.threshold, 6),
                  "converged": found.converged, "rounds": found.rounds,
                  "per_label": per_label(found.weight, inc.strata, names),
                  "cues": [{**c, "label": names[c["label"]] if c["token"] is None else c["label"],
                            "token": c["token"] or "(label shares)"} for c in found.cues]}
        return Subset(found.weight, report)
    o = aflite_options or AFLiteOptions(seed=config.seed)
    if model is None:
        X = cue_features(chunk.seqs, config.min_count)
        features = f"cue words (#(w) ≥ {config.min_count})"
    else:
        X = embedding_features(instance_texts(split, config.include_premise), model,
                               progress=progress)
        name = model.name if isinstance(model, Encoder) else model
        features = f"sentence embeddings ({name})"
    result = aflite(X, strata, chunk.k, o, progress)
    weight = result.kept.astype(np.float64)
    report = {"method": "aflite", "features": features, "ensemble": o.ensemble,
              "cutoff": o.cutoff, "threshold": o.threshold, "train_size": o.train_size,
              "target": o.target, "rounds": result.rounds,
              "per_label": per_label(weight, strata, names),
              "removed_per_round": np.bincount(result.removed_round,
                                               minlength=result.rounds + 1)[1:].tolist()}
    return Subset(weight, report)


def record_lines(split: Split) -> list[str]:
    """Each item as a JSONL line: its original line (JSONL input) or its normalised record."""
    if split.path.endswith((".jsonl", ".jsonl.gz")) and len(split.raw) == len(split):
        return list(split.raw)
    out = []
    for i in range(len(split)):
        record = {"id": split.ids[i], "premise": split.premises[i], "label": split.labels[i]}
        if split.task == Task.MCQ:
            record["choices"] = split.choices[i]
        else:
            record["hypothesis"] = split.hypotheses[i]
        out.append(json.dumps(record, ensure_ascii=False))
    return out


def subset_paths(out_dir: Path, dataset: Dataset) -> dict[str, Path]:
    """The data files ``audit filter`` writes: train.jsonl (the filtered fitting split) and, for
    train/test data, test.jsonl (the evaluation split, unchanged), plus filter.json."""
    paths = {"train": out_dir / "train.jsonl"}
    if dataset.train is not None:
        paths["test"] = out_dir / "test.jsonl"
    paths["report"] = out_dir / "filter.json"
    return paths


#: every entry ``audit filter`` writes in its output directory, which it replaces as a whole
OUTPUT_NAMES = ("train.jsonl", "test.jsonl", "filter.json", "scan-before", "scan-after",
                "compare.html")


def load_subset(paths: dict[str, Path], name: str, fields: FieldMap = FieldMap()) -> Dataset:
    """The dataset of the files :func:`write_subset` wrote (``paths``), named ``name``: read
    back by file, never by listing their directory, with the input's ``fields`` (JSONL input
    keeps its lines, so its field names)."""
    from cuelens.data.loading import load_dataset

    if "test" in paths:
        dataset = load_dataset(train=str(paths["train"]), test=str(paths["test"]),
                               fields=fields)
    else:
        dataset = load_dataset(str(paths["train"]), fields=fields)
    dataset.name = name
    return dataset


def write_subset(out_dir: Path, dataset: Dataset, subset: Subset) -> dict[str, Path]:
    """Write :func:`subset_paths` atomically (never over an input)."""
    from cuelens.atomic import output_set, write_lines
    from cuelens.jsonio import write_json
    from cuelens.outputs import check_outputs

    paths = subset_paths(out_dir, dataset)
    check_outputs(paths.values(), dataset.input_paths)
    lines = record_lines(fitting_split(dataset))
    kept = [line for line, w in zip(lines, subset.weight.astype(int)) for _ in range(w)]
    with output_set():
        write_lines(paths["train"], kept)
        if "test" in paths:
            write_lines(paths["test"], record_lines(dataset.test))
        write_json(paths["report"], subset.report)
    return paths
