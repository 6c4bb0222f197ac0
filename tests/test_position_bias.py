"""Position-bias probe against models whose behaviour is known exactly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from cuelens.audit.chance import positions_verdict
from cuelens.probes.position import (Question, as_questions, balanced_positions,
                                     classifier_scorer, cochran_q, position_bias,
                                     position_bias_from_picks, position_verdict, rotated_splits,
                                     sentence_scorer)
from scan_helpers import mcq_split


def questions(n: int, k: int) -> list[Question]:
    return [Question(f"q{i}", [f"c{i}_{j}" for j in range(k)], i % k) for i in range(n)]


def gold_of(qs: list[Question]):
    """Map choice text → is it the gold answer (what an oracle model knows)."""
    return {q.choices[q.gold] for q in qs}


def test_oracle_is_position_blind():
    qs = questions(20, 4)
    right = gold_of(qs)
    result = position_bias(qs, lambda p, cs: [np.array([c in right for c in row], float)
                                              for row in cs], seed=3)
    assert result["accuracy_by_position"] == [1.0] * 4 and result["spread"] == 0.0
    assert result["consistency"] == 1.0 and result["rotations"] == 80
    assert result["cochran_q"]["q"] == 0.0 and not result["cochran_q"]["significant"]
    assert result["predicted_positions"]["counts"] == [5, 5, 5, 5]


def test_verdict_of_an_equal_accuracy_and_of_no_readable_answer():
    """One accuracy at every position is not a 'range from A to A'; a model whose answers could
    never be read is not 'no evidence of imbalance' (χ² 0, df 0)."""
    qs = questions(20, 4)
    right = gold_of(qs)
    oracle = position_bias(qs, lambda p, cs: [np.array([c in right for c in row], float)
                                              for row in cs], seed=3)
    text = position_verdict(oracle)
    assert "accuracy is 100.0% wherever the right answer sits (Cochran's Q" in text
    assert "runs from" not in text
    silent = position_bias_from_picks(qs, [np.full(20, -1)] * 4, seed=3)
    assert silent["unanswered"] == silent["rotations"] == 80
    assert position_verdict(silent) == ("No answer of the model could be read in any of the 80 "
                                        "rotations: its position bias cannot be measured.")
    assert positions_verdict(silent["predicted_positions"], "the model's answers") == (
        "None of the model's answers could be read: their positions cannot be tested.")


def first_position(premises, choices):
    """Scores falling with the position: the pick is always position 0."""
    return [-np.arange(len(row), dtype=float) for row in choices]


def test_first_position_model():
    n, k = 20, 4
    result = position_bias(questions(n, k), first_position, seed=0)
    assert result["accuracy_by_position"] == [1.0, 0.0, 0.0, 0.0]
    assert result["accuracy_all_rotations"] == 0.25 and result["spread"] == 1.0
    assert result["consistency"] == 0.0
    assert result["cochran_q"]["q"] == pytest.approx(n * (k - 1))  # hand-derived
    assert result["cochran_q"]["p_value"] == pytest.approx(stats.chi2.sf(60, 3), rel=1e-3)
    assert result["predicted_positions"]["counts"] == [20, 0, 0, 0]
    assert result["predicted_positions"]["significant"]


def test_tied_top_scores_are_no_answer_counted_as_ties():
    """A top score shared by several positions was the lower position, a preference for A: a
    model scoring every choice alike ran from 100% (answer at A) to 0% with Cochran's Q
    significant. Hand-computed: question 0 is always tied (2 rotations), question 1 known."""
    qs = [Question("tie", ["x", "y"], 0), Question("know", ["u", "v"], 1)]

    def scores(premises, choices):
        return [np.ones(2) if p == "tie" else np.array([float(c == "v") for c in row])
                for p, row in zip(premises, choices)]

    result = position_bias(qs, scores, seed=0)
    assert result["ties"] == 2 and result["unanswered"] == 0
    assert result["accuracy_by_position"] == [0.5, 0.5] and result["spread"] == 0.0
    assert result["accuracy_all_rotations"] == 0.5 and result["consistency"] == 0.5
    assert sum(result["predicted_positions"]["counts"]) == 1    # the tied question is left out
    assert "In 2 rotations the top score was shared by several positions" in \
        position_verdict(result)
    constant = position_bias(questions(20, 4), lambda p, cs: [np.zeros(len(r)) for r in cs])
    assert constant["ties"] == constant["rotations"] == 80 and constant["spread"] == 0.0
    assert position_verdict(constant).startswith("No answer of the model was a single choice")
    assert position_bias(qs[1:], scores)["ties"] == 0    # no tie: as before


def test_half_known_half_first_position():
    """Knows the answer to even questions, picks position 0 on odd ones."""
    qs = questions(40, 2)
    known = {q.choices[q.gold] for i, q in enumerate(qs) if i % 2 == 0}
    result = position_bias(qs, lambda p, cs: [np.array([2.0 * (c in known) - j * 0.1
                                                        for j, c in enumerate(row)])
                                              for row in cs], seed=1, batch_size=7)
    assert result["accuracy_by_position"] == [1.0, 0.5]
    assert result["consistency"] == 0.5
    # balanced subset: 20 questions with gold at 0, 20 at 1; odd (unknown) ones answer 0
    balanced = balanced_positions(np.full(40, 2), 1)
    unknown_at_1 = sum(1 for i in range(40) if i % 2 and balanced[i] == 1)
    counts = result["predicted_positions"]["counts"]
    assert counts == [20 + unknown_at_1, 20 - unknown_at_1]


def test_varying_choice_counts():
    qs = questions(6, 2) + questions(6, 3) + questions(6, 5)
    result = position_bias(qs, first_position, seed=0)
    assert result["n_by_position"] == [18, 18, 12, 6, 6]
    assert result["accuracy_by_position"] == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert result["rotations"] == 6 * 2 + 6 * 3 + 6 * 5
    assert result["cochran_q"]["df"] == 1 + 2 + 4


def test_predictions_per_rotation_route_matches_score_fn():
    split = mcq_split("test", [[f"a{i}", f"bb{i}", f"ccc{i}"] for i in range(12)],
                      [i % 3 for i in range(12)])

    def longest(premises, choices):
        return [np.array([len(c) for c in row], float) for row in choices]

    direct = position_bias(split, longest, seed=5)
    rotated = rotated_splits(split, seed=5)
    assert len(rotated) == 3
    picks = [np.array([int(np.argmax([len(c) for c in row])) for row in part.choices])
             for part in rotated]
    assert position_bias_from_picks(split, picks, seed=5) == direct
    # the longest choice is gold exactly when its index is 2
    assert direct["accuracy_all_rotations"] == pytest.approx(4 / 12, abs=1e-6)
    assert direct["consistency"] == 1.0


def test_cochran_q_matches_hand_formula():
    x = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 1, 0], [1, 0, 0]], dtype=float)
    k, col, row = 3, x.sum(0), x.sum(1)
    expected = (k - 1) * (k * (col ** 2).sum() - row.sum() ** 2) / (k * row.sum()
                                                                    - (row ** 2).sum())
    assert cochran_q(x) == (pytest.approx(expected), 2)


def test_sentence_scorer_adapter():
    class Lengths:
        name = "len"

        def score(self, sentences):
            return np.array([-len(s) for s in sentences], dtype=float)

    fn = sentence_scorer(Lengths())
    out = fn(["p", "pp"], [["a", "bbb"], ["cc", "d", "eee"]])
    assert [x.tolist() for x in out] == [[-3.0, -5.0], [-5.0, -4.0, -6.0]]


def test_a_choice_the_language_model_cannot_score_is_named_by_its_item_and_line():
    """A too-long premise + choice was 'sentence 9 has 63 tokens, more than the model's 32': its
    place among the texts of one batch of rotations, which names nothing in the user's file."""
    from cuelens.errors import UserError
    from cuelens.lm.scoring import SentenceTooLong

    class Refuses:
        name = "lm"

        def score(self, sentences):
            for k, text in enumerate(sentences):
                if "long" in text:
                    raise SentenceTooLong(k, 99, 32)
            return np.zeros(len(sentences))

    choices = [[f"a{i}", f"b{i}", f"c{i}"] for i in range(5)]
    choices[3][2] = "a long choice"
    split = mcq_split("test", choices, [0] * 5)
    for batch_size in (1, 4, 256):
        with pytest.raises(UserError) as info:
            position_bias(split, sentence_scorer(Refuses()), seed=2, batch_size=batch_size)
        assert str(info.value) == ("test.jsonl, line 4: the premise of item 'test3' followed by "
                                   "its choice 3 has 99 tokens, more than the model's 32")
    with pytest.raises(UserError) as info:
        position_bias(as_questions(split), sentence_scorer(Refuses()), seed=2, batch_size=4)
    assert str(info.value) == ("the premise of question 4 followed by its choice 3 has 99 "
                               "tokens, more than the model's 32")


def test_classifier_scorer_with_a_tiny_model(tmp_path):
    pytest.importorskip("torch")
    from cuelens.models.classifier import load_classifier
    from tests.tiny_models import tiny_bert_dir

    texts = ["the cat sat", "a dog ran", "one bird flew", "some fish swam"]
    clf = load_classifier(str(tiny_bert_dir(tmp_path / "m", texts)), "mcq", device="cpu")
    fn = classifier_scorer(clf)
    out = fn(["the cat", "a dog"], [["sat", "ran"], ["ran", "flew", "swam"]])
    assert [len(x) for x in out] == [2, 3]
    assert all(x.sum() == pytest.approx(1.0, abs=1e-5) for x in out)
    result = position_bias(questions(4, 3), fn, seed=0)
    assert result["rotations"] == 12 and 0.0 <= result["consistency"] <= 1.0


def test_rotate_and_probe_cli_with_predictions_per_rotation(tmp_path):
    import json

    from typer.testing import CliRunner

    from cuelens.cli import app
    from tests.conftest import write_jsonl
    from tests.test_evallogs import lm_eval_lines, planted_items

    rows = planted_items()
    data = write_jsonl(tmp_path / "planted.jsonl", rows)
    runner = CliRunner()
    done = runner.invoke(app, ["rotate", str(data), "--out", str(tmp_path / "rot"),
                               "--seed", "4"])
    assert done.exit_code == 0, done.output
    files = []
    for r in range(2):  # a "model" that always answers A, logged as lm-eval samples
        rotated = [json.loads(line) for line in
                   (tmp_path / "rot" / f"rotation_{r}.jsonl").read_text().splitlines()]
        lines = lm_eval_lines(rotated)
        for line in lines:
            line["filtered_resps"] = [[-1.0, True], [-2.0, False]]
        files.append(write_jsonl(tmp_path / f"samples_{r}.jsonl", lines))
    main = write_jsonl(tmp_path / "samples.jsonl", lm_eval_lines(rows))
    args = ["probe", str(data), "-p", str(main), "--seed", "4", "--out", str(tmp_path / "out"),
            "--bootstrap", "50"]
    for path in files:
        args += ["--position-predictions", str(path)]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "depend on where the right answer sits" in done.output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    pb = results["probe"]["position_bias"]
    assert pb["accuracy_by_position"] == [1.0, 0.0] and pb["consistency"] == 0.0
    assert pb["predicted_positions"]["counts"] == [40, 0]
    assert pb["source"] == "predictions per rotation"
    assert results["probe"]["accuracy"] == 0.625  # 15 + 10 of 40 follow the planted cue
    html = (tmp_path / "out" / "report.html").read_text()
    assert "position_bias" in html
    wrong = runner.invoke(app, args[:-2])
    assert wrong.exit_code == 2 and "needs 2 files" in wrong.output


@pytest.mark.parametrize("seed", ["-1", "4294967296"])
def test_rotate_and_probe_refuse_a_seed_out_of_range(tmp_path, seed):
    from typer.testing import CliRunner

    from cuelens.cli import app
    from cuelens.errors import UserError
    from tests.conftest import write_jsonl
    from tests.test_evallogs import planted_items

    data = write_jsonl(tmp_path / "planted.jsonl", planted_items())
    runner = CliRunner()
    message = "seed (--seed) must be between 0 and 4294967295"
    done = runner.invoke(app, ["rotate", str(data), "--out", str(tmp_path / "rot"),
                               "--seed", seed])
    assert done.exit_code == 2 and message in done.output, done.output
    assert "Traceback" not in done.output and not (tmp_path / "rot").exists()
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": r["id"], "prediction": 0}
                                                for r in planted_items()])
    done = runner.invoke(app, ["probe", str(data), "-p", str(preds), "--seed", seed,
                               "--position-predictions", str(preds),
                               "--position-predictions", str(preds),
                               "--out", str(tmp_path / "out")])
    assert done.exit_code == 2 and message in done.output, done.output
    with pytest.raises(UserError, match="must be between 0 and"):
        rotated_splits(mcq_split("t", [["a", "b"]], [0]), int(seed))


def test_rotate_refuses_ids_shared_by_two_items(tmp_path):
    """Predictions on the rotations come back by id: two items under one id were written out
    (a model run on them for nothing) and refused only by `audit probe`, naming neither."""
    from typer.testing import CliRunner

    from cuelens.cli import app
    from tests.conftest import write_jsonl
    from tests.test_evallogs import planted_items

    rows = planted_items()
    rows[3]["id"] = rows[1]["id"]
    data = write_jsonl(tmp_path / "planted.jsonl", rows)
    runner = CliRunner()
    done = runner.invoke(app, ["rotate", str(data), "--out", str(tmp_path / "rot")])
    assert done.exit_code == 2 and not (tmp_path / "rot").exists(), done.output
    said = " ".join(done.output.split())
    assert f"id '{rows[1]['id']}' is given to two items (lines 2 and 4)" in said
    assert "Traceback" not in done.output
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": r["id"], "prediction": 0} for r in rows])
    done = runner.invoke(app, ["probe", str(data), "-p", str(preds), "--out",
                               str(tmp_path / "out")])
    assert done.exit_code == 2 and "(lines 2 and 4)" in " ".join(done.output.split())


def test_rotate_names_rotation_files_left_by_an_earlier_run(tmp_path):
    """Rotating 2-choice data into a directory that held the 3 rotations of other data said
    'wrote 2 rotations' beside a stale rotation_2.jsonl, which a model run over the directory
    then answered too."""
    from typer.testing import CliRunner

    from cuelens.cli import app
    from tests.conftest import write_jsonl
    from tests.test_evallogs import planted_items

    rows = planted_items()
    three = write_jsonl(tmp_path / "three.jsonl",
                        [dict(r, choices=[*r["choices"], "a third choice"]) for r in rows])
    runner = CliRunner()
    out = tmp_path / "rot"
    assert runner.invoke(app, ["rotate", str(three), "--out", str(out)]).exit_code == 0
    done = runner.invoke(app, ["rotate", str(write_jsonl(tmp_path / "two.jsonl", rows)),
                               "--out", str(out)])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "wrote 2 rotations" in said and "also holds rotation_2.jsonl from an earlier run" in said


def test_probe_refuses_predictions_on_rotations_of_another_seed_or_other_items(tmp_path):
    """Predictions on the rotations of `audit rotate --seed 4`, given back with --seed 5 or
    against other test items, were read against another layout of the choices: a model that
    always picked the right answer scored 46% with no warning."""
    import json

    from typer.testing import CliRunner

    from cuelens.cli import app
    from tests.conftest import write_jsonl
    from tests.test_evallogs import planted_items

    rows = planted_items()
    data = write_jsonl(tmp_path / "planted.jsonl", rows)
    runner = CliRunner()
    rot = tmp_path / "rot"
    done = runner.invoke(app, ["rotate", str(data), "--out", str(rot), "--seed", "4"])
    assert done.exit_code == 0, done.output
    files = []
    for r in range(2):  # a model that always picks the right answer
        rotated = [json.loads(line) for line in
                   (rot / f"rotation_{r}.jsonl").read_text().splitlines()]
        files.append(write_jsonl(rot / f"preds_{r}.jsonl", [
            {"id": row["id"], "prediction": row["label"]} for row in rotated]))
    main = write_jsonl(tmp_path / "p.jsonl", [{"id": r["id"], "prediction": r["label"]}
                                               for r in rows])

    def probe(dataset, seed: str):
        args = ["probe", str(dataset), "-p", str(main), "--seed", seed, "--bootstrap", "20",
                "--out", str(tmp_path / f"out{seed}")]
        for path in files:
            args += ["--position-predictions", str(path)]
        return runner.invoke(app, args)

    done = probe(data, "4")
    assert done.exit_code == 0, done.output
    results = json.loads((tmp_path / "out4" / "results.json").read_text())
    assert results["probe"]["position_bias"]["accuracy_all_rotations"] == 1.0
    done = probe(data, "5")
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and "Traceback" not in done.output, done.output
    assert "rotations.json beside it (audit rotate) says" in said
    assert "written with --seed 4" in said and "give --seed 4" in said
    assert not (tmp_path / "out5").exists()
    swapped = [dict(r, choices=r["choices"][::-1], label=1 - r["label"]) for r in rows]
    other = write_jsonl(tmp_path / "swapped.jsonl", swapped)
    done = probe(other, "4")
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and "of other test items" in said, done.output


@pytest.mark.parametrize("options, message", [
    (["--position-lm", "no-such-lm"], "cannot load model 'no-such-lm'"),
    (["--scan", "no-such-scan"], "not a scan output directory"),
    (["--position-predictions", "p.jsonl"], "needs 2 files, one per rotation; got 1")])
def test_probe_checks_what_it_reads_before_the_model_predicts(tmp_path, monkeypatch, options,
                                                              message):
    """`audit probe --model M --position-lm BAD` (or a bad --scan, a missing rotation) was
    refused only after the model had predicted every test item (minutes)."""
    from typer.testing import CliRunner

    import cuelens.probes.sources
    from cuelens.cli import app
    from tests.conftest import write_jsonl
    from tests.test_evallogs import planted_items
    from tests.tiny_models import tiny_bert_dir

    def no_predictions(*args, **kwargs):
        raise AssertionError("the model predicted before the options were checked")

    monkeypatch.setattr(cuelens.probes.sources.ModelSource, "predict", no_predictions)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    rows = planted_items()
    write_jsonl(tmp_path / "d.jsonl", rows)
    write_jsonl(tmp_path / "p.jsonl", [{"id": r["id"], "prediction": 0} for r in rows])
    texts = [r["premise"] + " " + " ".join(r["choices"]) for r in rows]
    tiny_bert_dir(tmp_path / "m", texts)
    done = CliRunner().invoke(app, ["probe", "d.jsonl", "--model", "m", "--allow-untrained",
                                    "--out", "o", *options])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and said.startswith("error: ") and message in said, done.output
    assert not (tmp_path / "o").exists()


def test_probe_position_bias_of_the_model(tmp_path):
    """--position-bias scores every rotation with the --model (its scorer is built once the
    model is loaded)."""
    import json

    from typer.testing import CliRunner

    from cuelens.cli import app
    from tests.conftest import write_jsonl
    from tests.test_evallogs import planted_items
    from tests.tiny_models import tiny_bert_dir

    rows = planted_items()
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    texts = [r["premise"] + " " + " ".join(r["choices"]) for r in rows]
    model = tiny_bert_dir(tmp_path / "m", texts)
    done = CliRunner().invoke(app, ["probe", str(data), "--model", str(model),
                                    "--allow-untrained", "--position-bias", "--bootstrap", "20",
                                    "--out", str(tmp_path / "o")])
    assert done.exit_code == 0, done.output
    section = json.loads((tmp_path / "o" / "results.json").read_text())["probe"]["position_bias"]
    assert section["source"] == "model" and section["rotations"] == 2 * len(rows)
    refused = CliRunner().invoke(app, ["probe", str(data), "-p", str(data), "--position-bias",
                                       "--out", str(tmp_path / "o2")])
    assert refused.exit_code == 2 and "--position-bias scores the --model" in refused.output


def test_probe_refuses_one_predictions_file_for_two_rotations(tmp_path):
    """The same file given for rotations 0 and 1 was read against both layouts: the picks of
    rotation 0 scored as those of rotation 1, with no warning."""
    from typer.testing import CliRunner

    from cuelens.cli import app
    from tests.conftest import write_jsonl
    from tests.test_evallogs import planted_items

    rows = planted_items()
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": r["id"], "prediction": 0} for r in rows])
    done = CliRunner().invoke(app, ["probe", str(data), "-p", str(preds),
                                    "--position-predictions", str(preds),
                                    "--position-predictions", str(tmp_path / "." / "p.jsonl"),
                                    "--out", str(tmp_path / "o")])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and said.startswith("error: "), done.output
    assert "one file is given for rotations 0 and 1" in said
    assert not (tmp_path / "o").exists()
