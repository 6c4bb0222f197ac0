"""Masked-LM scoring (docs/methods.md §9): PLL and the chain estimator against one-mask-at-a-time loops."""

import itertools
import zlib

import numpy as np
import pytest
import torch

import tests.lm_random_init as random_init
from cuelens.lm.masked import MaskedScorer

SENTENCES = ["the cat sat on the mat.", "a dog barked at the cat", "the red bird flew away",
             "cats and dogs play", "the dog sat"]


@pytest.fixture(scope="module")
def tiny():
    torch.set_num_threads(1)
    tokenizer = random_init.wordpiece(SENTENCES, 60)
    return random_init.bert(tokenizer, hidden=16, positions=32, seed=1), tokenizer


def _logp(model, ids, position, target):
    """Brute force: full-model forward of one masked input, log-softmax at ``position``."""
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids])).logits[0, position]
    return float(torch.log_softmax(logits.double(), -1)[target])


def _pll_loop(model, tokenizer, sentence):
    ids = tokenizer(sentence)["input_ids"]
    total = 0.0
    for i in range(1, len(ids) - 1):
        masked = list(ids)
        masked[i] = tokenizer.mask_token_id
        total += _logp(model, masked, i, ids[i])
    return total


@pytest.mark.parametrize("max_tokens", [8192, 20])     # 20: long inputs split over batches
def test_pll_equals_one_mask_at_a_time_loop(tiny, max_tokens):
    model, tokenizer = tiny
    scorer = MaskedScorer(model, tokenizer, name="tiny", max_tokens=max_tokens)
    expected = [_pll_loop(model, tokenizer, s) for s in SENTENCES]
    np.testing.assert_allclose(scorer.score(SENTENCES), expected, atol=1e-4)
    words = scorer.word_scores(SENTENCES[0])
    assert [w for w, _ in words] == SENTENCES[0].split()
    assert sum(v for _, v in words) == pytest.approx(expected[0], abs=1e-4)


def test_chain_on_one_word_averages_its_token_orders(tiny):
    model, tokenizer = tiny
    sentence = "flew"      # 3 tokens: all 6 token orders are used
    ids = tokenizer(sentence)["input_ids"]
    assert len(ids) == 5
    mask = tokenizer.mask_token_id
    positions = list(range(1, len(ids) - 1))
    values = []
    for order in itertools.permutations(positions):
        state, total = [ids[0]] + [mask] * len(positions) + [ids[-1]], 0.0
        for p in order:
            total += _logp(model, state, p, ids[p])
            state[p] = ids[p]
        values.append(total)
    for seed in (0, 1):
        scorer = MaskedScorer(model, tokenizer, name="tiny", method="chain", orders=3, seed=seed)
        assert scorer.score([sentence])[0] == pytest.approx(np.mean(values), abs=1e-4)


def test_chain_two_words_is_mean_over_sampled_orders(tiny):
    model, tokenizer = tiny
    ids = tokenizer("cat dog")["input_ids"]
    assert len(ids) == 4
    mask = tokenizer.mask_token_id
    first = {p: _logp(model, [ids[0], mask, mask, ids[3]], p, ids[p]) for p in (1, 2)}
    second = {1: _logp(model, [ids[0], mask, ids[2], ids[3]], 1, ids[1]),
              2: _logp(model, [ids[0], ids[1], mask, ids[3]], 2, ids[2])}
    by_order = {(0, 1): first[1] + second[2], (1, 0): first[2] + second[1]}
    scorer = MaskedScorer(model, tokenizer, name="tiny", method="chain", orders=7, seed=5)
    rng = np.random.default_rng([5, zlib.crc32(np.asarray(ids, dtype=np.int64).tobytes())])
    expected = np.mean([by_order[tuple(rng.permutation(2))] for _ in range(7)])
    assert scorer.score(["cat dog"])[0] == pytest.approx(expected, abs=1e-4)
    again = MaskedScorer(model, tokenizer, name="tiny", method="chain", orders=7, seed=5)
    assert again.score(["cat dog"])[0] == scorer.score(["cat dog"])[0]


def test_a_chain_estimate_does_not_depend_on_the_other_sentences(tiny):
    """One random stream ran through all sentences of a call: a sentence's estimate changed
    with the sentences before it (file order, 256-sentence batches, good before bad in
    score-pairs), and its word_scores (scored alone) did not add up to its score."""
    model, tokenizer = tiny
    scorer = MaskedScorer(model, tokenizer, name="tiny", method="chain", orders=2, seed=3)
    together = scorer.score(SENTENCES)
    alone = [scorer.score([s])[0] for s in SENTENCES]
    reverse = scorer.score(SENTENCES[::-1])[::-1]
    np.testing.assert_allclose(together, alone, atol=1e-4)
    np.testing.assert_allclose(together, reverse, atol=1e-4)
    words = scorer.word_scores(SENTENCES[-1])
    assert sum(v for _, v in words) == pytest.approx(together[-1], abs=1e-4)


def test_masked_slot_candidates(tiny):
    model, tokenizer = tiny
    scorer = MaskedScorer(model, tokenizer, name="tiny")
    got = scorer.masked_word_logprobs("the cat sat", 1, ["dog", "barked", "cat"])
    ids = tokenizer("the cat sat")["input_ids"]
    mask = tokenizer.mask_token_id
    assert got[0] == pytest.approx(_logp(model, [ids[0], ids[1], mask, ids[3], ids[4]], 2,
                                         tokenizer.convert_tokens_to_ids("dog")), abs=1e-4)
    pieces = tokenizer(" barked", add_special_tokens=False)["input_ids"]
    state = [ids[0], ids[1]] + [mask] * len(pieces) + ids[3:]
    expected = 0.0
    for j, piece in enumerate(pieces):
        expected += _logp(model, state, 2 + j, piece)
        state[2 + j] = piece
    assert got[1] == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("family", ["roberta", "electra"])
def test_last_layer_shortcut_equals_full_forward(family):
    from transformers import ElectraConfig, ElectraForMaskedLM, RobertaConfig, RobertaForMaskedLM

    tokenizer = random_init.wordpiece(SENTENCES, 60)
    torch.manual_seed(0)
    sizes = dict(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=2,
                 num_attention_heads=2, intermediate_size=32, max_position_embeddings=40)
    model = (RobertaForMaskedLM(RobertaConfig(**sizes, pad_token_id=0)) if family == "roberta"
             else ElectraForMaskedLM(ElectraConfig(**sizes, embedding_size=8))).eval()
    fast = MaskedScorer(model, tokenizer, name=family)
    assert fast._partial is not None
    full = MaskedScorer(model, tokenizer, name=family)
    full._head = full._partial = None      # the plain full-model forward
    np.testing.assert_allclose(fast.score(SENTENCES), full.score(SENTENCES), atol=1e-4)


def test_unknown_words_of_unspaced_scripts_are_counted_word_by_word():
    """A sub-word model's OOV counts cut Chinese as a scan does: '我喜欢鸟' has one unknown word
    (鸟) among several; it was one whitespace "word", unknown, so 1 of 1 (100%)."""
    tokenizer = random_init.wordpiece(["我 喜 欢 猫", "他 喜 欢 狗", "the cat sat"] * 5, 60)
    scorer = MaskedScorer(random_init.bert(tokenizer, hidden=16, positions=32), tokenizer,
                          name="tiny")
    words, unknown = scorer.oov_counts(["我喜欢猫", "我喜欢鸟", "the cat sat"])
    assert words[0] >= 3 and words[1] == words[0] and words[2] == 3
    assert unknown.tolist() == [0, 1, 0]
