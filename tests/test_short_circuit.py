"""Short-circuit tests (docs/methods.md §7): AW counting on hand-made attention, a tiny BERT end to end
against a brute-force reference, and black-box pass rates."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cuelens.errors import UserError
from cuelens.probes.attention import (T1, T2, AWResult, aw_test, considers, top_two, word_scores,
                                      word_spans)
from cuelens.probes.short_circuit import pass_rates, summary


def considers_premise(scores: np.ndarray, t1: float = T1, t2: float = T2) -> bool:
    """docs/methods.md §7 decision on one (choice word × premise word) score matrix."""
    return bool(considers(np.asarray(top_two(scores)), t1, t2)[0])


@pytest.mark.parametrize("values, expected", [
    ([0.15], True),  # c1 = 1
    ([0.14], False),  # not strictly above t1; c2 = 1
    ([0.135, 0.131], True),  # c1 = 0, c2 = 2
    ([0.135, 0.13], False),  # 0.13 is not above t2: c2 = 1
    ([0.10, 0.12, 0.129], False),
])
def test_thresholds_exactly(values, expected):
    scores = np.zeros((2, 3))
    scores.flat[: len(values)] = values
    assert considers_premise(scores, T1, T2) is expected


def test_word_spans_drop_specials_punctuation_and_group_pieces():
    # [CLS] the glass fell . [SEP] it broke ##n ! [SEP]   (premise "the glass fell.",
    # choice "it brooken!"; "broke"+"##n" are two pieces of one word)
    premise, choice = "the glass fell.", "it broken!"
    seq = [None, 0, 0, 0, 0, None, 1, 1, 1, 1, None]
    words = [None, 0, 1, 2, 3, None, 0, 1, 1, 2, None]
    offsets = [(0, 0), (0, 3), (4, 9), (10, 14), (14, 15), (0, 0), (0, 2), (3, 8), (8, 10),
               (10, 11), (0, 0)]
    premise_words, choice_words = word_spans(seq, words, offsets, (premise, choice))
    assert premise_words == [[1], [2], [3]]  # "." excluded
    assert choice_words == [[6], [7, 8]]  # "!" excluded, pieces grouped


def test_word_scores_max_pool_over_pieces():
    attention = np.zeros((11, 11))
    attention[7, 2] = 0.05
    attention[8, 2] = 0.2  # second piece of "broken" -> "glass"
    attention[6, 4] = 0.9  # -> "." (excluded column, must not count)
    attention[0, 1] = 0.9  # [CLS] row (excluded)
    scores = word_scores(attention, [[6], [7, 8]], [[1], [2], [3]])
    np.testing.assert_allclose(scores, [[0, 0, 0], [0, 0.2, 0]])
    assert considers_premise(scores)
    attention[8, 2] = 0.135  # one score in (t2, t1]: not enough
    assert not considers_premise(word_scores(attention, [[6], [7, 8]], [[1], [2], [3]]))
    attention[6, 3] = 0.131  # a second one: c2 = 2
    assert considers_premise(word_scores(attention, [[6], [7, 8]], [[1], [2], [3]]))


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from tiny_models import tiny_bert_dir
    from transformers import AutoModel, AutoTokenizer

    texts = ["the glass fell . it broke , it sang ! the man was hungry he ate food slept"]
    path = tiny_bert_dir(tmp_path_factory.mktemp("bert"), texts * 3, seed=1)
    return AutoModel.from_pretrained(path), AutoTokenizer.from_pretrained(path)


def _reference(model, tokenizer, premise, choice, t1, t2):
    """Brute force: token loops over one un-padded pair (word-level tokenizer: piece = word)."""
    import torch

    enc = tokenizer(premise, choice, return_tensors="pt")
    with torch.no_grad():
        att = model(**enc, output_attentions=True).attentions[-1][0].max(dim=0).values
    seq = enc.sequence_ids(0)
    tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
    keep = [t not in {".", ",", "!"} for t in tokens]
    c1 = c2 = 0
    for i in range(len(tokens)):
        for j in range(len(tokens)):
            if seq[i] == 1 and seq[j] == 0 and keep[i] and keep[j]:
                c1 += float(att[i, j]) > t1
                c2 += float(att[i, j]) > t2
    return c1 > 0 or c2 >= 2


def test_aw_on_a_tiny_bert_matches_brute_force(tiny_bert):
    model, tokenizer = tiny_bert
    premises = ["the glass fell .", "the man was hungry .", "the man fell", "he was hungry !"]
    choices = ["it broke .", "he ate food !", "he slept , it sang", "it sang"]
    mixed = 0
    # random-init attention is spread (~1/length), so thresholds near 0.1 give mixed answers
    for t1, t2 in [(T1, T2), (0.12, 0.11), (0.11, 0.1), (0.1, 0.09), (0.105, 0.1)]:
        result = aw_test(model, tokenizer, premises, choices, thresholds="fixed", t1=t1, t2=t2,
                         batch_size=3)
        expected = [_reference(model, tokenizer, p, c, t1, t2) for p, c in zip(premises, choices)]
        assert result.considers.tolist() == expected
        assert result.score == pytest.approx(np.mean(expected))
        mixed += 0 < sum(expected) < len(expected)
    assert mixed >= 2  # the comparison is not vacuous
    fixed = {"thresholds": "fixed"}
    assert aw_test(model, tokenizer, premises, choices, t1=0.0, t2=0.0, **fixed).score == 1.0
    assert aw_test(model, tokenizer, premises, choices, t1=1.0, t2=1.0, **fixed).score == 0.0


class _NoAttention:
    """A model whose outputs carry no attention maps."""

    class _Out:
        attentions = None

    def eval(self):
        return self

    def __call__(self, **kwargs):
        return self._Out()


def test_aw_not_available_instead_of_a_crash(tiny_bert):
    _, tokenizer = tiny_bert
    result = aw_test(_NoAttention(), tokenizer, ["the glass fell"], ["it broke"])
    assert result.score is None and result.note.startswith("AW not available")
    out = summary(result, {"co": {"n": 2, "pass_rate": 0.5}})
    assert out["aw"] is None and out["co"] == 0.5 and "AW not available" in out["aw_note"]


def test_pass_rates_per_operator():
    rows = [{"op": "co", "label": 0}, {"op": "co", "label": 1}, {"op": "mt", "label": 1},
            {"op": "co", "label": 0}]
    rates = pass_rates(rows, np.array([0, 0, 1, 0]))
    assert rates == {"co": {"n": 3, "pass_rate": pytest.approx(2 / 3, abs=1e-6)},
                     "mt": {"n": 1, "pass_rate": 1.0}}
    assert summary(AWResult(0.25, np.array([True, False, False, False])), rates)["aw"] == 0.25


def test_short_circuit_with_a_tiny_classifier(tiny_bert, tmp_path):
    from tiny_models import tiny_bert_dir

    from cuelens.augment.operators import parse_ops
    from cuelens.augment.stress import build_stress, stress_split
    from cuelens.data.dataset import Split
    from cuelens.models.classifier import load_classifier
    from cuelens.probes.short_circuit import short_circuit

    split = Split(name="test", path="test.jsonl", task="mcq")
    right = ["it broke .", "he ate food .", "it sang .", "he slept .", "the man fell .",
             "it fell ."]
    for i in range(6):
        split.append({"id": f"q{i}", "premise": "the glass fell .",
                      "choices": [right[i], "the glass was hungry ."][:: 1 - 2 * (i % 2)],
                      "label": i % 2}, raw="", line=i + 1)
    path = tiny_bert_dir(tmp_path / "m", ["the glass fell . it broke he ate food did not sang slept man was hungry"] * 3)
    clf = load_classifier(str(path), "mcq", device="cpu")
    correct = np.array([True, True, False, True, False, True])
    section = short_circuit(split, correct, clf, ops="co,neg+", aw_thresholds="fixed", t1=0.0,
                            t2=0.0)
    assert section["aw"] == 1.0  # every positive score is above a zero threshold
    stress = build_stress(split, parse_ops("co,neg+"), items=np.flatnonzero(correct).tolist())
    predicted = clf.predict_proba(stress_split(stress)).argmax(axis=1)
    expected = pass_rates(stress.rows, predicted)
    assert section["per_op"] == expected and section["co"] == expected["co"]["pass_rate"]
    assert expected["neg+"]["n"] == 4  # only the correctly answered questions are stressed


def test_probe_section_wiring(tmp_path):
    """`audit probe --short-circuit` path: options on a ProbeContext, then the section
    runs only when asked for and only with a loaded model (otherwise a warning value)."""
    from tiny_models import tiny_bert_dir

    from cuelens.data.dataset import Dataset, Split
    from cuelens.models.classifier import load_classifier
    from cuelens.probes.predictions import Predictions
    from cuelens.probes.sections import ProbeContext
    from cuelens.probes.short_circuit import ShortCircuitOptions, section

    split = Split(name="test", path="test.jsonl", task="mcq")
    right = ["it broke .", "he ate food .", "it sang .", "he slept ."]
    for i in range(4):
        split.append({"id": f"q{i}", "premise": "the glass fell .",
                      "choices": [right[i], "the glass was hungry ."], "label": 0},
                     raw="", line=i + 1)
    dataset = Dataset(name="t", format="jsonl", task="mcq", train=None, test=split,
                      label_names=["right", "wrong"])
    preds = Predictions(pred=np.zeros(4, dtype=np.int64), probs=None)
    path = tiny_bert_dir(tmp_path / "m", [" ".join(right) + " the glass was hungry fell"] * 3)
    clf = load_classifier(str(path), "mcq", device="cpu")
    ctx = ProbeContext(dataset=dataset, predictions=preds, cues=[], model_info={},
                       classifier=clf)
    assert section(ctx) is None and ctx.warnings == []  # not asked for
    ctx.short_circuit = ShortCircuitOptions(ops="co,mt")
    out = section(ctx)
    assert set(out) >= {"aw", "co", "per_op"} and out["per_op"]["co"]["n"] == 4
    ctx.classifier = None  # a predictions file cannot be asked new questions
    assert section(ctx) is None
    assert ctx.warnings == ["short-circuit tests need a model (they ask the model new "
                            "questions); skipped"]


def test_mcq_only_sections_skip_nli_data_with_one_warning_each():
    """The short-circuit and position-bias sections share ProbeContext.multiple_choice: on NLI
    data each is skipped with its own warning, and neither runs."""
    import cuelens
    from cuelens.probes.position import PositionBiasOptions, section as position_section
    from cuelens.probes.predictions import Predictions
    from cuelens.probes.sections import ProbeContext
    from cuelens.probes.short_circuit import ShortCircuitOptions, section as short_section

    rows = [{"premise": "a man sleeps", "hypothesis": f"nobody sleeps {i}",
             "label": ("entailment", "contradiction")[i % 2]} for i in range(4)]
    dataset = cuelens.load_dataset(rows)
    ctx = ProbeContext(dataset=dataset, cues=[],
                       predictions=Predictions(pred=np.zeros(4, dtype=np.int64), probs=None),
                       short_circuit=ShortCircuitOptions(ops="co"),
                       position_bias=PositionBiasOptions(picks=[np.zeros(4, dtype=np.int64)]))
    assert short_section(ctx) is None and position_section(ctx) is None
    assert ctx.warnings == ["short-circuit tests are for multiple choice; skipped",
                            "the position-bias probe is for multiple choice; skipped"]


@pytest.mark.parametrize("ops, message", [("co,foo", "unknown operator 'foo' (--sc-ops)"),
                                          (" , ", "--sc-ops names no operator")])
def test_short_circuit_operators_are_checked_under_their_own_option(ops, message):
    from cuelens.probes.short_circuit import ShortCircuitOptions

    with pytest.raises(UserError, match=re.escape(message)):
        ShortCircuitOptions(ops=ops).validate()


def test_an_operator_that_builds_no_question_is_listed_as_not_applicable(tmp_path, capsys):
    """One rule for --sc-ops: an English-only operator on other text (it was an error after the
    model had predicted, the default --sc-ops failing on every Chinese dataset) and an operator
    that could change no question (it was left out of per_op, silently) are both in per_op with
    n 0, no pass rate and why, in the terminal and the report."""
    from tiny_models import tiny_bert_dir

    from cuelens.commands.probe import print_short_circuit
    from cuelens.data.dataset import Split
    from cuelens.models.classifier import load_classifier
    from cuelens.probes.short_circuit import short_circuit
    from cuelens.reports.probe import _probe_short_circuit
    from cuelens.reports.section import Section

    def split_of(premise: str, right: list[str], wrong: str) -> Split:
        split = Split(name="test", path="test.jsonl", task="mcq")
        for i, choice in enumerate(right):
            split.append({"id": f"q{i}", "premise": premise, "choices": [choice, wrong],
                          "label": 0}, raw="", line=i + 1)
        return split

    english = split_of("the glass fell .", ["it broke .", "he ate food .", "it sang ."],
                       "the glass was hungry .")
    chinese = split_of("玻璃杯掉在地上。", ["杯子碎了。", "他吃了饭。", "鸟在唱歌。"], "杯子饿了。")
    texts = [" ".join(["the glass fell it broke he ate food sang was hungry",
                       *"玻璃杯掉在地上碎了他吃饭鸟唱歌饿"])] * 3
    clf = load_classifier(str(tiny_bert_dir(tmp_path / "m", texts)), "mcq", device="cpu")
    correct = np.ones(3, dtype=bool)
    section = short_circuit(english, correct, clf, ops="co,neg-")  # no "not" to remove
    assert section["per_op"]["co"]["n"] == 3
    assert section["per_op"]["neg-"] == {
        "n": 0, "pass_rate": None,
        "not_applicable": "it could change none of the 3 correctly answered questions"}
    section = short_circuit(chinese, correct, clf, ops="co,mt,neg+,voice")
    assert [op for op, row in section["per_op"].items() if row["n"]] == ["co", "mt"]
    assert section["per_op"]["voice"]["not_applicable"] == (
        "works on English text only and this text is 'zh'")
    print_short_circuit(section)
    printed = " ".join(capsys.readouterr().err.split())
    assert "not applicable: neg+, voice: works on English text only" in printed
    sec = Section("probe", "Does a model use the cues?")
    _probe_short_circuit(sec, {"short_circuit": section})
    assert sec.context["not_applicable_ops"] == [
        "Neg+ add negation, Voice subject/object swap (works on English text only and this "
        "text is 'zh')"]
