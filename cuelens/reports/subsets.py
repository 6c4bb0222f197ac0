"""The subset × shortcut section (``--subset-field``, docs/preference.md) of scans and preference
scans; its heatmap sorts in the page through Plotly alone (docs/report.md, "Sections")."""

from __future__ import annotations

from cuelens.audit.results import SubsetsSection
from cuelens.reports import figures as F
from cuelens.reports.options import ReportOptions
from cuelens.reports.section import Section
from cuelens.wording import plural


def _orders(table: SubsetsSection) -> dict[str, list[str]]:
    """Row orders of the subset heatmap: by name, by strongest effect, by significant cells, by
    each shortcut's effect."""
    rows = table.rows

    def by(key) -> list[str]:
        return [r["subset"] for r in sorted(rows, key=key)]

    def effect(r: dict, name: str) -> float:
        value = r["cells"].get(name, {}).get("effect")
        return -abs(value) if value is not None else 1.0

    orders = {"subset name": by(lambda r: r["subset"]),
              "strongest effect": by(lambda r: min((effect(r, n) for n in r["cells"]),
                                                   default=1.0)),
              "significant cells": by(lambda r: -sum(c["significant"]
                                                     for c in r["cells"].values())),
              "size": by(lambda r: -r["n_items"])}
    orders.update({f"{name}": by(lambda r, n=name: effect(r, n)) for name in table.shortcuts})
    return orders


def subsets(results: dict, options: ReportOptions) -> Section | None:
    """The subset × shortcut table: a heatmap of effects (sortable) and the table."""
    table = SubsetsSection.in_results(results)
    if table is None:
        return None
    rows, names = table.rows, table.shortcuts
    win = table.measure == "win rate"
    hits = sum(c["significant"] for r in rows for c in r["cells"].values())
    sec = Section("subsets", f"Subsets by {table.field}: every shortcut per subset", context={
        "table": table, "names": names, "hits": hits,
        "effect_name": "win rate − 50%" if win else "D = accuracy − chance"})
    if names and rows:
        orders = _orders(table)
        start = orders["strongest effect"]
        by_name = {r["subset"]: r for r in rows}
        values = [[None if by_name[s]["cells"][n]["effect"] is None else
                   100 * by_name[s]["cells"][n]["effect"] for n in names] for s in start]
        text = [[("–" if c["value"] is None else
                  f"{100 * c['value']:.0f}%{'*' if c['significant'] else ''}")
                 for c in (by_name[s]["cells"][n] for n in names)] for s in start]
        spec = F.heatmap(start, names, values, text, colour_title="effect (points)",
                         diverging=True, row_title=table.field, column_title="shortcut")
        spec["layout"]["yaxis"].update(categoryorder="array",
                                       categoryarray=[F.esc(s) for s in start])
        spec["layout"]["updatemenus"] = [{
            "type": "dropdown", "x": 0, "y": 1, "xanchor": "right", "yanchor": "bottom",
            "showactive": True, "active": list(orders).index("strongest effect"),
            "buttons": [{"label": F.esc(F.short(f"sort: {label}", 36)), "method": "relayout",
                         "args": [{"yaxis.categoryarray": [F.esc(s) for s in order]}]}
                        for label, order in orders.items()]}]
        sec.add_figure("heatmap", f"{'Win rate' if win else 'Accuracy'} of each shortcut per "
                       f"subset (cell text; * = significant after Holm's correction over all "
                       f"{plural(table.n_tests, 'cell')}); colour: the effect in points. Sort "
                       "the rows with the menu.", spec)
    return sec
