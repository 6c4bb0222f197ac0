"""The HTML report in real headless Chromium (issue 4): offline load, figures, cue table,
explorer, XSS, size and load time. Screenshots: test-artifacts/report/*.png."""

from __future__ import annotations

import json
import unicodedata

import pytest
from report_fixtures import (PAYLOADS, large_results, mcq_results, nli_results,
                             score_pairs_results, write_xss_dataset)
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from cuelens.reports import render_report

FIXTURES = {"nli": nli_results, "mcq": mcq_results, "score_pairs": score_pairs_results}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Reports of the hand-built fixtures (plain and XSS) and of `audit scan` on generated data."""
    from cuelens.audit.pipeline import scan_dataset
    from cuelens.data import load_dataset
    from cuelens.data.synthetic import write_demo_data

    root = tmp_path_factory.mktemp("reports")
    out = {}
    for name, build in FIXTURES.items():
        out[name] = render_report(build(), root / f"{name}.html")
        out[f"{name}_xss"] = render_report(build(xss=True), root / f"{name}_xss.html")
    sources = dict(write_demo_data(root / "data", size=150, seed=0))
    sources.update({f"xss_{task}": write_xss_dataset(root / f"xss-{task}", task)
                    for task in ("nli", "mcq")})
    for key, source in sources.items():
        results = scan_dataset(load_dataset(str(source))).results
        out[f"scan_{key}"] = render_report(json.loads(json.dumps(results)), root / f"scan_{key}.html")
    return out


def figure_ids(browser) -> list[str]:
    return browser.driver.execute_script(
        "return Object.keys(JSON.parse(document.getElementById('report-data').textContent).figures);")


@pytest.mark.parametrize("name", ["nli", "mcq", "score_pairs", "scan_nli", "scan_mcq",
                                  "nli_xss", "mcq_xss", "score_pairs_xss", "scan_xss_nli",
                                  "scan_xss_mcq"])
def test_loads_offline_with_every_figure_drawn(browser, pages, name):
    load = browser.open(pages[name])
    browser.screenshot(name)
    assert [e for e in load.console if e["level"] in ("SEVERE", "WARNING")] == []
    assert load.requests == []
    assert browser.dialogs() == []
    plots = browser.driver.find_elements(By.CSS_SELECTOR, ".plot")
    assert sorted(p.get_attribute("id") for p in plots) == sorted(figure_ids(browser))
    for plot in plots:
        assert plot.find_elements(By.CSS_SELECTOR, "svg.main-svg"), plot.get_attribute("id")
        buttons = [b.get_attribute("data-title") for b in plot.find_elements(By.CSS_SELECTOR, ".modebar-btn")]
        assert "Download plot as a PNG" in buttons and not [b for b in buttons if "Share" in b]
        caption = plot.find_element(By.XPATH, "following-sibling::figcaption").text
        assert len(caption) > 40


def cue_rows(browser) -> list[list[str]]:
    return browser.driver.execute_script(
        "return Array.from(document.querySelectorAll('#cue-table tbody tr'))"
        ".map(tr => Array.from(tr.cells).map(td => td.textContent));")


def test_cue_table_sorts_and_filters(browser, pages):
    browser.open(pages["nli"])
    d = browser.driver
    assert len(cue_rows(browser)) == 9
    support = d.find_element(By.CSS_SELECTOR, "#cue-table th[data-col='2']")
    support.click()  # numbers sort descending first
    assert [int(r[2]) for r in cue_rows(browser)] == [80, 60, 51, 40, 33, 30, 25, 12, 9]
    assert support.get_attribute("aria-sort") == "descending"
    support.click()
    assert [int(r[2]) for r in cue_rows(browser)] == [9, 12, 25, 30, 33, 40, 51, 60, 80]
    d.find_element(By.CSS_SELECTOR, "#cue-table th[data-col='0']").click()  # words: A→Z
    assert [r[0] for r in cue_rows(browser)][:3] == ["cat", "first", "human"]
    d.find_element(By.ID, "cue-filter").send_keys("s")  # whole words: no cue is "s"
    assert cue_rows(browser) == []
    d.find_element(By.ID, "cue-filter").send_keys("*")  # "s*": words starting with s
    assert [r[0] for r in cue_rows(browser)] == ["sad", "sleeping"]
    Select(d.find_element(By.ID, "cue-label")).select_by_value("neutral")
    assert [r[0] for r in cue_rows(browser)] == ["sad"]
    d.find_element(By.ID, "cue-filter").clear()
    d.execute_script("document.getElementById('cue-filter').dispatchEvent(new Event('input'))")
    d.find_element(By.ID, "cue-significant").click()
    assert [(r[0], r[6]) for r in cue_rows(browser)] == [("first", "yes"), ("tall", "yes")]
    assert d.find_element(By.ID, "cue-count").text == "showing 2 of 9"
    browser.screenshot("nli-cue-table-filtered")


def explorer_cards(browser) -> list[dict]:
    return browser.driver.execute_script(
        "return Array.from(document.querySelectorAll('#explorer-examples .example')).map(c => ({"
        "text: c.querySelector('.text').textContent, "
        "marks: Array.from(c.querySelectorAll('mark')).map(m => m.textContent)}));")


def test_explorer_shows_examples_with_the_cue_highlighted(browser, pages):
    browser.open(pages["nli"])
    d = browser.driver
    Select(d.find_element(By.ID, "explorer-cue")).select_by_value("sleeping")
    cards = explorer_cards(browser)
    assert len(cards) == 3
    # whole-word, case-insensitive: "SLEEPING" is marked, "sleepingish" is not
    assert [c["marks"] for c in cards] == [["sleeping"], ["SLEEPING"], ["sleeping"]]
    assert "sleepingish" in cards[0]["text"]
    # the table's "show" link opens the explorer on that cue
    row = next(tr for tr in d.find_elements(By.CSS_SELECTOR, "#cue-table tbody tr")
               if tr.find_element(By.TAG_NAME, "td").text == "outdoors")
    row.find_element(By.CSS_SELECTOR, "button").click()
    assert Select(d.find_element(By.ID, "explorer-cue")).first_selected_option.get_attribute("value") == "outdoors"
    assert [c["marks"] for c in explorer_cards(browser)] == [["outdoors"], ["OUTDOORS"], ["outdoors"]]
    browser.screenshot("nli-explorer")


def test_explorer_highlights_whole_words_of_decomposed_and_marked_text(browser, tmp_path):
    """The scan's cue words are NFC with their combining marks: an NFD text contains them, and
    a word followed by a mark (के in केंद्र) is not a whole-word occurrence."""
    results = nli_results()
    texts = {"été": unicodedata.normalize("NFD", "Un été à Paris, l'été."),
             "के": "केंद्र के पास"}
    examples = results["examples"]
    for word, text in texts.items():
        examples["by_cue"][word] = [len(examples["items"])]
        examples["items"].append({"id": word, "premise": "p", "text": text, "label": "neutral"})
    browser.open(render_report(results, tmp_path / "marks.html"))
    shown = {}
    for word in texts:
        Select(browser.driver.find_element(By.ID, "explorer-cue")).select_by_value(word)
        shown[word] = browser.driver.execute_script(
            "return document.querySelector('#explorer-examples .text').innerHTML;")
    field = '<span class="field">hypothesis</span>'
    assert shown == {"été": f"{field}<bdi>Un <mark class=\"cue\">été</mark> à Paris, "
                            "l'<mark class=\"cue\">été</mark>.</bdi>",
                     "के": f'{field}<bdi>केंद्र <mark class="cue">के</mark> पास</bdi>'}


def test_right_to_left_text_reads_right_to_left(browser, tmp_path):
    """Arabic and Hebrew examples and cue words take their direction from their own letters
    (they were laid out left to right, the final full stop on the wrong side); the cards, the
    table and English text keep theirs."""
    from report_fixtures import _cue

    results = nli_results()
    examples = results["examples"]
    for word, premise, text in [("لا", "رجل يقرأ كتابا في الحديقة.", "لا أحد يقرأ."),
                                ("אולי", "אישה הולכת ברחוב.", "אולי היא הולכת הביתה.")]:
        results["cues"].append(_cue(word, "contradiction", 20, 18, 9.5, True))
        examples["by_cue"][word] = [len(examples["items"])]
        examples["items"].append({"id": word, "premise": premise, "text": text,
                                  "label": "contradiction"})
    browser.open(render_report(results, tmp_path / "rtl.html"))
    d = browser.driver
    direction = "return getComputedStyle(document.querySelector(arguments[0])).direction;"
    for word in ("لا", "אולי", "sleeping"):
        Select(d.find_element(By.ID, "explorer-cue")).select_by_value(word)
        expected = "ltr" if word == "sleeping" else "rtl"
        assert d.execute_script(direction, "#explorer-examples .text bdi") == expected, word
        assert d.execute_script(direction, "#explorer-examples .premise bdi") == expected, word
        assert d.execute_script(direction, "#explorer-examples .text") == "ltr"
    cells = d.execute_script(
        "return Array.from(document.querySelectorAll('#cue-table td.token')).map("
        "td => [td.textContent, getComputedStyle(td).direction, getComputedStyle(td).textAlign]);")
    by_word = {word: (way, align) for word, way, align in cells}
    assert by_word["لا"] == ("rtl", "left") and by_word["אולי"] == ("rtl", "left")
    assert by_word["sleeping"] == ("ltr", "left")
    browser.screenshot("nli-rtl")


def test_long_cues_are_cut_between_whole_characters(browser, tmp_path):
    """A cue over 60 characters is cut in the middle, never inside a surrogate pair (𝐀), between
    a letter and its vowel sign (कि), inside an emoji ZWJ sequence (🏳️‍🌈) nor a flag (🇯🇵): the
    last two were cut between code points."""
    from report_fixtures import _cue

    results = nli_results()
    rainbow, flag = "\U0001f3f3\ufe0f\u200d\U0001f308", "\U0001f1ef\U0001f1f5"
    units = {"\u0915\u093f": 40, "\U0001d400": 70, rainbow: 30, flag: 40}
    long_cues = [unit * count for unit, count in units.items()]
    for token in long_cues:
        results["cues"].append(_cue(token, "neutral", 20, 18, 9.5, True))
        results["examples"]["by_cue"][token] = [0]
    browser.open(render_report(results, tmp_path / "long.html"))
    shown = [r[0] for r in cue_rows(browser) if "…" in r[0]]
    assert len(shown) == 4
    for text in shown:
        head, tail = text.split("…")
        assert head and tail and len(head) + len(tail) < 60
        unit = next(unit for unit in units if unit[0] == text[0])
        assert head == unit * (len(head) // len(unit)) and tail == unit * (len(tail) // len(unit))


def test_explorer_on_scanned_data_caps_at_20_examples(browser, pages):
    browser.open(pages["scan_mcq"])
    d = browser.driver
    options = Select(d.find_element(By.ID, "explorer-cue")).options
    assert options
    for option in options[:5]:
        Select(d.find_element(By.ID, "explorer-cue")).select_by_value(option.get_attribute("value"))
        cards = explorer_cards(browser)
        assert 1 <= len(cards) <= 20
        assert all(c["marks"] for c in cards), option.get_attribute("value")


@pytest.mark.parametrize("name", ["nli_xss", "mcq_xss"])
def test_xss_payloads_show_as_text_and_run_nothing(browser, pages, name):
    load = browser.open(pages[name])
    d = browser.driver
    assert browser.dialogs() == [] and load.console == []
    assert d.execute_script("return document.querySelectorAll('script').length") == 3
    assert d.execute_script("return document.querySelectorAll('img, iframe, [onerror], [onload]').length") == 0
    assert PAYLOADS[0] in d.find_element(By.TAG_NAME, "h1").text
    Select(d.find_element(By.ID, "explorer-cue")).select_by_value(PAYLOADS[0])
    texts = [c["text"] for c in explorer_cards(browser)]
    assert len(texts) == len(PAYLOADS)
    for payload in PAYLOADS[:4]:
        assert any(payload in t for t in texts)
    tokens = [r[0] for r in cue_rows(browser)]
    assert PAYLOADS[2] in tokens
    svg_text = d.execute_script(
        "return Array.from(document.querySelectorAll('.plot svg text')).map(t => t.textContent).join('\\n')")
    assert PAYLOADS[4][:20] in svg_text  # a baseline name, drawn by Plotly as text
    browser.screenshot(f"{name}-explorer")
    assert browser.dialogs() == []


@pytest.mark.timing
def test_snli_scale_report_is_small_and_opens_fast(browser, tmp_path):
    page = render_report(large_results(), tmp_path / "large.html")
    assert page.stat().st_size < 15 * 2**20
    load = browser.open(page)
    assert load.console == [] and load.requests == []
    # "opens": painted, with the table and explorer working, before plotly.js has even loaded;
    # the figures follow one by one (looser bound: the test machine's cores are shared).
    assert load.paint < 5.0 and load.interactive < 5.0, load
    assert load.seconds < 15.0, load


@pytest.mark.parametrize("task", ["nli", "mcq"])
def test_scanned_xss_dataset_shows_payloads_as_text(browser, pages, task):
    """`audit scan` output of a dataset whose file name, ids, texts and labels are payloads."""
    load = browser.open(pages[f"scan_xss_{task}"])
    d = browser.driver
    assert browser.dialogs() == [] and load.console == [] and load.requests == []
    assert d.execute_script("return document.querySelectorAll('script').length") == 3
    assert d.execute_script("return document.querySelectorAll('img, iframe, [onerror], [onload]').length") == 0
    assert d.find_element(By.TAG_NAME, "h1").text == PAYLOADS[1]
    assert f"{PAYLOADS[1]}.jsonl" in d.find_element(By.ID, "overview").text
    cards = d.execute_script(
        "return Array.from(document.querySelectorAll('#explorer-examples .example'))"
        ".map(c => c.textContent);")
    assert cards and any(f"{PAYLOADS[2]} scene" in c for c in cards)  # premise
    assert any(PAYLOADS[1] in c for c in cards) or any(PAYLOADS[0] in c for c in cards)  # ids
    if task == "nli":  # the payload is a label: badge, table, legend and axis text
        badges = [b.text for b in d.find_elements(By.CSS_SELECTOR, ".badge-label")]
        assert PAYLOADS[0] in badges
        svg_text = d.execute_script("return Array.from(document.querySelectorAll('.plot svg text'))"
                                    ".map(t => t.textContent)")
        assert PAYLOADS[0] in svg_text
    browser.screenshot(f"scan_xss_{task}")
    assert browser.dialogs() == []
