"""Controversial-pairs results in the main HTML report (issue 8, docs/methods.md §9–§10): the
contrast_judge and contrast_pairs kinds, their schema, figures, table data and escaping."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest
from report_fixtures import (PAYLOADS, assert_schema_rejects, contrast_judge_results,
                             contrast_pairs_results)
from test_contrast_judge import small_trials
from test_report import assert_no_markup_from_payloads, parse
from typer.testing import CliRunner

from cuelens.cli import app
from cuelens.errors import UserError
from cuelens.reports import render_report, validate_results
from cuelens.reports.render import render_html
from cuelens.reports.schema import results_schema
from cuelens.reports.contrast import PAIR_COLUMNS
from cuelens.reports.pages import build_sections

FIXTURES = {"judge": contrast_judge_results,
            "natural": lambda xss=False: contrast_pairs_results(xss, "natural"),
            "synthetic": lambda xss=False: contrast_pairs_results(xss, "synthetic")}


def page_data(html: str) -> dict:
    return json.loads(parse(html).scripts[0])


# ----------------------------------------------------------------------------------- schema
@pytest.mark.parametrize("name", sorted(FIXTURES))
@pytest.mark.parametrize("xss", [False, True])
def test_fixtures_follow_the_schema_for_both_validators(name, xss):
    results = FIXTURES[name](xss=xss)
    validate_results(results)
    jsonschema.Draft202012Validator(results_schema()).validate(results)


@pytest.mark.parametrize("build, mutate, where", [
    (contrast_judge_results, lambda r: r["models"]["gpt2"].update(accuracy=1.5),
     "$.models.gpt2.accuracy"),
    (contrast_judge_results, lambda r: r["models"]["gpt2"].update(scsr=-1.2), "$.models.gpt2.scsr"),
    (contrast_judge_results, lambda r: r["models"]["bert"].pop("accuracy_noise_ceiling"),
     "$.models.bert"),
    (contrast_judge_results, lambda r: r["tests"]["scsr"][0].update(p=2), "$.tests.scsr[0].p"),
    (contrast_pairs_results, lambda r: r["pairs"][0].pop("s1_rank_model_2"), "$.pairs[0]"),
    (contrast_pairs_results, lambda r: r["pairs"][1].update(s2_rank_model_1=1.5),
     "$.pairs[1].s2_rank_model_1"),
    (contrast_pairs_results, lambda r: r.update(method="both"), "$.method"),
    (lambda: contrast_pairs_results(method="synthetic"), lambda r: r["pairs"][0].pop("lp_n_m1"),
     "$.pairs[0]"),
    (contrast_pairs_results, lambda r: r.update(kind="contrast"), "$.kind"),
])
def test_schema_rejects_bad_contrast_results_naming_the_json_path(build, mutate, where):
    results = build()
    mutate(results)
    assert_schema_rejects(results, where)


# ----------------------------------------------------------------------------------- sections
def test_judge_section_bars_and_noise_ceiling_bands_match_the_input():
    results = contrast_judge_results()
    sec = build_sections(results)[1]  # after the summary
    assert sec.key == "contrast_judge" and list(sec.figures) == ["accuracy", "scsr"]
    expected = {"accuracy": ([62.5, 75.0], [(70.0, 80.0), (70.0, 80.0)]),
                "scsr": ([0.25, -0.125], [(0.45, 0.55), (0.4, 0.6)])}
    for measure, (bars, bands) in expected.items():
        spec = sec.figures[measure].spec
        [trace] = spec["data"]
        assert trace["y"] == ["bert", "gpt2"] and trace["x"] == pytest.approx(bars)
        rects = [s for s in spec["layout"]["shapes"] if s["type"] == "rect"]
        assert [v for s in rects for v in (s["x0"], s["x1"])] == \
            pytest.approx([v for band in bands for v in band])
        assert [v for s in rects for v in (s["y0"], s["y1"])] == \
            pytest.approx([-0.45, 0.45, 0.55, 1.45])
        caption = sec.figures[measure].caption
        assert caption.endswith(".") and ". " not in caption  # one sentence
    labels = [a["text"] for a in sec.figures["accuracy"].spec["layout"]["annotations"]
              if a.get("yref") == "y"]  # a value column clear of the dashed chance line
    assert labels == ["62.5%", "75.0%"]


def test_a_band_without_width_is_drawn_as_a_thick_line():
    results = contrast_judge_results()
    results["models"]["gpt2"]["accuracy_noise_ceiling"] = {"lower": 0.9, "upper": 0.9}
    shapes = build_sections(results)[1].figures["accuracy"].spec["layout"]["shapes"]
    rects = [s for s in shapes if s["type"] == "rect"]
    assert [(s["x0"], s["x1"], s["line"]["width"]) for s in rects] == [(70, 80, 0), (90, 90, 4)]


def test_judge_band_is_left_out_for_a_model_without_a_ceiling():
    results = contrast_judge_results()
    results["models"]["gpt2"]["accuracy_noise_ceiling"] = {"lower": None, "upper": 0.8}
    validate_results(results)
    spec = build_sections(results)[1].figures["accuracy"].spec
    assert [(s["x0"], s["x1"]) for s in spec["layout"]["shapes"] if s["type"] == "rect"] == \
        [(70.0, 80.0)]


def test_judge_page_lists_models_ceilings_and_tests():
    html = render_html(contrast_judge_results())
    assert "<title>cuelens report: model–human consistency on controversial pairs</title>" in html
    assert 'id="judge-table"' in html and "70.0%–80.0%" in html and "0.450–0.550" in html
    assert html.count("Wilcoxon signed-rank tests:") == 2 and "0.375" in html


@pytest.mark.parametrize("method", ["natural", "synthetic"])
def test_pairs_table_data_matches_the_pairs(method):
    results = contrast_pairs_results(method=method)
    sec = build_sections(results)[1]  # after the summary
    table = sec.client["contrast_pairs"]
    keys = [key for key, *_ in PAIR_COLUMNS[method]]
    assert table["rows"] == [[p[k] for k in keys] for p in results["pairs"]]
    assert [c[0] for c in table["columns"]][:2] == ["model 1", "model 2"]
    html = render_html(results)
    data = page_data(html)
    assert data["contrast_pairs"]["rows"] == table["rows"]
    assert html.count("<th data-col=") == len(keys)  # a sortable header per column
    assert 'id="pairs-filter"' in html and 'id="pairs-models"' in html


def test_natural_pairs_show_ranks_logprobs_and_the_objective():
    results = contrast_pairs_results()
    sec = build_sections(results)[1]  # after the summary
    headers = [c[0] for c in sec.client["contrast_pairs"]["columns"]]
    assert {"log p(s1|m1)", "log p(s2|m2)", "rank s1|m1", "rank s2|m2"} <= set(headers)
    assert sec.context["model_pairs"] == ["bert vs gpt2", "bert vs lstm", "gpt2 vs lstm"]
    assert sec.context["facts"]["objective"] == "0.5625"
    html = render_html(results)
    assert '<option value="bert vs lstm">bert vs lstm</option>' in html
    assert "objective</span>: 0.5625" in html


def test_non_finite_logprobs_become_empty_cells():
    results = contrast_pairs_results(method="synthetic")
    results["pairs"][0]["lp_s1_m1"] = float("-inf")  # what json.loads reads from -Infinity
    validate_results(results)
    row = page_data(render_html(results))["contrast_pairs"]["rows"][0]
    assert row[[k for k, *_ in PAIR_COLUMNS["synthetic"]].index("lp_s1_m1")] is None


# ----------------------------------------------------------------------------------- escaping
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_xss_payloads_in_sentences_and_model_names_are_escaped(name):
    html = render_html(FIXTURES[name](xss=True))
    assert_no_markup_from_payloads(html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # model names, via autoescape
    data = page_data(html)
    if name == "judge":  # Plotly draws entity-escaped text
        assert data["figures"]["fig-contrast_judge-accuracy"]["data"][0]["y"][0].startswith(
            "bert &lt;script&gt;alert(1)&lt;/script&gt;")
    else:  # the sentences travel as data and are inserted with textContent
        assert any(PAYLOADS[0] in str(v) for row in data["contrast_pairs"]["rows"] for v in row)


# ----------------------------------------------------------------------------------- CLI
def test_audit_report_renders_judge_json(tmp_path):
    out, page = tmp_path / "judge.json", tmp_path / "judge.html"
    runner = CliRunner()
    res = runner.invoke(app, ["contrast", "judge", "--trials", str(small_trials(tmp_path)),
                              "--out", str(out), "--html", str(page)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "again.html")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "again.html").read_text() == page.read_text()  # one rendering path
    data = page_data(page.read_text())
    result = json.loads(out.read_text())
    bars = data["figures"]["fig-contrast_judge-accuracy"]["data"][0]
    assert bars["x"] == pytest.approx([100 * result["models"][m]["accuracy"] for m in bars["y"]])


def test_audit_report_renders_a_natural_selection_summary(tmp_path):
    rng = np.random.default_rng(3)
    scores = tmp_path / "lp.npz"
    np.savez(scores, a=rng.normal(size=40), b=rng.normal(size=40))
    summary, pairs = tmp_path / "pairs.json", tmp_path / "pairs.jsonl"
    runner = CliRunner()
    res = runner.invoke(app, ["contrast", "natural", "--scores", str(scores), "--per-pair", "3",
                              "--out", str(pairs), "--summary", str(summary)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["report", str(summary), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in pairs.read_text().splitlines()]
    data = page_data((tmp_path / "r.html").read_text())["contrast_pairs"]
    keys = [k for k, *_ in PAIR_COLUMNS["natural"]]
    assert data["rows"] == [[r[k] for k in keys] for r in rows] and len(rows) == 3


def test_html_output_never_overwrites_an_input(tmp_path):
    out = tmp_path / "judge.json"
    trials = small_trials(tmp_path)
    res = CliRunner().invoke(app, ["contrast", "judge", "--trials", str(trials), "--out", str(out),
                                   "--html", str(trials)])
    assert res.exit_code == 2 and "input" in res.output
    assert not out.exists()  # refused before any work
    with pytest.raises(UserError, match="same as an input"):
        render_report(contrast_judge_results(), out, inputs=[out])
