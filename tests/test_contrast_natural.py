"""Natural controversial pair selection (docs/methods.md §9): exactness against brute force, constraints."""

from __future__ import annotations

import itertools
import json
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cuelens.lm.contrast.natural import (Selection, check_selection, fractional_ranks,
                                              select_natural_pairs, slot_types)
from cuelens.cli import app
from cuelens.errors import UserError


def brute_force_objective(ranks: np.ndarray, per_pair: int, threshold: float) -> float:
    """Minimum over every injective slot → sentence map (inf when infeasible)."""
    types = [t for t in slot_types(ranks.shape[1]) for _ in range(per_pair)]
    best = np.inf
    for chosen in itertools.permutations(range(len(ranks)), len(types)):
        total = 0.0
        for t, s in zip(types, chosen):
            if ranks[s, t.accept] < threshold:
                break
            total += ranks[s, t.reject]
        else:
            best = min(best, total)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_matches_brute_force_on_small_random_instances(seed):
    rng = np.random.default_rng(seed)
    n_models, per_pair = (3, 1) if seed % 2 else (2, 2)
    n_sent = 7 if n_models == 3 else 8
    # integer log-probs: many ties, so the tie handling of the ranks and the pruning is exercised
    logprobs = rng.integers(-6, 0, size=(n_sent, n_models)).astype(float)
    ranks = fractional_ranks(logprobs)
    expected = brute_force_objective(ranks, per_pair, 0.5)
    assert np.isfinite(expected)
    for solver in ("lsa", "milp"):
        for prune in (True, False):
            sel = select_natural_pairs(ranks, per_pair, solver=solver, prune=prune)
            assert sel.objective == pytest.approx(expected, abs=1e-12)
            assert check_selection(ranks, sel) == []


def test_infeasible_instance_is_a_user_error():
    # identical models: only the 2 top-half sentences can be accepted, but 4 slots need them
    ranks = fractional_ranks(np.repeat(np.arange(4.0)[:, None], 2, axis=1))
    assert brute_force_objective(ranks, 2, 0.5) == np.inf
    for solver in ("lsa", "milp"):
        with pytest.raises(UserError, match="no feasible selection"):
            select_natural_pairs(ranks, 2, solver=solver)


def test_pruned_equals_unpruned_milp_on_larger_instance():
    rng = np.random.default_rng(7)
    latent = rng.normal(size=(400, 1))
    logprobs = latent + 0.7 * rng.normal(size=(400, 4))  # correlated models, like real LMs
    ranks = fractional_ranks(logprobs)
    pruned = select_natural_pairs(ranks, 3, solver="lsa", prune=True)
    full = select_natural_pairs(ranks, 3, solver="milp", prune=False)
    assert pruned.objective == pytest.approx(full.objective, abs=1e-9)
    assert pruned.n_candidates < 400
    assert check_selection(ranks, pruned) == []
    assert len(pruned.trials) == 6 * 3


def test_fractional_ranks_ties_and_minus_inf():
    ranks = fractional_ranks(np.array([[-np.inf], [-2.0], [-1.0], [-1.0], [0.0]]))
    # rankdata average: 1, 2, 3.5, 3.5, 5 → (r - 1) / 4
    assert ranks[:, 0].tolist() == [0.0, 0.25, 0.625, 0.625, 1.0]
    with pytest.raises(UserError):
        fractional_ranks(np.array([[0.0], [np.nan]]))


def test_constraints_and_uniqueness_hold_and_are_checked():
    rng = np.random.default_rng(3)
    ranks = fractional_ranks(rng.normal(size=(200, 3)))
    sel = select_natural_pairs(ranks, 5)
    used = [s for _, _, a, b in sel.trials for s in (a, b)]
    assert len(used) == len(set(used)) == 2 * 3 * 5
    for m1, m2, s1, s2 in sel.trials:
        assert ranks[s1, m2] >= 0.5 and ranks[s2, m1] >= 0.5
    bad = Selection(trials=[(0, 1, used[0], used[0])], objective=0.0, n_candidates=0)
    assert check_selection(ranks, bad)


def test_cli_writes_pairs_with_ranks(tmp_path):
    rng = np.random.default_rng(0)
    logprobs = {m: rng.normal(size=60) for m in ("a", "b", "c")}
    logprobs["c"][3] = -np.inf
    scores = tmp_path / "lp.npz"
    np.savez(scores, **logprobs)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"<b>sentence {i}</b>\n" for i in range(60)))
    out, summary, page = tmp_path / "pairs.jsonl", tmp_path / "s.json", tmp_path / "p.html"
    result = CliRunner().invoke(app, ["contrast", "natural", "--scores", str(scores), "--corpus",
                                      str(corpus), "--per-pair", "2", "--out", str(out),
                                      "--summary", str(summary), "--html", str(page)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3 * 2
    row = rows[0]
    assert row["s1"] == f"<b>sentence {row['s1_index']}</b>"
    assert row["s1_rank_model_2"] >= 0.5 and row["s2_rank_model_1"] >= 0.5
    facts = json.loads(summary.read_text())
    total = sum(r["s1_rank_model_1"] + r["s2_rank_model_2"] for r in rows)
    assert facts["objective"] == pytest.approx(total) and facts["non_finite_logprobs"] == 1
    assert facts["kind"] == "contrast_pairs" and facts["pairs"] == rows
    text = page.read_text()  # the report page: texts only inside the script-safe JSON
    assert "\\u003cb\\u003esentence" in text and "<b>sentence" not in text
    assert 'id="pairs-table"' in text


def test_cli_user_errors(tmp_path):
    scores = tmp_path / "lp.npz"
    np.savez(scores, a=np.zeros(5), b=np.zeros(5))
    runner = CliRunner()
    res = runner.invoke(app, ["contrast", "natural", "--scores", str(scores), "--models", "a,zz",
                              "--out", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2 and "zz" in res.output
    res = runner.invoke(app, ["contrast", "natural", "--scores", str(scores), "--per-pair", "5",
                              "--out", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2 and "only 5" in res.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a", "a": -1, "b": -2}\n{oops\n')
    res = runner.invoke(app, ["contrast", "natural", "--scores", str(bad), "--out",
                              str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2 and "line 2" in res.output
    res = runner.invoke(app, ["contrast", "natural", "--scores", str(scores), "--out", str(scores)])
    assert res.exit_code == 2


def test_a_scores_line_without_a_model_or_text_names_what_the_line_has(tmp_path):
    """--models x,zz read 'line 1: no numeric log-probability for model 'zz'' and a line
    without its sentence 'missing "text"', naming neither what the line has nor the "sentence"
    field audit score writes."""
    cases = [(["--models", "x,zz"], '{"sentence": "a b", "logprob": {"x": -1, "y": -2}}\n',
              "line 1: no log-probability for model 'zz' (named by --models); this line has "
              '"x", "y"'),
             ([], '{"sentence": "a b", "x": -1, "y": -2}\n{"sentence": "a c", "x": -3}\n',
              "line 2: no log-probability for model 'y' (scored on the first line); this line "
              'has "sentence", "x"'),
             ([], '{"txt": "a b", "logprob": {"x": -1, "y": -2}}\n',
              'line 1: no "text" or "sentence" field holding the scored sentence as text; the '
              'fields of this line are "txt", "logprob"')]
    for options, text, message in cases:
        scores = tmp_path / "scores.jsonl"
        scores.write_text(text)
        res = CliRunner().invoke(app, ["contrast", "natural", "--scores", str(scores), *options,
                                       "--per-pair", "1", "--out", str(tmp_path / "o.jsonl")])
        said = " ".join(res.output.split())
        assert res.exit_code == 2 and f"{scores}, {message}" in said, said


def test_a_data_file_given_as_a_file_of_lines_is_refused_before_the_scoring(tmp_path,
                                                                          monkeypatch):
    """--corpus sentences.jsonl scored each JSON object's text as a sentence ('{"sentence":
    "the cat sat"}'), silently; a missing --function-words file was found after the scoring."""
    import cuelens.commands.contrast as command

    monkeypatch.setattr(command, "_score_corpus", lambda *a: pytest.fail("scored the corpus"))
    jsonl, text = tmp_path / "s.jsonl", tmp_path / "s.txt"
    jsonl.write_text('{"sentence": "the cat sat"}\n{"sentence": "a dog"}\n')
    text.write_text("the cat sat\na dog\n")
    for corpus, words, message in [
            (jsonl, None, "s.jsonl: --corpus/--sentences is read one sentence per line, so each "
                          "line of this .jsonl file would be a sentence: give a text file of one "
                          "sentence per line"),
            (text, "w.csv", "w.csv: --function-words is read one word per line"),
            (text, "none.txt", "none.txt: file not found")]:
        more = ["--function-words", str(tmp_path / words)] if words else []
        res = CliRunner().invoke(app, ["contrast", "natural", "--corpus", str(corpus), *more,
                                       "--models", "ngram:a,ngram:b",
                                       "--out", str(tmp_path / "o.jsonl")])
        said = " ".join(res.output.split())
        assert res.exit_code == 2 and f"{tmp_path}/{message}" in said, said


def test_out_is_named_as_json_lines(tmp_path):
    """--out pairs.csv held JSON Lines under a CSV name."""
    scores = tmp_path / "lp.npz"
    np.savez(scores, a=np.arange(6.0), b=np.arange(6.0)[::-1])
    res = CliRunner().invoke(app, ["contrast", "natural", "--scores", str(scores), "--per-pair",
                                   "1", "--out", str(tmp_path / "pairs.csv")])
    said = " ".join(res.output.split())
    assert res.exit_code == 2 and f"{tmp_path / 'pairs.csv'}: this output is JSON Lines: give " \
        "--out a name ending in .jsonl, .ndjson or .json (optionally .gz)" in said, said
    assert not (tmp_path / "pairs.csv").exists()


def test_a_nan_in_a_scores_array_names_the_file_model_and_sentence(tmp_path):
    """It read 'log-probabilities contain NaN (column 0)': no file, the model as a column
    number, no sentence."""
    scores = tmp_path / "lp.npz"
    b = np.zeros(6)
    b[[3, 5]] = np.nan
    np.savez(scores, a=np.arange(6.0), b=b)
    res = CliRunner().invoke(app, ["contrast", "natural", "--scores", str(scores), "--per-pair",
                                   "1", "--out", str(tmp_path / "o.jsonl")])
    said = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert f"{scores}: model 'b' has NaN at index 3 (the sentence on line 4) and 1 more: a " \
        "log-probability is a number, or -inf for probability 0" in said
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("flags, message", [
    (["--batch-size", "0"], "--batch-size) must be at least 1"),    # range() traceback
    (["--batch-size", "-5"], "--batch-size) must be at least 1"),   # IndexError traceback
    (["--per-pair", "0"], "--per-pair) must be at least 1"),
    (["--solver", "foo"], "unknown solver 'foo'"),   # was found only after the scoring
    # 1.5: 'no feasible selection: only 0 candidate sentences'; -1 was taken as 0 silently
    (["--threshold", "1.5"], "--threshold must be a rank between 0 and 1, not 1.5"),
    (["--threshold", "-1"], "--threshold must be a rank between 0 and 1, not -1.0"),
])
def test_cli_checks_its_options_before_scoring(tmp_path, monkeypatch, flags, message):
    import cuelens.commands.contrast as command

    def never(*args):
        raise AssertionError("scored before checking the options")

    monkeypatch.setattr(command, "_score_corpus", never)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat\na dog ran\nthe rat ate\n")
    res = CliRunner().invoke(app, ["contrast", "natural", "--corpus", str(corpus), "--models",
                                   "ngram:a,ngram:b", "--out", str(tmp_path / "o.jsonl"), *flags])
    assert res.exit_code == 2 and message in res.output, res.output


def two_ngram_models(tmp_path) -> list[str]:
    """A bigram (tmp_path/bi) and a trigram (tmp_path/tri) trained on toy sentences; eight
    sentences to score."""
    from cuelens.lm.ngram import NgramModel

    train = [s.split() for s in ("the cat sat on the mat", "a dog sat on a log",
                                 "the dog ate the cat", "a cat ate a rat", "the rat sat")]
    NgramModel.train(train, order=2).save_pretrained(tmp_path / "bi")
    NgramModel.train(train[2:], order=3).save_pretrained(tmp_path / "tri")
    return ["the cat sat", "a dog ate a rat", "the mat sat on the dog", "a log ate",
            "the rat ate the mat", "a cat sat on a log", "dog the cat", "on the rat"]


def scored_corpus(tmp_path, lines: list[str], name: str = "scores.jsonl"
                  ) -> tuple[Path, Path, list[str]]:
    """``(corpus, scores, specs)``: ``lines`` written to tmp_path/corpus.txt and scored into
    tmp_path/``name`` by `audit score --out` with the two models of :func:`two_ngram_models`
    (already trained in tmp_path), whose specs are ``specs``."""
    corpus, scores = tmp_path / "corpus.txt", tmp_path / name
    corpus.write_text("\n".join(lines) + "\n")
    specs = [f"ngram:{tmp_path / 'bi'}", f"ngram:{tmp_path / 'tri'}"]
    res = CliRunner().invoke(app, ["score", str(corpus), "-m", specs[0], "-m", specs[1],
                                   "--out", str(scores)])
    assert res.exit_code == 0, res.output
    return corpus, scores, specs


def pairs_scoring_the_corpus(corpus: Path, specs: list[str], out: Path,
                             *options: str) -> list[dict]:
    """The pairs `audit contrast natural --corpus --models` selects (it scores ``corpus``
    itself), written to ``out``."""
    res = CliRunner().invoke(app, ["contrast", "natural", "--corpus", str(corpus), "--models",
                                   ",".join(specs), *options, "--out", str(out)])
    assert res.exit_code == 0, res.output
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_cli_scores_a_corpus_through_the_lm_layer(tmp_path):
    from cuelens.lm.contrast.natural import fractional_ranks as ranks_of
    from cuelens.lm import load_scorer
    sentences = two_ngram_models(tmp_path)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(sentences) + "\n")
    specs = [f"ngram:{tmp_path / 'bi'}", f"ngram:{tmp_path / 'tri'}"]
    (row,) = pairs_scoring_the_corpus(corpus, specs, tmp_path / "pairs.jsonl", "--per-pair", "1")
    logprobs = np.column_stack([load_scorer(s).score(sentences) for s in specs])
    expected = select_natural_pairs(ranks_of(logprobs), 1)
    assert (row["s1_index"], row["s2_index"]) == expected.trials[0][2:]
    assert row["s1"] == sentences[row["s1_index"]]
    assert row["s1_logprob_model_1"] == pytest.approx(logprobs[row["s1_index"], 0])


def test_batch_size_is_the_sentences_given_to_a_model_at_a_time_as_its_help_says(
        tmp_path, monkeypatch):
    """--batch-size was 'Sentences per scoring batch.': it is the number of --corpus sentences
    handed to each model per call (a model runs its own forward batches), unused with
    --scores."""
    import cuelens.commands.contrast as command
    from cuelens.lm import load_scorer

    calls: list[int] = []

    class Recording:
        def __init__(self, spec: str):
            self.scorer = load_scorer(spec)
            self.name = self.scorer.name

        def score(self, sentences):
            calls.append(len(sentences))
            return self.scorer.score(sentences)

    monkeypatch.setattr(command, "_load_scorers",
                        lambda specs, device: [Recording(s) for s in specs])
    sentences = two_ngram_models(tmp_path)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(sentences) + "\n")
    specs = [f"ngram:{tmp_path / 'bi'}", f"ngram:{tmp_path / 'tri'}"]
    pairs_scoring_the_corpus(corpus, specs, tmp_path / "o.jsonl", "--per-pair", "1",
                             "--batch-size", "3")
    assert calls == [3, 3, 2] * 2
    shown = " ".join(CliRunner().invoke(app, ["contrast", "natural", "--help"],
                                        env={"COLUMNS": "300"}).output.split())
    assert "Sentences of --corpus given to each of --models at a time" in shown
    assert "a model runs them in batches of its own" in shown and "Unused with --scores" in shown


def recorded_devices(monkeypatch) -> list[str]:
    """The ``device`` of every later ``cuelens.lm.load_scorer`` call, in order."""
    import cuelens.lm

    loaded = cuelens.lm.load_scorer
    devices: list[str] = []

    def recording(spec, **options):
        devices.append(options.get("device"))
        return loaded(spec, **options)

    monkeypatch.setattr(cuelens.lm, "load_scorer", recording)
    return devices


def test_device_reaches_the_models_and_an_unknown_one_is_refused(tmp_path, monkeypatch):
    """natural ran --models on the default device only: it took no --device."""
    devices = recorded_devices(monkeypatch)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(two_ngram_models(tmp_path)) + "\n")
    specs = [f"ngram:{tmp_path / 'bi'}", f"ngram:{tmp_path / 'tri'}"]
    pairs_scoring_the_corpus(corpus, specs, tmp_path / "o.jsonl", "--per-pair", "1",
                             "--device", "cpu")
    assert devices == ["cpu", "cpu"]
    result = CliRunner().invoke(app, ["contrast", "natural", "--corpus", str(corpus), "--models",
                                      ",".join(specs), "--device", "tpu",
                                      "--out", str(tmp_path / "o2.jsonl")])
    assert result.exit_code == 2 and "unknown device 'tpu'" in result.output
    assert devices == ["cpu", "cpu"] and not (tmp_path / "o2.jsonl").exists()


def test_one_model_is_refused_before_the_corpus_is_scored(tmp_path, monkeypatch):
    """--models with one scorer scored the whole corpus, then said 'need log-probabilities of at
    least two models'."""
    import cuelens.commands.contrast as command

    sentences = two_ngram_models(tmp_path)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(sentences) + "\n")
    monkeypatch.setattr(command, "_score_corpus", lambda *a: pytest.fail("scored the corpus"))
    res = CliRunner().invoke(app, ["contrast", "natural", "--corpus", str(corpus), "--models",
                                   f"ngram:{tmp_path / 'bi'}", "--out", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2 and "--models needs at least two models" in res.output


def test_cli_reads_the_scores_audit_score_writes(tmp_path):
    """`audit score --out` writes ``{"sentence", "logprob": {model: value}, "oov": {…}}``; it
    was refused as 'need log-probabilities of at least two models' (no top-level numbers)."""
    corpus, scores, specs = scored_corpus(tmp_path, two_ngram_models(tmp_path))
    by_file = tmp_path / "a.jsonl"
    runner = CliRunner()
    res = runner.invoke(app, ["contrast", "natural", "--scores", str(scores), "--per-pair", "1",
                              "--out", str(by_file)])
    assert res.exit_code == 0, res.output
    (row,) = [json.loads(line) for line in by_file.read_text().splitlines()]
    (expected,) = pairs_scoring_the_corpus(corpus, specs, tmp_path / "b.jsonl", "--per-pair", "1")
    assert (row["s1"], row["s2"]) == (expected["s1"], expected["s2"])
    assert row["s1_logprob_model_1"] == pytest.approx(expected["s1_logprob_model_1"], abs=1e-5)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sentence": "a b", "logprob": "high"}\n')
    res = runner.invoke(app, ["contrast", "natural", "--scores", str(bad), "--out",
                              str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2 and "line 1: no log-probabilities" in res.output


def test_cli_reads_a_gzipped_scores_file_audit_score_wrote(tmp_path):
    """`audit score --out scores.jsonl.gz` writes gzipped JSON Lines; contrast refused it:
    'expected a .npz or .jsonl scores file'."""
    corpus, scores, specs = scored_corpus(tmp_path, two_ngram_models(tmp_path),
                                          "scores.jsonl.gz")
    out = tmp_path / "a.jsonl"
    res = CliRunner().invoke(app, ["contrast", "natural", "--scores", str(scores), "--per-pair",
                                   "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    plain = pairs_scoring_the_corpus(corpus, specs, tmp_path / "b.jsonl", "--per-pair", "1")
    assert [(r["s1"], r["s2"]) for r in map(json.loads, out.read_text().splitlines())] == \
        [(r["s1"], r["s2"]) for r in plain]


def test_repeated_word_prefilter_hand_checked_and_applied_before_ranking(tmp_path):
    from cuelens.lm.contrast.natural import fractional_ranks as ranks_of
    from cuelens.lm.contrast.natural import without_repeated_words

    texts = ["The cat saw the dog.", "A dog saw a dog", "In the house in the garden",
             "Cat, cat and mouse", "Nothing repeats here", "It is what it is"]
    # "the", "a", "in" may repeat; "dog", "cat", "it"/"is" may not (case and punctuation ignored)
    assert without_repeated_words(texts).tolist() == [True, False, True, False, True, False]
    assert without_repeated_words(texts, frozenset()).tolist() == [False] * 3 + [False, True,
                                                                                   False]
    rng = np.random.default_rng(3)
    logprobs = rng.normal(size=(12, 2))
    corpus = [f"sentence number {i}" for i in range(12)]
    corpus[4] = corpus[9] = "word word"                      # dropped by the filter
    scores, lines = tmp_path / "lp.npz", tmp_path / "sentences.txt"
    np.savez(scores, a=logprobs[:, 0], b=logprobs[:, 1])
    lines.write_text("\n".join(corpus) + "\n")
    out, summary = tmp_path / "pairs.jsonl", tmp_path / "s.json"
    res = CliRunner().invoke(app, ["contrast", "natural", "--scores", str(scores), "--sentences",
                                   str(lines), "--per-pair", "2", "--out", str(out),
                                   "--summary", str(summary)])
    assert res.exit_code == 0, res.output
    keep = np.array([i for i in range(12) if i not in (4, 9)])
    expected = select_natural_pairs(ranks_of(logprobs[keep]), 2)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["s1_index"], r["s2_index"]) for r in rows] == \
        [(keep[s1], keep[s2]) for _, _, s1, s2 in expected.trials]
    facts = json.loads(summary.read_text())
    assert facts["n_sentences_ranked"] == 10 and facts["repeated_word_filter"].startswith("dropped 2")
    lines.write_text("\n".join(corpus) + "\n\n \n")   # blank lines after the last sentence
    res = CliRunner().invoke(app, ["contrast", "natural", "--scores", str(scores), "--sentences",
                                   str(lines), "--per-pair", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output   # was "14 sentences but 12 scores"
    assert [(r["s1_index"], r["s2_index"]) for r in map(json.loads, out.read_text().splitlines())
            ] == [(keep[s1], keep[s2]) for _, _, s1, s2 in expected.trials]
    res = CliRunner().invoke(app, ["contrast", "natural", "--scores", str(scores), "--per-pair",
                                   "2", "--out", str(out), "--summary", str(summary)])
    assert res.exit_code == 0 and "not applied" in res.output
    assert json.loads(summary.read_text())["repeated_word_filter"].startswith("not applied")


def test_too_few_sentences_after_the_prefilter_says_the_filter_dropped_them(tmp_path):
    """25 sentences, 10 of which repeat a word: it read '20 sentences are needed but the corpus
    has only 15'."""
    scores = tmp_path / "scores.jsonl"
    rng = np.random.default_rng(0)
    scores.write_text("".join(json.dumps({
        "text": f"word{i} word{i} x" if i < 10 else f"sentence number {i}",
        "a": float(rng.normal()), "b": float(rng.normal())}) + "\n" for i in range(25)))
    res = CliRunner().invoke(app, ["contrast", "natural", "--scores", str(scores), "--out",
                                   str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2
    assert ("20 sentences are needed but only 15 of the 25 are ranked: the repeated-word "
            "pre-filter dropped 10") in " ".join(res.output.split())


def test_blank_lines_of_the_corpus_are_skipped_and_counted(tmp_path):
    """A blank line is no sentence: it is neither scored nor ranked, and the summary and the
    terminal count it (it was scored, ranked among the sentences and selected as a pair's "")."""
    from cuelens.lm import load_scorer
    from cuelens.lm.contrast.natural import fractional_ranks as ranks_of
    from cuelens.lm.contrast.natural import without_repeated_words

    sentences = two_ngram_models(tmp_path)
    lines = [*sentences[:3], "", "  ", *sentences[3:], ""]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n")
    specs = [f"ngram:{tmp_path / 'bi'}", f"ngram:{tmp_path / 'tri'}"]
    out, summary = tmp_path / "pairs.jsonl", tmp_path / "s.json"
    res = CliRunner().invoke(app, ["contrast", "natural", "--corpus", str(corpus), "--models",
                                   ",".join(specs), "--per-pair", "2", "--threshold", "0",
                                   "--out", str(out), "--summary", str(summary)])
    assert res.exit_code == 0, res.output
    assert "skipped 2 blank lines" in res.output   # the one after the last sentence indexes none
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(r["s1"].strip() and r["s2"].strip() for r in rows)
    written = [i for i, line in enumerate(lines) if line.strip()]
    logprobs = np.column_stack([load_scorer(s).score(sentences) for s in specs])
    keep = np.flatnonzero(without_repeated_words(sentences))
    expected = select_natural_pairs(ranks_of(logprobs[keep]), 2, 0.0)
    assert [(r["s1_index"], r["s2_index"]) for r in rows] == \
        [(written[keep[s1]], written[keep[s2]]) for _, _, s1, s2 in expected.trials]
    facts = json.loads(summary.read_text())
    assert (facts["n_sentences"], facts["n_blank_lines"]) == (8, 2)
    assert facts["n_sentences_ranked"] == len(keep)
    only_blank = tmp_path / "blank.txt"
    only_blank.write_text("\n \n")
    res = CliRunner().invoke(app, ["contrast", "natural", "--corpus", str(only_blank),
                                   "--models", ",".join(specs), "--out", str(out)])
    assert res.exit_code == 2 and "every line is blank" in res.output


def test_scores_of_a_file_with_blank_lines_keep_their_lines(tmp_path):
    """`audit score --out` skips blank lines and writes each sentence's ``line``: the pairs'
    indices are those lines (they were the rows' positions, so with --sentences they named other
    sentences), and a --sentences file the scores do not match is one error naming its line (it
    was ignored: the scores file's texts won)."""
    sentences = two_ngram_models(tmp_path)
    lines = [*sentences[:3], "", "  ", *sentences[3:]]
    corpus, scores, specs = scored_corpus(tmp_path, lines)
    expected = pairs_scoring_the_corpus(corpus, specs, tmp_path / "expected.jsonl",
                                        "--per-pair", "2", "--threshold", "0")
    runner = CliRunner()
    for extra in ([], ["--sentences", str(corpus)]):
        out = tmp_path / "pairs.jsonl"
        res = runner.invoke(app, ["contrast", "natural", "--scores", str(scores), *extra,
                                  "--per-pair", "2", "--threshold", "0", "--out", str(out)])
        assert res.exit_code == 0, res.output
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert [(r["s1_index"], r["s2_index"], r["s1"], r["s2"]) for r in rows] == \
            [(r["s1_index"], r["s2_index"], r["s1"], r["s2"]) for r in expected]
        assert all(lines[r["s1_index"]] == r["s1"] for r in rows)
    other = tmp_path / "other.txt"
    other.write_text("\n".join(lines[:3] + lines[5:]) + "\n")   # the blank lines removed
    res = runner.invoke(app, ["contrast", "natural", "--scores", str(scores), "--sentences",
                              str(other), "--out", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2, res.output
    assert "other.txt, line 6: " in res.output and "scores another sentence" in res.output
    other.write_text("\n".join([*lines, "one more sentence"]) + "\n")
    res = runner.invoke(app, ["contrast", "natural", "--scores", str(scores), "--sentences",
                              str(other), "--out", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2 and "line 11: no score for this sentence" in res.output
    decomposed = tmp_path / "nfd.txt"     # the same sentences in another Unicode form
    decomposed.write_text(unicodedata.normalize("NFD", "\n".join(lines).replace("cat", "café")))
    scores.write_text(scores.read_text().replace("cat", "café"))
    res = runner.invoke(app, ["contrast", "natural", "--scores", str(scores), "--sentences",
                              str(decomposed), "--per-pair", "2", "--threshold", "0",
                              "--out", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 0, res.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sentence": "a b", "logprob": {"x": -1, "y": -2}, "line": 1}\n'
                   '{"sentence": "a c", "logprob": {"x": -1, "y": -3}, "line": "2"}\n')
    res = runner.invoke(app, ["contrast", "natural", "--scores", str(bad), "--out",
                              str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2 and "bad.jsonl, line 2: \"line\" must be a line number" in res.output


def test_repeated_word_prefilter_cuts_chinese_into_words_and_reads_nfc():
    """A Chinese sentence was one whitespace "word", so no repeat was ever found in it; a word
    written composed and decomposed (NFD) in one sentence was two words."""
    import unicodedata

    from cuelens.audit.segmenters import installed
    from cuelens.lm.contrast.natural import without_repeated_words

    if not installed("chinese"):
        pytest.skip("the chinese segmenter (cuelens[cjk]) is not installed")
    chinese = ["我喜欢猫，我喜欢狗。", "他在家里看书，她在公园散步。", "今天天气很好，我们去公园吧。"]
    assert without_repeated_words(chinese).tolist() == [False, False, True]
    latin = ["the café and " + unicodedata.normalize("NFD", "café"), "a café in the park"]
    assert without_repeated_words(latin).tolist() == [False, True]


def test_repeated_word_prefilter_strips_every_script_s_punctuation_from_word_edges():
    """Only ASCII marks were stripped: “cat” and cat, नमस्ते। and नमस्ते, ¡Hola! and hola,
    «chat» and chat were two words each, so these sentences passed the filter; ASCII-only
    text is read as before (a hyphen or slash is no edge mark)."""
    import unicodedata

    from cuelens.lm.contrast.natural import without_repeated_words

    repeating = ["the cat saw the “cat”", "नमस्ते। आप कहो नमस्ते", "¡Hola! dijo hola",
                 "«chat» le chat noir", unicodedata.normalize("NFD", "«café» au café"),
                 "el ¿perro? come perro"]
    assert without_repeated_words(repeating).tolist() == [False] * len(repeating)
    assert without_repeated_words(["the cat saw a “dog”", "«chat» le chien",
                                   "a -cat- and a cat/"]).tolist() == [True, True, True]


def test_allowed_words_are_read_as_the_sentences_words_are():
    """A --function-words file written decomposed (NFD) or capitalised allowed nothing: the
    sentences' words are compared lower-cased in NFC."""
    import unicodedata

    from cuelens.lm.contrast.natural import without_repeated_words

    texts = ["il va à Paris à pied", "à bientôt"]
    allowed = frozenset({unicodedata.normalize("NFD", "À")})
    assert without_repeated_words(texts, allowed).tolist() == [True, True]
