"""cuelens side by side with its peers (issue 26): scan vs counting floors, LLM option scoring vs
lm-evaluation-harness, PLL / causal word scores vs minicons.

Every measurement is a fresh process timed by the kernel (``os.wait4``: user + system CPU
seconds and peak RSS), so the numbers are the tools' own and hold on a loaded machine; wall
seconds are kept too. Runs are interleaved (tool A, tool B, …, then again) and the medians of
``--runs`` printed with the ratios. The peers live in their own venv (``--peers-venv``,
created and filled by this script unless ``--no-install``: the CPU ``torch==2.13.0`` first,
from ``--torch-wheel`` when that file exists, so no CUDA build is pulled; then
``transformers<5`` (minicons needs it), lm-eval, minicons, duckdb, polars, scikit-learn). A
peer that cannot be installed or imported is reported as missing and its rows are skipped.

Parts (``--parts``, comma-separated):

- ``scan``: ``audit scan F --features none`` (exact, and ``--stats streaming``) on generated NLI
  (``benchmarks/scale_data.py``, one JSONL file per ``--scan-items`` size) against the floor
  (scikit-learn ``CountVectorizer`` over the hypotheses + a label × word sparse product), DuckDB
  and polars (eager and streaming engine) counting (word, label) pairs; every floor reads the
  same JSONL file and counts lower-cased whitespace words.
- ``llm``: option scoring of ``(prompt, option)`` requests built from the shared COPA test and
  CommonsenseQA dev items with the ``mcq-choice`` template, by ``audit probe --llm``'s local
  backend (``LocalBackend.run``, word-boundary corrected, its default batch of 16 rows) and by
  lm-eval's HF backend (``simple_evaluate(model="hf", model_args="pretrained=DIR")`` on a local
  task YAML over ``dataset_path: json`` files written at run time) at each ``--lm-eval-batches``
  size: default = batch 1, tuned = its fastest size. Timed: the scoring call only (our
  ``run``; lm-eval's ``HFLM.loglikelihood``, tokenisation included in both), one torch thread
  each. The model is a random-initialised 23M-parameter GPT-2 (6 layers, 512 wide, 8 heads, an
  8k byte-level BPE trained on PTB and the request texts), saved once and loaded by both; the
  lm-eval context starts with ``<|endoftext|>`` so both score ``[BOS] prompt`` + ``" " + option``.
  The uncorrected values of ours are checked against lm-eval's logged log-likelihoods.
- ``lm``: ``benchmarks/lm_bench.py --speed`` (ours vs minicons: causal word scores with the
  boundary correction, and PLL) run ``--runs`` times; medians of its ratios.

    python benchmarks/compare_peers.py --parts llm --runs 3 --out /tmp/peers-llm.json
    python benchmarks/compare_peers.py --parts scan --scan-items 100000,1000000 --runs 3
    python benchmarks/compare_peers.py --parts lm --peers-venv /work/venvs/peers --no-install
    git worktree add /tmp/base BASE_COMMIT   # the same scans of an earlier commit, interleaved
    python benchmarks/compare_peers.py --parts scan --baseline /tmp/base --no-install
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("CUELENS_SHARED_DATA", HERE.parents[1] / "shared" / "data"))
PEERS = ["transformers<5", "lm-eval", "minicons", "duckdb", "polars", "scikit-learn"]
PEER_MODULES = {"lm-eval": "lm_eval", "minicons": "minicons", "duckdb": "duckdb",
                "polars": "polars"}
LLM_TASKS = {"copa": ("copa", "test"), "commonsenseqa": ("commonsenseqa", "test")}
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
              "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


# ----------------------------------------------------------------------------- measuring
def measure(command: list[str], env: dict | None = None) -> dict:
    """Run ``command`` to completion: its CPU seconds, wall seconds and peak RSS (MB), with the
    load average before it started; a worker's own JSON (last stdout line) is merged in."""
    load = os.getloadavg()[0]
    begun = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err,
                                   env={**os.environ, **(env or {})}, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:6])} … failed ({process.returncode}):\n"
                           f"{stderr[-3000:]}")
    out_lines = [line for line in stdout.splitlines()           # workers: one JSON line
                 if line.startswith("{") and line.rstrip().endswith("}")]
    result = {"cpu_s": usage.ru_utime + usage.ru_stime, "wall_s": time.perf_counter() - begun,
              "peak_rss_mb": usage.ru_maxrss / 1024, "load": load}
    if out_lines:
        result.update(json.loads(out_lines[-1]))
    return result


def interleaved(commands: dict[str, tuple[list[str], dict]], runs: int, log) -> dict:
    """``runs`` rounds of every command in turn; per command the list of measurements."""
    results: dict[str, list[dict]] = {name: [] for name in commands}
    for r in range(runs):
        for name, (command, env) in commands.items():
            results[name].append(measure(command, env))
            last = results[name][-1]
            log(f"  run {r + 1}/{runs} {name}: {last.get('timed_cpu_s', last['cpu_s']):.2f} "
                f"CPU-s, {last['peak_rss_mb']:.0f} MB, load {last['load']:.1f}")
    return results


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


# ----------------------------------------------------------------------------- environment
def machine() -> dict:
    model = next((line.split(":", 1)[1].strip() for line in
                  Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor()) \
        if Path("/proc/cpuinfo").exists() else platform.processor()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True,
                            text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=HERE, capture_output=True, text=True).stdout.strip())
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "cpu": model, "cores": os.cpu_count(), "memory_gib": round(memory, 1),
            "python": platform.python_version(), "commit": commit + ("+dirty" if dirty else ""),
            "load_at_start": os.getloadavg(), "command": " ".join(sys.argv)}


def ensure_peers(venv: Path, install: bool, torch_wheel: Path, log) -> tuple[str | None, dict]:
    """The peers venv's python (created and filled when ``install``) and which peers import."""
    python = venv / "bin" / "python"
    if install and not python.exists():
        log(f"creating the peers venv {venv}")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if install:
        pip = [str(python), "-m", "pip", "install", "-q"]
        torch = str(torch_wheel) if torch_wheel.exists() else "torch==2.13.0"
        subprocess.run(pip + [torch], check=True)          # first: no CUDA torch pulled later
        subprocess.run(pip + PEERS, check=False)
    if not python.exists():
        return None, {name: False for name in PEER_MODULES}
    found = {name: subprocess.run([str(python), "-c", f"import {module}"],
                                  capture_output=True).returncode == 0
             for name, module in PEER_MODULES.items()}
    versions = subprocess.run([str(python), "-m", "pip", "list", "--format", "json"],
                              capture_output=True, text=True).stdout
    wanted = {"torch", "transformers", "lm_eval", "minicons", "duckdb", "polars", "scikit-learn"}
    found_versions = {p["name"]: p["version"] for p in json.loads(versions or "[]")
                      if p["name"].lower().replace("-", "_") in
                      {w.replace("-", "_") for w in wanted}}
    return str(python), {**found, "versions": found_versions}


# ----------------------------------------------------------------------------- scan part
def count_words(path: str) -> tuple[list[str], list[str]]:
    """Hypotheses and labels of a JSONL file (the floors' reading step)."""
    hypotheses, labels = [], []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            hypotheses.append(record["hypothesis"])
            labels.append(str(record["label"]))
    return hypotheses, labels


def worker_floor(path: str) -> dict:
    """scikit-learn: CountVectorizer over the hypotheses, then label × word counts."""
    import numpy as np
    from scipy import sparse
    from sklearn.feature_extraction.text import CountVectorizer

    hypotheses, labels = count_words(path)
    words = CountVectorizer(lowercase=True, token_pattern=r"\S+").fit_transform(hypotheses)
    names, codes = np.unique(labels, return_inverse=True)
    onehot = sparse.csr_matrix((np.ones(len(codes)), (codes, np.arange(len(codes)))),
                               shape=(len(names), len(codes)))
    table = onehot @ words
    return {"pairs": int(table.nnz)}


def worker_duckdb(path: str) -> dict:
    import duckdb

    rows = duckdb.sql(
        "SELECT word, label, count(*) AS n FROM (SELECT CAST(label AS VARCHAR) AS label, "
        "unnest(string_split(lower(hypothesis), ' ')) AS word "
        f"FROM read_json('{path}', format='newline_delimited')) "
        "WHERE word <> '' GROUP BY ALL").fetchall()
    return {"pairs": len(rows)}


def worker_polars(path: str, streaming: bool) -> dict:
    import polars as pl

    query = (pl.scan_ndjson(path)
             .select(pl.col("label").cast(pl.String),
                     pl.col("hypothesis").str.to_lowercase().str.split(" ").alias("word"))
             .explode("word").filter(pl.col("word") != "")
             .group_by(["word", "label"]).len())
    frame = query.collect(engine="streaming" if streaming else "in-memory")
    return {"pairs": frame.height}


def scan_part(args, peers_python: str | None, found: dict, root: Path, log) -> list[dict]:
    rows = []
    for items in args.scan_items:
        path = root / f"nli-{items}.jsonl"
        log(f"generating {items:,} NLI items → {path}")
        subprocess.run([sys.executable, str(HERE / "scale_data.py"), str(path), "--items",
                        str(items), "--format", "jsonl"], check=True,
                       env={**os.environ, "PYTHONPATH": str(HERE.parent)})
        # -P: the working directory is not put on sys.path, so PYTHONPATH picks the checkout
        cli = [sys.executable, "-P", "-m", "cuelens.cli", "scan", str(path), "--features", "none"]
        (root / f"work-{items}").mkdir(exist_ok=True)
        env = {"PYTHONPATH": str(HERE.parent)}
        commands = {
            "cuelens exact": (cli + ["--out", str(root / f"out-{items}-exact")], env),
            "cuelens streaming": (cli + ["--stats", "streaming", "--work-dir",
                                         str(root / f"work-{items}"),
                                         "--out", str(root / f"out-{items}-stream")], env),
            "floor (scikit-learn)": ([sys.executable, __file__, "--worker", "floor",
                                      str(path)], {})}
        if args.baseline:
            commands["cuelens exact, baseline"] = (
                cli + ["--out", str(root / f"out-{items}-baseline")],
                {"PYTHONPATH": str(args.baseline)})
        if peers_python and found.get("duckdb"):
            commands["duckdb"] = ([peers_python, __file__, "--worker", "duckdb", str(path)], {})
        if peers_python and found.get("polars"):
            commands["polars"] = ([peers_python, __file__, "--worker", "polars", str(path)], {})
            commands["polars streaming"] = ([peers_python, __file__, "--worker",
                                             "polars-streaming", str(path)], {})
        log(f"scan at {items:,} items: " + ", ".join(commands))
        runs = interleaved(commands, args.runs, log)
        floor = median(runs["floor (scikit-learn)"], "cpu_s")
        for name, measured in runs.items():
            cpu = median(measured, "cpu_s")
            rows.append({"part": "scan", "items": items, "tool": name, "cpu_s": round(cpu, 2),
                         "cpu_s_runs": [round(r["cpu_s"], 2) for r in measured],
                         "wall_s": round(median(measured, "wall_s"), 2),
                         "peak_rss_mb": round(max(r["peak_rss_mb"] for r in measured)),
                         "load": [round(r["load"], 1) for r in measured],
                         "pairs": measured[0].get("pairs"),
                         "cuelens_exact_over_this": round(
                             median(runs["cuelens exact"], "cpu_s") / cpu, 2),
                         "this_over_floor": round(cpu / floor, 2)})
        for work in root.glob(f"work-{items}*"):
            subprocess.run(["rm", "-rf", str(work)], check=False)
        path.unlink()
    return rows


# ----------------------------------------------------------------------------- LLM part
def worker_build_llm(root: str, limit: int) -> dict:
    """Requests from the shared data, the GPT-2 and its tokenizer, the lm-eval task files."""
    import torch

    sys.path.insert(0, str(HERE.parent))
    import tests.lm_random_init as random_init
    from tests.lm_eval_tasks import task_yaml
    from cuelens.data import load_dataset
    from cuelens.probes.llm.templates import TEMPLATES, item_fields

    out = Path(root)
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    template, texts = TEMPLATES["mcq-choice"], []
    counts = {}
    for task, (folder, _) in LLM_TASKS.items():
        dataset = load_dataset(str(DATA / folder))
        split = dataset.test
        n = min(limit, len(split)) if limit else len(split)
        lines = []
        for i in range(n):
            fields = item_fields(split, i, dataset.label_names)
            prompt = template.render(fields).rstrip()
            options = template.option_words(dataset.label_names, fields)
            label = int(split.labels[i]) if split.labels is not None else 0
            lines.append(json.dumps({"prompt": prompt, "options": options, "label": label}))
            texts += [prompt, *options]
        (out / f"{task}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (out / "tasks" / f"cuelens_{task}.yaml").write_text(
            task_yaml(f"cuelens_{task}", out / f"{task}.jsonl", '"<|endoftext|>{{prompt}}"',
                      "options", target_delimiter=" "))
        counts[task] = n
    ptb = (DATA / "lm_corpus" / "ptb.train.txt").read_text(encoding="utf-8").splitlines()
    tokenizer = random_init.byte_level_bpe(ptb + texts, 8000)
    torch.manual_seed(0)
    model = random_init.gpt2(tokenizer, layers=6, hidden=512, heads=8, positions=256)
    model.save_pretrained(out / "model")
    tokenizer.save_pretrained(out / "model")
    config_path = out / "model" / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config["tokenizer_class"] = "PreTrainedTokenizerFast"    # loadable by transformers 4 too
    config_path.write_text(json.dumps(config))
    return {"items": counts, "parameters": sum(p.numel() for p in model.parameters())}


def _requests(root: Path, task: str) -> list[dict]:
    return [json.loads(line) for line in (root / f"{task}.jsonl").read_text().splitlines()]


def worker_ours_llm(root: str, task: str) -> dict:
    """audit probe --llm's local backend on the requests: CPU seconds of ``run`` only."""
    import torch

    sys.path.insert(0, str(HERE.parent))
    from cuelens.lm import load_scorer
    from cuelens.lm.causal import CausalScorer
    from cuelens.probes.llm.backends import BackendOptions, LocalBackend, Request, rows_per_batch

    torch.set_num_threads(1)
    batch = rows_per_batch(BackendOptions(), "cpu")
    scorer = load_scorer(str(Path(root) / "model"), kind="causal", device="cpu",
                         batch_size=batch)
    backend = LocalBackend(scorer, model="gpt2-23M", batch_size=batch)
    items = _requests(Path(root), task)
    requests = [Request("score", r["prompt"], tuple(r["options"])) for r in items]
    answers: dict[int, dict] = {}
    begun = time.process_time()
    backend.run(requests, lambda i, response: answers.__setitem__(i, response))
    timed = time.process_time() - begun
    assert isinstance(scorer, CausalScorer)
    plain = CausalScorer(scorer.model, scorer.tokenizer, name="plain", batch_size=batch,
                         bow_correction=False)
    raw = plain.continuation_logprobs([r["prompt"] for r in items],
                                      [r["options"] for r in items])
    return {"timed_cpu_s": timed, "uncorrected": [v.tolist() for v, _ in raw],
            "requests": sum(len(r["options"]) for r in items)}


def worker_lm_eval(root: str, task: str, batch: int) -> dict:
    """lm-eval's HF backend on the same requests: CPU seconds of ``HFLM.loglikelihood`` only."""
    import torch
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    torch.set_num_threads(1)
    timed: list[float] = []
    original = HFLM.loglikelihood

    def loglikelihood(self, requests, *a, **k):
        begun = time.process_time()
        out = original(self, requests, *a, **k)
        timed.append(time.process_time() - begun)
        return out

    HFLM.loglikelihood = loglikelihood
    name = f"cuelens_{task}"
    results = simple_evaluate(model="hf", model_args=f"pretrained={Path(root) / 'model'}",
                              tasks=[name], task_manager=TaskManager(
                                  include_path=str(Path(root) / "tasks")),
                              batch_size=batch, device="cpu", log_samples=True,
                              verbosity="ERROR")
    samples = sorted(results["samples"][name], key=lambda s: s["doc_id"])
    values = [[float(r[0]) for r in s["filtered_resps"]] for s in samples]
    return {"timed_cpu_s": sum(timed), "loglikelihoods": values}


def llm_part(args, peers_python: str | None, found: dict, root: Path, log) -> list[dict]:
    import numpy as np

    built = measure([sys.executable, __file__, "--worker", "build-llm", str(root),
                     str(args.llm_items)], {"PYTHONPATH": str(HERE.parent)})
    log(f"model: {built['parameters']:,} parameters; items {built['items']}")
    rows = []
    for task in args.llm_tasks:
        commands = {"cuelens": ([sys.executable, __file__, "--worker", "ours-llm", str(root),
                                 task], {**ONE_THREAD, "PYTHONPATH": str(HERE.parent)})}
        if peers_python and found.get("lm-eval"):
            for batch in args.lm_eval_batches:
                commands[f"lm-eval batch {batch}"] = (
                    [peers_python, __file__, "--worker", "lm-eval", str(root), task, str(batch)],
                    ONE_THREAD)
        log(f"LLM option scoring, {task}: " + ", ".join(commands))
        runs = interleaved(commands, args.runs, log)
        ours = median(runs["cuelens"], "timed_cpu_s")
        ours_values = runs["cuelens"][0]["uncorrected"]
        lm_eval = {name: median(measured, "timed_cpu_s") for name, measured in runs.items()
                   if name != "cuelens"}
        for name, measured in runs.items():
            cpu = median(measured, "timed_cpu_s")
            row = {"part": "llm", "task": task, "tool": name, "items": built["items"][task],
                   "requests": runs["cuelens"][0]["requests"], "cpu_s": round(cpu, 2),
                   "cpu_s_runs": [round(r["timed_cpu_s"], 2) for r in measured],
                   "load": [round(r["load"], 1) for r in measured],
                   "speedup_of_cuelens": round(cpu / ours, 2)}
            if "loglikelihoods" in measured[0]:
                row["max_abs_diff_vs_cuelens_uncorrected"] = float(max(
                    np.abs(np.array(a) - np.array(b)).max()
                    for a, b in zip(measured[0]["loglikelihoods"], ours_values)))
            rows.append(row)
        if lm_eval:
            default = lm_eval.get("lm-eval batch 1")
            best = min(lm_eval, key=lambda k: lm_eval[k])
            rows.append({"part": "llm", "task": task, "tool": "summary",
                         "vs_lm_eval_default": round(default / ours, 2) if default else None,
                         "lm_eval_tuned": best,
                         "vs_lm_eval_tuned": round(lm_eval[best] / ours, 2)})
    return rows


# ----------------------------------------------------------------------------- minicons part
def lm_part(args, peers_python: str | None, found: dict, root: Path, log) -> list[dict]:
    if not (peers_python and found.get("minicons")):
        log("minicons is not available: part lm skipped")
        return []
    runs = []
    for r in range(args.runs):
        out = root / f"lm-speed-{r}.json"
        measure([sys.executable, str(HERE / "lm_bench.py"), "--speed", peers_python,
                 "--threads", "1", "--causal", str(args.lm_causal), "--masked",
                 str(args.lm_masked), "--out", str(out)], {**ONE_THREAD,
                                                          "PYTHONPATH": str(HERE.parent)})
        runs.append(json.loads(out.read_text()))
        log(f"  run {r + 1}/{args.runs}: causal {runs[-1]['ratio_causal_bow_vs_minicons_plain']}"
            f"×, PLL {runs[-1]['ratio_pll']}×")
    keys = ["ratio_causal_bow_vs_minicons_plain", "ratio_causal_bow_vs_minicons_bow",
            "ratio_pll", "ours_causal_bow_per_cpu_s", "minicons_causal_plain_per_cpu_s",
            "minicons_causal_bow_per_cpu_s", "ours_pll_per_cpu_s", "minicons_pll_per_cpu_s",
            "max_abs_diff_causal_plain", "max_abs_diff_pll"]
    return [{"part": "lm", **{k: statistics.median(r[k] for r in runs) for k in keys},
             "runs": {k: [r[k] for r in runs] for k in keys[:3]}}]


# ----------------------------------------------------------------------------- main
WORKERS = {
    "floor": lambda a: worker_floor(a[0]),
    "duckdb": lambda a: worker_duckdb(a[0]),
    "polars": lambda a: worker_polars(a[0], False),
    "polars-streaming": lambda a: worker_polars(a[0], True),
    "build-llm": lambda a: worker_build_llm(a[0], int(a[1])),
    "ours-llm": lambda a: worker_ours_llm(a[0], a[1]),
    "lm-eval": lambda a: worker_lm_eval(a[0], a[1], int(a[2])),
}
PARTS = {"scan": scan_part, "llm": llm_part, "lm": lm_part}


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--parts", default="scan,llm,lm", help="scan, llm, lm (comma-separated)")
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs (medians)")
    parser.add_argument("--scan-items", type=_ints, default=[100_000, 1_000_000])
    parser.add_argument("--llm-tasks", default="copa,commonsenseqa")
    parser.add_argument("--llm-items", type=int, default=0, help="items per task (0: all)")
    parser.add_argument("--lm-eval-batches", type=_ints, default=[1, 8, 16, 32, 64])
    parser.add_argument("--lm-causal", type=int, default=128, help="BLiMP sentences (causal)")
    parser.add_argument("--lm-masked", type=int, default=32, help="BLiMP sentences (PLL)")
    parser.add_argument("--peers-venv", type=Path, default=Path("/work/venvs/peers"))
    parser.add_argument("--torch-wheel", type=Path, default=Path(
        "/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"))
    parser.add_argument("--no-install", action="store_true", help="use the peers venv as is")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--baseline", type=Path, help="scan part: a checkout of an earlier "
                        "commit whose exact scan is timed alongside (same venv)")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(WORKERS[args.worker[0]](args.worker[1:])))
        return
    args.llm_tasks = [t for t in args.llm_tasks.split(",") if t]

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    summary: dict = {"machine": machine(), "runs": args.runs}
    python, found = ensure_peers(args.peers_venv, not args.no_install, args.torch_wheel, log)
    summary["peers"] = found
    log(f"peers: {found}")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="cuelens-peers-") as tmp:
        for part in [p for p in args.parts.split(",") if p]:
            rows += PARTS[part](args, python, found, Path(tmp), log)
            summary["rows"] = rows
            if args.out:
                args.out.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    summary["machine"]["load_at_end"] = os.getloadavg()
    for row in rows:
        print(json.dumps(row))
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
