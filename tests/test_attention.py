"""Calibrated AW (docs/methods.md §7, cuelens/probes/attention.py): the null partners, the joint threshold
rule on a hand-computed null, the Wilson interval, and two 1-layer BERTs with planted attention —
one that reads the premise (a choice word attends to the same word in the premise) and one that
attends only within its own segment."""

from __future__ import annotations

import numpy as np
import pytest

from cuelens.probes.attention import (MIN_NULL, aw_test, calibrate, considers, null_partners,
                                      top_two, wilson_interval)


def test_top_two_pads_missing_scores_with_zero():
    assert top_two(np.array([[0.1, 0.7], [0.7, 0.2]])) == (0.7, 0.7)  # ties are two scores
    assert top_two(np.array([[0.3]])) == (0.3, 0.0)
    assert top_two(np.zeros((0, 3))) == (0.0, 0.0)


def test_calibrate_on_a_hand_computed_null():
    # 40 null pairs -> at most floor(0.05 * 40) = 2 may be flagged.
    rows = [(0.9, 0.2), (0.6, 0.55), (0.3, 0.29)]
    rows += [(0.2 - i * 0.001, 0.1 - i * 0.001) for i in range(37)]
    null = np.array(rows)
    # k = 1: t1 = 0.6 (2nd largest m1), t2 = 0.29 (2nd largest m2): flags (0.9, .) and
    # (., 0.55) = 2 pairs. k = 2: t1 = 0.3, t2 = 0.2 also flags (., 0.29) = 3 > 2. So k = 1.
    th = calibrate(null)
    assert (th.mode, th.t1, th.t2, th.n_null) == ("calibrated", 0.6, 0.29, 40)
    assert th.null_rate == pytest.approx(2 / 40)
    assert considers(null, th.t1, th.t2).sum() == 2
    assert considers(np.array([[0.61, 0.0], [0.6, 0.29], [0.1, 0.3]]), th.t1, th.t2).tolist() == [
        True, False, True]
    with pytest.raises(ValueError):
        calibrate(null[:MIN_NULL - 1])


def test_calibrate_keeps_the_null_rate_at_most_five_percent():
    rng = np.random.default_rng(3)
    for n in (20, 57, 400, 1001):
        m = np.sort(rng.random((n, 2)), axis=1)[:, ::-1]  # m1 >= m2
        th = calibrate(m)
        budget = int(0.05 * n)
        assert considers(m, th.t1, th.t2).sum() == round(th.null_rate * n) <= budget
        # the next k of the same family would break the budget (k is the largest allowed)
        m1, m2 = np.sort(m[:, 0])[::-1], np.sort(m[:, 1])[::-1]
        k = int(np.flatnonzero(m1 == th.t1)[0])
        assert k == n - 1 or considers(m, m1[k + 1], m2[k + 1]).sum() > budget
    ties = np.zeros((30, 2))  # a null that never attends: nothing can be flagged
    assert calibrate(ties).null_rate == 0.0


def test_null_partners_are_a_seeded_derangement_without_same_premises():
    premises = ["a b", "c d", "A  b", "e", "f", "g", "h"]  # 0 and 2 are the same text
    q, p = null_partners(premises, draws=3, seed=1)
    assert np.all(q != p)
    assert not any({int(a), int(b)} == {0, 2} for a, b in zip(q, p))
    pairs = list(zip(q.tolist(), p.tolist()))
    assert len(set(pairs)) == len(pairs)  # no partner twice
    counts = np.bincount(q, minlength=7)
    assert counts.max() == 3 and counts.sum() == len(pairs) >= 7 * 3 - 4
    again = null_partners(premises, draws=3, seed=1)
    assert np.array_equal(again[0], q) and np.array_equal(again[1], p)
    assert not np.array_equal(null_partners(premises, draws=3, seed=2)[1], p)
    assert len(null_partners(["x"], draws=5)[0]) == 0
    assert len(null_partners(["x", "y"], draws=5)[0]) == 2  # one shift is all two questions allow


def test_wilson_interval_matches_the_formula():
    low, high = wilson_interval(5, 10)  # centre 0.5, half-width 1.96/13.84*sqrt(2.5+0.96)
    assert (low, high) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)


# --- planted attention -------------------------------------------------------------------------

N_QUESTIONS = 40
WORD_DIMS = 64


def _questions() -> tuple[list[str], list[str]]:
    """Question i: premise "p{i}a p{i}b p{i}c"; its correct choice repeats the premise's first
    word and adds 1-3 words of its own. Different questions share no words."""
    premises = [f"p{i}a p{i}b p{i}c" for i in range(N_QUESTIONS)]
    choices = [" ".join([f"p{i}a"] + [f"c{i}{j}" for j in range(1 + i % 3)])
               for i in range(N_QUESTIONS)]
    return premises, choices


def _planted_bert(vocab_size: int, reads_premise: bool):
    """1 layer, 1 head, eager attention. Embeddings: a random ±1 code per word in the first
    WORD_DIMS dims, a ±4 segment code in the last two (position embeddings zero). Query = key =
    the word dims (``reads_premise``: a token attends to every copy of its own word, so a choice
    word attends ~1/2 to its copy in the premise) or the segment dims (attends within its own
    segment only)."""
    import torch
    from transformers import BertConfig, BertModel

    hidden = WORD_DIMS + 2
    config = BertConfig(vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=1,
                        num_attention_heads=1, intermediate_size=8, max_position_embeddings=64,
                        attn_implementation="eager")
    model = BertModel(config, add_pooling_layer=False).eval()
    gen = torch.Generator().manual_seed(0)
    emb = model.embeddings
    attention = model.encoder.layer[0].attention.self
    with torch.no_grad():
        emb.word_embeddings.weight.zero_()
        emb.word_embeddings.weight[:, :WORD_DIMS] = (
            torch.randint(0, 2, (vocab_size, WORD_DIMS), generator=gen).float() * 2 - 1)
        emb.position_embeddings.weight.zero_()
        emb.token_type_embeddings.weight.zero_()
        emb.token_type_embeddings.weight[0, WORD_DIMS:] = torch.tensor([4.0, -4.0])
        emb.token_type_embeddings.weight[1, WORD_DIMS:] = torch.tensor([-4.0, 4.0])
        projection = torch.zeros(hidden, hidden)
        dims = slice(0, WORD_DIMS) if reads_premise else slice(WORD_DIMS, hidden)
        projection[dims, dims] = torch.eye(hidden)[dims, dims] * 1.5
        for layer in (attention.query, attention.key):
            layer.weight.copy_(projection)
            layer.bias.zero_()
    return model


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    from tiny_models import tiny_bert_dir
    from transformers import AutoTokenizer

    premises, choices = _questions()
    path = tiny_bert_dir(tmp_path_factory.mktemp("planted"), premises + choices)
    tokenizer = AutoTokenizer.from_pretrained(path)
    vocab = len(tokenizer)
    return premises, choices, tokenizer, {name: _planted_bert(vocab, reads)
                                          for name, reads in (("reads", True),
                                                              ("ignores", False))}


def test_the_planted_patterns_are_what_they_claim(planted):
    import torch

    premises, choices, tokenizer, models = planted
    enc = tokenizer(premises[0], choices[0], return_tensors="pt")  # [CLS] p0a p0b p0c [SEP] p0a c00 [SEP]
    maps = {name: m(**enc, output_attentions=True).attentions[-1][0, 0]
            for name, m in models.items()}
    with torch.no_grad():
        assert maps["reads"][5, 1] == pytest.approx(0.5, abs=0.05)  # choice p0a -> premise p0a
        assert maps["reads"][6, 1:4].max() < 0.05  # c00 has no copy in the premise
        assert maps["ignores"][5:8, 0:5].max() < 1e-3  # choice rows never look at the premise


def test_calibrated_aw_separates_a_premise_reader_from_a_premise_ignorer(planted):
    premises, choices, tokenizer, models = planted
    reads = aw_test(models["reads"], tokenizer, premises, choices, seed=0)
    ignores = aw_test(models["ignores"], tokenizer, premises, choices, seed=0)
    for result in (reads, ignores):
        th = result.thresholds
        assert th.mode == "calibrated" and th.n_null == N_QUESTIONS * 5
        assert th.null_rate <= 0.05
        low, high = result.ci
        assert low <= result.score <= high
    assert reads.score == 1.0 and reads.ci[0] > 0.9
    # the ignorer's real pairs look like its null pairs: AW near the 5% null rate (4/40 here)
    assert ignores.score <= 0.15 and ignores.ci[1] < reads.ci[0]
    # the same null, fixed thresholds: the reader is also flagged, and the rate on the null is
    # reported next to it
    fixed = aw_test(models["reads"], tokenizer, premises, choices, thresholds="fixed", seed=0)
    assert fixed.thresholds.mode == "fixed" and fixed.thresholds.null_rate == 0.0
    assert fixed.score == 1.0


def test_fixed_thresholds_can_be_fooled_where_calibration_is_not(planted):
    """Thresholds below the attention every premise gets (here t = 0) flag every question, real
    or null (null rate 100%): the fixed test then says nothing, the calibrated one does."""
    premises, choices, tokenizer, models = planted
    low = aw_test(models["ignores"], tokenizer, premises, choices, thresholds="fixed", t1=0.0,
                  t2=0.0)
    assert low.score == 1.0 and low.thresholds.null_rate == 1.0
    calibrated = aw_test(models["ignores"], tokenizer, premises, choices)
    assert calibrated.score <= 0.15


def test_too_few_questions_to_calibrate_is_a_note_not_a_number(planted):
    premises, choices, tokenizer, models = planted
    result = aw_test(models["reads"], tokenizer, premises[:4], choices[:4])
    assert result.score is None and "AW not calibrated" in result.note
    fixed = aw_test(models["reads"], tokenizer, premises[:4], choices[:4], thresholds="fixed")
    assert fixed.score == 1.0
    with pytest.raises(Exception, match="unknown AW thresholds"):
        aw_test(models["reads"], tokenizer, premises, choices, thresholds="loose")
