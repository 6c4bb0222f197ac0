"""ICQ feature detectors (docs/methods.md §5) on hand-written sentences."""

from __future__ import annotations

import pytest

from cuelens.audit.features import FEATURES, Annotations, get_features
from cuelens.audit.features.annotate import annotate
from cuelens.audit.features.typo import is_typo
from cuelens.audit.parse_cache import ParseCache
from cuelens.errors import UserError


def values(name: str, texts: list[str], premises: list[str] | None = None) -> list[set[str]]:
    """Per-text value sets of feature ``name`` (no disk cache)."""
    ann = annotate([FEATURES[name]], texts, premises)[name]
    return [{ann.vocab[j] for j in ann.matrix[i].indices} for i in range(len(texts))]


def test_registry_order_and_unknown_names():
    assert list(FEATURES) == ["word", "negation", "tense", "sentiment", "overlap", "ner", "typo"]
    assert [f.name for f in get_features(["typo", " Word "])] == ["word", "typo"]
    with pytest.raises(UserError, match="unknown feature.*negaton"):
        get_features(["negaton"])
    with pytest.raises(UserError, match="no features selected"):
        get_features([""])


def test_word_is_distinct_lowercased_tokens():
    assert values("word", ["The dog, the DOG!", "Isn't it?"]) == \
        [{"the", "dog"}, {"is", "n't", "it"}]


@pytest.mark.parametrize("text, expected", [
    ("A man is not sleeping.", True),
    ("He didn't go home.", True),              # n't
    ("He didn’t go home.", True),              # typographic apostrophe
    ("men dont like their lunch", True),       # spaCy cuts "dont" into do + nt
    ("She wont have to walk.", True),          # … and "wont" into wo + nt
    ("I cannot say.", True),
    ("Nobody is outside.", True),              # lexicon: pronoun
    ("The dog runs without a leash.", True),   # lexicon: preposition
    ("There is no cat.", True),                # lexicon: determiner
    ("A man is sleeping.", False),
    ("Nothingness is a noun.", False),         # whole words only
    ("A nut is not a knot; notes, nuts.", True),
    ("Notes and knots and a nut.", False),
])
def test_negation(text, expected):
    assert values("negation", [text]) == [{"present"} if expected else set()]


@pytest.mark.parametrize("text, expected", [
    ("The man slept on the couch.", "past"),
    ("The cat was chased by a dog.", "past"),
    ("A man has eaten the cake.", "past"),          # perfect (root VBN, active)
    ("He has been sleeping all day.", "past"),
    ("A woman is riding a bike.", "present"),
    ("The cat is chased by a dog.", "present"),      # passive VBN with present auxiliary
    ("The kids will play outside.", "future"),
    ("They'll leave soon.", "future"),
    ("She is going to eat lunch.", "future"),
    ("A man in a hat.", None),                       # no verbal root
])
def test_tense(text, expected):
    assert values("tense", [text]) == [{expected} if expected else set()]


def test_sentiment_sign_of_summed_vader_valence():
    # VADER: happy +2.7, love(s) +3.2/+2.7, sad -2.1, good +1.9, bad -2.5
    assert values("sentiment", ["The happy child loves the garden.", "A sad man is crying.",
                                "A man walks to the store.", "good but bad",
                                "good good bad"]) == \
        [{"positive"}, {"negative"}, set(), {"negative"}, {"positive"}]


def test_overlap_uses_non_stopword_lemmas_of_the_premise():
    premises = ["Two dogs are running in the park.", "Two dogs are running in the park.",
                "The man is there.", "The man is there."]
    hyps = ["A dog runs.", "A cat sleeps.", "The woman is there.", "Men are there."]
    # dog/dogs share a lemma; "there"/"is"/"the" are stop words; man/men share the lemma "man"
    assert values("overlap", hyps, premises) == [{"present"}, set(), set(), {"present"}]


def test_ner_labels():
    assert values("ner", ["Barack Obama visited Paris on Monday.", "A dog barks."]) == \
        [{"PERSON", "GPE", "DATE"}, set()]


@pytest.mark.parametrize("text, expected", [
    ("The dog is runing in the feild.", True),
    ("The dog is running in the field.", False),
    ("He can't go, he's gonna stay.", False),     # contraction pieces ca / gon / na
    ("Mr. Smithsonn met Jonh in Paris.", False),   # proper nouns
    ("There are 3 dogs and 10x cats.", False),     # numbers, tokens with digits
    ("The xqzvbn is here.", False),                # unknown, but no correction within 2 edits
])
def test_typo(text, expected):
    assert values("typo", [text]) == [{"present"} if expected else set()]


def test_is_typo_edit_distance():
    assert is_typo("recieve") and is_typo("abadnoned")   # 1 transposition / 1 swap
    assert not is_typo("receive") and not is_typo("qqqqqqqqzz")


def test_duplicates_are_parsed_once(monkeypatch):
    seen: list[str] = []
    feature = FEATURES["typo"]
    original = type(feature).values
    monkeypatch.setattr(type(feature), "values", lambda self, doc: seen.append(doc.text) or
                        original(self, doc))
    texts = ["A dgo here.", "A cat.", "A dgo here.", "A cat.", "A dgo here."]
    ann = annotate([feature], texts)["typo"]
    assert sorted(seen) == ["A cat.", "A dgo here."]
    assert ann.matrix.toarray().ravel().tolist() == [True, False, True, False, True]


def test_negation_words_are_those_of_spacys_tokens():
    """The English lexicon on the ``unicode`` segmenter's words marks the texts the lexicon
    marks on spaCy's tokens: every tokenizer exception of spaCy's English (the apostrophe-less
    contractions it cuts into a word and "nt") gives the same value both ways."""
    from spacy.lang.en import English
    from spacy.symbols import ORTH

    from cuelens.audit.features.negation import NEGATION_WORDS

    rules = English().tokenizer.rules
    spacy_negates = {text: any(piece.get(ORTH, piece.get("ORTH", "")).lower()
                               .replace("\u2019", "'") in NEGATION_WORDS for piece in pieces)
                     for text, pieces in rules.items()}
    ours = dict(zip(rules, (bool(v) for v in values("negation", list(rules)))))
    assert ours == spacy_negates
    assert sum(spacy_negates.values()) > 100  # n't forms, apostrophe-less ones, cannot …


def test_annotations_stack_and_reindex():
    a = Annotations.from_lists([("x",), ("y", "x"), ()])
    b = Annotations.from_lists([("z",)])
    both = Annotations.stack([a, b])
    assert both.vocab == ["x", "y", "z"]
    assert both.matrix.toarray().astype(int).tolist() == [[1, 0, 0], [1, 1, 0], [0, 0, 0],
                                                          [0, 0, 1]]


def test_worker_processes_give_the_same_annotations():
    texts = ["He didn't go home.", "A man in a hat.", "Barack Obama visited Paris.",
             "The dog is runing.", "She will sing."] * 3 + ["Nobody is outside."]
    features = [FEATURES[n] for n in ("negation", "tense", "ner", "typo")]
    ParseCache.clear_memory()
    one = annotate(features, texts, n_process=1)
    ParseCache.clear_memory()
    two = annotate(features, texts, n_process=2)
    for name in one:
        assert one[name].vocab == two[name].vocab
        assert (one[name].matrix != two[name].matrix).nnz == 0


def test_spacy_loads_only_the_asked_components_and_leaves_torch_alone():
    import subprocess
    import sys

    code = ("import sys; from cuelens.models.spacy_pipeline import load_spacy; "
            "nlp = load_spacy(('tok2vec', 'tagger')); "
            "print(nlp.component_names, 'torch' in sys.modules); import torch; print('torch ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == ["['tok2vec', 'tagger'] False", "torch ok"]


def test_one_load_per_run_gives_the_values_of_the_full_pipeline(shared_data):
    """The parse loads the union of the components once and runs each group of texts with its
    own under ``select_pipes``; on real SNLI pairs every feature's values equal those of the
    whole pipeline, loaded as spaCy ships it."""
    import importlib
    import json

    from cuelens.models.spacy_pipeline import pipeline_package

    rows = [json.loads(line) for line in (shared_data / "snli" / "dev.jsonl").open()][:240]
    texts, premises = [r["hypothesis"] for r in rows], [r["premise"] for r in rows]
    features = [f for f in FEATURES.values() if f.components]
    ParseCache.clear_memory()
    fast = annotate(features, texts, premises, n_process=1)
    full = importlib.import_module(pipeline_package()).load()
    docs = {t: full(t) for t in dict.fromkeys(texts + premises)}
    for feature in features:
        hyp = Annotations.from_lists([feature.values(docs[t]) for t in texts])
        prem = Annotations.from_lists([feature.values(docs[p]) for p in premises])
        expected = feature.combine(hyp, prem if feature.uses_premise else None)
        got = fast[feature.name].reindex(list(dict.fromkeys(fast[feature.name].vocab +
                                                            expected.vocab)))
        assert (got.matrix != expected.reindex(got.vocab).matrix).nnz == 0, feature.name
        assert got.matrix.nnz > 0, feature.name  # each feature fires on some of these pairs
    # NEGATION's words give the values of the parse-based detector it replaced
    from cuelens.audit.features.negation import NEGATION_WORDS

    parsed = [{"present"} if any(t.dep_ == "neg" or t.lower_.replace("\u2019", "'") in
                                 NEGATION_WORDS for t in docs[text]) else set() for text in texts]
    assert values("negation", texts) == parsed and {"present"} in parsed


@pytest.mark.parametrize("cpus, load, texts, expected", [
    (2, 1.0, 10_000, 2),    # a quiet 2-core machine running this scan: both cores
    (2, 10.0, 10_000, 1),   # a busy one: workers would only add CPU time
    (8, 6.5, 10_000, 2),    # 8 - 5.5 idle cores
    (8, 0.2, 10_000, 4),    # at most 4
    (8, 0.2, 3_999, 1),     # too few texts to start workers
])
def test_worker_processes_only_on_idle_cpus(monkeypatch, cpus, load, texts, expected):
    import os

    from cuelens.audit.features.annotate import default_n_process

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)), raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    assert default_n_process(texts) == expected
