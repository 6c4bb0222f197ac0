"""mypy runs on the package with zero errors (config: [tool.mypy] in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_reports_no_errors():
    pytest.importorskip("mypy")
    run = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "cuelens"],
                         cwd=ROOT, capture_output=True, text=True, timeout=280)
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert run.returncode == 0 and errors == [], "\n".join(errors or [run.stdout, run.stderr])
