"""The model section of a probe's report (``audit probe``, docs/methods.md §6–7): accuracy and
distribution tests, easy/hard accuracy, the data map, stress tests and position bias.
"""

from __future__ import annotations

from cuelens.audit.results import DatasetSummary
from cuelens.data.dataset import Task
from cuelens.probes.sanity import probe_verdict
from cuelens.reports import figures as F
from cuelens.reports.options import ReportOptions
from cuelens.reports.section import Section, label_keys, pct

TOP_PROBE_CUES = 25
TOP_DISTRIBUTION_CUES = 10
MAX_DATA_MAP_POINTS = 1500  # SVG markers: ~0.5 s to draw on a slow machine
BOX_LEVEL = {"relies": "flagged", "unreliable": "mild"}  # probe_verdict's level → box; else clean


def probe(results: dict, options: ReportOptions) -> Section | None:
    pr = results.get("probe")
    if pr is None:
        return None
    level, sentence = probe_verdict(pr)
    sec = Section("probe", "Does a model use the cues?", context={
        "probe": pr, "level": BOX_LEVEL.get(level, "clean"), "verdict": sentence})
    sec.terms = ["ΔAcc", "Σ|ΔAcc|", "score", "CI", "AW", "CO"]
    _probe_accuracy_test(sec, pr)
    data = DatasetSummary.required_in(results)
    _probe_distribution_test(sec, pr, data.label_names, data.task == Task.MCQ)
    _probe_easy_hard(sec, pr)
    _probe_data_map(sec, pr)
    _probe_short_circuit(sec, pr)
    _probe_position_bias(sec, pr)
    return sec


def _probe_accuracy_test(sec: Section, pr: dict) -> None:
    cues = pr.get("accuracy_test", {}).get("cues")
    if not cues:
        return
    top = sorted(cues, key=lambda c: (-abs(c["delta"]), c["cue"]))[:TOP_PROBE_CUES]
    lo, hi = delta_errors(top)
    sec.add_figure("delta", "ΔAcc = the model's accuracy on test items with the cue minus "
                   "without it, with 95% bootstrap intervals: bars clearly right of zero mean "
                   "the model does better when the cue is present, so it probably relies on it "
                   "(red = significant after the multiple-test correction).",
                   F.horizontal_bars(
                       [f"{c['cue']} ({c['kind'] + ', ' if c.get('kind') else ''}n={c['n_with']:,})"
                        for c in top],
                       [100 * c["delta"] for c in top], axis_title="ΔAcc (points)", percent=False,
                       text=[f"{100 * c['delta']:+.1f}" for c in top],
                       colours_=[F.BAD if c["delta"] > 0 and c.get("significant") else F.MAIN
                                 for c in top],
                       errors=(lo, hi), reference=(0, "no effect")))


def _probe_distribution_test(sec: Section, pr: dict, label_names: list[str], mcq: bool) -> None:
    cues = pr.get("distribution_test", {}).get("cues")
    if not cues:
        return
    top = sorted(cues, key=lambda c: (-abs(c.get("score", 0.0)), c["cue"]))[:TOP_DISTRIBUTION_CUES]
    rows = []
    for c in top:
        rows.append((f"{c['cue']} · training data", c["train_dist"]))
        score = f", score {c['score']:+.3f}" if "score" in c else ""
        n = f"n={c['n']:,}" if "n" in c else "balanced"
        rows.append((f"{c['cue']} · model ({n}{score})", c["predicted_dist"]))
    labels = label_keys(label_names, *(d for _, d in rows))
    caption = ("On questions where the cue-bearing choice is right exactly half of the time, a "
               "model that ignores the cue picks it about 50% of the time (second bar of each "
               "pair); leaning the way the training data does (first bar) means it follows the cue."
               if mcq else
               "On a label-balanced set of items with the cue, the model's predictions (second "
               "bar of each pair) should be evenly spread; if they lean the same way as the "
               "training data (first bar), the model follows the cue.")
    sec.add_figure("distribution", caption, F.stacked_distributions(rows, labels))


def _probe_easy_hard(sec: Section, pr: dict) -> None:
    eh = pr.get("easy_hard")
    if not eh:
        return
    values = {"all test items": pr.get("accuracy"), "easy items": eh["easy_accuracy"],
              "hard items": eh["hard_accuracy"]}
    keep = [(n, v) for n, v in values.items() if v is not None]
    sec.add_figure("easy_hard", "Model accuracy on items a cue-only classifier solves (easy) "
                   "and on those it cannot (hard): a large gap means the model's score leans "
                   "on the cues.",
                   F.horizontal_bars([n for n, _ in keep], [100 * v for _, v in keep],
                                     axis_title="accuracy", text=[pct(v) for _, v in keep],
                                     colours_=[F.GREY, F.BAD, F.GOOD][-len(keep):],
                                     x_range=(0, 100)))


def _probe_data_map(sec: Section, pr: dict) -> None:
    pts = pr.get("data_map", {}).get("points")
    if not pts:
        return
    step = max(1, -(-len(pts) // MAX_DATA_MAP_POINTS))
    sample = pts[::step]
    sec.context["data_map_sampled"] = (len(sample), len(pts)) if step > 1 else None
    sec.add_figure("data_map", "Each dot is a training item: high confidence and low "
                   "variability = easy to learn, low confidence = hard or mislabelled, high "
                   "variability = ambiguous; colour is how often the model got it right.",
                   F.colour_scatter([p["variability"] for p in sample],
                                    [p["confidence"] for p in sample],
                                    [p.get("correctness", 0.0) for p in sample],
                                    [f"{p.get('guid', '')}" for p in sample],
                                    x_title="variability", y_title="confidence",
                                    colour_title="correct"))


def delta_errors(rows: list[dict]) -> tuple[list[float], list[float]]:
    """Whisker lengths (points) below and above each ΔAcc from its 95% interval (0: none)."""
    low = [100 * (c["delta"] - c["ci_low"]) if c.get("ci_low") is not None else 0.0 for c in rows]
    high = [100 * (c["ci_high"] - c["delta"]) if c.get("ci_high") is not None else 0.0
            for c in rows]
    return low, high


# Display names of the stress operators (docs/methods.md §7; keys as registered in
# cuelens.augment.operators).
OPERATOR_NAMES = {"co": "CO crossover", "mt": "MT word swap", "neg+": "Neg+ add negation",
                  "neg-": "Neg− remove negation", "ner": "NER name swap",
                  "pr": "PR pronoun switch", "pi": "PI pronoun → name",
                  "adv": "Adv emphasis adverb", "syn": "Syn synonym",
                  "voice": "Voice subject/object swap"}


def _probe_short_circuit(sec: Section, pr: dict) -> None:
    sc = pr.get("short_circuit")
    if not sc:
        return
    ops = [(OPERATOR_NAMES.get(op, op), v) for op, v in sc.get("per_op", {}).items()
           if v.get("pass_rate") is not None]
    reasons: dict[str, list[str]] = {}  # operators that built no question, by why
    for op, v in sc.get("per_op", {}).items():
        if v.get("not_applicable"):
            reasons.setdefault(v["not_applicable"], []).append(OPERATOR_NAMES.get(op, op))
    sec.context["not_applicable_ops"] = [f"{', '.join(names)} ({reason})"
                                         for reason, names in reasons.items()]
    if "aw" in sc and sc["aw"] is not None:
        ops.insert(0, ("AW (attention to the premise)", {"pass_rate": sc["aw"], "n": None}))
    if not ops:
        return
    sec.add_figure("short_circuit", "Share of stress tests passed per operator (higher is "
                   "better): each test swaps a wrong answer for a tricky one, and a model that "
                   "answers from the choices alone, ignoring the premise, fails them.",
                   F.horizontal_bars(
                       [op for op, _ in ops], [100 * v["pass_rate"] for _, v in ops],
                       axis_title="pass rate", x_range=(0, 100),
                       text=[pct(v["pass_rate"]) + (f" of {v['n']:,}" if v.get("n") else "")
                             for _, v in ops]))


def _probe_position_bias(sec: Section, pr: dict) -> None:
    pb = pr.get("position_bias")
    if pb:
        sec.context["position_verdict"] = position_bias_figure(sec, pb, "position_bias")


def position_bias_figure(sec: Section, pb: dict, name: str, lead: str = "") -> str:
    """Add the chart of a ``position_bias`` section (:mod:`cuelens.probes.position`) as figure
    ``name`` (caption starting with ``lead``); return its plain-English verdict."""
    from cuelens.audit.chance import letter
    from cuelens.probes.position import position_verdict

    accs = pb["accuracy_by_position"]
    picks = pb["predicted_positions"]["shares"]
    width = max(len(accs), len(picks))
    positions = [letter(p) for p in range(width)]
    sec.add_figure(name, lead + "Left series: the model's accuracy when the right answer is "
                   "moved to each position (every question is shown in every rotation of its "
                   "choices). Right series: how often the model answers each position on a "
                   "position-balanced subset. A position-blind model has flat bars.",
                   F.grouped_bars(positions, {
                       "accuracy with the answer here": [100 * a for a in accs]
                       + [None] * (width - len(accs)),
                       "share of the model's answers": [100 * x for x in picks]
                       + [None] * (width - len(picks))}, axis_title="percent"))
    return position_verdict(pb)
