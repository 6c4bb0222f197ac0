"""Synthetic controversial sentences (docs/methods.md §9): the word-replacement search on toy scorers whose
optimum can be checked by brute force."""

from __future__ import annotations

import itertools
import json
import unicodedata

import numpy as np
import pytest
from typer.testing import CliRunner

from cuelens.lm.contrast import synthetic as syn
from cuelens.lm.contrast.synthetic import Vocabulary, search, synthesize_triplet
from cuelens.cli import app

VOCAB = ["ant", "bee", "cat", "dog", "eel", "fox", "gnu"]


class Unigram:
    """A deterministic toy scorer: ``log p(s) = Σ table[word]`` (unknown words: -50)."""

    def __init__(self, name: str, table: dict[str, float]):
        self.name, self.table, self.calls = name, table, 0

    def word_scores(self, sentence):
        return [(w, self.table.get(w, -50.0)) for w in sentence.split()]

    def score(self, sentences):
        self.calls += 1
        return np.array([sum(v for _, v in self.word_scores(s)) for s in sentences])


class CausalUnigram(Unigram):
    def next_word_logprobs(self, prefix, candidates):
        return np.array([self.table.get(c, -50.0) for c in candidates])


class MaskedUnigram(Unigram):
    def __init__(self, name, table, slot):
        super().__init__(name, table)
        self.slot = slot

    def masked_word_logprobs(self, sentence, position, candidates):
        return np.array([self.slot[c] for c in candidates])


def tables(seed: int):
    rng = np.random.default_rng(seed)
    return ({w: float(v) for w, v in zip(VOCAB, rng.normal(-3, 1, len(VOCAB)))},
            {w: float(v) for w, v in zip(VOCAB, rng.normal(-3, 1, len(VOCAB)))})


def single_replacements(words, vocab):
    for i in range(len(words)):
        for c in vocab.candidates(words, i):
            yield words[:i] + [c] + words[i + 1:]


def test_vocabulary_forbids_repeats_except_function_words_and_uses_initial_list():
    vocab = Vocabulary(["the", "cat", "dog", "Sat"], initial=["The", "A"],
                       function_words=frozenset({"the"}))
    words = ["The", "cat", "the"]
    assert vocab.candidates(words, 0) == ["A"]              # initial list; "The" is current
    assert vocab.candidates(words, 1) == ["the", "dog", "Sat"]  # function word may repeat
    assert vocab.candidates(["A", "dog", "cat"], 1) == ["the", "Sat"]  # no second "cat"


def test_unconstrained_search_reaches_the_brute_force_optimum():
    accept = Unigram("flat", {w: -1.0 for w in VOCAB})       # constraint never binds
    reject = Unigram("rej", tables(0)[1])
    vocab = Vocabulary(VOCAB)
    result = search("gnu fox eel", accept, reject, vocab, np.random.default_rng(1), patience=5)
    best = min(itertools.permutations(VOCAB, 3), key=lambda ws: sum(reject.table[w] for w in ws))
    assert sorted(result.sentence.split()) == sorted(best)
    assert result.logprob_reject == pytest.approx(sum(reject.table[w] for w in best))
    assert result.converged


@pytest.mark.parametrize("seed", range(6))
def test_constrained_search_ends_feasible_and_locally_optimal(seed):
    a_table, r_table = tables(seed)
    accept, reject = Unigram("acc", a_table), Unigram("rej", r_table)
    vocab = Vocabulary(VOCAB)
    natural = "cat dog eel"
    floor = accept.score([natural])[0]
    # patience 2n-1 guarantees that one full shuffled cycle of positions failed
    result = search(natural, accept, reject, vocab, np.random.default_rng(seed), patience=5)
    words = result.sentence.split()
    assert accept.score([result.sentence])[0] >= floor
    assert result.logprob_reject == pytest.approx(reject.score([result.sentence])[0])
    assert result.logprob_reject <= reject.score([natural])[0]
    for other in single_replacements(words, vocab):
        s = " ".join(other)
        assert not (accept.score([s])[0] >= floor and reject.score([s])[0] < result.logprob_reject)


def test_one_step_takes_the_best_feasible_replacement():
    a_table, r_table = tables(3)
    accept, reject = Unigram("acc", a_table), Unigram("rej", r_table)
    vocab = Vocabulary(VOCAB)
    natural = "cat dog eel"
    floor = accept.score([natural])[0]
    position = np.random.default_rng(9).permutation(3)[0]
    result = search(natural, accept, reject, vocab, np.random.default_rng(9), max_steps=1)
    words = natural.split()
    options = [words[:position] + [c] + words[position + 1:]
               for c in vocab.candidates(words, position)]
    feasible = [" ".join(o) for o in options if accept.score([" ".join(o)])[0] >= floor]
    best = min(feasible + [natural], key=lambda s: reject.score([s])[0])
    assert result.sentence == best and result.steps == 1


def test_causal_pruning_drops_candidates_below_minus_ten():
    a_table = {w: -1.0 for w in VOCAB}
    a_table["ant"] = -11.0                       # cheapest for the rejecting model, but pruned
    accept = CausalUnigram("acc", a_table)
    accept_plain = Unigram("acc", dict(a_table, ant=-1.0))
    reject = Unigram("rej", {w: -1.0 - i for i, w in enumerate(VOCAB[::-1])})  # ant lowest
    vocab = Vocabulary(VOCAB)
    assert syn.feasibility_strategy(accept) is syn.PRUNERS["next_word_logprobs"]
    sentences, chosen, scores = syn.feasibility_strategy(accept)(
        accept, ["cat"], 0, vocab.candidates(["cat"], 0), -100.0, 2)
    assert "ant" not in chosen and len(chosen) == len(VOCAB) - 2
    assert scores == accept.score(sentences).tolist()
    plain = search("cat", accept_plain, reject, vocab, np.random.default_rng(0), max_steps=1)
    assert plain.sentence == "ant"


def test_masked_best_first_stops_after_five_misses_with_sequential_semantics():
    # slot order: 5 infeasible words, then a feasible one that must NOT be reached
    slot = {w: -float(i) for i, w in enumerate(["gnu", "ant", "bee", "dog", "eel", "fox", "cat"])}
    table = {"gnu": 0.0, "ant": -9.0, "bee": -9.0, "dog": -9.0, "eel": -9.0, "fox": -9.0,
             "cat": -5.0}
    accept = MaskedUnigram("acc", table, slot)
    vocab = Vocabulary(VOCAB)
    for batch in (1, 2, 64):  # the batch size must not change the result
        _, chosen, scores = syn._feasible_best_first(accept, ["cat"], 0,
                                                     vocab.candidates(["cat"], 0), -6.0, batch)
        assert chosen == ["gnu"] and scores == [0.0]


def test_triplet_controversiality_and_determinism():
    a_table, r_table = tables(11)
    m1, m2 = Unigram("m1", a_table), Unigram("m2", r_table)
    vocab = Vocabulary(VOCAB)
    one = synthesize_triplet("cat dog eel", m1, m2, vocab, seed=4)
    two = synthesize_triplet("cat dog eel", m1, m2, vocab, seed=4)
    assert one == two
    expected = (m1.score([one["n"]])[0] - m1.score([one["s1"]])[0]
                + m2.score([one["n"]])[0] - m2.score([one["s2"]])[0])
    assert one["controversiality"] == pytest.approx(expected)
    assert one["lp_s1_m2"] >= one["lp_n_m2"] and one["lp_s2_m1"] >= one["lp_n_m1"]
    assert one["controversial"] == (one["lp_s1_m1"] < one["lp_n_m1"]
                                    and one["lp_s2_m2"] < one["lp_n_m2"])


def test_cli_with_two_ngram_scorers(tmp_path):
    from cuelens.lm.ngram import NgramModel

    corpus = [s.split() for s in ("the cat sat on the mat", "a dog sat on a log",
                                  "the dog ate the cat", "a cat ate a rat")]
    NgramModel.train(corpus, order=2).save_pretrained(tmp_path / "bi")
    NgramModel.train(corpus[::-1][:3], order=3).save_pretrained(tmp_path / "tri")
    init, vocab = tmp_path / "init.txt", tmp_path / "vocab.txt"
    init.write_text("the cat sat on the mat\nthe cat sat on the mat\na dog ate a log\n")
    vocab.write_text("\n".join(["the", "a", "cat", "dog", "mat", "log", "rat", "sat", "ate",
                                "on"]) + "\n")
    out, summary, page = tmp_path / "t.jsonl", tmp_path / "s.json", tmp_path / "t.html"
    args = ["contrast", "synthetic", "--models", f"ngram:{tmp_path/'bi'},ngram:{tmp_path/'tri'}",
            "--init", str(init), "--vocab", str(vocab), "--n", "5", "--out", str(out),
            "--summary", str(summary), "--max-steps", "30", "--seed", "1", "--html", str(page)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["natural_index"] for r in rows] == [0, 2]        # duplicates dropped
    first = out.read_text()
    assert CliRunner().invoke(app, args).exit_code == 0
    assert out.read_text() == first                            # deterministic given --seed
    assert CliRunner().invoke(app, args + ["--jobs", "2"]).exit_code == 0
    assert out.read_text() == first                            # the same with 2 processes
    facts = json.loads(summary.read_text())
    assert facts["controversial_fraction"] == sum(r["controversial"] for r in rows) / 2
    assert facts["kind"] == "contrast_pairs" and facts["method"] == "synthetic"
    assert [p["s1"] for p in facts["pairs"]] == [r["s1"] for r in rows]
    assert 'id="pairs-table"' in page.read_text()  # the report page of the summary
    bad = CliRunner().invoke(app, ["contrast", "synthetic", "--models", "x", "--init", str(init),
                                   "--vocab", str(vocab), "--out", str(tmp_path / "o.jsonl")])
    assert bad.exit_code == 2 and "exactly two" in bad.output


def test_device_reaches_the_models_and_an_unknown_one_is_refused(tmp_path, monkeypatch):
    """synthetic ran its models on the default device only: it took no --device (nor did
    run_synthetic for models given as specs)."""
    from cuelens.lm.contrast.synthetic_run import run_synthetic
    from cuelens.lm.ngram import NgramModel
    from tests.test_contrast_natural import recorded_devices

    starts = ["ant bee cat", "dog eel fox"]
    devices = recorded_devices(monkeypatch)
    NgramModel.train([s.split() for s in starts], order=2).save_pretrained(tmp_path / "bi")
    NgramModel.train([s.split() for s in starts], order=3).save_pretrained(tmp_path / "tri")
    (tmp_path / "init.txt").write_text("\n".join(starts) + "\n")
    (tmp_path / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    spec, other = f"ngram:{tmp_path / 'bi'}", f"ngram:{tmp_path / 'tri'}"
    args = ["contrast", "synthetic", "--models", f"{spec},{other}", "--init",
            str(tmp_path / "init.txt"), "--vocab", str(tmp_path / "vocab.txt"), "--n", "1",
            "--max-steps", "2"]
    result = CliRunner().invoke(app, [*args, "--device", "cpu", "--out", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 0, result.output
    assert devices == ["cpu", "cpu"]
    result = CliRunner().invoke(app, [*args, "--device", "tpu", "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "unknown device 'tpu'" in result.output
    run_synthetic([(0, starts[0])], spec, other, Vocabulary(VOCAB), tmp_path / "p.jsonl", max_steps=2,
                  device="cpu")
    assert devices == ["cpu"] * 4


@pytest.mark.parametrize("option, unit", [("--init", "sentence"), ("--vocab", "word"),
                                          ("--vocab-initial", "word"),
                                          ("--function-words", "word")])
def test_a_data_file_given_as_a_file_of_lines_is_refused(tmp_path, option, unit):
    """--init starts.jsonl searched from each JSON object's text ('{"sentence": …}') as a
    starting sentence, silently; a --vocab of JSON Lines offered JSON text as words."""
    init, vocab = tmp_path / "init.txt", tmp_path / "vocab.txt"
    init.write_text("the cat sat\n")
    vocab.write_text("cat\ndog\n")
    data = tmp_path / "data.jsonl"
    data.write_text('{"sentence": "the cat sat"}\n')
    files = {"--init": init, "--vocab": vocab, option: data}
    res = CliRunner().invoke(app, ["contrast", "synthetic", "--models", "ngram:a,ngram:b",
                                   *[text for pair in files.items() for text in map(str, pair)],
                                   "--out", str(tmp_path / "o.jsonl")])
    said = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert f"{data}: {option} is read one {unit} per line, so each line of this .jsonl file " \
        f"would be a {unit}: give a text file of one {unit} per line" in said, said
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("name, message", [
    ("t.jsonl.gz", "this output is appended to line by line and cannot be gzipped: give --out a "
                   "name ending in .jsonl, .ndjson or .json"),
    ("t.csv", "this output is JSON Lines: give --out a name ending in .jsonl, .ndjson or .json")])
def test_out_is_a_plain_json_lines_file(tmp_path, name, message):
    """--out t.jsonl.gz wrote an empty gzip member, then appended the triplets as plain lines:
    no gzip reader read it; --out t.csv held JSON Lines."""
    init, vocab = tmp_path / "init.txt", tmp_path / "vocab.txt"
    init.write_text("the cat sat\n")
    vocab.write_text("cat\ndog\n")
    res = CliRunner().invoke(app, ["contrast", "synthetic", "--models", "ngram:a,ngram:b",
                                   "--init", str(init), "--vocab", str(vocab),
                                   "--out", str(tmp_path / name)])
    said = " ".join(res.output.split())
    assert res.exit_code == 2 and f"{tmp_path / name}: {message}" in said, said
    assert not (tmp_path / name).exists()


def test_batch_size_help_says_what_a_batch_is():
    """--batch-size said 'Candidate sentences per scoring batch.', nothing of a model's own
    forward batches nor that the triplets do not depend on it (a masked search's batch size
    must not change the result, above)."""
    shown = " ".join(CliRunner().invoke(app, ["contrast", "synthetic", "--help"],
                                        env={"COLUMNS": "300"}).output.split())
    assert "Candidate sentences (the word replacements at one position) given to a model at a " \
        "time" in shown
    assert "a model runs them in batches of its own" in shown
    assert "The triplets do not depend on it" in shown


@pytest.mark.parametrize("option", ["--batch-size", "--n", "--max-steps", "--patience"])
@pytest.mark.parametrize("value", ["0", "-3"])
def test_cli_counts_below_1_are_one_error_line(tmp_path, option, value):
    """--batch-size 0 was range()'s traceback, -3 numpy's ('need at least one array')."""
    from cuelens.lm.ngram import NgramModel

    NgramModel.train([["the", "cat", "sat"]], order=2).save_pretrained(tmp_path / "bi")
    init, vocab = tmp_path / "init.txt", tmp_path / "vocab.txt"
    init.write_text("the cat sat\n")
    vocab.write_text("the\ncat\nsat\n")
    result = CliRunner().invoke(app, [
        "contrast", "synthetic", "--models", f"ngram:{tmp_path / 'bi'},{tmp_path / 'bi'}",
        "--init", str(init), "--vocab", str(vocab), "--out", str(tmp_path / "o.jsonl"),
        option, value])
    assert result.exit_code == 2 and f"{option}) must be at least 1" in result.output
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("empty, message", [("--init", "no starting sentences"),
                                             ("--vocab", "no candidate words"),
                                             ("--vocab-initial", "no candidate words")])
def test_cli_refuses_an_empty_input_file(tmp_path, empty, message):
    """An empty --init wrote '0 triplets' and exited 0; an empty --vocab searched nothing and
    wrote each starting sentence as its own 'triplet'."""
    from cuelens.lm.ngram import NgramModel

    NgramModel.train([["the", "cat", "sat"]], order=2).save_pretrained(tmp_path / "bi")
    files = {"--init": "the cat sat\n", "--vocab": "the\ncat\nsat\n", "--vocab-initial": "the\n"}
    args = ["contrast", "synthetic", "--models", f"ngram:{tmp_path / 'bi'},{tmp_path / 'bi'}",
            "--out", str(tmp_path / "o.jsonl")]
    for option, text in files.items():
        path = tmp_path / f"{option.strip('-')}.txt"
        path.write_text("\n \n" if option == empty else text)
        args += [option, str(path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and f"{empty.strip('-')}.txt: {message} in file" in result.output
    assert not (tmp_path / "o.jsonl").exists()


def test_a_starting_sentence_too_long_for_a_model_is_named(tmp_path):
    """The error said 'sentence 1' (the first candidate of a scoring batch) for the third
    starting sentence."""
    import tests.lm_random_init as random_init
    from cuelens.lm.ngram import NgramModel

    sentences = ["the cat sat on the mat", "a dog sat on a log", "the dog ate the cat"]
    bpe = random_init.byte_level_bpe(sentences, 48, full_alphabet=False)
    random_init.gpt2(bpe, hidden=16, positions=16).save_pretrained(tmp_path / "gpt")
    bpe.save_pretrained(tmp_path / "gpt")
    NgramModel.train([s.split() for s in sentences], order=2).save_pretrained(tmp_path / "bi")
    init, vocab = tmp_path / "init.txt", tmp_path / "vocab.txt"
    init.write_text("the cat sat\na dog sat\n" + " ".join(sentences * 2) + "\n")
    vocab.write_text("the\na\ncat\ndog\nsat\n")
    result = CliRunner().invoke(app, [
        "contrast", "synthetic", "--models", f"ngram:{tmp_path / 'bi'},{tmp_path / 'gpt'}",
        "--init", str(init), "--vocab", str(vocab), "--n", "3", "--max-steps", "1",
        "--out", str(tmp_path / "t.jsonl")])
    assert result.exit_code == 2, result.output
    assert "starting sentence 3 ('the cat sat on the mat a dog sat on a lo…') or a sentence " \
           "made from it by replacing a word has" in result.output
    assert "more than the model's 16" in result.output


def test_a_failed_position_is_not_rescored_for_the_same_sentence():
    a_table, r_table = tables(5)
    runs = []
    for patience in (8, 80):
        accept, reject = Unigram("acc", a_table), Unigram("rej", r_table)
        result = search("cat dog eel", accept, reject, Vocabulary(VOCAB),
                        np.random.default_rng(2), patience=patience, max_steps=1000)
        runs.append((result.sentence, result.steps - patience, accept.calls, reject.calls))
    # once all 3 positions failed for the final sentence, more patience costs no scoring
    assert runs[0] == runs[1]


class Interrupt(Exception):
    pass


def test_run_writes_each_triplet_as_found_and_resume_gives_the_same_file(tmp_path):
    from cuelens.lm.contrast.synthetic_run import run_synthetic

    a_table, r_table = tables(3)
    m1, m2 = Unigram("m1", a_table), Unigram("m2", r_table)
    starts = [(0, "cat dog eel"), (2, "bee fox"), (5, "gnu ant cat")]
    full = tmp_path / "full.jsonl"
    seen = []
    run = run_synthetic(starts, m1, m2, Vocabulary(VOCAB), full, seed=7,
                        progress=lambda stage, f: seen.append(f))
    assert len(run.rows) == 3 and run.resumed == 0 and len(run.seconds) == 3
    assert seen == sorted(seen) and seen[-1] == 1.0           # fractions only grow, to 1
    expected = [{"natural_index": i, **synthesize_triplet(s, m1, m2, Vocabulary(VOCAB),
                                                          seed=7 * 1_000_003 + k)}
                for k, (i, s) in enumerate(starts)]
    assert [json.loads(line) for line in full.read_text().splitlines()] == expected

    part = tmp_path / "part.jsonl"

    def stop_after_first(stage, fraction):
        if "sentence 2/3, search 1/2" in stage:
            raise Interrupt

    with pytest.raises(Interrupt):
        run_synthetic(starts, m1, m2, Vocabulary(VOCAB), part, seed=7, progress=stop_after_first)
    assert part.read_text().splitlines() == full.read_text().splitlines()[:1]   # kept
    with open(part, "a") as handle:
        handle.write('{"natural_index": 2, "n": "bee')              # a torn last line
    run = run_synthetic(starts, m1, m2, Vocabulary(VOCAB), part, seed=7, resume=True)
    assert run.resumed == 1 and part.read_text() == full.read_text()
    with pytest.raises(Exception, match="other starting sentences"):
        run_synthetic(starts[1:], m1, m2, Vocabulary(VOCAB), part, resume=True)


def test_resume_with_other_models_is_refused_and_keeps_the_file(tmp_path):
    """--resume with the two models swapped (or others) appended their triplets after the
    first models' ones, silently, in one file."""
    from cuelens.errors import UserError
    from cuelens.lm.contrast.synthetic_run import run_synthetic

    a_table, r_table = tables(3)
    m1, m2 = Unigram("m1", a_table), Unigram("m2", r_table)
    starts = [(0, "cat dog eel"), (2, "bee fox")]
    out = tmp_path / "out.jsonl"
    run_synthetic(starts[:1], m1, m2, Vocabulary(VOCAB), out, seed=7)
    before = out.read_text()
    with pytest.raises(UserError, match="holds triplets of the models m1, m2, not m2, m1"):
        run_synthetic(starts, m2, m1, Vocabulary(VOCAB), out, seed=7, resume=True)
    assert out.read_text() == before
    run = run_synthetic(starts, m1, m2, Vocabulary(VOCAB), out, seed=7, resume=True)
    assert run.resumed == 1 and len(run.rows) == 2


@pytest.fixture(scope="module")
def ngram_and_lstm(tmp_path_factory):
    """Specs of a tiny bigram and an untrained (seeded) tiny LSTM, both saved to disk."""
    import torch

    from cuelens.lm.ngram import NgramModel
    from cuelens.lm.rnn import RNNConfig, RNNModel
    from cuelens.lm.text import WordSplitter

    root = tmp_path_factory.mktemp("models")
    corpus = [s.split() for s in ("the cat sat on the mat", "a dog sat on a log",
                                  "the dog ate the cat", "a cat ate a rat")]
    NgramModel.train(corpus, order=2).save_pretrained(root / "bi")
    torch.manual_seed(0)
    words = ["<unk>", "<s>", "</s>", "the", "a", "cat", "dog", "mat", "log", "rat", "sat", "ate",
             "on"]
    RNNModel(RNNConfig(vocab_size=len(words), embedding_size=8, hidden_size=8), words,
             WordSplitter()).save_pretrained(root / "lstm")
    return f"ngram:{root / 'bi'}", f"lstm:{root / 'lstm'}"


SPEC_VOCAB = Vocabulary(["the", "a", "cat", "dog", "mat", "log", "rat", "sat", "ate", "on"])
# a long first sentence: the others usually finish first in the second worker
SPEC_STARTS = [(0, "the cat sat on the mat a log"), (1, "a dog"), (3, "the rat"), (4, "a cat"),
               (6, "the dog ate")]


def test_jobs_2_writes_the_same_file_as_jobs_1_and_resume_still_works(ngram_and_lstm, tmp_path):
    from cuelens.lm.contrast.synthetic_run import run_synthetic

    m1, m2 = ngram_and_lstm
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    options = dict(seed=3, max_steps=12)
    run_synthetic(SPEC_STARTS, m1, m2, SPEC_VOCAB, one, **options)
    seen = []
    run = run_synthetic(SPEC_STARTS, m1, m2, SPEC_VOCAB, two, jobs=2, **options,
                        progress=lambda stage, f: seen.append((stage, f)))
    assert two.read_bytes() == one.read_bytes()
    assert [r["natural_index"] for r in run.rows] == [0, 1, 3, 4, 6]
    assert len(run.seconds) == 5
    # one report per finished sentence, each naming a different sentence, fractions 1/5 … 5/5
    assert [f for _, f in seen] == [k / 5 for k in range(1, 6)]
    assert sorted(stage for stage, _ in seen) == [f"sentence {k}/5 done" for k in range(1, 6)]

    lines = one.read_text().splitlines(keepends=True)
    two.write_text("".join(lines[:2]) + lines[2][:20])            # two rows and a torn third
    run = run_synthetic(SPEC_STARTS, m1, m2, SPEC_VOCAB, two, jobs=2, resume=True, **options)
    assert run.resumed == 2 and two.read_bytes() == one.read_bytes()


@pytest.mark.parametrize("option, value", [("max_steps", 0), ("max_steps", -3),
                                           ("patience", 0), ("batch_size", 0)])
def test_run_synthetic_counts_below_1_are_one_error(tmp_path, option, value):
    """run_synthetic(max_steps=0) or patience=0 'found' the starting sentence itself as both
    sentences of its triplet, silently; batch_size=0 was range()'s traceback (the CLI refused
    them, the Python call did not)."""
    from cuelens.errors import UserError
    from cuelens.lm.contrast.synthetic_run import run_synthetic

    out = tmp_path / "t.jsonl"
    with pytest.raises(UserError, match=rf"{option} \(--{option.replace('_', '-')}\) must be "
                                        rf"at least 1, got {value}"):
        run_synthetic([(0, "ant bee cat")], Unigram("a", {}), Unigram("b", {}),
                      Vocabulary(VOCAB), out, **{option: value})
    assert not out.exists()


def test_jobs_errors_are_user_errors(ngram_and_lstm, tmp_path):
    import pickle

    from cuelens.errors import UserError
    from cuelens.lm.contrast.synthetic_run import run_synthetic

    m1, _ = ngram_and_lstm
    out = tmp_path / "o.jsonl"
    with pytest.raises(UserError, match="specs"):          # scorer objects cannot be shipped
        run_synthetic(SPEC_STARTS, Unigram("a", {}), Unigram("b", {}), SPEC_VOCAB, out, jobs=2)
    with pytest.raises(UserError, match="--jobs must be 0"):
        run_synthetic(SPEC_STARTS, m1, m1, SPEC_VOCAB, out, jobs=-1)
    missing = f"ngram:{tmp_path / 'nowhere'}"
    with pytest.raises(UserError) as caught:                # raised in a worker, kept whole
        run_synthetic(SPEC_STARTS, m1, missing, SPEC_VOCAB, out, jobs=2)
    assert "nowhere" in str(caught.value) and "\n" not in str(caught.value)
    assert not out.exists()                                 # no empty output left behind
    with pytest.raises(UserError, match="nowhere"):
        run_synthetic(SPEC_STARTS, m1, missing, SPEC_VOCAB, out, jobs=1)
    assert not out.exists()
    error = pickle.loads(pickle.dumps(UserError("bad", path="f.txt", line=3, exit_code=4)))
    assert (str(error), error.path, error.line, error.exit_code) == ("f.txt, line 3: bad",
                                                                     "f.txt", 3, 4)


def test_rows_finished_out_of_order_are_written_in_sentence_order(tmp_path, monkeypatch):
    from cuelens.lm.contrast import synthetic_run

    a_table, r_table = tables(3)
    m1, m2 = Unigram("m1", a_table), Unigram("m2", r_table)
    starts = [(0, "cat dog eel"), (2, "bee fox"), (5, "gnu ant cat"), (6, "eel ant")]
    expected = tmp_path / "serial.jsonl"
    synthetic_run.run_synthetic(starts, m1, m2, Vocabulary(VOCAB), expected, seed=7)

    def last_first(todo, starts, m1, m2, search, jobs):   # the workers, finishing in reverse
        for k in reversed(todo):
            yield synthetic_run._triplet(k, starts[k], m1, m2, search)

    monkeypatch.setattr(synthetic_run, "_parallel", last_first)
    out, written = tmp_path / "reversed.jsonl", []
    run = synthetic_run.run_synthetic(
        starts, m1, m2, Vocabulary(VOCAB), out, seed=7, jobs=2,
        progress=lambda stage, f: written.append((stage, f, len(out.read_text().splitlines()))))
    assert out.read_bytes() == expected.read_bytes() and len(run.seconds) == 4
    # sentences 4, 3, 2 wait for sentence 1; then all four lines are written at once
    assert written == [("sentence 4/4 done", 0.25, 0), ("sentence 3/4 done", 0.5, 0),
                       ("sentence 2/4 done", 0.75, 0), ("sentence 1/4 done", 1.0, 4)]


def test_candidates_compare_words_in_nfc():
    """A candidate written composed (NFC) repeated a sentence word written decomposed (NFD), and
    a function word given decomposed never matched: words compare lower-cased in NFC."""
    import unicodedata

    nfd = unicodedata.normalize("NFD", "Café")
    vocab = Vocabulary(["café", "thé", "à"], function_words=frozenset({unicodedata.normalize(
        "NFD", "À")}))
    assert vocab.candidates(["un", nfd, "noir"], 2) == ["thé", "à"]
    assert vocab.candidates(["à", "un", "x"], 2) == ["café", "thé", "à"]


class CharUnigram(Unigram):
    """:class:`Unigram` over the characters of a sentence (a script written without spaces);
    a character outside the table: -1."""

    def word_scores(self, sentence):
        return [(c, self.table.get(c, -1.0)) for c in sentence if not c.isspace()]


def test_a_sentence_without_spaces_is_searched_word_by_word(tmp_path):
    """A Chinese, Japanese or Thai starting sentence was one whitespace "word": the search could
    only replace all of it by one vocabulary word, so s1 and s2 stayed the starting sentence
    (0% controversial) or became one word."""
    from cuelens.lm.contrast.synthetic import join_words, split_words
    from cuelens.lm.contrast.synthetic_run import run_synthetic

    assert split_words("the cat sat.") == (["the", "cat", "sat."], [" ", " "])
    assert split_words("猫吃鱼 ok", "chars") == (["猫", "吃", "鱼", "ok"], ["", "", " "])
    for text, segmenter in (("私は学校に行きます", "japanese"), ("ฉันไปโรงเรียน", "thai"),
                            ("全国政协委员，无权提出建议。", "chinese")):
        words, glue = split_words(text, segmenter)
        assert len(words) > 2 and join_words(words, glue) == text
        # decomposed: the same words, each in the text's own form (a dakuten or a Thai vowel
        # mark was cut off its letter and left as a word of its own)
        nfd = unicodedata.normalize("NFD", text)
        nfd_words, nfd_glue = split_words(nfd, segmenter)
        assert [unicodedata.normalize("NFC", w) for w in nfd_words] == words
        assert nfd_glue == glue and join_words(nfd_words, nfd_glue) == nfd
    kana = unicodedata.normalize("NFD", "私はがんばります")
    assert not any(unicodedata.category(w[0]) == "Mn" for w in split_words(kana, "japanese")[0])
    assert split_words("नमस्ते  दुनिया") == (["नमस्ते", "दुनिया"], [" "])
    chars = "甲乙丙丁戊己庚"
    accept = CharUnigram("flat", {})                      # the constraint never binds
    reject = CharUnigram("rej", dict(zip(chars, tables(0)[1].values())))
    result = search("庚己戊", accept, reject, Vocabulary(list(chars)), np.random.default_rng(1),
                    patience=5, segmenter="chars")
    best = min(itertools.permutations(chars, 3), key=lambda cs: sum(reject.table[c] for c in cs))
    assert sorted(result.sentence) == sorted(best)     # three characters, no space between
    run = run_synthetic([(0, "我们喜欢吃鱼")], accept, CharUnigram("rej", dict.fromkeys(chars, -9.0)),
                        Vocabulary(list(chars)), tmp_path / "out.jsonl")  # segmenter: auto
    (row,) = run.rows
    assert len(row["s2"]) > 3 and " " not in row["s2"] and set(row["s2"]) & set(chars)
