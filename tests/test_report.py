"""The HTML report renderer and results schema (docs/methods.md §10, docs/results-schema.md)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser

import jsonschema
import pytest
from report_fixtures import (PAYLOADS, assert_schema_rejects, large_results, mcq_results,
                             nli_results, score_pairs_results)

from cuelens.audit.results import CueRow, LeakageSection
from cuelens.errors import UserError
from cuelens.reports import render_report, script_json, validate_results
from cuelens.reports.figures import log_ticks
from cuelens.reports.render import render_html
from cuelens.reports.schema import results_schema
from cuelens.audit.examples import listed_cues
from cuelens.reports.pages import build_sections
from cuelens.reports.scan import verdict

ALL_FIXTURES = {"nli": nli_results, "mcq": mcq_results, "score_pairs": score_pairs_results}


class Tags(HTMLParser):
    """Collects start tags with their attributes, and the text of each <script>."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def parse(html: str) -> Tags:
    tags = Tags()
    tags.feed(html)
    return tags


# ----------------------------------------------------------------------------------- schema
@pytest.mark.parametrize("name", sorted(ALL_FIXTURES))
@pytest.mark.parametrize("xss", [False, True])
def test_fixtures_follow_the_schema(name, xss):
    validate_results(ALL_FIXTURES[name](xss=xss))


@pytest.mark.parametrize("mutate, where", [
    (lambda r: r["leakage"]["best"].update(accuracy=61.0), "$.leakage.best.accuracy"),
    (lambda r: r["dataset"].update(task="qa"), "$.dataset.task"),
    (lambda r: r["cues"][0].pop("significant"), "$.cues[0]"),
    (lambda r: r["examples"]["by_cue"].update(nobody=[-1]), "$.examples.by_cue.nobody[0]"),
    (lambda r: r.update(schema_version="2.0"), "$.schema_version"),
    (lambda r: r["probe"]["accuracy_test"]["cues"][0].update(delta="big"),
     "$.probe.accuracy_test.cues[0].delta"),
])
def test_schema_rejects_bad_results_naming_the_json_path(mutate, where):
    results = nli_results()
    mutate(results)
    assert_schema_rejects(results, where)


def test_schema_is_valid_draft_2020_12_and_validators_agree_on_fixtures():
    jsonschema.Draft202012Validator.check_schema(results_schema())
    reference = jsonschema.Draft202012Validator(results_schema())
    for build in ALL_FIXTURES.values():
        for xss in (False, True):
            reference.validate(build(xss=xss))


def test_score_pairs_schema_is_checked_by_kind():
    bad = score_pairs_results()
    bad["models"]["bigram"]["overall"] = 1.5
    with pytest.raises(UserError, match=r"\$\.models\.bigram\.overall"):
        validate_results(bad)


@pytest.mark.slow
def test_scan_of_generated_data_follows_the_schema_and_renders(tmp_path):
    from cuelens.audit.pipeline import scan_dataset
    from cuelens.audit.scan import ScanConfig
    from cuelens.data import load_dataset
    from cuelens.data.synthetic import write_demo_data

    dirs = write_demo_data(tmp_path / "data", size=60, seed=1)
    for task, directory in dirs.items():
        results = scan_dataset(load_dataset(str(directory)), ScanConfig(seed=1)).results
        results = json.loads(json.dumps(results))  # exactly what results.json holds
        out = render_report(results, tmp_path / f"{task}.html")
        keys = [s.key for s in build_sections(results)]
        mcq = ["mcq_baselines"] if task == "mcq" else []
        assert keys == ["summary", "overview", "hygiene", "leakage", *mcq, "lengths", "cues",
                        "explorer", "easy_hard", "next_steps", "glossary"]
        assert 'id="cue-table"' in out.read_text("utf-8")


# ----------------------------------------------------------------------------------- escaping
def test_script_json_is_inert_inside_script_and_round_trips():
    obj = {"t": "</script><script>alert(2)</script> <!-- & \u2028\u2029 '\""}
    text = script_json(obj)
    assert not set("<>&\u2028\u2029") & set(text)
    assert json.loads(text) == obj


def assert_no_markup_from_payloads(html: str) -> Tags:
    """The XSS payloads built no element, attribute or script in ``html``; returns its tags."""
    tags = parse(html)
    # only our <script> elements: data (JSON, not executed), report.js, plotly.js (when a figure)
    types = [a.get("type") for t, a in tags.tags if t == "script"]
    assert types in (["application/json", None], ["application/json", None, None])
    assert not [t for t, a in tags.tags if t in ("img", "svg", "iframe", "object", "embed")]
    assert not [(t, k) for t, a in tags.tags for k in a if k.startswith("on")]
    assert not [v for _, a in tags.tags for k, v in a.items()
                if k in ("href", "src", "action") and v and not v.startswith("#")]
    for payload in PAYLOADS[:3]:
        assert payload not in html  # neither raw in markup nor raw inside the scripts
    return tags


@pytest.mark.parametrize("name", ["nli", "mcq", "score_pairs"])
def test_xss_payloads_never_become_markup(name):
    tags = assert_no_markup_from_payloads(render_html(ALL_FIXTURES[name](xss=True)))
    # the payload text survives intact in the data the page displays
    data = json.loads(tags.scripts[0])
    assert json.dumps(data).count("alert(1)") > 0


def test_payload_text_is_html_escaped_in_markup_and_entity_escaped_for_plotly():
    html = render_html(nli_results(xss=True))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # title and tables, via autoescape
    data = json.loads(parse(html).scripts[0])
    ticks = [t for f in data["figures"].values() for t in f["layout"].get("xaxis", {}).get("ticktext", [])]
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" not in ticks
    assert '"&gt;&lt;img src=x onerror=alert(1)&gt;' in ticks  # Plotly shows it as text


def test_content_security_policy_allows_exactly_the_page_scripts():
    html = render_html(mcq_results())
    tags = parse(html)
    csp = next(a["content"] for t, a in tags.tags
               if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    hashes = set(re.findall(r"'sha256-([^']+)'", csp))
    executed = tags.scripts[1:]
    assert hashes == {base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
                      for s in executed}
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp.split("script-src")[1]


def test_page_is_self_contained():
    html = render_html(nli_results())
    tags = parse(html)
    assert not [a for t, a in tags.tags if t in ("link", "img", "iframe")]
    assert not [t for t, a in tags.tags if t == "script" and "src" in a]
    assert "@import" not in html and "@font-face" not in html
    assert "Plotly.newPlot" in tags.scripts[1] and len(tags.scripts[2]) > 3_000_000  # plotly.js


@pytest.mark.parametrize("closing", ["</script>", "</SCRIPT >", "</sCrIpT"])
def test_a_plotly_bundle_that_would_close_its_script_element_is_refused(monkeypatch, closing):
    import plotly.offline

    from cuelens.reports import render

    monkeypatch.setattr(plotly.offline, "get_plotlyjs", lambda: f"var a = '{closing}';")
    render._plotly_js.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="contains '</script'"):
            render_html(nli_results())
    finally:
        render._plotly_js.cache_clear()  # the next page reads the real bundle again


# ----------------------------------------------------------------------------------- sections
def test_absent_sections_are_omitted_not_empty():
    results = nli_results()
    for key in ("cues", "cue_stats", "leakage", "easy_hard", "examples", "features",
                "features_config", "probe"):
        del results[key]
    validate_results(results)
    html = render_html(results)
    assert [s.key for s in build_sections(results)] == ["summary", "overview"]
    for anchor in ("leakage", "cues", "explorer", "easy_hard", "features", "probe"):
        assert f'id="{anchor}"' not in html and f'href="#{anchor}"' not in html


def test_the_page_table_has_a_page_per_result_kind_opening_with_the_summary():
    from cuelens.reports.pages import PAGES, result_kind
    from cuelens.reports.summary import summary

    kinds = results_schema()["then"]["properties"]["kind"]["enum"]
    assert set(PAGES) == {*kinds, "scan", "preference", "probe"}
    assert all(page[0] is summary and len(set(page)) == len(page) for page in PAGES.values())
    for kind in kinds:
        assert result_kind({"kind": kind}) == kind
    scan = mcq_results()
    del scan["probe"]
    assert [result_kind(r) for r in (scan, mcq_results(), {**scan, "llm_probe": {}},
                                     {**scan, "preference": {}})] == \
        ["scan", "probe", "probe", "preference"]


def test_full_results_have_every_section_and_a_caption_per_figure():
    sections = build_sections(nli_results())
    assert [s.key for s in sections] == ["summary", "probe", "overview", "leakage", "cues",
                                         "explorer", "easy_hard", "features", "glossary"]
    probe = next(s for s in sections if s.key == "probe")
    assert list(probe.figures) == ["delta", "distribution", "easy_hard", "data_map"]
    for s in sections:
        for fig in s.figures.values():
            assert fig.caption.endswith(".") and fig.caption.count(". ") == 0, fig.caption
            assert fig.spec["data"], fig.id


def test_mcq_overview_shows_answer_positions_and_short_circuit():
    sections = {s.key: s for s in build_sections(mcq_results())}
    pos = sections["overview"].figures["positions"].spec["data"][0]
    assert pos["x"] == ["choice 1", "choice 2"] and pos["y"] == [60.0, 40.0]
    sc = sections["probe"].figures["short_circuit"].spec["data"][0]
    # neg+ generated no case (no rate): left out
    assert sc["y"] == ["AW (attention to the premise)", "CO crossover", "MT word swap"]
    assert sc["x"] == pytest.approx([62, 80, 55])


def test_leakage_heatmap_cells_are_d_in_points():
    results = nli_results()
    leak = next(s for s in build_sections(results) if s.key == "leakage")
    heat = leak.figures["heatmap"].spec["data"][0]
    assert heat["y"] == ["cp", "pmi", "z"] and heat["x"] == ["average", "max", "sgd", "lr"]
    assert heat["z"][1][3] == pytest.approx(100 * (0.61 - 0.02 - 0.03 - 0.366667))


def test_every_d_beside_the_verdict_is_against_the_verdicts_baseline():
    # a label-share shift: the training majority is 25% of the evaluated items, the evaluated
    # majority 45%; a BoW at 33% is 12 points *below* the verdict's baseline, never "D +8"
    results = nli_results()
    leak = results["leakage"]
    leak["majority"], leak["baseline"] = 0.25, {"name": "prior-matched constant",
                                                "accuracy": 0.45}
    leak["baselines"] = [{"name": "hypothesis-only BoW LR", "accuracy": 0.33, "D": 0.08}]
    section = next(s for s in build_sections(results) if s.key == "leakage")
    figure = section.figures["baselines"].spec
    # the value labels stand right of the plot area, clear of the dashed baseline line: a bar
    # ending left of it would have its label drawn across the line
    assert figure["data"][-1].get("text") is None
    labels = [a for a in figure["layout"]["annotations"] if a.get("yref") == "y"]
    assert {(a["xref"], a["x"]) for a in labels} == {("paper", 1)}
    assert [a["text"].split("(D ")[1] for a in labels][:2] == ["+0.0)", "-12.0)"]
    heat = section.figures["heatmap"].spec["data"][0]
    assert heat["z"][0][0] == pytest.approx(100 * (leak["table"][0]["accuracy"] - 0.45))
    assert section.context["baseline_accuracy"] == 0.45
    leak.update(verdict="below chance", best=dict(leak["best"], accuracy=0.372, D=-0.078,
                                                  ci_low=-0.119, ci_high=-0.046))
    level, sentence = verdict(LeakageSection.from_json(leak), 0.10, results)
    assert level == "clean" and "against 45.0% for" in sentence and "below that baseline" in \
        sentence and "indistinguishable" not in sentence


@pytest.mark.parametrize("best_d, flagged, level", [(0.243, True, "flagged"), (0.05, False, "mild"),
                                                    (-0.01, False, "clean")])
def test_verdict_levels(best_d, flagged, level):
    results = nli_results()
    leak = dict(results["leakage"], flagged=flagged,
                best={"metric": "cp", "aggregator": "lr", "accuracy": 0.4 + best_d, "D": best_d})
    got, sentence = verdict(LeakageSection.from_json(leak), 0.10, results)
    assert got == level
    assert "hypotheses" in sentence and f"{100 * (0.4 + best_d):.1f}%" in sentence


def test_listed_cues_are_every_significant_cue_plus_the_strongest_per_label():
    cues = [CueRow(token=t, label=l, count=n, label_count=1, significant=sig,
                   metrics={"cp": cp, "z": z})
            for t, l, n, cp, z, sig in [("a", "x", 5, 1.0, 2.0, False), ("b", "x", 9, 1.0, 3.0, False),
                                        ("c", "x", 9, 0.5, 9.0, True), ("d", "y", 5, 0.2, 1.0, False),
                                        ("s", "y", 50, 0.3, 0.5, True)]]
    # by z (default): c and b lead x, s (significant, weakest z) is still listed
    assert [c.token for c in listed_cues(cues, 1)] == ["c", "d", "s"]
    assert [c.token for c in listed_cues(cues, 2)] == ["c", "b", "d", "s"]
    # by cp: ties on cp broken by z, then support
    assert [c.token for c in listed_cues(cues, 2, "cp")] == ["b", "a", "c", "s", "d"]


def test_log_ticks_cover_the_range_with_1_2_5_steps():
    assert log_ticks(5, 996) == [5, 10, 20, 50, 100, 200, 500, 1000]
    assert log_ticks(9, 80) == [5, 10, 20, 50, 100]


# ----------------------------------------------------------------------------------- writing
def test_render_report_writes_atomically_and_refuses_to_overwrite_inputs(tmp_path):
    src = tmp_path / "results.json"
    src.write_text(json.dumps(nli_results()))
    with pytest.raises(UserError, match="same as an input"):
        render_report(nli_results(), src, inputs=[src])
    out = render_report(nli_results(), tmp_path / "sub" / "report.html", inputs=[src])
    assert out.read_text("utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.html"]  # no temp files left


def test_invalid_results_write_nothing(tmp_path):
    bad = nli_results()
    del bad["dataset"]
    with pytest.raises(UserError):
        render_report(bad, tmp_path / "report.html")
    assert not (tmp_path / "report.html").exists()


def test_snli_scale_results_stay_small():
    results = large_results()
    html = render_html(results)
    assert len(html.encode()) < 15 * 2**20
    data = json.loads(parse(html).scripts[0])
    # every significant cue up to the cap and the 20 strongest per label, not 36k
    assert 2000 <= len(data["cues"]["rows"]) <= 2000 + 3 * 20
    points = data["figures"]["fig-probe-data_map"]["data"][0]["x"]
    assert len(points) <= 1500


# ----------------------------------------------------------------------------------- CLI
def test_cli_report(tmp_path):
    from typer.testing import CliRunner

    from cuelens.cli import app

    src = tmp_path / "results.json"
    src.write_text(json.dumps(mcq_results(xss=True)))
    runner = CliRunner()
    ok = runner.invoke(app, ["report", str(src)])
    assert ok.exit_code == 0, ok.output
    assert (tmp_path / "report.html").exists()
    same = runner.invoke(app, ["report", str(src), "-o", str(src)])
    assert same.exit_code == 2 and "same as an input" in same.output
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": "1.0",\n "dataset": }')
    bad = runner.invoke(app, ["report", str(broken), "-o", str(tmp_path / "x.html")])
    assert bad.exit_code == 2 and "broken.json, line 2: not valid JSON" in bad.output
    assert "Traceback" not in bad.output
    missing = runner.invoke(app, ["report", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "no such results file" in missing.output


def test_cli_report_names_an_output_with_brackets_as_it_is(tmp_path):
    """The written path is text, not rich markup ('[bold]' and '[red]' were eaten)."""
    from typer.testing import CliRunner

    from cuelens.cli import app

    src = tmp_path / "results.json"
    src.write_text(json.dumps(nli_results()))
    out = tmp_path / "[bold]report[red].html"
    ok = CliRunner().invoke(app, ["report", str(src), "-o", str(out)])
    assert ok.exit_code == 0 and out.exists()
    assert f"report written to {out}" in ok.output.replace("\n", "")


@pytest.mark.slow
def test_scan_writes_the_report_by_default_or_where_asked(tmp_path):
    from typer.testing import CliRunner

    from cuelens.cli import app
    from cuelens.data.synthetic import write_demo_data

    data = write_demo_data(tmp_path / "data", size=60, seed=0)["nli"]
    runner = CliRunner()
    custom = tmp_path / "custom" / "my-report.html"
    res = runner.invoke(app, ["scan", str(data), "--out", str(tmp_path / "scan"),
                              "--report", str(custom)])
    assert res.exit_code == 0, res.output
    assert custom.exists() and not (tmp_path / "scan" / "report.html").exists()
    res = runner.invoke(app, ["scan", str(data), "--out", str(tmp_path / "scan2")])
    assert res.exit_code == 0 and (tmp_path / "scan2" / "report.html").exists()
    bad = runner.invoke(app, ["scan", str(data), "--out", str(tmp_path / "scan3"),
                              "--report", str(data / "train.jsonl")])
    assert bad.exit_code == 2 and "same as an input" in bad.output


@pytest.mark.slow
@pytest.mark.parametrize("task", ["nli", "mcq"])
def test_probe_results_render_with_probe_figures(tmp_path, task):
    """`audit probe --predictions` output (scan sections + probe) validates and renders."""
    from typer.testing import CliRunner

    from cuelens.cli import app
    from cuelens.data.synthetic import write_demo_data

    # 200 items: enough for the planted cues to pass the exact binomial significance
    data = write_demo_data(tmp_path / "data", size=200, seed=0)[task]
    preds = tmp_path / "preds.jsonl"
    rows = [json.loads(line) for line in (data / "test.jsonl").read_text().splitlines()]
    preds.write_text("".join(json.dumps({"id": r["id"], "prediction": r["label"] if i % 3 else
                                         (0 if task == "mcq" else "neutral")}) + "\n"
                             for i, r in enumerate(rows)))
    res = CliRunner().invoke(app, ["probe", str(data), "--predictions", str(preds),
                                   "--out", str(tmp_path / "probe"), "--min-support", "5"])
    assert res.exit_code == 0, res.output
    results = json.loads((tmp_path / "probe" / "results.json").read_text())
    validate_results(results)
    probe = next(s for s in build_sections(results) if s.key == "probe")
    assert {"delta", "distribution", "easy_hard"} <= set(probe.figures)
    render_report(results, tmp_path / "report.html")


def test_a_zero_width_interval_is_explained_in_the_report():
    """The report's leakage verdict read 'D = +0.0 points (95% CI +0.0 to +0.0),
    indistinguishable from guessing', as if D were known exactly (a tiny test split whose items
    all score alike); the terminal and the card said why the interval has no width, the
    report did not."""
    results = nli_results()
    note = ("the headline model's per-item difference from the baseline is the same on all 6 "
            "evaluated items, so the interval has zero width because nothing varies, not "
            "because D is known precisely")
    leak = dict(results["leakage"], verdict="chance", interval_note=note,
                best=dict(results["leakage"]["best"], D=0.0, ci_low=0.0, ci_high=0.0))
    level, sentence = verdict(LeakageSection.from_json(leak), 0.10, results)
    assert level == "clean" and "(95% CI +0.0 to +0.0)" in sentence
    assert sentence.endswith(" The headline model's per-item difference from the baseline is "
                             "the same on all 6 evaluated items, so the interval has zero width "
                             "because nothing varies, not because D is known precisely.")
    results["leakage"] = leak
    assert "because nothing varies" in render_html(results)


def test_right_to_left_dataset_text_is_isolated_in_the_page():
    """Arabic duplicates and cue words sit in <bdi> (their direction from their own letters;
    they were laid out left to right inside our English sentences)."""
    import cuelens

    words = ["رجل", "امرأة", "طفل", "يقرأ", "يمشي", "كتابا", "في", "الحديقة", "البيت", "الآن"]
    rows = []
    for i in range(240):
        label = ("contradiction", "entailment", "neutral")[i % 3]
        text = " ".join(words[(i * k) % len(words)] for k in (1, 3, 7)) + "."
        rows.append({"id": str(i), "premise": "رجل يقرأ كتابا.", "label": label,
                     "hypothesis": ("لا " if label == "contradiction" else "") + text})
    results = cuelens.scan(rows, features="none", folds=2, iterations=1).results
    page = render_html(results)
    assert "“<bdi>لا</bdi>” → contradiction" in page
    # the sentences built in Python too: the conclusion, the findings and the next steps
    assert "strongest: “لا”" not in page and "strongest: “<bdi>لا</bdi>”" in page
    assert "(contradiction: <bdi>لا</bdi>)</strong>" in page
    duplicate = results["hygiene"]["examples"]["duplicates"][0]["text"]
    assert f": <bdi>{duplicate}</bdi></li>" in page


def test_isolated_escapes_and_isolates_the_dataset_text_of_a_sentence():
    from cuelens.reports.text import isolated

    assert isolated("the word “<b>” → x") == "the word “<bdi>&lt;b&gt;</bdi>” → x"
    assert isolated("drop (neutral: אולי, لا) & 'more'") == \
        "drop (neutral: <bdi>אולי, لا</bdi>) &amp; &#39;more&#39;"
    assert isolated("لا's") == "<bdi>لا</bdi>&#39;s"  # never cut inside an entity
