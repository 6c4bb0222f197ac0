"""Feature detectors of the ICQ audit (docs/methods.md §5) and their per-text annotations.

A feature (``NEGATION``, ``TENSE`` …) maps each text to a set of *values* (``present``;
``past``/``present``/``future``; entity labels …). Two kinds exist:

* :class:`TextFeature` works on the raw string (no spaCy; never cached, it is cheap);
* :class:`DocFeature` works on a spaCy ``Doc`` parsed with :attr:`DocFeature.components` only; its
  annotations are cached on disk (:mod:`cuelens.audit.parse_cache`) under
  :meth:`DocFeature.namespace`.

A feature that needs the premise (OVERLAP) sets ``uses_premise`` and overrides
:meth:`Feature.combine`, which turns the annotations of hypothesis and premise into the
instance's values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from cuelens.audit.counts import row_starts

#: Pipeline order of the English pipeline's components (loading order, cache keys).
PIPE_ORDER = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "ner")
PRESENT = ("present",)  #: the values of a text that has a yes/no feature


@dataclass
class Annotations:
    """Values of ``n`` texts: a binary ``n × len(vocab)`` CSR matrix and the value names."""

    matrix: sp.csr_matrix
    vocab: list[str]

    def __len__(self) -> int:
        return self.matrix.shape[0]

    @classmethod
    def from_lists(cls, values: list[tuple[str, ...]] | list[list[str]]) -> "Annotations":
        """Build from one sequence of value strings per text (repeats are merged)."""
        index: dict[str, int] = {}
        setdefault = index.setdefault
        rows = [sorted({setdefault(v, len(index)) for v in vals}) for vals in values]
        indptr = row_starts([len(r) for r in rows])
        indices = np.fromiter((i for r in rows for i in r), dtype=np.int32, count=int(indptr[-1]))
        data = np.ones(len(indices), dtype=bool)
        matrix = sp.csr_matrix((data, indices, indptr), shape=(len(rows), len(index)))
        return cls(matrix, list(index))

    @classmethod
    def empty(cls, n: int) -> "Annotations":
        return cls(sp.csr_matrix((n, 0), dtype=bool), [])

    def reindex(self, vocab: list[str]) -> "Annotations":
        """The same annotations expressed over ``vocab`` (a superset of :attr:`vocab`)."""
        if vocab == self.vocab:
            return self
        position = {v: i for i, v in enumerate(vocab)}
        remap = np.asarray([position[v] for v in self.vocab], dtype=np.int32)
        coo = self.matrix.tocoo()
        matrix = sp.csr_matrix((coo.data, (coo.row, remap[coo.col])),
                               shape=(len(self), len(vocab)), dtype=bool)
        return Annotations(matrix, list(vocab))

    @staticmethod
    def stack(parts: list["Annotations"]) -> "Annotations":
        """Row-wise concatenation over the union of the parts' vocabularies."""
        vocab = list(dict.fromkeys(v for part in parts for v in part.vocab))
        if not parts:
            return Annotations.empty(0)
        blocks = [part.reindex(vocab).matrix for part in parts]
        return Annotations(sp.vstack(blocks, format="csr").astype(bool), vocab)

    def take(self, rows: np.ndarray) -> "Annotations":
        return Annotations(self.matrix[rows], self.vocab)


class Feature:
    """Base class of a feature detector; each subclass has one entry in :mod:`.registry`."""

    name: str = ""  #: CLI name, e.g. ``negation``
    label: str = ""  #: name in results, e.g. ``NEGATION``
    components: tuple[str, ...] = ()  #: spaCy components the detector reads
    version: int = 1  #: bump when the detector's output changes (invalidates the cache)
    uses_premise: bool = False
    english_only: bool = True  #: reads the English spaCy pipeline or an English lexicon

    def for_language(self, language: str) -> Feature | None:
        """The detector for text in ``language`` (``en``, ``zh``, ``ja``, … docs/languages.md);
        None: this feature cannot run on it."""
        return self if language == "en" or not self.english_only else None

    def values(self, source) -> tuple[str, ...]:
        """The values of one text (a string, or a spaCy ``Doc`` for a :class:`DocFeature`)."""
        raise NotImplementedError

    def prepare(self, nlp) -> None:
        """Load what :meth:`values` needs (e.g. a dictionary, a component of ``nlp``, the
        pipeline the texts are parsed with) before parsing starts, so that forked parse workers
        inherit it instead of each loading it again."""

    def combine(self, hypothesis: Annotations, premise: Annotations | None) -> Annotations:
        """Instance values from the annotations of hypotheses (and aligned premises)."""
        return hypothesis


class TextFeature(Feature):
    """A detector on raw strings."""

    def annotate(self, texts: list[str]) -> Annotations:
        return Annotations.from_lists([self.values(text) for text in texts])


class DocFeature(Feature):
    """A detector on spaCy docs parsed with :attr:`components` enabled."""

    def namespace(self, pipeline: str) -> str:
        """Cache namespace: pipeline name/version, detector name/version, components."""
        return f"{pipeline}/{self.name}-v{self.version}-{'+'.join(self.components)}"
