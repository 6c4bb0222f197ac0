"""The cues a probe tests, as masks over the test items: a scan's top word cues (MCQ: a token in
some but not all choices) and its ICQ feature cues except ``WORD=…`` (docs/methods.md §5–6;
``train_dist``: the distribution test's training distribution, §6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cuelens.audit.counts import build_term_matrix
from cuelens.audit.results import FeatureRow, ScanSections
from cuelens.audit.segmenters import Segmenter
from cuelens.audit.tokenize import segmenting
from cuelens.data.dataset import Dataset, Split, Task
from cuelens.probes.config import ProbeConfig
from cuelens.probes.sanity import select_word_cues

WITH_CUE, WITHOUT_CUE = "cue choice", "other choice"


@dataclass
class Cue:
    name: str
    kind: str  # "word" | "feature"
    test_mask: np.ndarray  # bool per test item
    test_bearing: np.ndarray | None = None  # MCQ word cues: bool [n, k], choices with the cue
    train_dist: dict[str, float] | None = None  # Q(R_f) for the distribution test


def token_presence(split: Split, label_names: list[str], tokens: list[str],
                   ngrams: int = 1) -> np.ndarray:
    """Bool ``[instances, tokens]``: does each instance text contain each token (docs/methods.md
    §1)?"""
    texts = split.instances(label_names).texts
    matrix, vocab = build_term_matrix(texts, ngrams)
    column = {token: i for i, token in enumerate(vocab)}
    present = np.zeros((len(texts), len(tokens)), dtype=bool)
    found = [j for j, token in enumerate(tokens) if token in column]
    if found:
        cols = [column[tokens[j]] for j in found]
        present[:, found] = matrix[:, cols].toarray() > 0
    return present


def _cue_masks(split: Split, dataset: Dataset, tokens: list[str], ngrams: int
               ) -> tuple[np.ndarray, np.ndarray | None]:
    """Bool ``[items, tokens]``: which items have each cue (NLI: the hypothesis has the token;
    MCQ: some but not all choices do), and for MCQ the choices bearing it (``[n, k, tokens]``)."""
    present = token_presence(split, dataset.label_names, tokens, ngrams)
    if dataset.task != Task.MCQ:
        return present, None
    bearing = present.reshape(len(split), split.n_choices or 1, len(tokens))
    return np.asarray(bearing.any(axis=1) & ~bearing.all(axis=1)), bearing


def _train_dists(dataset: Dataset, tokens: list[str], ngrams: int
                 ) -> list[dict[str, float] | None]:
    split = dataset.train if dataset.train is not None else dataset.test
    has, bearing = _cue_masks(split, dataset, tokens, ngrams)
    labels = split.item_labels(dataset.label_names)
    out: list[dict[str, float] | None] = []
    for j in range(len(tokens)):
        if bearing is not None:  # MCQ: how often the cue-bearing choice was the right one
            rate = float(bearing[has[:, j], labels[has[:, j]], j].mean()) \
                if has[:, j].any() else None
            out.append(None if rate is None else
                       {WITH_CUE: round(rate, 6), WITHOUT_CUE: round(1 - rate, 6)})
            continue
        counts = np.bincount(labels[has[:, j]], minlength=len(dataset.label_names))
        total = counts.sum()
        out.append(None if total == 0 else
                   {name: round(float(c / total), 6)
                    for name, c in zip(dataset.label_names, counts)})
    return out


def word_cues(dataset: Dataset, tokens: list[str], ngrams: int = 1) -> list[Cue]:
    """Masks and training distributions of the word cues ``tokens`` on ``dataset``."""
    has, bearing = _cue_masks(dataset.test, dataset, tokens, ngrams)
    dists = _train_dists(dataset, tokens, ngrams)
    return [Cue(token, "word", has[:, j], None if bearing is None else bearing[:, :, j], dists[j])
            for j, token in enumerate(tokens)]


def feature_cues(dataset: Dataset, features: list[FeatureRow]) -> list[Cue]:
    """Test masks of the ICQ feature cues listed in a results ``features`` section."""
    if not features:
        return []
    from cuelens.audit.icq import feature_masks
    from cuelens.audit.parse_cache import default_cache_dir

    wanted = [f"{f.feature.upper()}={f.value}" for f in features if f.feature.upper() != "WORD"]
    if not wanted:
        return []
    role = "all" if dataset.cross_validated else "test"
    masks = feature_masks(dataset, role, wanted, cache_dir=default_cache_dir())  # reuse scan parses
    return [Cue(name, "feature", np.asarray(masks[name], dtype=bool)) for name in wanted]


def _scan_segmenter(scan: ScanSections) -> Segmenter:
    """The segmenter that cut the scan's words (``unicode``: a scan written before segmenters)."""
    from cuelens.audit.segmentation import build_segmenter

    return build_segmenter(scan.segmentation.name if scan.segmentation else "unicode")


def probe_cues(dataset: Dataset, scan: ScanSections, config: ProbeConfig,
               warnings: list[str]) -> tuple[list[Cue], dict | None]:
    """The word cues chosen by :func:`~cuelens.probes.sanity.select_word_cues` (``config``'s
    ``rank_by``, ``top``, ``min_support``) plus the ICQ feature cues of the ``scan``, and the
    ``cue_selection`` record; what the user should know is appended to ``warnings``."""
    if scan.cues is None:
        warnings.extend(scan.notes or [])
        return [], None
    tokens, selection = select_word_cues(scan.cues, config.rank_by, config.top,
                                         config.min_support)
    if not tokens:
        warnings.append(f"no word cue passes the selection ({selection['rule']}): "
                        "no word cue is tested")
    with segmenting(_scan_segmenter(scan)):  # the scan's words: 不 is a word of Chinese text
        cues = word_cues(dataset, tokens, scan.config.ngrams)
    try:
        cues += feature_cues(dataset, scan.features or [])
    except ImportError:
        warnings.append("ICQ features unavailable; testing word cues only")
    return cues, selection
