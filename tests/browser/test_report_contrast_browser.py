"""Controversial-pairs report sections in headless Chromium (issue 8): figures drawn with the
noise-ceiling bands, the pairs table sorts and filters, XSS payloads in sentences show as text.
Screenshots: test-artifacts/report/contrast_*.png."""

from __future__ import annotations

import pytest
from report_fixtures import PAYLOADS, contrast_judge_results, contrast_pairs_results
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from cuelens.reports import render_report

FIXTURES = {"judge": contrast_judge_results,
            "natural": lambda xss=False: contrast_pairs_results(xss, "natural"),
            "synthetic": lambda xss=False: contrast_pairs_results(xss, "synthetic")}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    root = tmp_path_factory.mktemp("contrast-reports")
    return {f"{name}{'_xss' if xss else ''}": render_report(build(xss=xss), root / f"{name}{xss}.html")
            for name, build in FIXTURES.items() for xss in (False, True)}


def table_rows(browser) -> list[list[str]]:
    return browser.driver.execute_script(
        "return Array.from(document.querySelectorAll('#pairs-table tbody tr'))"
        ".map(tr => Array.from(tr.cells).map(td => td.textContent));")


@pytest.mark.parametrize("name", sorted(f"{n}{x}" for n in FIXTURES for x in ("", "_xss")))
def test_contrast_pages_load_offline_and_run_nothing(browser, pages, name):
    load = browser.open(pages[name])
    browser.screenshot(f"contrast_{name}")
    d = browser.driver
    assert [e for e in load.console if e["level"] in ("SEVERE", "WARNING")] == []
    assert load.requests == [] and browser.dialogs() == []
    has_plots = bool(d.find_elements(By.CSS_SELECTOR, ".plot"))  # no charts: no plotly.js
    assert d.execute_script("return document.querySelectorAll('script').length") == 2 + has_plots
    assert d.execute_script("return document.querySelectorAll('img, iframe, [onerror], [onload]').length") == 0
    for plot in d.find_elements(By.CSS_SELECTOR, ".plot"):
        assert plot.find_elements(By.CSS_SELECTOR, "svg.main-svg"), plot.get_attribute("id")
    if name.startswith("judge"):  # one grey noise-ceiling band per model and figure
        assert d.execute_script("return document.querySelectorAll('.plot .shapelayer path').length") >= 4
    if name.endswith("_xss"):
        text = d.execute_script("return document.body.innerText")
        assert PAYLOADS[0] in text  # shown literally, as text


def test_pairs_table_sorts_and_filters(browser, pages):
    browser.open(pages["natural"])
    d = browser.driver
    assert [r[2] for r in table_rows(browser)] == ["sentence 0 ", "sentence 2 ", "sentence 4 "]
    rank = d.find_element(By.CSS_SELECTOR, "#pairs-table th[data-col='10']")  # rank s1|m1
    rank.click()  # numbers: descending first
    assert [r[10] for r in table_rows(browser)] == ["0.125", "0.063", "0.000"]
    assert rank.get_attribute("aria-sort") == "descending"
    rank.click()
    assert [r[10] for r in table_rows(browser)] == ["0.000", "0.063", "0.125"]
    assert rank.get_attribute("aria-sort") == "ascending"
    d.find_element(By.CSS_SELECTOR, "#pairs-table th[data-col='9']").click()  # log p(s2|m2), a null
    assert [r[9] for r in table_rows(browser)] == ["-38.000", "-38.000", "n/a"]
    d.find_element(By.CSS_SELECTOR, "#pairs-table th[data-col='5']").click()  # s2 #
    assert [r[5] for r in table_rows(browser)] == ["5", "3", "1"]
    d.find_element(By.CSS_SELECTOR, "#pairs-table th[data-col='3']").click()  # s2: text, A→Z
    assert [r[3] for r in table_rows(browser)] == ["\u2013", "sentence 1", "sentence 3"]  # unknown first
    Select(d.find_element(By.ID, "pairs-models")).select_by_value("bert vs lstm")
    assert [r[:2] for r in table_rows(browser)] == [["bert", "lstm"]]
    Select(d.find_element(By.ID, "pairs-models")).select_by_value("")
    box = d.find_element(By.ID, "pairs-filter")
    box.send_keys("sentence 4")
    assert [r[2] for r in table_rows(browser)] == ["sentence 4 "]
    assert d.find_element(By.ID, "pairs-count").text == "showing 1 of 3"
