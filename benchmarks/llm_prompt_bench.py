"""Throughput of the LLM probe's scoring path against naive per-choice scoring (issue 15, docs/methods.md §6).

Same model, same items, same prompts (template ``nli-yes-no`` on MNLI dev-matched items, or
``mcq-choice`` on COPA with ``--task mcq``):

- **cuelens**: :meth:`CausalScorer.continuation_logprobs` — each prompt computed once in a row
  with all its options (shared-prefix rows), rows length-sorted and batched by tokens
  (word-boundary corrected, as ``audit probe --llm`` runs it; also without the correction);
- **naive** (lm-evaluation-harness style, done by hand with transformers): one unbatched forward
  pass of ``[BOS] prompt + " " + option`` per option, summing the option tokens' log-softmax.

The model is a random-initialised GPT-2 of distilgpt2's shape (6 layers, 768 wide, 12 heads,
50,257-token output layer; no hub access) with a byte-level BPE trained on the items; weights do
not change the cost. Reports items/s (median of ``--runs``) and checks that both paths give the
same uncorrected option log-probabilities (max |difference|). Also items per CPU-second
(``time.process_time``), the load-independent figure on a shared machine.

    .venv/bin/python benchmarks/llm_prompt_bench.py --items 120 --runs 3 --out /tmp/llm_bench.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

DATA = Path(os.environ.get("CUELENS_SHARED_DATA", "/work/shared/data"))


def _items(task: str, n: int) -> tuple[list[str], list[list[str]]]:
    from cuelens.probes.llm.templates import TEMPLATES, item_fields
    from cuelens.data import load_dataset

    name, template = ("mnli", "nli-yes-no") if task == "nli" else ("copa", "mcq-choice")
    dataset = load_dataset(str(DATA / name))
    split, labels = dataset.test, dataset.label_names
    t = TEMPLATES[template]
    fields = [item_fields(split, i, labels) for i in range(min(n, len(split)))]
    return ([t.render(f).rstrip() for f in fields],
            [t.option_words(labels, f) for f in fields])


def _model(texts: list[str], device: str):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from tests.lm_random_init import byte_level_bpe

    tokenizer = byte_level_bpe(texts, 8000)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=6, n_head=12,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    return GPT2LMHeadModel(config).eval().to(device), tokenizer


def naive(model, tokenizer, bos: int, prompts, options, device: str) -> list[list[float]]:
    """lm-evaluation-harness-style loglikelihood: one full forward per (prompt, option)."""
    import torch

    out = []
    with torch.inference_mode():
        for prompt, opts in zip(prompts, options):
            head = [bos, *tokenizer(prompt, add_special_tokens=False)["input_ids"]]
            values = []
            for option in opts:
                tail = tokenizer(" " + option, add_special_tokens=False)["input_ids"]
                ids = torch.tensor([head + tail], device=device)
                logp = torch.log_softmax(model(ids).logits[0].float(), -1)
                positions = torch.arange(len(head) - 1, len(head) + len(tail) - 1, device=device)
                values.append(float(logp[positions, torch.tensor(tail, device=device)].sum()))
            out.append(values)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", choices=["nli", "mcq"], default="nli")
    parser.add_argument("--items", type=int, default=120)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    import numpy as np
    import torch

    from cuelens.lm.causal import CausalScorer

    torch.set_num_threads(args.threads)
    prompts, options = _items(args.task, args.items)
    model, tokenizer = _model(prompts + [o for opts in options for o in opts], args.device)
    corrected = CausalScorer(model, tokenizer, name="bench", device=args.device,
                             batch_size=args.batch_size)
    plain = CausalScorer(model, tokenizer, name="bench", device=args.device,
                         batch_size=args.batch_size, bow_correction=False)
    names = ("cuelens", "cuelens_uncorrected", "naive")
    timings: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, list[float]] = {k: [] for k in names}
    runs = {"cuelens": lambda: corrected.continuation_logprobs(prompts, options),
            "cuelens_uncorrected": lambda: plain.continuation_logprobs(prompts, options),
            "naive": lambda: naive(model, tokenizer, plain.bos, prompts, options, args.device)}
    last: dict = {}
    for _ in range(args.runs):
        for name in names:
            begun, begun_cpu = time.perf_counter(), time.process_time()
            last[name] = runs[name]()
            timings[name].append(time.perf_counter() - begun)
            cpu[name].append(time.process_time() - begun_cpu)
    reference: list[list[float]] = last["naive"]
    uncorrected = plain.continuation_logprobs(prompts, options)
    diff = max(float(np.abs(v - np.array(r)).max()) for (v, _), r in zip(uncorrected, reference))
    n = len(prompts)
    rate = {k: n / statistics.median(v) for k, v in timings.items()}
    cpu_rate = {k: n / statistics.median(v) for k, v in cpu.items()}
    summary = {"task": args.task, "items": n, "options_per_item": len(options[0]),
               "mean_prompt_tokens": float(np.mean([len(tokenizer(p)["input_ids"]) + 1
                                                    for p in prompts])),
               "batch_size": args.batch_size, "threads": args.threads, "device": args.device,
               "runs": args.runs, "seconds": timings, "cpu_seconds": cpu,
               "items_per_s": {k: round(v, 2) for k, v in rate.items()},
               "items_per_cpu_s": {k: round(v, 2) for k, v in cpu_rate.items()},
               "cpu_speedup_vs_naive": round(cpu_rate["cuelens"] / cpu_rate["naive"], 2),
               "speedup_vs_naive": round(rate["cuelens"] / rate["naive"], 2),
               "speedup_uncorrected_vs_naive": round(rate["cuelens_uncorrected"] / rate["naive"],
                                                     2),
               "max_abs_diff_uncorrected_vs_naive": diff, "load_average": os.getloadavg()}
    text = json.dumps(summary, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
