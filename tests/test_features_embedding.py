"""The memoised token embedding (cuelens/audit/features/embedding_memo.py) gives spaCy's tags and
parses on real text (COPA choices, SNLI hypotheses) while embedding each distinct token once."""

from __future__ import annotations

import numpy as np
from spacy.attrs import DEP, HEAD, TAG

from cuelens.audit.features.embedding_memo import EmbeddingMemo, memoise_embedding
from cuelens.models.spacy_pipeline import load_spacy

COMPONENTS = ("tok2vec", "tagger", "parser")


def memo_of(nlp) -> EmbeddingMemo:
    node = next(n for n in nlp.get_pipe("tok2vec").model.walk()
                if n.name == "memoised_embedding")
    return node.attrs["memo"]


def test_memoised_embedding_gives_spacys_tags_and_parses(parse_texts):
    texts = parse_texts
    plain = load_spacy.__wrapped__(COMPONENTS)
    memoised = load_spacy.__wrapped__(COMPONENTS + ("attribute_ruler", "lemmatizer"))
    assert memoise_embedding(memoised) and memoise_embedding(memoised)  # installed once
    expected = list(plain.pipe(texts, batch_size=64))
    got = list(memoised.pipe(texts, batch_size=64))
    for a, b in zip(expected, got):
        assert (a.to_array([TAG, HEAD, DEP]) == b.to_array([TAG, HEAD, DEP])).all(), a.text
        np.testing.assert_allclose(a.tensor, b.tensor, atol=1e-4)
    memo = memo_of(memoised)
    tokens = sum(len(doc) for doc in got)
    assert 0 < len(memo.table) == len(memo.index) < tokens / 3
    before = len(memo.table)
    list(memoised.pipe(texts[:50]))
    assert len(memo.table) == before  # seen tokens are looked up, not embedded again


def test_pipelines_without_a_tok2vec_are_left_alone():
    import spacy

    assert not memoise_embedding(spacy.blank("en"))


def test_ners_own_embedding_is_memoised(parse_texts):
    plain, memoised = load_spacy.__wrapped__(("ner",)), load_spacy.__wrapped__(("ner",))
    assert memoise_embedding(memoised)
    assert any(n.name == "memoised_embedding" for n in memoised.get_pipe("ner").model.walk())
    for a, b in zip(plain.pipe(parse_texts), memoised.pipe(parse_texts)):
        assert [(e.start, e.end, e.label_) for e in a.ents] == \
            [(e.start, e.end, e.label_) for e in b.ents], a.text
