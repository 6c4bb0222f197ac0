"""Report sections for preference shortcuts, the subset × shortcut table and judge logs
(docs/preference.md); :mod:`cuelens.reports.sections` lists them in its section table.

The subset heatmap sorts in the page itself: its dropdown reorders the rows (Plotly
``updatemenus`` relayout of the category axis), so no script beyond Plotly's is needed.
"""

from __future__ import annotations

from cuelens.reports import figures as F
from cuelens.reports.sections import Section, pct


def preference_section(results: dict) -> Section | None:
    """Length, formatting and position shortcuts of preference pairs, per split."""
    from cuelens.audit.preference import shortcut_verdict

    pref = results.get("preference")
    if pref is None:
        return None
    splits = {role: {**split, "verdicts": [shortcut_verdict(r) for r in split["shortcuts"]
                                           if r["decided"]]}
              for role, split in pref["splits"].items()}
    flagged = sum(r["significant"] for s in pref["splits"].values() for r in s["shortcuts"])
    sec = Section("preference", "Preference shortcuts: length, formatting, position", context={
        "splits": splits, "shape": pref["shape"], "level": "flagged" if flagged else "clean",
        "headline": (f"{flagged} shortcut(s) predict the chosen response significantly (Holm-"
                     "corrected)." if flagged else
                     "No length, formatting or position rule predicts the chosen response "
                     "significantly.")})
    role, split = next(iter(pref["splits"].items()))
    rows = [r for r in split["shortcuts"] if r["rate"] is not None]
    if rows:
        sec.add_figure("rates", f"How often each rule picks the chosen response ({role} split) "
                       "among the pairs it tells apart, with 95% Wilson intervals; the dashed line "
                       "is a coin flip. Red: significant after Holm's correction.",
                       rate_bars([r["shortcut"] for r in rows], [r["rate"] for r in rows],
                                 [r["rate_ci"] for r in rows], "win rate",
                                 text=[f"{pct(r['rate'])} of {r['decided']:,}" for r in rows],
                                 colours_=[F.BAD if r["significant"] else F.MAIN for r in rows],
                                 reference=(50, "coin flip")))
    return sec


def rate_bars(names: list[str], rates: list[float], intervals: list[list[float]],
              axis_title: str, **options) -> dict:
    """Horizontal bars of fractions (shown in %) with their intervals as error bars."""
    values = [100 * r for r in rates]
    return F.horizontal_bars(names, values, axis_title=axis_title, x_range=(0, 100),
                             errors=([v - 100 * ci[0] for v, ci in zip(values, intervals)],
                                     [100 * ci[1] - v for v, ci in zip(values, intervals)]),
                             **options)


def _orders(table: dict) -> dict[str, list[str]]:
    """Row orders of the subset heatmap: by name, by strongest effect, by significant cells, by
    each shortcut's effect."""
    rows = table["rows"]

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
    orders.update({f"{name}": by(lambda r, n=name: effect(r, n)) for name in table["shortcuts"]})
    return orders


def subsets_section(results: dict) -> Section | None:
    """The subset × shortcut table: a heatmap of effects (sortable) and the table."""
    table = results.get("subsets")
    if table is None:
        return None
    rows, names = table["rows"], table["shortcuts"]
    win = table["measure"] == "win rate"
    hits = sum(c["significant"] for r in rows for c in r["cells"].values())
    sec = Section("subsets", f"Subsets by {table['field']}: every shortcut per subset", context={
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
                         diverging=True, row_title=table["field"], column_title="shortcut")
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
                       f"{table['n_tests']} cells); colour: the effect in points. Sort the rows "
                       "with the menu.", spec)
    return sec


def judge_section(results: dict) -> Section | None:
    """Position consistency of an LLM judge run in both orders."""
    from cuelens.audit.judge import judge_verdict

    if results.get("kind") != "judge_log":
        return None
    biased = results["flips_to_first"].get("significant", False)
    sec = Section("judge_log", "Judge position consistency", context={
        "r": results, "verdict": judge_verdict(results),
        "level": "flagged" if biased else "clean"})
    parts = [("consistent", results["consistent"]), ("flipped", results["flips"]),
             ("tie in one order only", results["tie_inconsistent"])]
    sec.add_figure("rates", "Share of pairs by what happened when the two responses swapped "
                   "places, with 95% Wilson intervals.",
                   rate_bars([name for name, _ in parts], [p["rate"] or 0.0 for _, p in parts],
                             [p["ci"] for _, p in parts], "share of pairs",
                             text=[f"{pct(p['rate'])} ({p['count']:,})" for _, p in parts]))
    return sec
