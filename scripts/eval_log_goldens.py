"""Write the golden evaluation logs of docs/examples/ with the real tools (docs/eval-logs.md).

Run with a Python that has lm-eval, inspect_ai and a CPU torch installed (never the project
venv), from the repository root; everything is local (no hub, no network)::

    python -m venv /work/venvs/tools
    /work/venvs/tools/bin/pip install torch==2.13.0 && \
        /work/venvs/tools/bin/pip install lm-eval==0.4.13 inspect-ai==0.3.285
    /work/venvs/tools/bin/python scripts/eval_log_goldens.py [--out docs/examples/goldens]

What it does:

1. writes a generated multiple-choice dataset (``planted.jsonl``: made-up words, 3
   choices, numeric ids 95.. so that ids sorted as strings differ from their order; the word
   ``surely`` marks the gold choice in 60% of the items and a wrong one in 15%);
2. builds a tiny randomly initialised GPT-2 and its byte-level BPE tokenizer in a temporary
   directory (seeded);
3. runs ``lm_eval --model hf … --log_samples`` on a local task YAML over that file, once on all
   items and once with ``--limit 20``, and keeps each run's ``samples_*.jsonl`` and
   ``results_*.json``;
4. runs Inspect on a local task whose samples keep the dataset's ids (``Sample(id=95, …)``,
   ``multiple_choice()`` solver, ``choice()`` scorer) with a small registered model that answers
   the option containing ``surely`` (else A), writing the log as ``.eval`` and as ``.json``;
5. records the tool versions in ``versions.json``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.lm_eval_tasks import task_yaml  # noqa: E402  (the repository's test helpers)

CUE = "surely"
N_ITEMS = 40
FIRST_ID = 95
LIMIT = 20


def make_items(n: int = N_ITEMS, seed: int = 7) -> list[dict]:
    """Generated items: made-up words, no text from any real dataset."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "gu"]
    words = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(2, 3)))
                    for _ in range(200)})
    phrase = lambda k: " ".join(rng.choice(words) for _ in range(k))  # noqa: E731
    rows = []
    for i in range(n):
        k = 3
        gold = rng.randrange(k)
        choices = [phrase(3) for _ in range(k)]
        draw = rng.random()
        if draw < 0.60:
            choices[gold] = f"{CUE} {choices[gold]}"
        elif draw < 0.75:
            wrong = (gold + 1) % k
            choices[wrong] = f"{CUE} {choices[wrong]}"
        rows.append({"id": FIRST_ID + i, "premise": phrase(6).capitalize() + ".",
                     "choices": choices, "label": gold})
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def tiny_gpt2(directory: Path, texts: list[str]) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<|endoftext|>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token="<|endoftext|>",
                                        eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=128, n_embd=32, n_layer=2,
                        n_head=2, bos_token_id=tokenizer.bos_token_id,
                        eos_token_id=tokenizer.eos_token_id)
    GPT2LMHeadModel(config).eval().save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def run_lm_eval(model: Path, data: Path, work: Path, out: Path, limit: int | None) -> None:
    tasks = work / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / "cuelens_planted.yaml").write_text(
        task_yaml("cuelens_planted", data, '"Question: {{premise}}\\nAnswer:"',
                  '"{{choices}}"', metrics=("acc", "acc_norm")), encoding="utf-8")
    run_dir = work / f"lm-eval-{limit or 'all'}"
    command = [sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args",
               f"pretrained={model},dtype=float32", "--tasks", "cuelens_planted",
               "--include_path", str(tasks), "--device", "cpu", "--batch_size", "8",
               "--output_path", str(run_dir), "--log_samples", "--seed", "0"]
    if limit:
        command += ["--limit", str(limit)]
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    subprocess.run(command, check=True, env=env)
    suffix = f"-limit{limit}" if limit else ""
    samples = glob.glob(str(run_dir / "**" / "samples_cuelens_planted_*.jsonl"), recursive=True)
    results = glob.glob(str(run_dir / "**" / "results_*.json"), recursive=True)
    if len(samples) != 1 or len(results) != 1:
        raise SystemExit(f"lm-eval wrote {samples} and {results}")
    # lm-eval finds results_*.json beside samples_*.jsonl: keep the pair in one directory
    pair = out / f"lm-eval{suffix}"
    pair.mkdir(exist_ok=True)
    shutil.copy(samples[0], pair / "samples_cuelens_planted.jsonl")
    shutil.copy(results[0], pair / "results_cuelens_planted.json")


INSPECT_TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample, json_dataset
from inspect_ai.model import ModelAPI, ModelOutput, modelapi
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice

CUE = "surely"


def record_to_sample(record):
    return Sample(id=record["id"], input=record["premise"], choices=record["choices"],
                  target="ABCDEFG"[record["label"]])


@task
def planted():
    return Task(dataset=json_dataset(DATA, record_to_sample), solver=multiple_choice(),
                scorer=choice())


@modelapi(name="planted")
def planted_api():
    class Planted(ModelAPI):
        """Answers the lettered option containing the cue word, else A."""

        async def generate(self, input, tools, tool_choice, config):
            prompt = input[-1].text
            options = [line for line in prompt.splitlines() if line[1:3] == ") "]
            hit = [line[0] for line in options if CUE in line.split()]
            return ModelOutput.from_content(model="planted",
                                            content=f"ANSWER: {hit[0] if hit else 'A'}")

    return Planted
'''


def run_inspect(data: Path, work: Path, out: Path) -> None:
    module = work / "planted_task.py"
    module.write_text(f"DATA = {str(data)!r}\n" + INSPECT_TASK, encoding="utf-8")
    sys.path.insert(0, str(work))
    import planted_task  # noqa: F401  (registers the task and the model)
    from inspect_ai import eval as inspect_eval

    for fmt in ("eval", "json"):
        log_dir = work / f"inspect-{fmt}"
        [log] = inspect_eval(planted_task.planted(), model="planted/cue", log_dir=str(log_dir),
                             log_format=fmt, display="none", max_connections=1)
        if log.status != "success":
            raise SystemExit(f"Inspect run failed: {log.error}")
        [written] = glob.glob(str(log_dir / f"*.{fmt}"))
        shutil.copy(written, out / f"inspect-planted.{fmt}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/examples/goldens"))
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    rows = make_items()
    data = out / "planted.jsonl"
    write_jsonl(data, rows)
    with tempfile.TemporaryDirectory(prefix="cuelens-goldens-") as tmp:
        work = Path(tmp)
        texts = [r["premise"] + " " + " ".join(r["choices"]) for r in rows] + ["Question: Answer:"]
        model = tiny_gpt2(work / "tiny-gpt2", texts)
        run_lm_eval(model, data, work, out, None)
        run_lm_eval(model, data, work, out, LIMIT)
        run_inspect(data, work, out)
    versions = {name: version(name) for name in ("lm_eval", "inspect_ai", "transformers",
                                                 "torch", "datasets")}
    versions["python"] = sys.version.split()[0]
    (out / "versions.json").write_text(json.dumps(versions, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(versions))


if __name__ == "__main__":
    main()
