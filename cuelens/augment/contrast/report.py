"""Self-contained HTML sections for controversial pairs (SPEC §9, §10).

:func:`pairs_page` lists selected or synthesised pairs with both models' log-probabilities and
ranks in a sortable table; :func:`judge_page` draws per-model accuracy / signed-rank cosine bars
with each model's noise-ceiling band, like the original figures, plus the test table. All text
from the data is HTML-escaped (sentences are untrusted); Plotly's JavaScript is embedded so the
page opens offline. Strings passed to Plotly are escaped too (it renders a small HTML subset).
"""

from __future__ import annotations

import html

from cuelens.io import atomic_write_text

_SORT_JS = """
document.querySelectorAll('table.sortable th').forEach((th, col) => th.addEventListener('click', () => {
  const body = th.closest('table').tBodies[0];
  const asc = th.dataset.asc !== '1'; th.dataset.asc = asc ? '1' : '0';
  const key = r => { const t = r.cells[col].dataset.v ?? r.cells[col].textContent;
                     const x = parseFloat(t); return isNaN(x) ? t : x; };
  [...body.rows].sort((a, b) => { const x = key(a), y = key(b);
    return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1); }).forEach(r => body.appendChild(r));
}));
"""
_CSS = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}"
        "table{border-collapse:collapse;font-size:13px}td,th{border-bottom:1px solid #ddd;"
        "padding:4px 8px;text-align:left}th{cursor:pointer;background:#f4f4f4}"
        "td.num{text-align:right;font-variant-numeric:tabular-nums}p.lead{color:#444}")


def _cell(value) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return f"<td>{html.escape('' if value is None else str(value))}</td>"
    if isinstance(value, float):
        return f'<td class="num" data-v="{value!r}">{value:.4g}</td>'
    return f'<td class="num">{html.escape(str(value))}</td>'


def table(rows: list[dict]) -> str:
    """A sortable HTML table of ``rows`` (click a header to sort); all values escaped."""
    if not rows:
        return "<p>No rows.</p>"
    columns = list(rows[0])
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(_cell(r.get(c)) for c in columns) + "</tr>" for r in rows)
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _page(title: str, parts: list[str]) -> str:
    from plotly.offline import get_plotlyjs

    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{_CSS}</style><script>{get_plotlyjs()}</script></head><body>"
            f"<h1>{html.escape(title)}</h1>{''.join(parts)}<script>{_SORT_JS}</script>"
            "</body></html>")


def _facts(facts: dict) -> str:
    items = "".join(f"<li><b>{html.escape(str(k))}</b>: {html.escape(str(v))}</li>"
                    for k, v in facts.items())
    return f"<ul>{items}</ul>"


def pairs_page(path, title: str, rows: list[dict], facts: dict) -> None:
    """Write the pairs/triplets table with the run facts (objective, success rate…)."""
    lead = ("<p class='lead'>Each row is one controversial pair: model_1 gives s1 a low and s2 a "
            "high probability, model_2 the reverse. Click a column header to sort.</p>")
    atomic_write_text(path, _page(title, [_facts(facts), lead, table(rows)]))


def judge_figure(result: dict, measure: str) -> str:
    """Horizontal bars per model with its noise-ceiling band (grey: lower–upper bound)."""
    import plotly.graph_objects as go

    names = list(result["models"])
    fig = go.Figure()
    for i, name in enumerate(names):
        band = result["models"][name][f"{measure}_noise_ceiling"]
        if band["lower"] is not None and band["upper"] is not None:
            fig.add_shape(type="rect", x0=band["lower"], x1=max(band["upper"], band["lower"] + 1e-3),
                          y0=i - 0.4, y1=i + 0.4, fillcolor="silver", line_width=0, layer="below")
    values = [result["models"][n][measure] for n in names]
    fig.add_bar(orientation="h", y=[html.escape(n) for n in names], x=values,
                text=[f"{v:.3f}" if v is not None else "" for v in values], marker_color="#332288")
    chance = 0.5 if measure == "accuracy" else 0.0
    fig.add_vline(x=chance, line_dash="dash", line_color="#555")
    label = {"accuracy": "human-choice prediction accuracy",
             "scsr": "signed-rank cosine similarity with human ratings"}[measure]
    fig.update_layout(template="plotly_white", height=60 + 40 * len(names),
                      xaxis={"title": label, "range": [0, 1] if measure == "accuracy" else [-1, 1]},
                      margin={"l": 10, "r": 10, "t": 20, "b": 10})
    return fig.to_html(full_html=False, include_plotlyjs=False)


def judge_page(path, result: dict) -> None:
    """Write the model–human consistency section: two bar charts and the test tables."""
    parts = [_facts({k: result[k] for k in ("n_subjects", "n_pairs", "n_rows", "midpoint")})]
    for measure, caption in (
            ("accuracy", "Bars: how often each model's preferred sentence is the one the person "
                         "chose (mean over participants, on the trials that targeted the model). "
                         "Grey band: the noise ceiling (lower = other people's majority vote, "
                         "upper = everyone's); dashed line: chance."),
            ("scsr", "Bars: signed-rank cosine similarity between each model's log-probability "
                     "ratio and the graded human ratings; grey band: noise ceiling.")):
        parts += [f"<h2>{measure}</h2><p class='lead'>{html.escape(caption)}</p>",
                  judge_figure(result, measure),
                  "<p class='lead'>Wilcoxon signed-rank tests across participant groups, "
                  "Benjamini–Hochberg-corrected (p_fdr).</p>", table(result["tests"][measure])]
    atomic_write_text(path, _page("Model–human consistency", parts))
