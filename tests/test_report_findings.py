"""Issue 27, report rendering: findings first, cue tables ranked by z with every significant cue,
glossary, chart fixes, the length chart, --plotly modes and bounded notebook reprs.
Browser checks of the same pages: tests/browser/test_report_first_screen_browser.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from report_fixtures import (compare_results, contrast_pairs_results, lengths_section,
                             llm_probe_results, mcq_results, nli_results, score_pairs_results)

from cuelens.audit.findings import Finding
from cuelens.audit.results import CueRow, LeakageSection
from cuelens.reports import ReportOptions, render_report, validate_results
from cuelens.reports import figures as F
from cuelens.reports.render import plotly_cdn_url, plotly_file_name, render_html, title
from cuelens.reports.pages import build_sections
from cuelens.reports.summary import effect_text
from cuelens.reports.text import short, short_labels


def sections_of(results, **options) -> dict:
    return {s.key: s for s in build_sections(results, ReportOptions(**options))}


def page_data(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>',
                                html, re.S).group(1))


# ----------------------------------------------------------------------------------- summary
@pytest.mark.parametrize("build", [nli_results, mcq_results, llm_probe_results,
                                   score_pairs_results, contrast_pairs_results, compare_results])
def test_every_report_opens_with_one_summary_block(build):
    results = build()
    html = render_html(results)
    keys = [s.key for s in build_sections(results)]
    assert keys[0] == "summary" and keys.count("summary") == 1
    assert html.count('class="report-section section-summary"') == 1
    # the summary is the first section of the page, before any chart
    assert html.index('id="summary"') < html.index('class="report-section section-', html.index('id="summary"') + 1)
    assert sections_of(results)["summary"].context["verdicts"]


def test_summary_lists_the_ranked_findings_with_effect_interval_items_and_links(monkeypatch):
    fake = [Finding("leakage", "Words give the label away.", 23.0, 21.7, 24.2, "points", 9824,
                    "leakage", "high"),
            Finding("hygiene", "Two copies.", 0.02, None, None, "%", 2, "hygiene", "low"),
            Finding("probe", "Not on this page.", None, None, None, "points", None, "nowhere",
                    "info")]
    monkeypatch.setattr("cuelens.audit.findings.findings", lambda results: fake)
    html = render_html(nli_results())
    summary = html[html.index('id="summary"'):html.index('id="overview"')]
    rows = re.findall(r'<tr class="finding finding-(\w+)">(.*?)</tr>', summary, re.S)
    assert [sev for sev, _ in rows] == ["high", "low", "info"]
    assert '<a href="#leakage">Words give the label away.</a>' in rows[0][1]
    assert "+23.0 points [+21.7, +24.2]" in rows[0][1] and "9,824" in rows[0][1]
    # a section absent from the page (no hygiene section in the fixture) gets no dead link
    assert "Two copies." in rows[1][1] and 'href="#hygiene"' not in summary
    assert 'href="#nowhere"' not in summary


def test_summary_of_a_scan_puts_the_leakage_verdict_and_findings_first():
    results = nli_results()
    del results["probe"]
    summary = sections_of(results)["summary"].context
    first, second = summary["verdicts"][:2]  # the conclusion, then the test behind it
    assert first.about == "conclusion" and first.level == "flagged"
    assert first.text.startswith("Leakage: the labels can be guessed from the words alone")
    assert second.section == "leakage" and second.level == "flagged"
    assert summary["findings"][0]["severity"] == "high"
    assert summary["findings"][0]["section"] in {s.key for s in build_sections(results)}


@pytest.mark.parametrize("effect, low, high, unit, text", [
    (23.04, 21.71, 24.25, "points", "+23.0 points [+21.7, +24.2]"),
    (57.0, 53.1, 60.8, "%", "57.0% [53.1, 60.8]"),
    (1210, None, None, "items", "1,210 items"),
    (None, None, None, "points", "–")])
def test_effect_text(effect, low, high, unit, text):
    assert effect_text(effect, low, high, unit) == text


def test_probe_and_llm_probe_reports_are_titled_and_headlined_by_the_model():
    probe = nli_results()
    assert title(probe) == "minilm on toy-nli"
    verdicts = sections_of(probe)["summary"].context["verdicts"]
    assert verdicts[0].section == "probe" and "minilm" in verdicts[0].about
    html = render_html(probe)
    assert "<title>cuelens report: minilm on toy-nli</title>" in html
    assert "cuelens model probe report" in html
    assert [s.key for s in build_sections(probe)][:2] == ["summary", "probe"]  # model first
    llm = llm_probe_results()
    assert title(llm) == "tiny-gpt2 (prompted) on toy-nli"
    first = sections_of(llm)["summary"].context["verdicts"][0]
    assert first.section == "llm_probe" and first.level == "flagged"
    assert "nli-plain" in first.text and "nli-yes-no" in first.text
    assert title(nli_results() | {"probe": None}) == "toy-nli"


# ----------------------------------------------------------------------------------- cue table
def many_cues(n_significant: int = 87, n_noise: int = 300) -> dict:
    """NLI results with ``n_significant`` significant cues spread over the labels and rare,
    perfectly predictive but non-significant noise words (cp = 1.0) that lead a cp ranking."""
    results = nli_results()
    cues = []
    for i in range(n_significant):
        cues.append({"token": f"sig{i}", "label": ["contradiction", "entailment", "neutral"][i % 3],
                     "count": 60 + i, "label_count": 40, "significant": True,
                     "metrics": {"cp": 0.6, "z": 5.0 + i / 10, "pmi": 0.1}})
    for i in range(n_noise):
        cues.append({"token": f"rare{i}", "label": "neutral", "count": 5, "label_count": 5,
                     "significant": False, "metrics": {"cp": 1.0, "z": 2.0, "pmi": 0.5}})
    results["cues"] = cues
    return results


def test_cue_table_ranks_by_z_and_lists_every_significant_cue():
    results = many_cues()
    rows = sections_of(results)["cues"].client["cues"]["rows"]
    significant = [r for r in rows if r[6]]
    assert len(significant) == 87  # all of them (the old table stopped at 55 on SNLI)
    assert rows[0][0] == "sig86" and rows[0][4] == pytest.approx(13.6)  # strongest z first
    z = [r[4] for r in rows]
    assert z == sorted(z, reverse=True)
    assert not [r for r in rows[:87] if not r[6]]  # noise never leads
    html = render_html(results)
    assert "every significant cue" in html


def test_cue_finding_is_shown_when_the_scan_wrote_it():
    results = nli_results()
    results["cue_finding"] = {"n_significant": 6, "items_covered": 54, "share_items": 0.45,
                              "bonferroni_z": 4.8,
                              "top": [{"token": "nobody", "label": "contradiction", "z": 9.1}]}
    html = render_html(results)
    box = html[html.index('id="cue-finding"'):]
    assert "<strong>54</strong> evaluated items (45.0%)" in box[:400]
    assert "“<bdi>nobody</bdi>” → contradiction (z 9.1)" in box[:600]
    assert 'id="cue-finding"' not in render_html(nli_results())


def test_cue_ranking_is_configurable():
    rows = sections_of(many_cues(), rank_by="cp")["cues"].client["cues"]["rows"]
    assert rows[0][0].startswith("rare") and rows[0][5] == 1.0  # the cp column is shown
    assert sum(r[6] for r in rows) == 87  # same listed set
    with pytest.raises(Exception, match="rank-by"):
        ReportOptions(rank_by="nonsense")


def test_examples_are_sampled_for_every_listed_cue(tmp_path):
    from cuelens.audit.examples import listed_cues
    from cuelens.audit.pipeline import scan_dataset
    from cuelens.data import load_dataset
    from cuelens.data.synthetic import write_demo_data

    dirs = write_demo_data(tmp_path, size=150, seed=0)
    results = scan_dataset(load_dataset(str(dirs["nli"]))).results
    listed = listed_cues(CueRow.rows_in(results))
    assert listed and {c.token for c in listed} <= set(results["examples"]["by_cue"])
    rows = sections_of(json.loads(json.dumps(results)))["cues"].client["cues"]["rows"]
    assert all(r[7] for r in rows)  # an example link on every row


def test_terminal_and_jupyter_summaries_rank_cues_by_z():
    from cuelens.audit.examples import top_cues_by_label
    from cuelens.frames import summary_html

    results = many_cues()
    top = top_cues_by_label(CueRow.rows_in(results), 2)
    assert [c.token for c in top["neutral"]] == ["sig86", "sig83"]
    html = summary_html(results)
    assert "sig86" in html and "rare0" not in html


def test_d_with_its_interval_reads_the_same_in_every_summary(monkeypatch):
    """Issue 24: one function (``findings.d_with_ci``) words the headline D with its 95% CI for
    the terminal, the report's verdict, the Jupyter summary and the dataset card."""
    import io

    from rich.console import Console

    from cuelens.commands import scan as scan_command
    from cuelens.frames import summary_html, summary_text
    from cuelens.mitigate.card import leakage_sentence
    from cuelens.reports.scan import verdict

    results = nli_results()
    results["leakage"]["best"].update(D=0.123, ci_low=0.101, ci_high=0.142)
    results["leakage"]["verdict"] = "significant"
    said = "D = +12.3 points (95% CI +10.1 to +14.2)"
    terminal = io.StringIO()
    monkeypatch.setattr(scan_command, "console", Console(file=terminal, width=400))
    scan_command.print_summary(results, 3, Path("out"))
    assert said in terminal.getvalue()
    assert said in summary_html(results)
    assert said in leakage_sentence(results)
    assert "+12.3 points (95% CI +10.1 to +14.2), the whole interval above" in \
        verdict(LeakageSection.from_json(results["leakage"]), 0.10, results)[1]
    assert "D +12.3 points (significant)" in summary_text(results)


# ----------------------------------------------------------------------------------- glossary
def test_every_abbreviation_on_the_page_is_explained():
    results = nli_results()
    sections = build_sections(results)
    assert sections[-1].key == "glossary"
    terms = dict(sections[-1].context["terms"])
    for abbreviation in ("cp", "pmi", "z", "average", "max", "sgd", "lr", "ΔAcc", "Σ|ΔAcc|",
                         "score", "D", "CI"):
        assert abbreviation in terms and len(terms[abbreviation]) > 20, abbreviation
    html = render_html(results)
    assert re.search(r'<abbr title="[^"]*Σ\|ΔAcc\|?[^"]*|<abbr title="sum of \|ΔAcc\|', html)
    assert 'title="conditional probability' in html  # the cp column's hover title


# ----------------------------------------------------------------------------------- charts
def test_value_labels_stand_right_of_the_plot_not_under_the_whiskers():
    spec = F.horizontal_bars(["a", "b"], [60.0, -10.0], axis_title="x", text=["60%", "-10"],
                             errors=([5.0, 4.0], [7.0, 3.0]), percent=False)
    [bar] = spec["data"]
    assert bar.get("text") is None
    notes = spec["layout"]["annotations"]
    assert [(n["text"], n["y"], n["x"], n["xref"], n["xanchor"]) for n in notes] == [
        ("60%", "a", 1, "paper", "left"), ("-10", "b", 1, "paper", "left")]
    assert spec["layout"]["margin"]["r"] >= 10 + 7 * 3


def test_mcq_rules_chart_has_no_label_on_its_bars():
    results = mcq_results()
    results["mcq_baselines"] = {
        "chance": 0.5, "n_items": 200, "fitted_on": "all", "bonferroni_alpha": 0.0125,
        "gold_position": {}, "rows": [
            {"name": n, "fitted": False, "accuracy": a, "accuracy_ci": [a - 0.07, a + 0.07],
             "D": a - 0.5, "D_ci": [a - 0.57, a - 0.43], "p_value": 0.01, "significant": s,
             "chance": 0.5,
             "n_items": 200} for n, a, s in (("longest choice", 0.6, True),
                                              ("shortest choice", 0.4, True))]}
    fig = sections_of(results)["mcq_baselines"].figures["mcq_baselines"].spec
    [bar] = fig["data"]
    assert bar.get("text") is None and bar["error_x"]["array"] == pytest.approx([7, 7])
    notes = [a["text"] for a in fig["layout"]["annotations"] if a.get("xref") == "paper"]
    assert notes == ["60.0% (D +10.0)", "40.0% (D -10.0)"]


def test_llm_delta_chart_has_intervals_and_a_no_effect_line():
    fig = sections_of(llm_probe_results())["llm_probe"].figures["delta"].spec
    first = fig["data"][0]
    assert first["x"] == ["nobody", "tall", "outdoors"]  # by the largest |ΔAcc|
    assert first["error_y"]["array"] == pytest.approx([12, 12, 10])  # ci_high − delta, points
    assert first["error_y"]["arrayminus"] == pytest.approx([13, 12, 10])
    assert [s for s in fig["layout"]["shapes"] if s["type"] == "line" and s["y0"] == 0]
    assert [a["text"] for a in fig["layout"]["annotations"]] == ["no effect"]


def test_one_meaning_per_colour_across_the_charts_of_a_page():
    results = nli_results()
    results["lengths"] = lengths_section()
    colour_of: dict[str, set] = {}
    for sec in build_sections(results):
        for fig in sec.figures.values():
            for trace in fig.spec["data"]:
                colour = (trace.get("marker") or {}).get("color") or (trace.get("line") or {}).get("color")
                if trace.get("name") and isinstance(colour, str):
                    colour_of.setdefault(colour, set()).add(trace["name"])
    for colour, names in colour_of.items():
        assert len(names) == 1, (colour, names)  # e.g. "test" split never red like an artifact
    label_colours = {c for c, names in colour_of.items() if names & set(results["dataset"]["label_names"])}
    assert label_colours and not label_colours & {F.MAIN, F.BAD, F.GOOD, F.GREY}
    assert not set(F.LABEL_PALETTE) & set(F.SERIES_PALETTE)


def test_zero_bars_stay_visible_and_missing_positions_draw_nothing():
    spec = F.grouped_bars(["A", "B"], {"s": [0.0, None]}, axis_title="x")
    bar = spec["data"][0]
    assert bar["marker"]["line"]["width"] > 0 and bar["y"] == [0.0, None] and bar["text"] == ["0.0%", ""]


def test_paradigm_labels_are_cut_in_the_middle_and_distinct():
    names = ["wh_vs_that_no_gap_long_distance_" + "x" * 40 + "_a",
             "wh_vs_that_no_gap_long_distance_" + "x" * 40 + "_b",
             "wh_vs_that_no_gap_long_distance_" + "y" * 40 + "_a"]
    labels = short_labels(names, 40)
    assert len(set(labels)) == 3 and all(len(label) <= 40 for label in labels)
    assert short("abcdefghij", 5) == "ab…ij"
    results = score_pairs_results()
    for model in results["models"].values():
        model["by_paradigm"] = {n: 0.5 for n in names}
    heat = sections_of(results)["score_pairs"].figures["by_paradigm"].spec
    assert len(set(heat["layout"]["yaxis"]["ticktext"])) == 3


@pytest.mark.parametrize("unit", ["\u0915\u093f", "e\u0301",  # कि; é in NFD
                                  "\U0001f3f3\ufe0f\u200d\U0001f308", "\U0001f1ef\U0001f1f5"])
@pytest.mark.parametrize("limit", [39, 40])
def test_cut_labels_keep_each_letter_with_its_combining_marks(unit, limit):
    """and an emoji ZWJ sequence (🏳️‍🌈) or a flag (🇯🇵) whole: they were cut between code
    points, leaving half an emoji or flags of other countries (🇵🇯🇵…)."""
    head, tail = short(unit * 30, limit).split("…")
    assert head and tail and len(head) + 1 + len(tail) <= limit
    assert head == unit * (len(head) // len(unit)) and tail == unit * (len(tail) // len(unit))


# ----------------------------------------------------------------------------------- lengths
def test_length_section_and_chart():
    results = nli_results()
    results["lengths"] = lengths_section()
    validate_results(results)
    sec = sections_of(results)["lengths"]
    assert sec.context["baselines"][0]["accuracy"] == 0.45
    lines = sec.figures["histogram"].spec["data"]
    assert [t["name"] for t in lines] == ["contradiction", "entailment", "neutral"]
    assert sum(lines[0]["y"]) == pytest.approx(100)  # shares per label
    assert len(lines[0]["x"]) == 13  # cut after the longest text (neutral, 12 words)
    html = render_html(results)
    assert "hypothesis length only" in html and "45.0% [36.0%, 54.0%]" in html


def split(hypotheses, labels):
    from cuelens.data.dataset import Split

    return Split("s", "s.jsonl", "nli", ids=[str(i) for i in range(len(labels))],
                 premises=["p"] * len(labels), hypotheses=hypotheses, labels=labels)


def test_length_baseline_finds_a_planted_length_cue_and_not_a_missing_one():
    from tests.scan_helpers import length_section
    from cuelens.data.dataset import Dataset

    rng = np.random.default_rng(0)
    labels = ["entailment", "neutral"] * 200

    def texts(planted):
        n = [(3 if lab == "entailment" else 9) if planted else int(rng.integers(3, 10))
             for lab in labels]
        return [" ".join(["w"] * k) for k in n]

    for planted, low, high in ((True, 0.99, 1.0), (False, 0.35, 0.65)):
        ds = Dataset("toy", "jsonl", "nli", split(texts(planted), labels),
                     split(texts(planted), labels), ["entailment", "neutral"])
        section = length_section(ds)
        base = section.baseline
        assert base is not None and low <= base.accuracy <= high, (planted, base)
        assert base.protocol == "train→test" and base.majority == 0.5
        assert section.by_label["entailment"].n == 200
        assert length_section(ds) == length_section(ds)  # deterministic
    assert section.by_label["entailment"].histogram[3:10] != [0] * 7


# ----------------------------------------------------------------------------------- size
def test_plotly_modes(tmp_path):
    results = nli_results()
    inline = render_report(results, tmp_path / "inline.html")
    cdn = render_report(results, tmp_path / "cdn.html", options=ReportOptions(plotly="cdn"))
    folder = render_report(results, tmp_path / "dir.html", options=ReportOptions(plotly="directory"))
    assert inline.stat().st_size > 3_000_000
    for page in (cdn, folder):
        assert page.stat().st_size < 300_000
    cdn_html = cdn.read_text("utf-8")
    assert f'<script src="{plotly_cdn_url()}"></script>' in cdn_html
    assert "https://cdn.plot.ly/" in re.search(r'Content-Security-Policy" content="([^"]*)"', cdn_html).group(1)
    assert (tmp_path / plotly_file_name()).stat().st_size > 3_000_000
    assert f'<script src="{plotly_file_name()}"></script>' in folder.read_text("utf-8")
    with pytest.raises(Exception, match="plotly"):
        ReportOptions(plotly="cloud")


def test_pages_without_charts_carry_no_plotly():
    html = render_html(contrast_pairs_results())
    assert len(html.encode()) < 200_000 and "plotly" not in html.lower().split("<footer")[0][-2000:]


def test_notebook_reprs_are_bounded(tmp_path):
    from cuelens.audit.pipeline import scan_dataset
    from cuelens.data import load_dataset
    from cuelens.data.synthetic import write_demo_data
    from cuelens.results import ScanResult

    dirs = write_demo_data(tmp_path, size=150, seed=0)
    result = ScanResult.of(scan_dataset(load_dataset(str(dirs["nli"]))))
    result.results["dataset"]["name"] = "x" * 100_000  # hostile: a huge name
    assert len(repr(result)) < 500 and "D " in repr(result)
    assert len(result._repr_html_()) < 8_000
    assert len(json.dumps(result.results)) > 50_000  # the results themselves are large
