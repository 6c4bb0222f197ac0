"""The context layers run once per distinct window (cuelens/audit/features/window_dedup.py): the
window ids against brute force, and spaCy's tags and parses on real text (COPA choices, SNLI
hypotheses) with the layers deduplicated."""

from __future__ import annotations

import numpy as np
from spacy.attrs import DEP, HEAD, TAG

from cuelens.audit.features import window_dedup
from cuelens.audit.features.window_dedup import _row_ids, _window_keys, dedupe_windows, encode
from cuelens.models.spacy_pipeline import load_spacy

COMPONENTS = ("tok2vec", "tagger", "parser")


def _windows(ids: np.ndarray, width: int) -> list[tuple]:
    """Brute force: each row's window of ids, ``None`` beyond the ends."""
    n = len(ids)
    return [tuple(int(ids[j]) if 0 <= j < n else None for j in range(i - width, i + width + 1))
            for i in range(n)]


def test_window_keys_are_equal_exactly_for_equal_windows():
    rng = np.random.default_rng(3)
    for width in (1, 2, 3):
        ids = rng.integers(0, 3, size=60)
        keys, windows = _window_keys(ids, width), _windows(ids, width)
        for i in range(len(ids)):
            for j in range(len(ids)):
                assert (keys[i] == keys[j]) == (windows[i] == windows[j])


def test_row_ids_are_equal_exactly_for_rows_equal_bit_for_bit(monkeypatch):
    rows = np.array([[0.0, 1.0], [0.0, 1.0], [-0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], dtype="f")
    for hash_ in (window_dedup._HASH, np.zeros_like(window_dedup._HASH)):  # then all collide
        monkeypatch.setattr(window_dedup, "_HASH", hash_)
        ids = _row_ids(rows)
        for i in range(len(rows)):  # -0.0 differs from 0.0 in its bits
            for j in range(len(rows)):
                assert (ids[i] == ids[j]) == (rows[i].tobytes() == rows[j].tobytes())


def _encoder(nlp):
    return next(n for n in nlp.get_pipe("tok2vec").model.walk() if n.name == "deduped_windows")


def test_deduplicated_layers_give_spacys_tags_and_parses(parse_texts):
    texts = parse_texts + parse_texts[:40] + [""]  # repeated texts and an empty one
    plain = load_spacy.__wrapped__(COMPONENTS)
    deduped = load_spacy.__wrapped__(COMPONENTS + ("attribute_ruler", "lemmatizer"))
    assert dedupe_windows(deduped) and dedupe_windows(deduped)  # installed once (no model: skipped)
    assert not any(n.name == "deduped_windows" for n in plain.get_pipe("tok2vec").model.walk())
    expected = list(plain.pipe(texts, batch_size=64))
    got = list(deduped.pipe(texts, batch_size=64))
    for a, b in zip(expected, got):
        assert (a.to_array([TAG, HEAD, DEP]) == b.to_array([TAG, HEAD, DEP])).all(), a.text
        np.testing.assert_allclose(a.tensor, b.tensor, atol=1e-4)


def test_ners_own_layers_are_deduplicated(parse_texts):
    import spacy

    assert not dedupe_windows(spacy.blank("en"))
    plain, deduped = load_spacy.__wrapped__(("ner",)), load_spacy.__wrapped__(("ner",))
    assert dedupe_windows(deduped)
    assert any(n.name == "deduped_windows" for n in deduped.get_pipe("ner").model.walk())
    texts = parse_texts + parse_texts[:40]
    for a, b in zip(plain.pipe(texts), deduped.pipe(texts)):
        assert [(e.start, e.end, e.label_) for e in a.ents] == \
            [(e.start, e.end, e.label_) for e in b.ents], a.text


def test_each_block_runs_once_per_distinct_window(parse_texts, monkeypatch):
    nlp = load_spacy.__wrapped__(COMPONENTS)
    dedupe_windows(nlp)
    encoder = _encoder(nlp).layers[0]
    one = nlp.get_pipe("tok2vec").model.layers[0].predict([nlp.make_doc(parse_texts[0])])[0]
    rows_run: list[int] = []
    for block in encoder.layers[0].layers:
        rest = block.layers[0].layers[1]
        monkeypatch.setattr(rest, "_func", lambda model, X, is_train, f=rest._func:
                            (rows_run.append(len(X)), f(model, X, is_train))[1])
    copies = encode(encoder, [one] * 50)
    assert len(rows_run) == 4
    # 50 copies, each between 4 zero rows: the last block runs once per token of the text, the
    # others on the rows within their reach of a token, at most a few more at the two ends
    assert rows_run[-1] == len(one)
    assert all(count < 2 * (len(one) + 4) for count in rows_run)
    monkeypatch.undo()
    alone = encoder.predict([one])[0]
    for copy in copies:
        np.testing.assert_allclose(copy, alone, atol=1e-5)
