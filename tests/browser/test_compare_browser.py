"""compare.html in real headless Chromium: the cue lists' numbers stay on one line."""

from __future__ import annotations

import pytest
from report_fixtures import compare_results

from cuelens.reports import render_report

ONE_LINE = """
return Array.from(document.querySelectorAll('.compare-cues td.num')).map(cell => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  return [cell.textContent, new Set(Array.from(range.getClientRects()).map(r => r.top)).size];
});"""


def cue(token: str, z: float, z_before: float | None = None) -> dict:
    row = {"token": token, "label": "contradiction", "count": 1234, "z": z}
    return row if z_before is None else {**row, "z_before": z_before}


def open_lists_page(browser, tmp_path, width: int) -> None:
    """A comparison with three cue lists of long tokens, opened at ``width`` pixels."""
    result = compare_results()
    result.update(cues_gained=[cue("sleeping_bag_outdoors", 16.8), cue("nobody", 8.1)],
                  cues_lost=[cue("cats", 16.8), cue("tall_building_skyline", 8.4)],
                  cues_kept=[cue("outdoors_activity", 16.8, 12.3), cue("never", 9.9, 10.2)],
                  n_cues_gained=2, n_cues_lost=2, n_cues_kept=2)
    page = render_report(result, tmp_path / "compare.html")
    browser.driver.set_window_size(width, 900)
    browser.open(page)


@pytest.mark.parametrize("width", [1400, 1280, 1024, 820])
def test_a_cue_lists_z_and_count_are_never_cut_over_two_lines(browser, tmp_path, width):
    """Three lists side by side with long tokens: z was squeezed to a character's width
    ("16." over "8"), and the page scrolled sideways at 820 pixels."""
    open_lists_page(browser, tmp_path, width)
    try:
        cells = browser.driver.execute_script(ONE_LINE)
        assert len(cells) == 12
        assert [text for text, lines in cells if lines > 1] == []
        assert browser.driver.execute_script(
            "return document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    finally:
        browser.driver.set_window_size(1280, 900)


LABEL_LINES = """
return Array.from(document.querySelectorAll('.compare-cues td:nth-child(2)')).map(cell => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  return new Set(Array.from(range.getClientRects()).map(r => r.top)).size;
});"""


@pytest.mark.parametrize("width", [1400, 1024, 820, 360])
def test_no_sideways_scroll_at_a_phones_width_and_labels_are_never_cut(browser, tmp_path, width):
    """At 360 pixels the page scrolled sideways (the D strip's 22rem name column, the
    dimensions table's headers), and at every width a label broke mid-word ("contradi/ction")."""
    open_lists_page(browser, tmp_path, width)
    try:
        assert browser.driver.execute_script(LABEL_LINES) == [1] * 6
        assert browser.driver.execute_script(
            "return document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    finally:
        browser.driver.set_window_size(1280, 900)
