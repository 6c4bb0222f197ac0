"""First-screen screenshots (1400 × 900 CSS px) of each report kind for docs/report.md.

Usage (from the repository root; needs chromium and chromedriver)::

    PYTHONPATH=.:tests:tests/browser python tests/browser/screenshots.py docs/img \\
        scan-nli=audit-results/snli/results.json scan-mcq=audit-results/arct/results.json

Each ``NAME=results.json`` is rendered and shot as ``report-NAME.png``; the kinds not given
(probe, LLM probe, score-pairs, contrast judge/pairs, compare) are shot from the hand-built
fixtures of tests/report_fixtures.py. The PNGs are written as Chromium produces them; docs/img
holds copies reduced to a 64-colour palette (Pillow, outside the project's environment).
"""

from __future__ import annotations

import base64
import sys
import tempfile
from pathlib import Path

import chromium
from report_fixtures import (compare_results, contrast_judge_results, contrast_pairs_results,
                             llm_probe_results, nli_results, score_pairs_results)

from cuelens.reports import load_results, render_report

WIDTH, HEIGHT = 1400, 900
FIXTURES = {"probe": nli_results, "llm-probe": llm_probe_results,
            "score-pairs": score_pairs_results, "contrast-judge": contrast_judge_results,
            "contrast-pairs": contrast_pairs_results, "compare": compare_results}


def main(out_dir: str, *named: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = {name: build() for name, build in FIXTURES.items()}
    results.update({name: load_results(path) for name, path in (n.split("=", 1) for n in named)})
    with tempfile.TemporaryDirectory() as tmp, chromium.start() as browser:
        browser.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
        for name, result in results.items():
            browser.open(render_report(result, Path(tmp) / f"{name}.html"), timeout=60)
            shot = browser.driver.execute_cdp_cmd("Page.captureScreenshot", {
                "format": "png", "clip": {"x": 0, "y": 0, "width": WIDTH, "height": HEIGHT,
                                          "scale": 1}})
            path = out / f"report-{name}.png"
            path.write_bytes(base64.b64decode(shot["data"]))
            print(path)


if __name__ == "__main__":
    main(*sys.argv[1:])
