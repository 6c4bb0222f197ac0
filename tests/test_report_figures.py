"""The report's figure builders write plain dicts in plotly's own normal form (docs/methods.md
§10): validating any of them with plotly changes nothing, and building a page loads none of
plotly's figure classes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import plotly.graph_objects as go
import pytest

from cuelens.reports import figures as F

PAYLOAD = '<img src=x onerror=alert(1)> & "q"\nline'

BUILDERS = {
    "grouped bars with whiskers and a reference": lambda: F.grouped_bars(
        ["a<b", "c", PAYLOAD], {"s1": [1.0, None, 3], PAYLOAD: [2.5, 3.0, 0.0]},
        {"s1": ["h1", "h2", PAYLOAD]}, axis_title="accuracy",
        errors={"s1": ([0.1, 0.2, 0.3], [0.3, 0.4, 0.1])}, reference=(50.0, "chance")),
    "grouped bars, counts": lambda: F.grouped_bars(
        ["a"], {"only": [7]}, axis_title="n", percent=False, colour_map={"only": "#123456"}),
    "horizontal bars, value column, bands": lambda: F.horizontal_bars(
        ["x", PAYLOAD], [1.0, 2.0], axis_title="t", text=["1", PAYLOAD],
        errors=([0.1, 0.1], [0.2, 0.2]), reference=(1.5, PAYLOAD), x_range=(0, 100),
        bands=[(1, 2), (3, 3)]),
    "horizontal bars, labels at the bars": lambda: F.horizontal_bars(
        ["x", "y"], [1.0, None], axis_title="t", text=["1", ""], colours_=["#111111", "#222222"],
        percent=False),
    "tested rates": lambda: F.tested_rate_bars(
        [{"n": "r1", "rate": 0.5, "rate_ci": [0.4, 0.6], "significant": True},
         {"n": PAYLOAD, "rate": 0.2, "rate_ci": [0.1, 0.3], "significant": False}],
        "n", "rate", "axis", text=["x", "y"], reference=(50.0, "chance")),
    "lines": lambda: F.lines([1, 2, 3], {"a": [0.1, 0.2, 0.3], PAYLOAD: [1, 2, 3]},
                             {"a": ["h1", "h2", PAYLOAD]},
                             colour_map={"a": "#111111", PAYLOAD: "#222222"},
                             x_title="x", y_title="y"),
    "stacked distributions": lambda: F.stacked_distributions(
        [("r1", {"e": 0.5, "n": 0.3}), (PAYLOAD, {"c": 1.0})], ["e", "n", "c"]),
    "diverging heatmap": lambda: F.heatmap(["r1", PAYLOAD], ["c1", "c2"], [[1.0, None], [-2, 3]],
                                          [["a", "b"], ["c", PAYLOAD]], colour_title="D",
                                          diverging=True),
    "sequential heatmap with titles and bounds": lambda: F.heatmap(
        ["r1"], ["c1"], [[0.5]], [["a"]], colour_title="acc", diverging=False, row_title="rows",
        column_title="cols", zmin=0, zmax=1),
    "scatter groups, log x, reference": lambda: F.scatter_groups(
        {"a": {"x": [1, 2], "y": [0.1, 0.2], "hover": ["h", PAYLOAD], "symbol": ["circle", "x"]},
         "b": {"x": [3], "y": [0.3], "hover": ["k"]}}, x_title="x", y_title="y", log_x=True,
        colour_keys=["b", "a"], reference=(0.5, PAYLOAD)),
    "colour scatter": lambda: F.colour_scatter([0.1, 0.2], [0.3, 0.4], [0.0, 1.0], ["h", PAYLOAD],
                                               x_title="x", y_title="y", colour_title="c"),
}


@pytest.mark.parametrize("name", BUILDERS)
def test_plotly_validation_changes_nothing(name):
    spec = BUILDERS[name]()
    validated = json.loads(go.Figure(spec).to_json())  # raises on any property plotly lacks
    assert validated == spec
    assert json.dumps(validated, sort_keys=True) == json.dumps(spec, sort_keys=True)  # 0 vs 0.0


def test_the_template_is_plotly_white_and_named_scales_are_plotlys():
    template = json.loads(go.Figure(layout={"template": "plotly_white"}).to_json())["layout"]
    assert F.grouped_bars(["a"], {"s": [1]}, axis_title="x")["layout"]["template"] == \
        template["template"]
    for name in ("RdBu_r", "Blues", "Viridis"):
        assert F._colour_scale(name) == json.loads(go.Heatmap(colorscale=name).to_json())[
            "colorscale"]
    assert F._colour_scale("RdBu_r")[0] == [0.0, "rgb(5,48,97)"]  # reversed: blue at the low end


@pytest.mark.parametrize("fixture", ["nli_results", "mcq_results"])
def test_audit_report_loads_no_plotly_figure_classes_scipy_or_scikit_learn(tmp_path, fixture):
    """`audit report` pays only for what a page needs: plotly's figure classes, scipy,
    scikit-learn and pandas stay unloaded (each cost the command up to seconds)."""
    import report_fixtures

    results = tmp_path / "results.json"
    results.write_text(json.dumps(getattr(report_fixtures, fixture)()), "utf-8")
    code = ("import sys; from cuelens.cli import main; sys.argv = ['audit', 'report', "
            f"{str(results)!r}, '-o', {str(tmp_path / 'page.html')!r}]\n"
            "try: main()\nexcept SystemExit as exit: assert not exit.code, exit.code\n"
            "print(sorted(m for m in sys.modules if m.startswith(('plotly.graph_objs', "
            "'plotly.basedatatypes', 'plotly.validators', 'scipy', 'sklearn', 'pandas'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parent.parent)  # this checkout's cuelens
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert "Plotly.newPlot" in (tmp_path / "page.html").read_text("utf-8")
