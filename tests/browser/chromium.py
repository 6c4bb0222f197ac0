"""Headless Chromium (Debian ``chromium`` + ``chromium-driver``) driven by Selenium, for the
report's browser tests and benchmarks/report_bench.py. No browser is ever downloaded."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = os.environ.get("CUELENS_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CUELENS_CHROMEDRIVER", "/usr/bin/chromedriver")
ARTIFACTS = Path(os.environ.get("CUELENS_ARTIFACTS",
                                Path(__file__).resolve().parents[2] / "test-artifacts")) / "report"
# Catches dialogs even if an injected handler swallowed them: runs before any page script.
DIALOG_TRAP = """
window.__dialogs = [];
for (const name of ["alert", "confirm", "prompt", "print"]) {
  window[name] = function () { window.__dialogs.push(name + ":" + Array.from(arguments).join(",")); };
}
"""


@dataclass
class PageLoad:
    url: str
    paint: float  # seconds from navigation start to the first contentful paint
    interactive: float  # ... to the cue table and explorer working (before plotly.js loads)
    first_figure: float  # ... to the first figure drawn
    seconds: float  # ... to every figure drawn
    console: list = field(default_factory=list)
    requests: list = field(default_factory=list)


class Browser:
    def __init__(self, driver):
        self.driver = driver

    def open(self, path: Path, timeout: float = 20.0) -> PageLoad:
        """Load ``path`` from file://, wait until every plot div holds an SVG, and return the
        console messages and network requests seen since the previous ``open``."""
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver.get("about:blank")  # leave the previous page (and the new-tab page) behind
        self.driver.get_log("browser")
        self.driver.get_log("performance")
        url = path.resolve().as_uri()
        self.driver.get(url)
        WebDriverWait(self.driver, timeout).until(lambda d: d.execute_script(
            "return document.readyState === 'complete' && "
            "document.body.getAttribute('data-figures-drawn') === 'true'"))
        times = self.driver.execute_script(
            "const mark = n => (performance.getEntriesByName(n)[0] || {startTime: NaN}).startTime;"
            "return [mark('first-contentful-paint'), mark('cuelens-ready'),"
            "        mark('cuelens-first-figure'),"
            "        mark('cuelens-figures-drawn')]"
            "       .map(t => t / 1000);")
        requests = []
        for entry in self.driver.get_log("performance"):
            msg = json.loads(entry["message"])["message"]
            if msg["method"] == "Network.requestWillBeSent":
                requests.append(msg["params"]["request"]["url"])
        requests = [u for u in requests if u != url and not u.startswith("data:")]
        requests += self.driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name);")
        return PageLoad(url, *times, self.driver.get_log("browser"), requests)

    def screenshot(self, name: str, part_height: int = 1500) -> list[Path]:
        """Full-page PNGs under the artifacts folder, cut into parts of ``part_height`` CSS
        pixels (``<name>-1.png``, ``<name>-2.png``, …) so that each stays readable."""
        size = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for old in ARTIFACTS.glob(f"{name}-*.png"):
            old.unlink()
        paths, top = [], 0
        while top < size["height"]:
            height = min(part_height, size["height"] - top)
            shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": 0, "y": top, "width": size["width"], "height": height, "scale": 1}})
            paths.append(ARTIFACTS / f"{name}-{len(paths) + 1}.png")
            paths[-1].write_bytes(base64.b64decode(shot["data"]))
            top += height
        return paths

    def save_png(self, name: str, data: str) -> Path:
        """Write a base64 PNG (a CDP screenshot) as ``<name>.png`` under the artifacts folder."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        path.write_bytes(base64.b64decode(data))
        return path

    def dialogs(self) -> list[str]:
        return self.driver.execute_script("return window.__dialogs || [];")


def missing_binaries() -> list[str]:
    return [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]


@contextlib.contextmanager
def start() -> Iterator[Browser]:
    """A fresh headless Chromium (own profile directory, no network services) for a session."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="cuelens-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                "--window-size=1280,900", f"--user-data-dir={profile}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    options.set_capability("unhandledPromptBehavior", "ignore")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": DIALOG_TRAP})
        yield Browser(driver)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
