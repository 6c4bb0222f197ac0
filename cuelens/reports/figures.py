"""Plotly figure builders for the HTML report (docs/methods.md §10): plain JSON-able dicts in the
form plotly's validation gives (docs/report.md); dataset-derived strings go through :func:`esc`."""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Mapping, Sequence
from importlib import resources

from cuelens.reports.text import short, short_labels

# One meaning per colour on every chart of a page (colour-blind-safe, Paul Tol's palettes):
# MAIN a measured value, BAD an artifact or cue reliance, GOOD a healthy value (hard items),
# GREY a baseline or reference. Dataset labels and series (splits, prompt templates, position
# series) have palettes of their own that share no colour with these four or with each other.
MAIN, BAD, GOOD, GREY = "#4477AA", "#EE6677", "#228833", "#9A9A9A"
LABEL_PALETTE = ["#AA4499", "#DDCC77", "#44AA99", "#332288", "#88CCEE", "#999933", "#882255",
                 "#E69F00"]
SERIES_PALETTE = ["#004488", "#DDAA33", "#5A3D8C", "#8C6D31", "#1F6F6F", "#B07AA1"]
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"


def esc(value) -> str:
    """Escape a string for Plotly's pseudo-HTML text renderer (``&``, ``<``, ``>``); our own
    ``\n`` line breaks become ``<br>`` after escaping."""
    return html.escape(str(value), quote=False).replace("\n", "<br>")


def category_axis(names: Sequence[str], limit: int = 40, **kwargs) -> dict:
    """A category axis whose tick labels are shortened, distinct copies of the (escaped)
    category values."""
    return {"type": "category", "tickvals": [esc(n) for n in names],
            "ticktext": [esc(t) for t in short_labels(names, limit)], **kwargs}


def colours(keys: Sequence[str], palette: Sequence[str] = LABEL_PALETTE) -> dict[str, str]:
    """A stable colour per key (dataset labels by default), in the order given."""
    return {key: palette[i % len(palette)] for i, key in enumerate(keys)}


@functools.cache
def _template() -> dict:
    """plotly's ``plotly_white`` template as plotly ships it (the file ``plotly.io.templates``
    reads), read once and shared by every figure."""
    templates = resources.files("plotly").joinpath("package_data").joinpath("templates")
    return json.loads(templates.joinpath("plotly_white.json").read_text("utf-8"))


def _colour_scale(name: str) -> list[list]:
    """A named plotly colour scale (``_r``: reversed) as plotly writes it: evenly spaced stops."""
    from _plotly_utils.colors import diverging, sequential  # plotly's scales, without its figures

    base = name.removesuffix("_r")
    colours = getattr(sequential, base, None) or getattr(diverging, base)
    colours = colours[::-1] if name.endswith("_r") else colours
    return [[i / (len(colours) - 1), colour] for i, colour in enumerate(colours)]


def _axis(axis: dict) -> dict:
    """An axis with its title in plotly's form (``{"text": ...}``) and automatic margins."""
    title = axis.get("title")
    return {**axis, **({"title": {"text": title}} if isinstance(title, str) else {}),
            "automargin": True}


def _trace(kind: str, **props) -> dict:
    """A trace of type ``kind``; properties that are None are left out, as plotly does."""
    return {**{key: value for key, value in props.items() if value is not None}, "type": kind}


def _hline(y: float) -> dict:
    """A dashed line across the plot at ``y`` (plotly's ``add_hline``)."""
    return {"type": "line", "line": {"color": "#555", "dash": "dash"}, "x0": 0, "x1": 1,
            "xref": "x domain", "y0": y, "y1": y, "yref": "y"}


def _layout(traces: list[dict], *, height: int, right: int = 10, shapes: Sequence[dict] = (),
            annotations: Sequence[dict] = (), xaxis: dict, yaxis: dict, **kwargs) -> dict:
    """The figure: ``traces`` in the page's layout (font, margins, legend above the plot,
    automatic axis margins, plotly's ``plotly_white`` template)."""
    layout = {"height": height, "font": {"family": FONT, "size": 13},
              "margin": {"l": 10, "r": right, "t": 30, "b": 10},
              "hoverlabel": {"font": {"family": FONT}},
              "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0,
                         **kwargs.pop("legend", {})},
              "xaxis": _axis(xaxis), "yaxis": _axis(yaxis), **kwargs,
              **({"shapes": list(shapes)} if shapes else {}),
              **({"annotations": list(annotations)} if annotations else {}),
              "template": _template()}
    return {"data": traces, "layout": layout}


def grouped_bars(categories: Sequence[str], series: Mapping[str, Sequence[float | None]],
                 hover: Mapping[str, Sequence[str]] | None = None, *, axis_title: str,
                 percent: bool = True, height: int = 340,
                 colour_map: Mapping[str, str] | None = None,
                 errors: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
                 reference: tuple[float, str] | None = None) -> dict:
    """Vertical grouped bars: one trace per series over shared categories, coloured by
    ``colour_map`` (default: the series palette); ``None`` values draw no bar. With ``errors``
    (per series: minus, plus) the bars carry interval whiskers and their values move to the
    hover text, so no label sits under a whisker; ``reference`` draws a dashed level."""
    cats = [esc(c) for c in categories]
    palette = colour_map or colours(list(series), SERIES_PALETTE)
    traces = []
    for name, values in series.items():
        err = (errors or {}).get(name)
        traces.append(_trace(
            "bar", name=esc(short(name)), x=cats, y=list(values), marker=_bar_marker(palette[name]),
            text=None if err else [_fmt(v, percent) for v in values],
            textposition="outside", cliponaxis=False, error_y=_error_bars(err),
            hovertext=[esc(h) for h in (hover or {}).get(name, [])] or None,
            hoverinfo="text+name" if hover else "x+y+name"))
    right, shapes, notes = 10, [], []
    if reference is not None:  # its name right of the plot area, clear of the bars
        shapes.append(_hline(reference[0]))
        notes.append({"x": 1, "xref": "paper", "xanchor": "left", "xshift": 6, "y": reference[0],
                      "yref": "y", "text": esc(reference[1]), "showarrow": False})
        right = 18 + 8 * len(reference[1])
    return _layout(traces, height=height, right=right, shapes=shapes, annotations=notes,
                   barmode="group", showlegend=len(series) > 1,
                   yaxis={"title": axis_title, "ticksuffix": "%" if percent else "",
                          "rangemode": "tozero"}, xaxis=category_axis(categories))


def _bar_marker(colour: str | list[str]) -> dict:
    return {"color": colour, "line": {"color": colour, "width": 1.5}}  # a zero stays visible


def _error_bars(err: tuple[Sequence[float], Sequence[float]] | None) -> dict | None:
    """Asymmetric whiskers from (minus, plus) lengths; None without them."""
    if err is None:
        return None
    return {"type": "data", "symmetric": False, "array": list(err[1]),
            "arrayminus": list(err[0]), "color": "#444"}


def horizontal_bars(names: Sequence[str], values: Sequence[float | None], *, axis_title: str,
                    text: Sequence[str] | None = None, colours_: Sequence[str] | None = None,
                    errors: tuple[Sequence[float], Sequence[float]] | None = None,
                    reference: tuple[float, str] | None = None, percent: bool = True,
                    x_range: tuple[float, float] | None = None,
                    bands: Sequence[tuple[float, float] | None] | None = None) -> dict:
    """Horizontal bars (first name on top), optional asymmetric error bars, a reference line and
    a translucent grey band ``(low, high)`` across each bar (e.g. its noise ceiling; a band of
    no width, low = high, is drawn as a thick line so that it stays visible).

    With error bars or a reference line, the value labels stand in a column right of the plot
    area, where no whisker or dashed line reaches (either would cross a label drawn at the bar's
    end); a bar of value 0 is drawn as a hairline."""
    shapes = [{"type": "rect", "xref": "x", "yref": "y", "x0": band[0], "x1": band[1],
               "y0": i - 0.45, "y1": i + 0.45, "fillcolor": GREY, "opacity": 0.45,
               "line": {"color": GREY, "width": 4 if band[0] == band[1] else 0},
               "layer": "above"} for i, band in enumerate(bands or []) if band is not None]
    labels = [esc(n) for n in names]
    column = bool(text) and (errors is not None or reference is not None)
    colour = list(colours_) if colours_ else MAIN
    if errors and x_range:  # whiskers end at the axis' bounds, left of the value column
        errors = ([lo if v is None else min(lo, v - x_range[0])
                   for v, lo in zip(values, errors[0])],
                  [hi if v is None else min(hi, x_range[1] - v)
                   for v, hi in zip(values, errors[1])])
    bars = _trace("bar", orientation="h", y=labels, x=list(values), marker=_bar_marker(colour),
                  text=[esc(t) for t in text] if text and not column else None,
                  textposition="outside", cliponaxis=False,
                  error_x=_error_bars(errors) if errors else None, hoverinfo="x+y")
    notes = []
    if text and column:  # right of the plot area, where no whisker or reference line reaches
        notes = [{"x": 1, "xref": "paper", "xanchor": "left", "xshift": 8, "y": label,
                  "yref": "y", "text": esc(value), "showarrow": False, "align": "left"}
                 for label, value in zip(labels, text)]
    if reference is not None:  # plotly's add_vline with its annotation on top
        shapes.append({"type": "line", "line": {"color": "#555", "dash": "dash"},
                       "x0": reference[0], "x1": reference[0], "xref": "x", "y0": 0, "y1": 1,
                       "yref": "y domain"})
        notes.append({"showarrow": False, "text": esc(reference[1]), "x": reference[0],
                      "xanchor": "center", "xref": "x", "y": 1, "yanchor": "bottom",
                      "yref": "y domain"})
    xaxis: dict[str, object] = {"title": axis_title, "ticksuffix": "%" if percent else "",
                                "zeroline": True}
    if x_range:
        xaxis["range"] = list(x_range)
    # bar labels sit outside the bars; the right margin leaves room for the longest one
    right = 18 + 8 * max((len(t) for t in text), default=0) if text else 10
    return _layout([bars], height=max(200, 70 + 32 * len(names)), right=right, shapes=shapes,
                   annotations=notes, showlegend=False, xaxis=xaxis,
                   yaxis=category_axis(names, autorange="reversed"))


def rate_bars(names: Sequence[str], rates: Sequence[float], intervals: Sequence[Sequence[float]],
              axis_title: str, **options) -> dict:
    """:func:`horizontal_bars` of fractions (shown in %) with their intervals as error bars."""
    values = [100 * r for r in rates]
    return horizontal_bars(names, values, axis_title=axis_title, x_range=(0, 100),
                           errors=([v - 100 * ci[0] for v, ci in zip(values, intervals)],
                                   [100 * ci[1] - v for v, ci in zip(values, intervals)]),
                           **options)


def tested_rate_bars(rows: Sequence[Mapping], name: str, rate: str, axis_title: str, *,
                     text: Sequence[str], reference: tuple[float, str]) -> dict:
    """:func:`rate_bars` of result rows (``row[name]``, ``row[rate]``, ``row[rate + "_ci"]``),
    red where the row's test is ``significant``."""
    return rate_bars([r[name] for r in rows], [r[rate] for r in rows],
                     [r[f"{rate}_ci"] for r in rows], axis_title, text=text,
                     colours_=[BAD if r["significant"] else MAIN for r in rows],
                     reference=reference)


def lines(x: Sequence[float], series: Mapping[str, Sequence[float]],
          hover: Mapping[str, Sequence[str]], *, colour_map: Mapping[str, str], x_title: str,
          y_title: str, percent: bool = True, height: int = 340) -> dict:
    """One line with markers per series over shared x values (e.g. a histogram per label)."""
    traces = [_trace("scatter", name=esc(short(name)), x=list(x), y=list(values),
                     mode="lines+markers",
                     line={"color": colour_map[name], "width": 2, "shape": "linear"},
                     marker={"color": colour_map[name], "size": 5},
                     text=[esc(h) for h in hover.get(name, [])], hoverinfo="text")
              for name, values in series.items()]
    return _layout(traces, height=height, showlegend=len(series) > 1,
                   xaxis={"title": x_title, "dtick": 5},
                   yaxis={"title": y_title, "ticksuffix": "%" if percent else "",
                          "rangemode": "tozero"})


def stacked_distributions(rows: Sequence[tuple[str, Mapping[str, float]]],
                          label_names: Sequence[str]) -> dict:
    """Horizontal 100%-stacked bars: one bar per (row name, label→proportion) pair."""
    raw_names = [name for name, _ in rows]
    names = [esc(name) for name in raw_names]
    traces = []
    for label, colour in colours(label_names).items():
        values = [100.0 * float(dist.get(label, 0.0)) for _, dist in rows]
        traces.append(_trace(
            "bar", orientation="h", name=esc(short(label)), y=names, x=values,
            marker={"color": colour}, text=[f"{v:.0f}%" if v >= 8 else "" for v in values],
            textposition="inside", insidetextanchor="middle",
            hovertemplate="%{y}<br>%{fullData.name}: %{x:.1f}%<extra></extra>"))
    return _layout(traces, height=max(220, 90 + 26 * len(rows)), barmode="stack",
                   legend={"traceorder": "normal"},
                   xaxis={"title": "share of items", "ticksuffix": "%", "range": [0, 100]},
                   yaxis=category_axis(raw_names, autorange="reversed"))


def heatmap(rows: Sequence[str], columns: Sequence[str], values: Sequence[Sequence[float | None]],
            text: Sequence[Sequence[str]], *, colour_title: str, diverging: bool,
            row_title: str = "", column_title: str = "",
            zmin: float | None = None, zmax: float | None = None) -> dict:
    """Annotated heatmap (rows top to bottom); diverging colours centre on 0."""
    cells = _trace(
        "heatmap", z=[list(r) for r in values], x=[esc(c) for c in columns],
        y=[esc(r) for r in rows], text=[[esc(t) for t in r] for r in text],
        texttemplate="%{text}", hoverinfo="x+y+text",
        colorscale=_colour_scale("RdBu_r" if diverging else "Blues"),
        zmid=0 if diverging else None, zmin=zmin, zmax=zmax,
        colorbar={"title": {"text": colour_title}, "thickness": 12}, xgap=2, ygap=2)
    return _layout([cells], height=max(220, 110 + 34 * len(rows)),
                   xaxis=category_axis(columns, side="top", title=column_title),
                   yaxis=category_axis(rows, 60, autorange="reversed", title=row_title))


def scatter_groups(groups: Mapping[str, Mapping[str, Sequence]], *, x_title: str, y_title: str,
                   log_x: bool = False, colour_keys: Sequence[str] | None = None,
                   height: int = 420, reference: tuple[float, str] | None = None) -> dict:
    """Scatter with one trace per group (label colours over ``colour_keys``); each group has
    ``x``, ``y``, ``hover`` and optional ``symbol`` lists (hover strings are escaped here);
    ``reference`` draws a dashed horizontal level."""
    palette = colours(colour_keys or list(groups))
    traces = []
    for name, group in groups.items():
        colour = palette.get(name, LABEL_PALETTE[0])
        traces.append(_trace(
            "scatter", name=esc(short(name)), mode="markers", x=list(group["x"]),
            y=list(group["y"]), text=[esc(h) for h in group["hover"]], hoverinfo="text",
            marker={"color": colour, "size": 8, "opacity": 0.8,
                    "symbol": list(group.get("symbol", [])) or "circle",
                    "line": {"width": 1, "color": colour}}))
    shapes, notes = [], []
    if reference is not None:  # plotly's add_hline with its annotation at the top left
        shapes.append(_hline(reference[0]))
        notes.append({"showarrow": False, "text": esc(reference[1]), "x": 0, "xanchor": "left",
                      "xref": "x domain", "y": reference[0], "yanchor": "bottom", "yref": "y"})
    xaxis: dict[str, object] = {"title": x_title}
    if log_x:
        xs = [x for g in groups.values() for x in g["x"] if x and x > 0]
        xaxis.update(type="log", tickvals=log_ticks(min(xs, default=1), max(xs, default=10)))
    return _layout(traces, height=height, shapes=shapes, annotations=notes, xaxis=xaxis,
                   yaxis={"title": y_title})


def log_ticks(low: float, high: float) -> list[int]:
    """1-2-5 tick values spanning [low, high] for a log axis."""
    ticks, decade = [], 1
    while decade <= 10 * high:
        ticks += [v * decade for v in (1, 2, 5) if low / 2 <= v * decade <= 2 * high]
        decade *= 10
    return ticks


def colour_scatter(x: Sequence[float], y: Sequence[float], colour: Sequence[float],
                   hover: Sequence[str], *, x_title: str, y_title: str, colour_title: str) -> dict:
    """Scatter coloured by a continuous value (e.g. the data map's correctness)."""
    points = _trace(
        "scatter", mode="markers", x=list(x), y=list(y), text=[esc(h) for h in hover],
        hoverinfo="text",
        marker={"color": list(colour), "colorscale": _colour_scale("Viridis"), "cmin": 0,
                "cmax": 1, "size": 6, "opacity": 0.75,
                "colorbar": {"title": {"text": colour_title}, "thickness": 12}})
    return _layout([points], height=440, showlegend=False, xaxis={"title": x_title},
                   yaxis={"title": y_title})


def _fmt(value: float | None, percent: bool) -> str:
    if value is None:
        return ""
    return f"{value:.1f}%" if percent else f"{value:,.0f}"
