"""Aggregators (docs/methods.md §3): gathering, average/max, positional features, ties, cross-fitting."""

import numpy as np
import pytest

from cuelens.audit.aggregators import (CueView, TokenView, average_scores, decisions,
                                       fit_linear, make_lr, make_sgd, max_scores,
                                       multinomial_probabilities, one_blas_thread,
                                       positional_features,
                                       quiet_single_thread,
                                       representation_length_counted, view_tokens)
from cuelens.audit.counts import encode
from cuelens.audit.evaluate import item_correct, mcq_correct, nli_predictions
from cuelens.audit.fitting import ScoringOptions
from cuelens.audit.leakage import MAJORITY
from scan_helpers import item_correctness, nli_dataset


def test_unseen_words_are_left_out_and_empty_instances_get_the_prior_word():
    seqs = encode(["a b c", "d e", "c a"])  # ids a0 b1 c2 d3 e4
    seen = np.array([True, False, True, False, False])
    view = view_tokens(seqs, np.array([2, 1, 0]), seen)
    prior = len(seen)
    assert view.indptr.tolist() == [0, 2, 3, 5]
    assert view.tokens.tolist() == [2, 0, prior, 0, 2]  # "c a" | prior | "a c"
    assert view.fallback.tolist() == [False, True, False]


@pytest.mark.parametrize("seed", range(4))
def test_view_tokens_match_a_loop_over_instances(seed):
    """Random instances (empty ones, all-unseen ones, runs of them at the start and end),
    rows in any order and repeated: each instance's seen ids in order, or the prior word."""
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(list("abcdefgh"), rng.integers(0, 5))) for _ in range(40)]
    texts[:3] = ["", "h", "g h"]
    seqs = encode(texts)
    seen = rng.random(len(seqs.vocab)) < 0.5
    seen[seqs.vocab.index("a")] = True
    for rows in (np.arange(40), rng.permutation(40)[:25], rng.integers(0, 40, 60),
                 np.array([0, 1, 2, 1]), np.zeros(0, np.int64)):
        view = view_tokens(seqs, rows, seen)
        expected = []
        for row in rows:
            mine = [t for t in seqs.indices[seqs.indptr[row]:seqs.indptr[row + 1]] if seen[t]]
            expected.append(mine or [len(seen)])
        assert [view.tokens[a:b].tolist() for a, b in zip(view.indptr, view.indptr[1:])] \
            == expected
        assert view.fallback.tolist() == [e == [len(seen)] for e in expected]
        assert view.tokens.dtype == np.int32 and view.indptr.dtype == np.int64


def test_average_and_max_match_brute_force():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 6, 50)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    values = rng.normal(size=(indptr[-1], 3))
    view = CueView(indptr, values)
    for i in range(50):
        block = values[indptr[i]:indptr[i + 1]]
        np.testing.assert_allclose(average_scores(view)[i], block.mean(axis=0))
        np.testing.assert_allclose(max_scores(view)[i], block.max(axis=0))


def test_max_ignores_implicit_zeros():
    view = CueView(np.array([0, 2]), np.array([[-1.0, -3.0], [-2.0, -0.5]]))
    assert max_scores(view).tolist() == [[-1.0, -0.5]]


def test_positional_features_are_per_label_blocks_padded_and_truncated():
    view = CueView(np.array([0, 3, 4]), np.array([[1, 10], [2, 20], [3, 30], [4, 40]], float))
    features = positional_features(view, d=2)
    assert features.tolist() == [[1, 2, 10, 20], [4, 0, 40, 0]]
    assert features.dtype == np.float32


def test_positional_features_match_a_loop_over_instances():
    rng = np.random.default_rng(1)
    lengths = rng.integers(0, 7, 40)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    values = rng.normal(size=(indptr[-1], 3))
    d = 4
    expected = np.zeros((40, 3 * d), dtype=np.float32)
    for i in range(40):
        block = values[indptr[i]:indptr[i + 1]][:d]
        for label in range(3):
            expected[i, label * d:label * d + len(block)] = block[:, label]
    np.testing.assert_array_equal(positional_features(CueView(indptr, values), d), expected)


def _random_tokens(seed: int, n: int, vocab: int = 20) -> tuple[TokenView, np.ndarray]:
    """Instances of 1–6 ids and a ``(vocab + 1) × 3`` score table."""
    rng = np.random.default_rng(seed)
    indptr = np.concatenate([[0], np.cumsum(rng.integers(1, 7, n))])
    tokens = rng.integers(0, vocab + 1, indptr[-1]).astype(np.int32)
    return TokenView(indptr, tokens, np.zeros(n, bool)), rng.normal(size=(vocab + 1, 3))


@pytest.mark.parametrize("d", [1, 3, 8])
def test_token_features_equal_the_features_of_the_gathered_scores(d):
    """Gathered straight from the score table: the same float32 features, bit for bit."""
    tokens, table = _random_tokens(4, 60)
    np.testing.assert_array_equal(tokens.positional_features(table, d),
                                  positional_features(tokens.scores(table), d))


def _random_view(seed: int, n: int) -> tuple[CueView, np.ndarray]:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 6, n)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    y = rng.integers(0, 3, n)
    values = rng.normal(size=(indptr[-1], 3)) + 0.5 * np.eye(3)[np.repeat(y, lengths)]
    return CueView(indptr, values), y


def test_shared_training_features_give_the_models_of_separate_fits():
    """fit_linear standardises once for all models of a metric: the same coefficients and
    decisions (bit for bit) as fitting and scoring each model on its own."""
    train, y = _random_view(2, 300)
    test, table = _random_tokens(3, 50)
    with quiet_single_thread():
        shared = {"sgd": make_sgd(3, 3, 0), "lr": make_lr(3, 3, 0)}
        fit_linear(list(shared.values()), train, y)
        alone = {"sgd": make_sgd(3, 3, 0), "lr": make_lr(3, 3, 0)}
        for model in alone.values():
            fit_linear([model], train, y)
    assert shared["sgd"].scaler is shared["lr"].scaler
    together = decisions(shared, test, table)
    for name, model in alone.items():
        np.testing.assert_array_equal(shared[name].estimator.coef_, model.estimator.coef_)
        np.testing.assert_array_equal(together[name], decisions({name: model}, test, table)[name])


@pytest.mark.parametrize("n_labels", [3, 4])
def test_multinomial_probabilities_are_predict_proba_bit_for_bit(n_labels):
    """The LR decisions skip scikit-learn's validation and take the softmax's row maximum
    column by column: the same bits as ``predict_proba`` (rows with tied scores included), and
    a model that saw every label returns them unpadded, as float64."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(n_labels)
    X = rng.normal(size=(400, 6)).astype(np.float32)
    y = rng.integers(0, n_labels, 400)
    model = LogisticRegression(max_iter=100).fit(X, y)
    features = rng.normal(size=(1000, 6)).astype(np.float32)
    features[::7] = 0.0  # all equal: the intercepts alone
    features[1::7] = features[2::7]
    np.testing.assert_array_equal(multinomial_probabilities(model, features),
                                  model.predict_proba(features))
    lr = make_lr(2, n_labels, 0)
    lr.estimator = model
    decision = lr.decision_standardised(features)
    assert decision.dtype == np.float64
    np.testing.assert_array_equal(decision, model.predict_proba(features))


def test_one_blas_thread_limits_every_pool_and_restores_it():
    """Inside one_blas_thread (nested too) every BLAS/OpenMP pool threadpoolctl finds runs one
    thread; on leaving, each pool has its thread count back."""
    from threadpoolctl import threadpool_info, threadpool_limits

    with threadpool_limits(limits=2):  # two threads to start from, on any machine
        before = {pool["filepath"]: pool["num_threads"] for pool in threadpool_info()}
        assert before and set(before.values()) == {2}
        with one_blas_thread():
            with one_blas_thread():
                assert {pool["num_threads"] for pool in threadpool_info()} == {1}
            assert {pool["num_threads"] for pool in threadpool_info()} == {1}
        assert {pool["filepath"]: pool["num_threads"] for pool in threadpool_info()} == before


def test_representation_length_is_95th_percentile():
    """From a histogram of lengths: numpy's 95th percentile of the lengths, rounded up, ≥ 1."""
    assert representation_length_counted(np.bincount(np.arange(1, 101))) == 96  # ceil(95.05)
    assert representation_length_counted(np.bincount(np.array([0, 0]))) == 1
    assert representation_length_counted(np.zeros(3, dtype=np.int64)) == 1
    rng = np.random.default_rng(0)
    for _ in range(200):
        lengths = rng.integers(0, 40, rng.integers(1, 300))
        assert representation_length_counted(np.bincount(lengths)) == \
            max(1, int(np.ceil(np.percentile(lengths, 95))))


def test_nli_ties_break_toward_the_majority_label_and_fallback_is_majority():
    decision = np.array([[0.5, 0.5, 0.0], [0.2, 0.4, 0.4], [0.9, 0.0, 0.0]])
    order = np.array([2, 1, 0])  # label 2 most frequent in training, then 1
    assert nli_predictions(decision, order).tolist() == [1, 2, 0]
    assert nli_predictions(decision, order, np.array([False, False, True])).tolist() == [1, 2, 2]


def test_nli_predictions_equal_argmax_over_the_label_order_with_ties_infinities_and_nan():
    rng = np.random.default_rng(3)
    for trial in range(300):
        n, n_labels = int(rng.integers(0, 40)), int(rng.integers(1, 5))
        decision = rng.integers(0, 3, (n, n_labels)).astype(float)  # many ties
        decision[rng.random((n, n_labels)) < 0.15] = -np.inf
        if trial % 3 == 0:
            decision[rng.random((n, n_labels)) < 0.1] = np.nan
        if trial % 5 == 0:
            decision[rng.random((n, n_labels)) < 0.1] = np.inf
        order = rng.permutation(n_labels)
        expected = order[np.argmax(decision[:, order], axis=1)]
        assert nli_predictions(decision, order).tolist() == expected.tolist()


def test_mcq_ties_count_one_over_number_tied():
    right = np.array([0.7, 0.7, 0.1,   # right choice ties with one other: 1/2
                      0.3, 0.3, 0.3,   # three-way tie: 1/3
                      0.9, 0.2, 0.1,   # right choice wins
                      0.1, 0.8, 0.8])  # right choice loses
    labels = np.array([0, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1])  # RIGHT = 0
    np.testing.assert_allclose(mcq_correct(right, labels, 3), [1 / 2, 1 / 3, 1, 0])
    decision = np.stack([right, 1 - right], axis=1)
    assert item_correct(decision, labels, "mcq", 3, np.array([0, 1])).mean() == \
        pytest.approx((1 / 2 + 1 / 3 + 1) / 4)


def reversed_cues(seed: int = 0, n_words: int = 300):
    """Each rare word occurs in 3 train hypotheses with random labels (60% A) — no real
    signal — and once in test with the label opposite to its train majority."""
    rng = np.random.default_rng(seed)
    train_h, train_l, test_h, test_l = [], [], [], []
    for j in range(n_words):
        labels = ["A" if u < 0.6 else "B" for u in rng.random(3)]
        train_h += [f"the w{j}"] * 3
        train_l += labels
        majority = max("AB", key=labels.count)
        test_h.append(f"the w{j}")
        test_l.append("B" if majority == "A" else "A")
    return nli_dataset((train_h, train_l), (test_h, test_l))


@pytest.mark.parametrize("aggregator", ["lr", "sgd"])
def test_in_sample_features_go_below_chance_on_reversed_cues_cross_fitted_do_not(aggregator):
    data = reversed_cues()
    model = ("cp", aggregator)

    def accuracy(in_sample: bool) -> tuple[float, float]:
        result = item_correctness(data, ScoringOptions(in_sample_features=in_sample), 5,
                                  [model], with_baselines=True)
        return result[model].mean(), result[MAJORITY].mean()

    in_sample, majority = accuracy(True)
    cross_fitted, _ = accuracy(False)
    # in-sample: each train item's CP includes its own label, so the model learns to follow
    # CP, which the test reverses: nearly every prediction is wrong.
    assert in_sample < majority - 0.2
    assert cross_fitted > majority - 0.05
