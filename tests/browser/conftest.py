"""Fixtures of the browser tests: one headless Chromium per session (see chromium.py).

The tests skip when chromium / chromedriver are missing, and fail under CI, where
scripts/setup.sh installs them. Screenshots go to ``test-artifacts/report/`` (git-ignored;
override with ``CUELENS_ARTIFACTS``).
"""

from __future__ import annotations

import os

import chromium
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    missing = chromium.missing_binaries()
    if missing:
        message = f"missing {missing}: apt-get install -y chromium chromium-driver"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with chromium.start() as browser:
        yield browser
