"""The lookup attribute ruler and OVERLAP's own lemmatising give the attributes and lemmas of
spaCy's ``attribute_ruler`` and ``lemmatizer`` components (docs/icq-features.md, "Speed"), on
real text (COPA, SNLI) and on sentences that hit the ruler's multi-token and DEP patterns."""

from __future__ import annotations

import itertools

import pytest

from cuelens.audit.features.base import PIPE_ORDER
from cuelens.audit.features.overlap import Overlap
from cuelens.audit.features.ruler import LookupRuler
from cuelens.data.readers import jsonl_objects
from cuelens.models.spacy_pipeline import load_spacy

#: The ruler's patterns over several tokens, on DEP and on whitespace.
PATTERN_SENTENCES = [
    "I'm gonna go and you ain't gotta stay, y'all.", "Let's eat, c'mon!",
    "There is a cat and there were dogs.", "It did it, but I saw it and you saw me.",
    "A man  is\tsleeping.", "He has had enough; they do what they did.",
    "That is what I want, which is odd.",
]


@pytest.fixture
def texts(shared_data) -> list[str]:
    """COPA dev premises and choices, the first SNLI dev premises and hypotheses."""
    texts = []
    for _, record in itertools.islice(jsonl_objects(shared_data / "copa" / "dev.jsonl"), 200):
        texts += [record["premise"], *record["choices"]]
    for _, record in itertools.islice(jsonl_objects(shared_data / "snli" / "dev.jsonl"), 150):
        texts += [record["premise"], record["hypothesis"]]
    return list(dict.fromkeys(texts + PATTERN_SENTENCES))


def token_attributes(doc) -> list[tuple[str, ...]]:
    """What the attribute ruler sets (its lemmas are checked through OVERLAP's)."""
    return [(t.tag_, t.dep_, t.pos_, str(t.morph)) for t in doc]


def reference_overlap(doc) -> tuple[str, ...]:
    """OVERLAP's values read from spaCy's lemmatizer component."""
    return tuple(t.lemma_.lower() for t in doc if t.is_alpha and not t.is_stop)


@pytest.mark.parametrize("run", [("tok2vec", "tagger", "parser"), ("tok2vec", "tagger")],
                         ids=["parsed", "tagged"])
def test_the_ruler_and_overlap_lemmas_match_spacys_components(texts, run):
    nlp = load_spacy(PIPE_ORDER)
    with nlp.select_pipes(enable=[*run, "attribute_ruler", "lemmatizer"]):
        docs = list(nlp.pipe(texts))
    expected = [token_attributes(doc) for doc in docs]
    expected_overlap = [reference_overlap(doc) for doc in docs]
    ruler, overlap = LookupRuler.of(nlp), Overlap()
    overlap.prepare(nlp)
    assert 0 < len(ruler.matcher) < len(nlp.get_pipe("attribute_ruler").patterns) / 3
    with nlp.select_pipes(enable=list(run)):
        docs = list(nlp.pipe(texts))
    assert [token_attributes(doc) for doc in docs] != expected  # the ruler sets something
    assert [token_attributes(ruler(doc)) for doc in docs] == expected
    assert [overlap.values(doc) for doc in docs] == expected_overlap
    gonna = texts.index(PATTERN_SENTENCES[0])
    assert [t.lemma_ for t in docs[gonna][2:4]] == ["go", "to"]  # two-token patterns
    assert expected_overlap[texts.index(PATTERN_SENTENCES[4])] == ("man", "sleep")
