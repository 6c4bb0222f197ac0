"""Near duplicates (cuelens.audit.near_duplicates.NearIndex): signatures against a plain-Python
reimplementation, the LSH banding against a brute-force optimum, planted pairs and brute-force
Jaccard on random texts (docs/methods.md §11)."""

from __future__ import annotations

import sys
from hashlib import blake2b
from itertools import combinations

import numpy as np

from cuelens.audit.near_duplicates import (FN_WEIGHT, NEAR_THRESHOLD, NUM_PERM, OTHER_SPACE, PRIME,
                                           NearIndex, ShingleSets, _band_matches, lsh_bands,
                                           permutations)

MASK = 2**64 - 1


def _shingles(text: str) -> set[str]:
    """An input's shingles by the definition (docs/methods.md §11): its word bigrams, or its
    one word."""
    words = text.split()
    return {f"{a} {b}" for a, b in zip(words, words[1:])} or set(words)


def _jaccard(a: set[str], b: set[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def mix(x: int) -> int:
    """The splitmix64 finaliser with Python integers."""
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def reference_signature(text: str, seed: int) -> list[int]:
    """MinHash of ``text`` with Python integers, from the definition in docs/methods.md §11."""
    key = lambda w: int.from_bytes(blake2b(w.encode(), digest_size=8).digest(), "little")  # noqa: E731
    words = [key(w) for w in text.split()]
    pairs = [(v * 0x9E3779B97F4A7C15 + w) & MASK for v, w in zip(words, words[1:])] or words
    shingles = {mix(x) % PRIME for x in pairs}
    rng = np.random.default_rng(seed)
    a = rng.integers(1, PRIME, NUM_PERM, dtype=np.uint64).tolist()
    b = rng.integers(0, PRIME, NUM_PERM, dtype=np.uint64).tolist()
    return [min(((ai * x + bi) % PRIME for x in shingles), default=PRIME) for ai, bi in zip(a, b)]


def reference_bands(signature: list[int]) -> list[int]:
    """The 12 band keys of a signature with Python integers: each band's 5 values folded in
    order, key ← mix(key · K + value) (docs/methods.md §11)."""
    keys = []
    for band in range(12):
        key = 0
        for value in signature[band * 5:(band + 1) * 5]:
            key = mix((key * 0x9E3779B97F4A7C15 + value) & MASK)
        keys.append(key)
    return keys


def random_texts(n: int, vocabulary: int, lengths: tuple[int, int], seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(f"w{j}" for j in rng.integers(0, vocabulary, rng.integers(*lengths)))
            for _ in range(n)]


def _signatures(texts: list[str], seed: int) -> np.ndarray:
    """Every MinHash signature of ``texts`` (the chunks joined)."""
    return np.concatenate(list(ShingleSets.of(texts).signature_chunks(*permutations(seed))))

def test_signatures_match_a_plain_python_minhash_and_depend_only_on_the_seed(monkeypatch):
    import cuelens.audit.near_duplicates as near_duplicates

    texts = random_texts(40, 50, (0, 30), seed=1) + [" a  b ", "x |  | y\tz\u3000w", "one", "", "a b", "b a"]
    monkeypatch.setattr(near_duplicates, "CHUNK_WORDS", 64)  # many chunks, items cross ends
    signatures = _signatures(texts, 7)
    assert signatures.dtype == np.uint32 and signatures.shape == (46, NUM_PERM)
    assert [list(row) for row in signatures] == [reference_signature(t, 7) for t in texts]
    assert (signatures[-3] == PRIME).all()  # no words
    assert (signatures[-2] != signatures[-1]).any()  # bigram order matters
    other = _signatures(texts, 8)
    assert (other != signatures).mean() > 0.9
    index, again = NearIndex([texts], seed=7), NearIndex([texts], seed=7)
    assert index.bands.shape == (1, 46, 12) and (again.bands == index.bands).all()
    assert index.bands[0].tolist() == [reference_bands(row) for row in signatures.tolist()]
    parted = NearIndex([texts, texts[::-1]], seed=7)
    assert parted.bands.shape == (2, 46, 12)
    assert (parted.bands[0] == index.bands[0]).all()
    assert (parted.bands[1] == index.bands[0][::-1]).all()


def test_words_of_a_shingle_set_are_those_of_str_split():
    import pyarrow as pa
    import pyarrow.compute as pc

    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    other = pc.match_substring_regex(pa.array(chars), OTHER_SPACE).to_pylist()
    assert {c for c, hit in zip(chars, other) if hit} == \
        {c for c in chars if c.isspace() and c != " "}


def test_bands_minimise_the_false_positive_plus_weighted_false_negative_integrals():
    s = np.linspace(0.0, 1.0, 100_001)
    below, above = s <= NEAR_THRESHOLD, s >= NEAR_THRESHOLD
    errors = {}
    for b in range(1, NUM_PERM + 1):
        for r in range(1, NUM_PERM // b + 1):
            found = 1 - (1 - s ** r) ** b
            errors[b, r] = (np.trapezoid(found[below], s[below])
                            + FN_WEIGHT * np.trapezoid(1 - found[above], s[above]))
    best = min(errors, key=errors.__getitem__)
    assert lsh_bands(NEAR_THRESHOLD, NUM_PERM, FN_WEIGHT) == best == (12, 5)
    assert lsh_bands(NEAR_THRESHOLD, NUM_PERM, 25) == (10, 6)  # the weight of one-text LSH
    assert lsh_bands(NEAR_THRESHOLD, NUM_PERM, 1) == (5, 11)  # equal weights


def test_planted_pairs_just_above_the_threshold_are_found_nine_times_in_ten():
    rng = np.random.default_rng(6)
    base, edited = [], []
    for length in rng.integers(52, 77, 300):
        words = [f"w{j}" for j in rng.integers(0, 1_000_000, length)]
        base.append(" ".join(words))
        for k in (length // 3, 2 * length // 3):  # 4 of length - 1 bigrams replaced
            words[k] = f"changed{k}"
        edited.append(" ".join(words))
    similar = [_jaccard(_shingles(a), _shingles(b)) for a, b in zip(base, edited)]
    assert 0.85 < min(similar) and max(similar) < 0.9  # (length - 5) / (length + 3)
    texts = base + edited
    pairs = NearIndex([texts], seed=0).near_pairs(np.arange(len(texts)))
    assert set(pairs) <= {(i, 300 + i) for i in range(300)}
    assert len(pairs) >= 0.9 * 300


def test_planted_near_duplicates_are_found_and_distant_pairs_never_reported():
    base = random_texts(150, 100_000, (80, 81), seed=2)
    rng = np.random.default_rng(3)
    edited = []
    for i, text in enumerate(base):
        words = text.split()
        if i < 50:  # the last word changed: 78 of 80 bigrams shared, Jaccard 0.975
            words[-1] = "changed"
        elif i < 100:  # a middle word changed: 77 of 81, Jaccard 0.951
            words[40] = "changed"
        else:  # the second half replaced: 39 of 119, Jaccard 0.328
            words[40:] = [f"x{j}" for j in rng.integers(0, 100_000, 40)]
        edited.append(" ".join(words))
    texts = base + edited
    assert {round(_jaccard(_shingles(base[i]), _shingles(edited[i])), 3)
            for i in (0, 50, 100)} == {0.975, 0.951, 0.328}
    index = NearIndex([texts], seed=0)
    pairs = index.near_pairs(np.arange(len(texts)))
    assert pairs == [(i, 150 + i) for i in range(100)]
    # edited texts against the base (copied at 150: the first position is the one reported)
    fit, evaluate = NearIndex([base + base[1:2]], seed=0), NearIndex([edited], seed=0)
    found = fit.first_near(evaluate, np.arange(1, 150, 2), np.r_[np.arange(150), 1])
    assert found == [(i, i) for i in range(1, 100, 2)]


def test_random_short_texts_agree_with_brute_force_jaccard():
    texts = random_texts(300, 3, (2, 7), seed=4) + ["w1 w2 w3 w4 w5"] * 3
    inputs = np.array([hash(t) for t in texts])  # copies of one text share an input key
    index = NearIndex([texts], seed=5)
    pairs = index.near_pairs(inputs)
    shingles = [_shingles(t) for t in texts]
    similar = {(k, m): _jaccard(shingles[k], shingles[m])
               for k, m in combinations(range(len(texts)), 2) if texts[k] != texts[m]}
    true = {p for p, j in similar.items() if j >= NEAR_THRESHOLD}
    sure = {p for p, j in similar.items() if j >= 0.95}
    assert pairs == sorted(pairs) and len(set(pairs)) == len(pairs)
    assert sure <= set(pairs) <= true
    assert len(sure) > 200 and any(j < 1 for p, j in similar.items() if p in set(pairs))
    copies = [k for k in range(len(texts)) if texts[k] == "w1 w2 w3 w4 w5"]
    assert all((k, m) not in pairs for k, m in combinations(copies, 2))
    # the first near text of each query is the lowest position among its candidates
    queries = NearIndex([texts[:50]], seed=5)
    for k, m in index.first_near(queries, np.arange(50), inputs):
        assert _jaccard(shingles[k], shingles[m]) >= NEAR_THRESHOLD
        assert not any(_jaccard(shingles[k], shingles[j]) == 1 for j in range(m))


def test_a_candidate_shares_a_band_in_every_part():
    rng = np.random.default_rng(8)
    bands = rng.integers(0, 8, size=(2, 60, 4)).astype(np.uint64)  # few values: many matches
    queries = rng.integers(0, 8, size=(2, 25, 4)).astype(np.uint64)
    every = lambda q, t: all((q[p] == t[p]).any() for p in range(2))  # noqa: E731
    brute = [[i, j] for i in range(25) for j in range(60)
             if every(queries[:, i], bands[:, j])]
    assert _band_matches(queries, bands).tolist() == brute
    upper = [[i, j] for i, j in combinations(range(60), 2) if every(bands[:, i], bands[:, j])]
    assert _band_matches(bands, bands, upper=True).tolist() == upper
    assert 0 < len(upper) < 60 * 59 // 2


def test_templated_inputs_sharing_only_a_premise_make_no_candidates():
    premises = random_texts(5, 100_000, (30, 31), seed=9)
    hypotheses = random_texts(40, 100_000, (12, 13), seed=10)
    near = hypotheses[0].split()
    near[-1] = "changed"  # 10 of 12 bigrams shared with hypothesis 0: Jaccard 0.833
    texts = [[p for p in premises for _ in hypotheses] + [premises[0]],
             [h for _ in premises for h in hypotheses] + [" ".join(near)]]
    index = NearIndex(texts, seed=0)
    first = np.arange(len(texts[0]))
    candidates = _band_matches(index.bands[:, first], index.bands[:, first], upper=True)
    assert len(candidates) <= 3  # 200 items x 39 same-premise siblings share every premise band
    assert index.near_pairs(first) in ([(0, 200)], [])  # found with probability P(0.83) = 0.98
    assert NearIndex(texts, seed=1).near_pairs(first) == [(0, 200)]
