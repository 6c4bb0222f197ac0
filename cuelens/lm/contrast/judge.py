"""Model–human consistency on controversial sentence pairs (docs/methods.md §9, Golan et al.
2023; input columns, targeting, measures and tests: docs/contrast.md, "audit contrast judge")."""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from fractions import Fraction

import numpy as np
import pandas as pd
import scipy.stats

from cuelens.errors import UserError

PROB_COLUMN = re.compile(r"^sentence1_(.+)_prob$")
TARGET_COLUMNS = [f"sentence{s}_model_targeted_to_{k}" for s in (1, 2) for k in ("accept", "reject")]
MODEL_COLUMNS = ["sentence1_model", "sentence2_model"]


# ---------------------------------------------------------------- signed-rank cosine similarity
def signed_ranks(x: np.ndarray) -> np.ndarray:
    """``sign(x) · rank(|x|)`` over the non-zero entries (ties averaged); zeros stay 0."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    nz = x != 0
    if nz.any():
        out[nz] = np.sign(x[nz]) * scipy.stats.rankdata(np.abs(x[nz]), method="average")
    return out


def rank_vector_norm(n_nonzero: int) -> float:
    """``‖(1, 2, …, n)‖ = sqrt(n(n+1)(2n+1)/6)``: the norm of any tie-free signed-rank vector."""
    n = float(n_nonzero)
    return float(np.sqrt(n * (n + 1) * (2 * n + 1) / 6))


def normalized_signed_ranks(x: np.ndarray) -> np.ndarray:
    """``signed_ranks(x) / rank_vector_norm(#non-zero)`` (zeros when ``x`` is all zero)."""
    n = int(np.count_nonzero(np.asarray(x)))
    return signed_ranks(x) / rank_vector_norm(n) if n else np.zeros(len(x))


def signed_rank_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Signed-rank cosine similarity, closed form with averaged ties.

    ``sr(a) · sr(b) / (‖1..n_a‖ ‖1..n_b‖)`` with ``sr`` = :func:`signed_ranks` and ``n_a`` the
    number of non-zero entries of ``a``. Averaging tied ranks in the numerator while using the
    tie-free norm in the denominator makes this exactly the expected cosine similarity when ties
    are broken uniformly at random (the norm of a tie-broken rank vector is always
    ``‖1..n‖``). NaN when either vector is all zero (cosine undefined).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if len(a) != len(b):
        raise ValueError("vectors must have the same length")
    na, nb = np.count_nonzero(a), np.count_nonzero(b)
    if na == 0 or nb == 0:
        return float("nan")
    return float(signed_ranks(a) @ signed_ranks(b) / (rank_vector_norm(int(na)) * rank_vector_norm(int(nb))))


# ---------------------------------------------------------------- loading and alignment
def model_names(columns) -> list[str]:
    """Models with both ``sentence1_<m>_prob`` and ``sentence2_<m>_prob`` columns."""
    names = [m.group(1) for c in columns if (m := PROB_COLUMN.match(c))]
    return [n for n in names if f"sentence2_{n}_prob" in columns]


def _swap_columns(df: pd.DataFrame, flip: np.ndarray) -> pd.DataFrame:
    df = df.copy()
    for col in [c for c in df.columns if c.startswith("sentence1")]:
        other = "sentence2" + col[len("sentence1"):]
        if other in df.columns:
            a, b = df[col].to_numpy().copy(), df[other].to_numpy().copy()
            df[col] = np.where(flip, b, a)
            df[other] = np.where(flip, a, b)
    return df


def align(df: pd.DataFrame, midpoint: float) -> pd.DataFrame:
    """Put each pair in lexicographic order, flipping ratings and swapping sentence columns;
    ``pair`` names it by its sentences in NFC, so a sentence written composed in one row (or
    file) and decomposed in another is the same sentence."""
    first, second = (df[c].astype(str).map(lambda text: unicodedata.normalize("NFC", text))
                     for c in ("sentence1", "sentence2"))
    flip = (first > second).to_numpy()
    df = _swap_columns(df, flip)
    if "rating" in df.columns:
        df["rating"] = np.where(flip, 2 * midpoint - df["rating"], df["rating"])
    df["pair"] = np.where(flip, second + "\u241f" + first, first + "\u241f" + second)
    return df


def _require(columns: list[str], wanted: dict[str, str], path) -> None:
    """Each column of ``wanted`` is among the file's ``columns``; else one error naming the
    missing ones, with the option that names each (``wanted[column]``, or ``""``), and the
    columns the file has ('missing column(s) nope' said neither for --subject-field nope)."""
    missing = [name for name in wanted if name not in columns]
    if missing:
        named = ", ".join(f"{name!r}{f' ({wanted[name]})' if wanted[name] else ''}"
                          for name in missing)
        raise UserError(f"no column{'s' if len(missing) > 1 else ''} {named}; the file's "
                        f"columns are {', '.join(map(repr, columns)) or 'none'}", path=str(path))


def _numbers(df: pd.DataFrame, columns: list[str], path) -> None:
    """Each of ``columns`` holds a number in every row (infinities allowed: a log-probability
    of −∞); else one error naming the column and the line its row starts on."""
    for column in columns:
        values = pd.to_numeric(df[column], errors="coerce")
        bad = np.flatnonzero(values.isna().to_numpy())
        if len(bad):
            raise UserError(f"column {column!r} is missing or not a number: "
                            f"{df[column].iloc[bad[0]]!r}", path=str(path),
                            line=int(df.index[bad[0]]))
        df[column] = values.astype(float)


def _names(df: pd.DataFrame, column: str, path) -> pd.Series:
    """``column`` (a participant, group or sentence) as text; an empty cell is one error naming
    the column and line (every such row was the one participant, group or sentence 'nan')."""
    empty = np.flatnonzero((df[column].isna() | (df[column].astype(str).str.strip() == ""))
                           .to_numpy())
    if len(empty):
        raise UserError(f"column {column!r} is empty: every row needs one", path=str(path),
                        line=int(df.index[empty[0]]))
    return df[column].astype(str)


def _sentences(df: pd.DataFrame, path) -> None:
    """Every row has its two sentences (an empty cell was the sentence 'nan')."""
    for column in ("sentence1", "sentence2"):
        _names(df, column, path)


def load_trials(trials_path, ratings_path=None, midpoint: float = 3.5,
                subject_field: str = "subject", group_field: str | None = None) -> pd.DataFrame:
    """One aligned row per (participant, pair): ``subject``, ``group``, ``pair``, ``rating``,
    the model columns and any targeting columns. ``ratings_path`` (``sentence1``,
    ``sentence2``, subject, ``rating``) is joined to the trials file on the pair."""
    from cuelens.data.readers import read_table

    if not math.isfinite(midpoint):   # nan: a ValueError traceback when the results were written
        raise UserError(f"--midpoint must be a finite number, not {midpoint:g}")
    trials = read_table(trials_path)
    columns = [str(c) for c in trials.columns]   # as written, before the alignment adds "pair"
    _require(columns, {"sentence1": "", "sentence2": ""}, trials_path)
    _sentences(trials, trials_path)
    if not model_names(trials.columns):
        raise UserError("no model columns: each model needs sentence1_<model>_prob and "
                        "sentence2_<model>_prob (log-probabilities)", path=str(trials_path))
    _numbers(trials, [c for c in trials.columns if c.endswith("_prob") and
                      c.startswith(("sentence1_", "sentence2_"))] +
             (["rating"] if "rating" in trials.columns else []), trials_path)
    trials = align(trials, midpoint)
    if ratings_path is not None:
        ratings = read_table(ratings_path)
        _require([str(c) for c in ratings.columns],
                 {"sentence1": "", "sentence2": "", subject_field: "--subject-field",
                  "rating": ""}, ratings_path)
        _sentences(ratings, ratings_path)
        _numbers(ratings, ["rating"], ratings_path)
        ratings = align(ratings, midpoint)
        keep = [c for c in trials.columns if c not in ratings.columns or c == "pair"]
        per_pair = trials[keep].drop_duplicates("pair")
        merged = ratings.merge(per_pair, on="pair", how="left", indicator=True)
        merged.index = ratings.index        # a row per rating, in order: its line
        unknown = np.flatnonzero((merged["_merge"] == "left_only").to_numpy())
        if len(unknown):
            raise UserError("sentence pair not found in the trials file",
                            path=str(ratings_path), line=int(merged.index[unknown[0]]))
        trials = merged.drop(columns="_merge")
    else:
        _require(columns, {subject_field: "--subject-field",
                           "rating": "or a --ratings file"}, trials_path)
    trials["subject"] = _names(trials, subject_field, ratings_path or trials_path)
    repeated = np.flatnonzero(trials.duplicated(["subject", "pair"]).to_numpy())
    if len(repeated):
        raise UserError("a participant rated the same sentence pair twice",
                        path=str(ratings_path or trials_path),
                        line=int(trials.index[repeated[0]]))
    if group_field is not None:   # with --ratings: a column of either file, a row per rating
        _require([str(c) for c in trials.columns if c != "pair"], {group_field: "--group-field"},
                 ratings_path or trials_path)
        trials["group"] = _names(trials, group_field, ratings_path or trials_path)
    else:
        trials["group"] = trials["subject"]
    return trials.reset_index(drop=True)


def targeted_mask(df: pd.DataFrame, model: str, all_trials: bool = False) -> np.ndarray:
    """Rows whose pair targeted ``model`` (docs/contrast.md); all rows without targeting info."""
    cols = [c for c in TARGET_COLUMNS if c in df.columns] or \
        [c for c in MODEL_COLUMNS if c in df.columns]
    if all_trials or not cols:
        return np.ones(len(df), dtype=bool)
    return np.logical_or.reduce([(df[c].astype(str) == model).to_numpy() for c in cols])


# ---------------------------------------------------------------- per-participant measures
def _vote_credit(frac_sentence2: np.ndarray, chose2: np.ndarray) -> np.ndarray:
    """Credit of predicting a choice by majority vote: 1 right, 0 wrong, 0.5 tied vote (the
    expected credit of the original's random tie-break)."""
    vote2 = frac_sentence2 > 0.5
    credit = (vote2 == chose2).astype(float)
    credit[frac_sentence2 == 0.5] = 0.5
    credit[np.isnan(frac_sentence2)] = np.nan
    return credit


def trial_accuracy(sub: pd.DataFrame, model: str, midpoint: float) -> pd.DataFrame:
    """Per-row credit of the model and of the two noise-ceiling bounds (binarised choices)."""
    chose2 = (sub["rating"] > midpoint).to_numpy()
    diff = (sub[f"sentence2_{model}_prob"] - sub[f"sentence1_{model}_prob"]).to_numpy(float)
    model_credit = np.where(diff == 0, 0.5, ((diff > 0) == chose2).astype(float))
    grouped = pd.Series(chose2.astype(float), index=sub.index).groupby(sub["pair"])
    total, count = grouped.transform("sum").to_numpy(), grouped.transform("count").to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(count > 1, (total - chose2) / (count - 1), np.nan)
    return pd.DataFrame({"subject": sub["subject"].to_numpy(), "model": model_credit,
                         "lower": _vote_credit(lower, chose2),
                         "upper": _vote_credit(total / count, chose2)})


# An exact real number sum_f c_f / sqrt(f) (f square-free, c_f rational): normalised signed ranks
# and their averages are of this form, and distinct square-free roots are linearly independent
# over the rationals, so two such numbers are equal exactly when their dictionaries are.
Surd = dict[int, Fraction]


def _square_free(k: int) -> tuple[int, int]:
    """``(s, f)`` with ``k = s² f`` and ``f`` square-free."""
    s, f, d = 1, k, 2
    while d * d <= f:
        while f % (d * d) == 0:
            f //= d * d
            s *= d
        d += 1
    return s, f


def exact_normalized_signed_ranks(x: np.ndarray) -> list[Surd]:
    """:func:`normalized_signed_ranks` in exact arithmetic: averaged ranks are multiples of 1/2
    and the norm is ``sqrt(n(n+1)(2n+1)/6)``."""
    doubled = np.rint(2 * signed_ranks(x)).astype(np.int64)
    n = int(np.count_nonzero(doubled))
    s, f = _square_free(n * (n + 1) * (2 * n + 1) // 6) if n else (1, 1)
    return [{f: Fraction(int(v), 2 * s)} if v else {} for v in doubled]


def _mean(values: list[Surd]) -> Surd:
    total: Surd = {}
    for value in values:
        for f, c in value.items():
            total[f] = total.get(f, Fraction(0)) + c
    return {f: c / len(values) for f, c in total.items() if c}


def _as_float(value: Surd) -> float:
    """The float of an exact value; equal values give equal floats and ``−v`` gives ``−float(v)``."""
    return float(sum(float(c) / math.sqrt(f) for f, c in sorted(value.items())))


def subject_scsr(sub: pd.DataFrame, model: str, midpoint: float) -> pd.DataFrame:
    """Per-participant scsr of the model and the two noise-ceiling bounds (docs/contrast.md).

    The lower bound averages the other participants' normalised signed ranks in exact arithmetic
    (:func:`exact_normalized_signed_ranks`), so equal averages tie exactly when ranked."""
    z = sub["rating"].to_numpy(float) - midpoint
    patterns = np.zeros(len(sub))
    exact: dict = {}
    for subject, positions in sub.groupby("subject").indices.items():
        patterns[positions] = normalized_signed_ranks(z[positions])
        exact[subject] = dict(zip(sub["pair"].to_numpy()[positions],
                                  exact_normalized_signed_ranks(z[positions])))
    table: pd.DataFrame = pd.DataFrame({"subject": sub["subject"].to_numpy(),
                                        "pair": sub["pair"].to_numpy(),
                                        "p": patterns}).pivot(index="subject", columns="pair",
                                                              values="p")
    matrix = table.to_numpy()
    out = []
    for i, (subject, rows) in enumerate(sub.groupby("subject", sort=True)):
        assert table.index[i] == subject
        cols = table.columns.get_indexer(pd.Index(rows["pair"]))
        zi = rows["rating"].to_numpy(float) - midpoint
        diff = (rows[f"sentence2_{model}_prob"] - rows[f"sentence1_{model}_prob"]).to_numpy(float)
        others = np.array([_as_float(_mean(seen)) if (seen := [
            exact[o][pair] for o in exact if o != subject and pair in exact[o]]) else 0.0
            for pair in rows["pair"]])
        everyone = np.nanmean(matrix[:, cols], axis=0)
        upper = float("nan")
        if np.count_nonzero(zi) and np.any(everyone):
            upper = float(normalized_signed_ranks(zi) @ everyone / np.linalg.norm(everyone))
        out.append({"subject": subject, "model": signed_rank_cosine(diff, zi),
                    "lower": signed_rank_cosine(zi, others), "upper": upper})
    return pd.DataFrame(out)


# ---------------------------------------------------------------- group statistics
def wilcoxon_fdr(values: dict[str, np.ndarray], lower: dict[str, np.ndarray]) -> list[dict]:
    """Two-sided Wilcoxon signed-rank tests across groups (model vs model, model vs its lower
    noise-ceiling bound), Benjamini–Hochberg-corrected together."""
    tests = [(a, b, values[a], values[b]) for a, b in itertools.combinations(values, 2)]
    tests += [(m, "noise_ceiling_lower", values[m], lower[m]) for m in values]
    rows = []
    for a, b, x, y in tests:
        ok = ~(np.isnan(x) | np.isnan(y))
        d = x[ok] - y[ok]
        if len(d) == 0 or not np.any(d):
            stat, p = float("nan"), 1.0
        else:
            res = scipy.stats.wilcoxon(x[ok], y[ok], zero_method="zsplit")
            stat, p = float(res.statistic), float(res.pvalue)
        rows.append({"a": a, "b": b, "n_groups": int(ok.sum()), "mean_difference":
                     float(d.mean()) if len(d) else None, "statistic": _num(stat), "p": p})
    if rows:
        adjusted = scipy.stats.false_discovery_control([r["p"] for r in rows], method="bh")
        for row, q in zip(rows, adjusted):
            row["p_fdr"] = float(q)
    return rows


def _num(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), 6)


def judge(df: pd.DataFrame, models: list[str], midpoint: float = 3.5,
          all_trials: bool = False) -> dict:
    """All measures for every model (docs/contrast.md) as a JSON-ready dict."""
    missing = [m for m in models if f"sentence1_{m}_prob" not in df.columns
               or f"sentence2_{m}_prob" not in df.columns]
    if missing:
        raise UserError(f"no sentence1/2_<model>_prob columns for {', '.join(missing)}; the "
                        f"file has {', '.join(model_names(df.columns)) or 'none'}")
    groups = df.drop_duplicates("subject").set_index("subject")["group"]
    group_ids = sorted(groups.unique())
    models_out: dict[str, dict] = {}
    per_group: dict[str, dict[str, np.ndarray]] = {"accuracy": {}, "scsr": {}}
    lower_group: dict[str, dict[str, np.ndarray]] = {"accuracy": {}, "scsr": {}}
    for m in models:
        sub = df[targeted_mask(df, m, all_trials)]
        if sub.empty:
            raise UserError(f"no trial targeted model {m!r} (use --all-trials)")
        entry: dict = {"n": int(len(sub)), "n_pairs": int(sub["pair"].nunique()),
                 "n_subjects": int(sub["subject"].nunique())}
        acc = trial_accuracy(sub, m, midpoint).groupby("subject").mean()
        scsr = subject_scsr(sub, m, midpoint).set_index("subject")
        for name, table in (("accuracy", acc), ("scsr", scsr)):
            per_subject = table.reset_index()
            grouped = per_subject.assign(group=per_subject["subject"].map(groups)).groupby("group")
            means = {c: grouped[c].mean().reindex(group_ids) for c in ("model", "lower", "upper")}
            entry[name] = _num(means["model"].mean())
            entry[f"{name}_per_group"] = [_num(v) for v in means["model"]]
            entry[f"{name}_noise_ceiling"] = {"lower": _num(means["lower"].mean()),
                                              "upper": _num(means["upper"].mean())}
            per_group[name][m] = means["model"].to_numpy(float)
            lower_group[name][m] = means["lower"].to_numpy(float)
        models_out[m] = entry
    return {"models": models_out, "groups": group_ids,
            "tests": {name: wilcoxon_fdr(per_group[name], lower_group[name])
                      for name in per_group}}


def cross_check_majority(df: pd.DataFrame, midpoint: float = 3.5) -> dict | None:
    """Agreement of our leave-one-out / all-participant majority votes with a file's own
    ``majority_vote_NC_LB`` / ``majority_vote_NC_UB`` columns (None if absent)."""
    if "majority_vote_NC_LB" not in df.columns:
        return None
    chose2 = (df["rating"] > midpoint).astype(float)
    grouped = chose2.groupby(df["pair"])
    total, count = grouped.transform("sum"), grouped.transform("count")
    ours = {"majority_vote_NC_LB": (total - chose2) / (count - 1), "majority_vote_NC_UB": total / count}
    out = {}
    for col, frac in ours.items():
        theirs = df[col].to_numpy(float)
        decided = (frac != 0.5).to_numpy() & ~np.isnan(theirs)
        vote = (frac > 0.5).astype(float).to_numpy()
        out[col] = {"rows_compared": int(decided.sum()),
                    "agreement": _num(float((vote[decided] == theirs[decided]).mean()))
                    if decided.any() else None,
                    "tied_votes": int((frac == 0.5).sum())}
    return out
