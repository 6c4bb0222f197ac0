"""Causal-LM word probabilities (Pimentel & Meister, docs/methods.md §9) on a tiny random GPT-2 with a tiny
byte-level BPE, checked against brute-force enumeration and per-token loops."""

import math

import numpy as np
import pytest
import torch

import tests.lm_random_init as random_init
from cuelens.lm.causal import CausalScorer, detect_scheme, logits_to_keep_kind

SENTENCES = ["the cat sat on the mat.", "a dog barked at the cat", "the red bird flew away",
             "cats and dogs play", "the dog sat"]


@pytest.fixture(scope="module")
def tiny():
    torch.set_num_threads(1)
    tokenizer = random_init.byte_level_bpe(SENTENCES, 48, full_alphabet=False)
    model = random_init.gpt2(tokenizer, hidden=16, positions=32, seed=3)
    return (CausalScorer(model, tokenizer, name="tiny"),
            CausalScorer(model, tokenizer, name="tiny", bow_correction=False))


def _dist(scorer, ids):
    """Brute force: next-token distribution after ``ids`` from one unbatched forward pass."""
    with torch.inference_mode():
        logits = scorer.model(torch.tensor([ids])).logits[0, -1]
    return torch.softmax(logits.double(), -1).numpy()


def _sets(scorer):
    size = scorer.model.config.vocab_size
    starts = scorer._starts
    eos = scorer.eos
    inner = np.array([i for i in range(size) if not starts[i] and i != eos])
    return np.flatnonzero(starts), inner, np.append(np.flatnonzero(starts), eos)


def test_scheme_is_detected(tiny):
    scheme = detect_scheme(tiny[0].tokenizer)
    assert (scheme.kind, scheme.marker, scheme.dummy_prefix) == ("bow", "Ġ", False)


def test_word_probabilities_over_all_words_sum_as_brute_force(tiny):
    scorer, plain = tiny
    B, inner, boundary = _sets(scorer)
    context = [ids for ids in scorer._tokenize([["the", "cat"]])[0]]
    flat = [scorer.bos, *[t for w in context for t in w]]
    p0 = _dist(scorer, flat)
    # every word of at most 2 tokens: (b) or (b, n)
    words = [[b] for b in B] + [[b, n] for b in B for n in inner]
    corrected = np.exp([w[-1] for w in scorer.token_word_logprobs([context + [w] for w in words])])
    uncorrected = np.exp([w[-1] for w in plain.token_word_logprobs([context + [w] for w in words])])
    # brute-force marginal p(word, then a boundary | context) / p(boundary | context)
    tail, marginal = 0.0, []
    for w in words:
        p_word = p0[w[0]] * (_dist(scorer, flat + [w[0]])[w[1]] if len(w) == 2 else 1.0)
        after = _dist(scorer, flat + w)
        marginal.append(p_word * after[boundary].sum() / p0[boundary].sum())
        if len(w) == 2:
            tail += p_word * after[inner].sum()
    np.testing.assert_allclose(corrected, marginal, rtol=1e-4)
    total = corrected.sum()
    # all words (any length) would give P(B)/P(B ∪ eos) <= 1; the words longer than 2 tokens
    # carry exactly the brute-force tail mass
    assert total <= 1.0
    assert total + tail / p0[boundary].sum() == pytest.approx(p0[B].sum() / p0[boundary].sum(),
                                                              rel=1e-4)
    # the uncorrected values are prefix probabilities: they are not the marginals and count a
    # word's mass again inside every longer word
    assert not np.allclose(uncorrected, marginal, rtol=1e-2)
    assert uncorrected.sum() == pytest.approx(p0[B].sum() + sum(
        p0[b] * _dist(scorer, flat + [b])[inner].sum() for b in B), rel=1e-4)
    assert uncorrected.sum() > total


def test_first_word_uses_unmarked_denominator(tiny):
    scorer, _ = tiny
    B, inner, boundary = _sets(scorer)
    p0 = _dist(scorer, [scorer.bos])
    firsts = [[n] for n in inner if n not in scorer.tokenizer.all_special_ids]
    corrected = np.exp([w[0] for w in scorer.token_word_logprobs([[w] for w in firsts])])
    expected = [p0[n] * _dist(scorer, [scorer.bos, n])[boundary].sum() for [n] in firsts]
    np.testing.assert_allclose(corrected, np.array(expected) / p0[inner].sum(), rtol=1e-4)
    assert corrected.sum() <= 1.0


def test_telescoping_product_is_text_then_boundary(tiny):
    scorer, plain = tiny
    B, inner, boundary = _sets(scorer)
    for sentence in SENTENCES:
        tokens = [t for w in scorer._tokenize([sentence.split()])[0] for t in w]
        ids = [scorer.bos, *tokens]
        log_text = sum(math.log(_dist(scorer, ids[:i])[ids[i]]) for i in range(1, len(ids)))
        log_end = math.log(_dist(scorer, ids)[boundary].sum())
        log_first = math.log(_dist(scorer, [scorer.bos])[inner].sum())
        assert scorer.score([sentence])[0] == pytest.approx(log_text + log_end - log_first,
                                                            abs=1e-4)
        assert plain.score([sentence])[0] == pytest.approx(log_text, abs=1e-4)
        words = scorer.word_scores(sentence)
        assert [w for w, _ in words] == sentence.split()
        assert sum(v for _, v in words) == pytest.approx(scorer.score([sentence])[0], abs=1e-4)


def test_batched_scores_match_single_and_next_word_api(tiny):
    scorer, _ = tiny
    batched = scorer.score(SENTENCES)
    single = [scorer.score([s])[0] for s in SENTENCES]
    np.testing.assert_allclose(batched, single, atol=1e-4)
    candidates = ["sat", "dog", "the"]
    next_word = scorer.next_word_logprobs("the cat", candidates)
    expected = [scorer.word_scores(f"the cat {c}")[-1][1] for c in candidates]
    np.testing.assert_allclose(next_word, expected, atol=1e-5)
    assert scorer.word_scores("the cat.")[-1][0] == "cat."    # punctuation joins its word


def test_detached_punctuation_words_telescope(tiny):
    scorer, _ = tiny
    split = CausalScorer(scorer.model, scorer.tokenizer, name="tiny", detach_punct=True)
    P = split._punct
    assert P[split.tokenizer.convert_tokens_to_ids(".")] and not P[split.eos]
    boundary = np.append(np.flatnonzero(split._starts), split.eos)
    inner = np.array([i for i in range(len(P)) if not split._starts[i] and i != split.eos])
    for sentence in ["the cat sat on the mat.", "the dog. sat.on the mat", "a dog"]:
        words = split.word_scores(sentence)
        tokens = [t for w in split._tokenize([sentence.split()])[0] for t in w]
        ids = [split.bos, *tokens]
        log_text = sum(math.log(_dist(split, ids[:i])[ids[i]]) for i in range(1, len(ids)))
        log_end = 0.0 if P[ids[-1]] else math.log(_dist(split, ids)[boundary].sum())
        log_first = math.log(_dist(split, [split.bos])[inner].sum())
        assert sum(v for _, v in words) == pytest.approx(log_text + log_end - log_first, abs=1e-4)
        assert "".join(w for w, _ in words) == sentence.replace(" ", "")
    assert [w for w, _ in split.word_scores("the dog. sat.on")] == \
        ["the", "dog", ".", "sat", ".", "on"]


# ------------------------------------------------------------ option scoring (shared-prefix rows)
PROMPTS = ["the cat sat on", "a dog", "the red bird flew away and the cat", "cats"]
OPTIONS = [["the mat.", "a dog barked", "cats"], ["sat", "barked at the cat"],
           ["sat on the mat", "play"], ["and dogs play", "sat", "the", "a red bird"]]


def test_logits_to_keep_kind_is_read_from_the_forward_source(tiny):
    """GPT-2 slices through ``slice_logits_to_keep`` where transformers has it (a bool mask; 5.17
    indexed ``hidden_states[:, indices, :]``: positions); no argument: None."""
    import torch.nn as nn
    import transformers.modeling_utils

    base, _ = tiny
    sliced = hasattr(transformers.modeling_utils, "slice_logits_to_keep")
    assert logits_to_keep_kind(random_init.gpt2(base.tokenizer, hidden=16, positions=32)) \
        == ("mask" if sliced else "positions")

    class Old(nn.Module):
        def forward(self, input_ids, logits_to_keep=0):
            return input_ids[:, logits_to_keep]

    class Plain(nn.Module):
        def forward(self, input_ids):
            return input_ids

    assert logits_to_keep_kind(Old()) == "positions"
    assert logits_to_keep_kind(Plain()) is None


def _one_at_a_time(scorer, prompt: str, option: str) -> float:
    """Uncorrected ``log p(option | [BOS] prompt)`` from one unbatched forward pass."""
    tokenize = lambda text: scorer.tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa
    head, tail = [scorer.bos, *tokenize(prompt)], tokenize(" " + option)
    with torch.inference_mode():
        logits = scorer.model(torch.tensor([head + tail])).logits[0].double()
    logp = torch.log_softmax(logits, -1)
    return float(sum(logp[len(head) - 1 + j, t] for j, t in enumerate(tail)))


@pytest.mark.parametrize("attention", ["sdpa", "eager", "one row per option"])
@pytest.mark.parametrize("batch_tokens", [1, 24, 1024])
@pytest.mark.parametrize("keep", ["mask", "positions", None])
def test_option_scores_equal_one_at_a_time_scoring(tiny, attention, batch_tokens, keep):
    """Every batching (one row per batch, mixed lengths, everything in one batch), every
    attention mask and every way of keeping logits (a bool mask, the batch's union of positions
    — transformers before ``slice_logits_to_keep`` —, all) gives the log-probabilities of
    scoring each (prompt, option) on its own."""
    base, _ = tiny
    model = random_init.gpt2(base.tokenizer, hidden=16, positions=32, seed=3)
    if keep == "mask" and logits_to_keep_kind(model) != "mask":
        pytest.skip("this transformers' GPT-2 takes no bool mask as logits_to_keep")
    model.set_attn_implementation("sdpa" if attention == "one row per option" else attention)
    scorers = [CausalScorer(model, base.tokenizer, name="t", bow_correction=corrected,
                            batch_size=3, batch_tokens=batch_tokens) for corrected in (True, False)]
    for scorer in scorers:
        scorer._shared_prefix = attention != "one row per option"
        scorer._logits_to_keep = keep
    finished: list[int] = []
    corrected = scorers[0].continuation_logprobs(PROMPTS, OPTIONS, on_batch=finished.append)
    plain = scorers[1].continuation_logprobs(PROMPTS, OPTIONS)
    assert sum(finished) == len(PROMPTS)
    for prompt, options, (values, counts), (raw, _) in zip(PROMPTS, OPTIONS, corrected, plain):
        np.testing.assert_allclose(raw, [_one_at_a_time(scorers[1], prompt, o) for o in options],
                                   atol=1e-5)
        words = [scorers[0].word_logprobs([f"{prompt} {o}"])[0][-len(o.split()):].sum()
                 for o in options]
        np.testing.assert_allclose(values, words, atol=1e-5)
        assert list(counts) == [len(base.tokenizer(" " + o)["input_ids"]) for o in options]
