"""Issue 27 in real headless Chromium at 1400 × 900: the summary block is on the first screen of
every report kind, whiskers never cross value labels, every significant cue is in the table,
whole-word search, a 100,000-character cue, --plotly directory offline. First-screen screenshots:
test-artifacts/report/first-screen-<kind>.png (docs/report.md shows copies made by
scripts/report_screenshots.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from report_fixtures import (compare_results, contrast_judge_results, contrast_pairs_results,
                             lengths_section, llm_probe_results, mcq_results, nli_results,
                             score_pairs_results)
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from cuelens.audit.judge import judge_section
from cuelens.reports import ReportOptions, render_report

WIDTH, HEIGHT = 1400, 900


def scan_nli() -> dict:
    results = nli_results()
    del results["probe"]
    results["lengths"] = lengths_section()
    return results


def mcq_rules() -> dict:
    results = mcq_results()
    del results["probe"]
    results["mcq_baselines"] = {
        "chance": 0.5, "n_items": 200, "fitted_on": "all", "bonferroni_alpha": 0.0125,
        "gold_position": {}, "rows": [
            {"name": n, "fitted": f, "accuracy": a, "accuracy_ci": [a - 0.068, a + 0.068],
             "D": round(a - 0.5, 6), "D_ci": [a - 0.568, a - 0.432], "p_value": p,
             "significant": p < 0.0125, "chance": 0.5, "n_items": 200}
            for n, f, a, p in (("longest choice", False, 0.62, 0.001),
                               ("shortest choice", False, 0.38, 0.001),
                               ("answer position", True, 0.55, 0.2),
                               ("choices-only BoW", True, 0.97, 1e-9))]}
    return results


def hostile_cues() -> dict:
    """Cues "not", "nothing", "not really" and one of 100,000 characters, with examples."""
    results = scan_nli()
    long_token = "a" * 100_000
    base = results["cues"][0]
    for token in ("not", "nothing", "not really", long_token):
        results["cues"].append(dict(copy.deepcopy(base), token=token, significant=False))
        index = len(results["examples"]["items"])
        results["examples"]["items"].append({"id": token[:10], "premise": "p", "label": "neutral",
                                             "text": f"x {token} y", "easy": True})
        results["examples"]["by_cue"][token] = [index]
    return results


PAGES = {"scan_nli": scan_nli, "scan_mcq": mcq_rules, "probe": nli_results,
         "llm_probe": llm_probe_results, "score_pairs": score_pairs_results,
         "contrast_judge": contrast_judge_results, "contrast_pairs": contrast_pairs_results,
         "compare": compare_results,
         "judge_log": lambda: judge_section(Path(__file__).resolve().parents[2] / "docs" /
                                            "examples" / "fastchat-gpt-4_pair.jsonl")}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    root = tmp_path_factory.mktemp("first-screen")
    out = {name: render_report(build(), root / f"{name}.html") for name, build in PAGES.items()}
    out["hostile"] = render_report(hostile_cues(), root / "hostile.html")
    folder = root / "folder"
    folder.mkdir()
    out["directory"] = render_report(nli_results(), folder / "report.html",
                                     options=ReportOptions(plotly="directory"))
    return out


@pytest.fixture
def wide(browser):
    browser.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    yield browser
    browser.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def rect(browser, script: str) -> dict:
    return browser.driver.execute_script(
        f"const r = ({script}).getBoundingClientRect();"
        "return {top: r.top + scrollY, bottom: r.bottom + scrollY, left: r.left, right: r.right};")


@pytest.mark.parametrize("name", list(PAGES))
def test_summary_block_is_on_the_first_screen(wide, pages, name):
    load = wide.open(pages[name])
    assert [e for e in load.console if e["level"] in ("SEVERE", "WARNING")] == []
    assert load.requests == []
    d = wide.driver
    assert d.execute_script("return document.querySelector('main > section').id") == "summary"
    top = rect(wide, "document.getElementById('summary')")["top"]
    # the verdicts and the first findings (the visible table) end within the first 900 px
    last = ("document.querySelector('#summary table.findings') || "
            "Array.from(document.querySelectorAll('#summary .summary-verdict')).pop()")
    assert top < 300 and rect(wide, last)["bottom"] <= HEIGHT, name
    shot = d.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": {
        "x": 0, "y": 0, "width": WIDTH, "height": HEIGHT, "scale": 1}})
    wide.save_png(f"first-screen-{name}", shot["data"])


def overlaps(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] \
        and b["top"] < a["bottom"]


@pytest.mark.parametrize("name, figure", [("scan_mcq", "fig-mcq_baselines-mcq_baselines"),
                                          ("probe", "fig-probe-delta"),
                                          ("llm_probe", "fig-llm_probe-delta")])
def test_error_bars_never_cross_value_labels(wide, pages, name, figure):
    wide.open(pages[name])
    boxes = wide.driver.execute_script(
        "const plot = document.getElementById(arguments[0]);"
        "const box = e => { const r = e.getBoundingClientRect();"
        "  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };"
        "return [Array.from(plot.querySelectorAll('path.xerror, path.yerror')).map(box),"
        "        Array.from(plot.querySelectorAll('g.annotation text, text.bartext')).map(box)];",
        figure)
    whiskers, labels = boxes
    assert whiskers, "no error bars drawn"
    assert labels or name == "llm_probe", "no value labels drawn"
    for w in whiskers:
        for label in labels:
            assert not overlaps(w, label), (w, label)


def test_every_significant_cue_is_in_the_table(wide, pages):
    wide.open(pages["scan_nli"])
    d = wide.driver
    d.find_element(By.ID, "cue-significant").click()
    n = sum(c["significant"] for c in scan_nli()["cues"])
    assert d.find_element(By.ID, "cue-count").text.startswith(f"showing {n} of")
    # ranked by z: the first row is the strongest cue
    first = d.find_element(By.CSS_SELECTOR, "#cue-table tbody tr td").text
    assert first == max(scan_nli()["cues"], key=lambda c: c["metrics"]["z"])["token"]


def shown_tokens(browser) -> list[str]:
    return browser.driver.execute_script(
        "return Array.from(document.querySelectorAll('#cue-table tbody tr'))"
        ".map(tr => tr.cells[0].textContent);")


def test_cue_search_matches_whole_words(wide, pages):
    wide.open(pages["hostile"])
    box = wide.driver.find_element(By.ID, "cue-filter")
    box.send_keys("not")
    assert sorted(shown_tokens(wide)) == ["not", "not really"]  # not "nothing"
    box.clear()
    box.send_keys("noth*")
    assert shown_tokens(wide) == ["nothing"]


def test_explorer_takes_a_100000_character_cue_without_error(wide, pages):
    load = wide.open(pages["hostile"])
    assert load.console == []
    d = wide.driver
    select = Select(d.find_element(By.ID, "explorer-cue"))
    option = next(o for o in select.options if len(o.get_attribute("value")) == 100_000)
    assert len(option.text) < 100
    select.select_by_value(option.get_attribute("value"))
    marks = d.execute_script("return Array.from(document.querySelectorAll('#explorer-examples mark'))"
                             ".map(m => m.textContent.length)")
    assert marks == [100_000]
    assert len(d.find_element(By.ID, "explorer-count").text) < 120
    assert [e for e in d.get_log("browser") if e["level"] == "SEVERE"] == []
    row = next(r for r in shown_tokens(wide) if r.startswith("aaaa"))
    assert len(row) <= 60


def test_plotly_directory_page_loads_offline(wide, pages):
    load = wide.open(pages["directory"])
    assert [e for e in load.console if e["level"] in ("SEVERE", "WARNING")] == []
    assert all(u.startswith("file:") for u in load.requests)
    assert wide.driver.find_elements(By.CSS_SELECTOR, ".plot svg.main-svg")
