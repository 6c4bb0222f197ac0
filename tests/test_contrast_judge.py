"""Model–human consistency (docs/methods.md §9): signed-rank cosine, accuracy, noise ceiling, tests."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from typer.testing import CliRunner

from cuelens.lm.contrast.judge import (cross_check_majority, judge, load_trials,
                                            signed_rank_cosine, signed_ranks, wilcoxon_fdr)
from cuelens.cli import app


def test_signed_rank_cosine_hand_computed_with_ties_and_zeros():
    a = np.array([3.0, -1.0, 0.0, 2.0])
    b = np.array([1.0, -1.0, 1.0, 0.0])
    assert signed_ranks(a).tolist() == [3.0, -1.0, 0.0, 2.0]
    assert signed_ranks(b).tolist() == [2.0, -2.0, 2.0, 0.0]   # three tied |1| → rank 2
    # dot = 3·2 + (−1)(−2) = 8; both norms sqrt(1+4+9) = sqrt(14)
    assert signed_rank_cosine(a, b) == pytest.approx(8 / 14)
    assert np.isnan(signed_rank_cosine(a, np.zeros(4)))
    assert signed_rank_cosine(a, a) == pytest.approx(1.0)
    assert signed_rank_cosine(a, -a) == pytest.approx(-1.0)


def _tie_broken_signed_ranks(x):
    """Every signed-rank vector obtainable by breaking the ties of |x| (equally likely)."""
    nz = np.flatnonzero(x)
    out = []
    for order in itertools.permutations(nz):
        ranks = np.zeros(len(x))
        # the permutation decides the order within ties; sorting is by |x| first
        ordered = sorted(order, key=lambda i: abs(x[i]))
        for r, i in enumerate(ordered, 1):
            ranks[i] = np.sign(x[i]) * r
        out.append(ranks)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_closed_form_is_the_expectation_over_random_tie_breaking(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, size=5).astype(float)
    b = rng.integers(-2, 3, size=5).astype(float)
    a[0], b[1] = 1.0, -2.0  # never all zero
    cosines = [ra @ rb / (np.linalg.norm(ra) * np.linalg.norm(rb))
               for ra in _tie_broken_signed_ranks(a) for rb in _tie_broken_signed_ranks(b)]
    assert signed_rank_cosine(a, b) == pytest.approx(np.mean(cosines))


def small_trials(tmp_path):
    """3 subjects × 4 pairs; model "m" prefers sentence2 everywhere, "w" sentence1 everywhere.

    Choices of sentence2 (rating > 3.5): A = 1 1 0 0, B = 1 0 1 0, C = 1 1 0 1.
    Subject B saw pair 2 in reversed display order (its rating is flipped by the alignment).
    """
    ratings = {"A": [6, 6, 1, 1], "B": [5, 2, 6, 1], "C": [4, 5, 3, 6]}
    rows = []
    for subject, values in ratings.items():
        for k, r in enumerate(values):
            s1, s2 = f"a{k}", f"b{k}"
            row = {"subject": subject, "sentence1": s1, "sentence2": s2, "rating": r,
                   "sentence1_m_prob": -5.0, "sentence2_m_prob": -4.0,
                   "sentence1_w_prob": -1.0, "sentence2_w_prob": -2.0,
                   "sentence1_model": "m", "sentence2_model": "w"}
            if subject == "B" and k == 2:
                row.update(sentence1=s2, sentence2=s1, rating=7 - r,
                           sentence1_m_prob=-4.0, sentence2_m_prob=-5.0,
                           sentence1_w_prob=-2.0, sentence2_w_prob=-1.0,
                           sentence1_model="w", sentence2_model="m")
            rows.append(row)
    path = tmp_path / "trials.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_accuracy_and_noise_ceiling_hand_computed(tmp_path):
    df = load_trials(small_trials(tmp_path))
    result = judge(df, ["m", "w"])
    m = result["models"]["m"]
    # per subject: A 2/4, B 2/4, C 3/4
    assert m["accuracy"] == pytest.approx((0.5 + 0.5 + 0.75) / 3)
    assert result["models"]["w"]["accuracy"] == pytest.approx(1 - m["accuracy"])
    # leave-one-out majority votes (ties earn 0.5): A .625, B .375, C .5
    assert m["accuracy_noise_ceiling"]["lower"] == pytest.approx(0.5)
    # votes of everyone: 1 1 0 0 → A 1, B .5, C .75
    assert m["accuracy_noise_ceiling"]["upper"] == pytest.approx(0.75)
    assert m["n"] == 12 and m["n_pairs"] == 4 and m["n_subjects"] == 3
    # scsr of subject A: model log-ratio is +1 everywhere, ratings − 3.5 = 2.5 2.5 −2.5 −2.5
    per_a = signed_rank_cosine(np.ones(4), np.array([2.5, 2.5, -2.5, -2.5]))
    assert m["scsr_per_group"][0] == pytest.approx(per_a)


def test_accuracy_bounds_are_equal_with_an_even_number_of_raters_and_no_tied_vote(tmp_path):
    """The published set (30 raters per pair, no 15–15 vote) gives lower = upper accuracy
    bounds: a majority of at least two votes, less one rater, is still a majority (docs/
    contrast.md). Four raters; pair 0: 3 of 4 prefer sentence2, pair 1: none."""
    rows = [{"subject": subject, "sentence1": f"a{k}", "sentence2": f"b{k}", "rating": rating,
             "sentence1_m_prob": -5.0, "sentence2_m_prob": -4.0}
            for subject, ratings in {"A": [6, 1], "B": [5, 2], "C": [4, 3], "D": [1, 1]}.items()
            for k, rating in enumerate(ratings)]
    path = tmp_path / "trials.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    ceiling = judge(load_trials(path), ["m"])["models"]["m"]["accuracy_noise_ceiling"]
    # everyone's votes: sentence2, sentence1 → A, B, C 2/2, D 1/2; leaving one rater out the
    # same votes (A, B, C: 2 of 3 others; D: 3 of 3 others)
    assert ceiling["lower"] == ceiling["upper"] == pytest.approx((1 + 1 + 1 + 0.5) / 4)


def _exact_signed_ranks(x):
    """sign · averaged rank of |x| over the non-zero entries, in exact (sympy) arithmetic."""
    import sympy

    nz = [v for v in x if v != 0]
    x = list(x)
    return [sympy.sign(v) * (sum(1 for u in nz if bool(abs(u) < abs(v)))
                             + sympy.Rational(sum(1 for u in nz if sympy.simplify(abs(u) - abs(v)) == 0) + 1, 2))
            if v != 0 else sympy.Integer(0) for v in x]


def _exact_norm(n):
    import sympy

    return sympy.sqrt(sympy.Rational(int(n) * (int(n) + 1) * (2 * int(n) + 1), 6))


def _exact_lower_bounds(z: dict) -> list[float]:
    """The scsr lower noise-ceiling bound of every participant (sorted), all in exact
    arithmetic: normalised signed ranks, their mean over the other participants, the ranking of
    that mean (ties decided exactly) and the cosine. ``z``: participant → ratings − midpoint
    (sympy Rationals), every participant rating the same pairs."""
    import sympy

    def pattern(x):
        return [r / _exact_norm(sum(v != 0 for v in x)) for r in _exact_signed_ranks(x)]

    out = []
    for s in sorted(z):
        rest = [pattern(z[o]) for o in z if o != s]
        others = [sympy.radsimp(sum(col) / len(col)) for col in zip(*rest)]
        a, b = _exact_signed_ranks(z[s]), _exact_signed_ranks(others)
        cosine = sum(x * y for x, y in zip(a, b)) / (
            _exact_norm(sum(v != 0 for v in z[s])) * _exact_norm(sum(v != 0 for v in others)))
        out.append(float(cosine))
    return out


def _trials_from_ratings(tmp_path, ratings: dict) -> "Path":
    rows = [{"subject": subject, "sentence1": f"a{k}", "sentence2": f"b{k}", "rating": r,
             "sentence1_m_prob": -5.0, "sentence2_m_prob": -4.0 - k,
             "sentence1_model": "m", "sentence2_model": "m"}
            for subject, values in ratings.items() for k, r in enumerate(values)]
    path = tmp_path / "exact.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_scsr_noise_ceiling_matches_exact_arithmetic(tmp_path):
    import sympy

    df = load_trials(small_trials(tmp_path))
    result = judge(df, ["m"])
    z = {s: g.sort_values("pair")["rating"].to_numpy() - 3.5 for s, g in df.groupby("subject")}

    def pattern(x):
        sr = signed_ranks(x)
        return sr / np.sqrt(np.sum(np.arange(1, np.count_nonzero(x) + 1) ** 2))

    uppers = []
    for s in sorted(z):
        everyone = np.mean([pattern(z[o]) for o in z], axis=0)
        uppers.append(pattern(z[s]) @ everyone / np.linalg.norm(everyone))
    exact = {s: [sympy.Rational(int(2 * v), 2) for v in x] for s, x in z.items()}
    band = result["models"]["m"]["scsr_noise_ceiling"]
    # B's and C's others-means hold exactly equal entries (sqrt(30)/15 twice, sqrt(30)/60 twice)
    # that floating-point averaging does not tie: the float answer would be -0.1833
    assert band["lower"] == pytest.approx(np.mean(_exact_lower_bounds(exact)), abs=1e-6)
    assert band["lower"] == pytest.approx(-5 / 24, abs=1e-6)
    assert band["upper"] == pytest.approx(np.mean(uppers), abs=1e-6)


@pytest.mark.parametrize("seed", [0])
def test_scsr_lower_bound_per_participant_equals_exact_arithmetic(tmp_path, seed):
    from cuelens.lm.contrast.judge import subject_scsr
    import sympy

    rng = np.random.default_rng(seed)      # 6-point ratings: many ties and many equal means
    ratings = {f"s{i}": rng.integers(1, 7, 6).tolist() for i in range(4)}
    df = load_trials(_trials_from_ratings(tmp_path, ratings))
    got = subject_scsr(df, "m", 3.5).sort_values("subject")["lower"].to_numpy()
    exact = {s: [sympy.Rational(2 * v - 7, 2) for v in r] for s, r in ratings.items()}
    np.testing.assert_allclose(got, _exact_lower_bounds(exact), rtol=0, atol=1e-12)


def test_wilcoxon_and_benjamini_hochberg():
    rng = np.random.default_rng(0)
    values = {"a": rng.normal(0.8, 0.05, 12), "b": rng.normal(0.6, 0.05, 12)}
    lower = {"a": rng.normal(0.8, 0.05, 12), "b": rng.normal(0.8, 0.05, 12)}
    rows = wilcoxon_fdr(values, lower)
    assert [(r["a"], r["b"]) for r in rows] == [("a", "b"), ("a", "noise_ceiling_lower"),
                                                ("b", "noise_ceiling_lower")]
    p = [scipy.stats.wilcoxon(values["a"], values["b"], zero_method="zsplit").pvalue,
         scipy.stats.wilcoxon(values["a"], lower["a"], zero_method="zsplit").pvalue,
         scipy.stats.wilcoxon(values["b"], lower["b"], zero_method="zsplit").pvalue]
    assert [r["p"] for r in rows] == pytest.approx(p)
    # Benjamini–Hochberg by hand: q_(i) = min_{j >= i} p_(j) · m / j
    order = np.argsort(p)
    q = np.minimum.accumulate((np.array(p)[order] * 3 / np.arange(1, 4))[::-1])[::-1]
    expected = np.empty(3)
    expected[order] = np.minimum(q, 1)
    assert [r["p_fdr"] for r in rows] == pytest.approx(expected.tolist())
    same = wilcoxon_fdr({"a": np.ones(5), "b": np.ones(5)}, {"a": np.ones(5), "b": np.ones(5)})
    assert all(r["p"] == 1.0 for r in same)


def test_cross_check_and_cli(tmp_path):
    path = small_trials(tmp_path)
    df = load_trials(path)
    raw = pd.read_csv(path)
    raw["majority_vote_NC_UB"] = df.groupby("pair")["rating"].transform(
        lambda r: float((r > 3.5).mean() > 0.5))
    raw["majority_vote_NC_LB"] = raw["majority_vote_NC_UB"]
    raw.to_csv(path, index=False)
    check = cross_check_majority(load_trials(path))
    assert check["majority_vote_NC_UB"]["agreement"] == 1.0
    out, page = tmp_path / "judge.json", tmp_path / "judge.html"
    res = CliRunner().invoke(app, ["contrast", "judge", "--trials", str(path), "--out", str(out),
                                   "--html", str(page)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert set(data["models"]) == {"m", "w"} and data["n_subjects"] == 3
    assert {"accuracy", "scsr", "n"} <= set(data["models"]["m"])
    assert data["kind"] == "contrast_judge"
    text = page.read_text()
    assert 'id="contrast_judge"' in text and "noise_ceiling_lower" in text


def test_separate_ratings_file_and_user_errors(tmp_path):
    trials = small_trials(tmp_path)
    df = pd.read_csv(trials)
    ratings = tmp_path / "ratings.csv"
    df[["sentence1", "sentence2", "subject", "rating"]].to_csv(ratings, index=False)
    per_pair = tmp_path / "pairs.csv"
    df.drop(columns=["subject", "rating"]).drop_duplicates(["sentence1", "sentence2"]) \
        .to_csv(per_pair, index=False)
    joined = judge(load_trials(per_pair, ratings), ["m"])
    direct = judge(load_trials(trials), ["m"])
    assert joined["models"]["m"]["accuracy"] == direct["models"]["m"]["accuracy"]
    runner = CliRunner()
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"sentence1": ["zz"], "sentence2": ["yy"], "subject": [1], "rating": [2]}) \
        .to_csv(bad, index=False)
    res = runner.invoke(app, ["contrast", "judge", "--trials", str(per_pair), "--ratings",
                              str(bad), "--out", str(tmp_path / "o.json")])
    assert res.exit_code == 2 and "line 2" in res.output
    res = runner.invoke(app, ["contrast", "judge", "--trials", str(trials), "--models", "nope",
                              "--out", str(tmp_path / "o.json")])
    assert res.exit_code == 2 and "nope" in res.output


def test_errors_name_the_line_of_a_row_after_a_cell_of_several_lines(tmp_path):
    """A quoted sentence over two lines shifted every later row: the error named the line
    before the bad row (row number + 2)."""
    head = "sentence1,sentence2,subject,rating,sentence1_m_prob,sentence2_m_prob\n"
    first = '"a\nb",c d,1,4,-1,-2\n'                    # lines 2 and 3
    runner = CliRunner()
    for row, message in (("a e,c f,1,x,-1,-2\n", "line 4: column 'rating' is missing"),
                         ("a e,c f,,3,-1,-2\n", "line 4: column 'subject' is empty"),
                         (first, "line 4: a participant rated the same sentence pair twice")):
        trials = tmp_path / "trials.csv"
        trials.write_text(head + first + row)
        res = runner.invoke(app, ["contrast", "judge", "--trials", str(trials), "--out",
                                  str(tmp_path / "o.json")])
        assert res.exit_code == 2 and message in res.output, res.output
    trials.write_text(head + first + "a e,c f,1,3,-1,-2\n")
    ratings = tmp_path / "ratings.csv"
    ratings.write_text('sentence1,sentence2,subject,rating\n"a\nb",c d,2,4\nzz,yy,2,3\n')
    res = runner.invoke(app, ["contrast", "judge", "--trials", str(trials), "--ratings",
                              str(ratings), "--out", str(tmp_path / "o.json")])
    assert res.exit_code == 2 and "ratings.csv, line 4: sentence pair not found" in res.output


@pytest.mark.parametrize("command, says", [
    ("judge", "the <model> of the sentence1_<model>_prob columns"),
    ("synthetic", "The two scorer specs m1,m2"),
])
def test_models_help_says_what_the_command_takes(command, says):
    """judge and synthetic said --models took 'model names (keys of the scores file) or scorer
    specs': judge reads neither a scores file nor a scorer, synthetic no scores file."""
    shown = " ".join(CliRunner().invoke(app, ["contrast", command, "--help"],
                                        env={"COLUMNS": "300"}).output.split())
    assert says in shown and "keys of the scores file" not in shown


@pytest.mark.parametrize("midpoint", ["nan", "inf"])
def test_a_midpoint_that_is_not_finite_is_refused(tmp_path, midpoint):
    """nan was a ValueError traceback ('Out of range float values are not JSON compliant')
    after the whole analysis."""
    trials = small_trials(tmp_path)
    res = CliRunner().invoke(app, ["contrast", "judge", "--trials", str(trials), "--midpoint",
                                   midpoint, "--out", str(tmp_path / "o.json")])
    assert res.exit_code == 2, res.output
    assert f"--midpoint must be a finite number, not {midpoint}" in res.output
    assert not (tmp_path / "o.json").exists()


def test_a_sentence_written_composed_and_decomposed_is_one_pair(tmp_path):
    """A ratings file written decomposed (NFD) joins the composed trials file, and one
    participant's decomposed row is the pair the others rated composed (the join was refused:
    'sentence pair not found in the trials file'; within one file it was a fifth pair)."""
    import unicodedata

    df = pd.read_csv(small_trials(tmp_path))
    for column in ("sentence1", "sentence2"):
        df[column] = "café " + df[column]
    composed = tmp_path / "composed.csv"
    df.to_csv(composed, index=False)
    nfd = df.copy()
    for column in ("sentence1", "sentence2"):
        nfd[column] = nfd[column].map(lambda text: unicodedata.normalize("NFD", text))
    ratings = tmp_path / "ratings.csv"
    nfd[["sentence1", "sentence2", "subject", "rating"]].to_csv(ratings, index=False)
    per_pair = tmp_path / "pairs.csv"
    df.drop(columns=["subject", "rating"]).drop_duplicates(["sentence1", "sentence2"]) \
        .to_csv(per_pair, index=False)
    direct = judge(load_trials(composed), ["m"])["models"]["m"]
    joined = judge(load_trials(per_pair, ratings), ["m"])["models"]["m"]
    assert (joined["accuracy"], joined["n_pairs"]) == (direct["accuracy"], 4)
    mixed = tmp_path / "mixed.csv"
    pd.concat([df[df["subject"] != "B"], nfd[nfd["subject"] == "B"]]).to_csv(mixed, index=False)
    assert judge(load_trials(mixed), ["m"])["models"]["m"]["n_pairs"] == 4


@pytest.mark.parametrize("column", ["subject", "group", "sentence2"])
def test_a_row_without_a_participant_group_or_sentence_is_one_error(tmp_path, column):
    """Rows with an empty subject (or --group-field) cell were pooled as one participant (or
    group) named 'nan', counted in n_subjects and the tests; an empty sentence was 'nan'."""
    df = pd.read_csv(small_trials(tmp_path))
    df["group"] = df["subject"]
    df.loc[5, column] = None
    trials = tmp_path / "blank.csv"
    df.to_csv(trials, index=False)
    res = CliRunner().invoke(app, ["contrast", "judge", "--trials", str(trials), "--group-field",
                                   "group", "--out", str(tmp_path / "o.json")])
    assert res.exit_code == 2, res.output
    assert f"line 7: column '{column}' is empty" in res.output


def test_a_column_the_options_name_that_the_file_lacks_is_named_with_its_option(tmp_path):
    """--subject-field nope and --group-field nope read 'missing column(s) nope', naming neither
    the option nor the columns the file has; a trials file without ratings did not say that
    they may come from --ratings."""
    trials = small_trials(tmp_path)
    has = "'subject', 'sentence1', 'sentence2', 'rating'"
    runner = CliRunner()
    for options, path, message in [
            (["--subject-field", "who"], trials, "no column 'who' (--subject-field); the file's "
                                                  f"columns are {has}"),
            (["--group-field", "team"], trials, f"no column 'team' (--group-field); the file's "
                                                f"columns are {has}")]:
        res = runner.invoke(app, ["contrast", "judge", "--trials", str(trials), *options,
                                  "--out", str(tmp_path / "o.json")])
        said = " ".join(res.output.split())
        assert res.exit_code == 2 and f"{path}: {message}" in said, said
    pairs = tmp_path / "pairs.csv"
    pd.read_csv(trials).drop(columns=["subject", "rating"]).to_csv(pairs, index=False)
    res = runner.invoke(app, ["contrast", "judge", "--trials", str(pairs), "--out",
                              str(tmp_path / "o.json")])
    said = " ".join(res.output.split())
    assert res.exit_code == 2 and f"{pairs}: no columns 'subject' (--subject-field), 'rating' " \
        "(or a --ratings file); the file's columns are 'sentence1', 'sentence2'," in said, said
    assert not (tmp_path / "o.json").exists()
