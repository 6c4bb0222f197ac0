"""docs/api.md's Python examples run as written: every ```python block, in order, in one
namespace, from a working directory holding the paths they name (``data/snli/``, its scan in
``audit-results/snli``, ``claims.csv``), with ``gpt2`` a tiny local GPT-2 (no network)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import cuelens
from cuelens.data.synthetic import make_nli
from tests.conftest import write_jsonl
from tests.llm_fakes import one_thread, planted_gpt2_dir  # noqa: F401 (fixture)

API_MD = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)


@pytest.mark.slow
def test_api_doc_python_examples_run(tmp_path, monkeypatch, capsys):
    rows = make_nli(160, seed=0)
    write_jsonl(tmp_path / "data" / "snli" / "train.jsonl", rows[:120])
    write_jsonl(tmp_path / "data" / "snli" / "test.jsonl", rows[120:])
    cuelens.scan(tmp_path / "data" / "snli", features="none", iterations=1).save(
        tmp_path / "audit-results" / "snli", report=False)
    pd.DataFrame({"context": [r["premise"] for r in rows], "claim": [r["hypothesis"] for r in rows],
                  "verdict": [r["label"] for r in rows]}).to_csv(tmp_path / "claims.csv",
                                                                 index=False)
    gpt2 = planted_gpt2_dir(tmp_path / "gpt2", [r["hypothesis"] for r in rows])
    from cuelens.probes.llm import backends

    load_backend = backends.load_backend
    monkeypatch.setattr(backends, "load_backend",
                        lambda spec, *a, **k: load_backend(str(gpt2) if spec == "gpt2" else spec,
                                                           *a, **k))
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks(API_MD.read_text(encoding="utf-8"))
    assert len(blocks) == 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(API_MD), "exec"), namespace)  # noqa: S102 (our own docs)
    assert namespace["result"].dataset.name == "claims"
    printed = capsys.readouterr().out
    stages = [line.rsplit(" ", 1)[0] for line in printed.splitlines()]  # "stage fraction"
    assert [s for s in dict.fromkeys(stages) if not s.startswith("features: parse")] == \
        ["tokenise", "leakage", "easy_hard", "hygiene", "features: score", "bias items"]
    assert (tmp_path / "hard.jsonl").is_file() and len(namespace["bias"]) == 120
