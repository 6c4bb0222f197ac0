"""Recall of the near-duplicate MinHash LSH against brute force (docs/BENCHMARKS.md, "Hygiene at
scale"; docs/methods.md §11).

    OMP_NUM_THREADS=1 python benchmarks/near_recall.py /work/shared/data/snli \
        /work/shared/data/mnli/dev.jsonl --seeds 0 1 2 3 4 --settings 64:5x11 64:9x7

For every split of every dataset the items indexed by ``data_hygiene`` are taken exactly as it
takes them (``near_parts(split, near_items(len(split), 0))``), and ALL pairs of different
inputs whose premise and hypothesis parts each have an exact word-bigram Jaccard ≥
``NEAR_THRESHOLD`` are found by brute force: a sparse binary items × shingles matrix ``X`` per
part, intersections ``X[block] @ X.T`` on the first part, Jaccard = inter / (|a| + |b| − inter),
the other part checked pair by pair; a pair's bucket is its smaller part similarity. Then, for each setting ``PERM:BxR`` (``PERM`` permutations, ``B`` bands of ``R``
rows) and seed, ``NearIndex.near_pairs`` is run and its recall is printed overall and by Jaccard
bucket, with the candidate pairs it confirmed and its seconds (build + ``near_pairs``). With
``--scale DATA`` each setting is also timed on ``DATA`` (loaded with ``load_streaming``) as
``hygiene_bench.py --near-index`` times it. One JSON line per setting.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator

import numpy as np
from scipy import sparse

import cuelens
import cuelens.audit.near_duplicates as near_duplicates
from cuelens.audit.groups import first_of_each
from cuelens.audit.hygiene_keys import ItemKeys, near_parts
from cuelens.audit.near_duplicates import NEAR_THRESHOLD, NearIndex, _band_matches, near_items

BUCKETS = (0.8, 0.85, 0.9, 0.95)
BLOCK = 500  # rows of X multiplied at a time


def _shingles(text: str) -> set[str]:
    words = text.split()
    return {f"{a} {b}" for a, b in zip(words, words[1:])} or set(words)


def _shingle_matrix(texts: list[str]) -> tuple[sparse.csr_matrix, np.ndarray]:
    """A binary texts × shingles matrix and each text's number of shingles."""
    vocabulary: dict[str, int] = {}
    rows, cols = [], []
    for i, text in enumerate(texts):
        for shingle in _shingles(text):
            rows.append(i)
            cols.append(vocabulary.setdefault(shingle, len(vocabulary)))
    x = sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)),
                          shape=(len(texts), len(vocabulary)))
    return x, np.asarray(x.sum(axis=1)).ravel()


def exact_pairs(texts: list[list[str]], inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All position pairs ``(k, m)``, ``k < m``, of different inputs whose every part
    (``texts[p][k]``, :func:`~cuelens.audit.hygiene_keys.near_parts`) has a Jaccard ≥ the threshold (sorted), and their smallest part Jaccard similarities. Pairs
    are found on the first part (``X[block] @ X.T``) and checked on the others row by row."""
    parts = [_shingle_matrix(part) for part in texts]
    (x, sizes), found, similar = parts[0], [], []
    for low in range(0, len(inputs), BLOCK):
        inter = (x[low:low + BLOCK] @ x.T).tocoo()
        k, m = inter.row + low, inter.col
        jaccard = inter.data / (sizes[k] + sizes[m] - inter.data)
        keep = (k < m) & (jaccard >= NEAR_THRESHOLD) & (inputs[k] != inputs[m])
        found.append(np.stack([k[keep], m[keep]], axis=1))
        similar.append(jaccard[keep])
    pairs, jaccard = np.concatenate(found), np.concatenate(similar)
    for y, counts in parts[1:]:
        k, m = pairs[:, 0], pairs[:, 1]
        both = np.asarray(y[k].multiply(y[m]).sum(axis=1)).ravel()
        union = counts[k] + counts[m] - both
        part = np.where(union > 0, both / np.maximum(union, 1), 1.0)  # two empty parts: equal
        keep = part >= NEAR_THRESHOLD
        pairs, jaccard = pairs[keep], np.minimum(jaccard, part)[keep]
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    return pairs[order], jaccard[order]


def use_setting(setting: str) -> None:
    """Make ``NearIndex`` use ``PERM:BxR``."""
    perm, bands = setting.split(":")
    n_bands, width = (int(v) for v in bands.split("x"))
    near_duplicates.NUM_PERM = int(perm)
    near_duplicates.lsh_bands = lambda threshold, num_perm, weight: (n_bands, width)  # type: ignore[assignment]


def recall_runs(splits: dict[str, tuple[list[list[str]], np.ndarray, np.ndarray, np.ndarray]],
                seeds: list[int]) -> Iterator[dict]:
    """One row per split and seed under the current setting."""
    for name, (texts, inputs, truth, jaccard) in splits.items():
        codes = truth[:, 0] * len(inputs) + truth[:, 1]
        for seed in seeds:
            start = time.perf_counter()
            index = NearIndex(texts, seed)
            pairs = np.array(index.near_pairs(inputs), dtype=np.int64).reshape(-1, 2)
            seconds = time.perf_counter() - start
            first = first_of_each(inputs)[0]
            candidates = len(_band_matches(index.bands[:, first], index.bands[:, first], True))
            hit = np.isin(codes, pairs[:, 0] * len(inputs) + pairs[:, 1])
            assert len(pairs) == hit.sum()  # every reported pair is a true one
            yield {"split": name, "seed": seed, "exact": len(truth), "found": len(pairs),
                   "candidates": candidates, "seconds": round(seconds, 2),
                   "by_bucket": bucket_recall(jaccard, hit)}


def bucket_recall(jaccard: np.ndarray, hit: np.ndarray) -> dict[str, list[int]]:
    """``[found, exact]`` per Jaccard bucket."""
    edges = list(BUCKETS) + [np.inf]
    out = {}
    for low, high in zip(edges, edges[1:]):
        inside = (jaccard >= low) & (jaccard < high)
        out[f"{low:.2f}+" if high == np.inf else f"{low:.2f}-{high:.2f}"] = [
            int(hit[inside].sum()), int(inside.sum())]
    return out


def summary(rows: list[dict]) -> dict:
    """Recall pooled over splits and seeds, overall and by bucket; median seconds per split."""
    found = sum(r["found"] for r in rows)
    exact = sum(r["exact"] for r in rows)
    buckets = {b: [sum(r["by_bucket"][b][0] for r in rows), sum(r["by_bucket"][b][1] for r in rows)]
               for b in rows[0]["by_bucket"]}
    per_split = {}
    for name in dict.fromkeys(r["split"] for r in rows):
        mine = [r for r in rows if r["split"] == name]
        per_split[name] = {"exact": mine[0]["exact"], "found": [r["found"] for r in mine],
                           "candidates_median": int(np.median([r["candidates"] for r in mine])),
                           "seconds_median": float(np.median([r["seconds"] for r in mine]))}
    return {"recall": round(found / exact, 4),
            "recall_by_bucket": {b: round(f / e, 4) if e else None for b, (f, e) in buckets.items()},
            "pairs_by_bucket": {b: sum(r["by_bucket"][b][1] for r in rows
                                       if r["seed"] == rows[0]["seed"]) for b in buckets},
            "splits": per_split}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data", nargs="+")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--settings", nargs="+", default=["64:5x11"])
    parser.add_argument("--scale", help="time each setting on this data as hygiene_bench does")
    args = parser.parse_args()
    splits = {}
    for path in args.data:
        for role, split in cuelens.load_dataset(path).splits.items():
            items = near_items(len(split), 0)
            texts, inputs = near_parts(split, items), ItemKeys.of(split).inputs[items]
            splits[f"{path.rstrip('/').split('/')[-1]}:{role}"] = (
                texts, inputs, *exact_pairs(texts, inputs))
    scaled = None
    if args.scale:
        from cuelens.engine.streaming import load_streaming
        from hygiene_bench import time_near_index

        scaled = load_streaming(args.scale).splits
    for setting in args.settings:
        use_setting(setting)
        out = {"setting": setting, **summary(list(recall_runs(splits, args.seeds)))}
        if scaled is not None:
            out["scale"] = time_near_index(scaled, 0)
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
