"""The greedy parse stepped from Python (cuelens/audit/features/stepped_parse.py) gives spaCy's
parses on real text (COPA choices, SNLI hypotheses), and the annotation reads it."""

from __future__ import annotations

import pytest
from spacy.attrs import DEP, ENT_IOB, ENT_TYPE, HEAD, SENT_START, TAG

from cuelens.audit.features import annotate as annotate_module
from cuelens.audit.features.stepped_parse import parse
from cuelens.models.spacy_pipeline import load_spacy

COMPONENTS = ("tok2vec", "tagger", "parser")
ATTRS = [TAG, HEAD, DEP, SENT_START]


@pytest.fixture
def texts(parse_texts) -> list[str]:
    return parse_texts + ["", " ", "Two sentences here. And here."]


def test_stepped_parse_gives_spacys_parses_in_order(texts):
    nlp = load_spacy(COMPONENTS)
    expected = list(nlp.pipe(texts, batch_size=64))
    with nlp.select_pipes(enable=["tok2vec", "tagger"]):
        tagged = list(nlp.pipe(texts, batch_size=64))
    assert not any(doc.has_annotation("DEP") for doc in tagged if len(doc))
    got = list(parse(nlp.get_pipe("parser"), iter(tagged), batch_size=64))
    assert [doc.text for doc in got] == texts  # in order, the docs given, parsed in place
    assert all(a is b for a, b in zip(got, tagged))
    for a, b in zip(expected, got):
        assert (a.to_array(ATTRS) == b.to_array(ATTRS)).all(), a.text
    assert all(doc.has_annotation("DEP") for doc in got if len(doc))


def test_stepped_entity_recogniser_gives_spacys_entities(texts):
    nlp = load_spacy(("ner",))
    expected = list(nlp.pipe(texts, batch_size=64))
    got = list(parse(nlp.get_pipe("ner"), [nlp.make_doc(text) for text in texts], batch_size=64))
    for a, b in zip(expected, got, strict=True):
        assert (a.to_array([ENT_IOB, ENT_TYPE]) == b.to_array([ENT_IOB, ENT_TYPE])).all(), a.text
    assert sum(len(doc.ents) for doc in got) > 20


def test_a_beam_parser_keeps_its_own_pipe():
    class BeamParser:
        cfg = {"beam_width": 4}
        calls: list[int] = []

        def pipe(self, docs, batch_size):
            self.calls.append(batch_size)
            return iter(docs)

    parser = BeamParser()
    assert list(parse(parser, ["a", "b"], batch_size=8)) == ["a", "b"]
    assert parser.calls == [8]


def test_annotation_runs_the_stepped_parse(texts, monkeypatch):
    """TENSE's values come from the stepped parse (and equal those of spaCy's whole pipe)."""
    nlp = load_spacy(COMPONENTS)
    steps = []
    real = annotate_module.parse

    def counting(parser, docs, batch_size):
        steps.append(batch_size)
        return real(parser, docs, batch_size)

    monkeypatch.setattr(annotate_module, "parse", counting)
    from cuelens.audit.features.registry import FEATURES

    tense = FEATURES["tense"]
    got = annotate_module.annotate([tense], texts, n_process=1)["tense"]
    assert steps and set(steps) == {annotate_module.BATCH_SIZE}
    expected = [tense.values(doc) for doc in nlp.pipe(texts)]
    assert [tuple(got.vocab[j] for j in got.matrix[i].indices) for i in range(len(texts))] == \
        expected
    assert {"present", "past"} <= set(got.vocab)
