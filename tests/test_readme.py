"""The README's Python examples run as written (issue 11): every ```python block, in order, in one
namespace, from a temporary working directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)


def test_readme_has_python_examples():
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 2 and all("cuelens" in b or "result" in b for b in blocks)


@pytest.mark.slow
def test_readme_python_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in python_blocks(README.read_text(encoding="utf-8")):
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 (our own README)
    printed = capsys.readouterr().out
    assert "nobody" in printed and "cue leakage D" in printed
