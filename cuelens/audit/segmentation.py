"""The segmenter of a scan (docs/methods.md §1, docs/languages.md): chosen once per dataset from
a sample of its texts (``auto``), built (a registered name, or ``hf:PATH`` through
:mod:`cuelens.models`), and checked: text that still looks unsegmented gets a warning instead of a
clean "no leakage"."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from itertools import chain, islice
from statistics import median

from cuelens.audit.results import SegmentationSection
from cuelens.audit.segmenters import UNSPACED_RE, Choice, Segmenter, choose_segmenter, \
    get_segmenter, main_unspaced_script
from cuelens.data.dataset import Dataset, Split
from cuelens.errors import UserError, option_name
from cuelens.wording import plural

SAMPLE_TEXTS = 4000  # texts per split read to choose the segmenter and to check its words
#: the guard: most distinct unspaced-script words are in one text and this long (characters)
UNSEGMENTED_LENGTH = 4
UNSEGMENTED_ONCE = 0.5


def sample_texts(dataset: Dataset, limit: int = SAMPLE_TEXTS) -> list[str]:
    """The first ``limit`` hypotheses (or choices) and premises of each split, in order."""
    return [text for split in (dataset.train, dataset.test) if split is not None
            for text in parts_texts([split], limit)]


def parts_texts(parts: Sequence[Split], limit: int = SAMPLE_TEXTS) -> list[str]:
    """The first ``limit`` hypotheses (or choices) and premises of a split held as ``parts``
    (the whole split, or its first chunks, in order)."""
    return [*islice(chain.from_iterable(map(_instance_texts, parts)), limit),
            *islice(chain.from_iterable(part.premises for part in parts), limit)]


def split_language(split: Split) -> str:
    """The :func:`text_language` of a split, its segmenter chosen as ``auto`` would."""
    texts = parts_texts([split])
    choice = choose_segmenter(texts)
    return text_language(texts, choice.scripts, build_segmenter(choice.name))


def _instance_texts(split: Split):
    return iter(split.hypotheses) if split.hypotheses else chain.from_iterable(split.choices)


def unsegmented_warning(texts: list[str], segmenter: Segmenter) -> str | None:
    """One line when the words of ``texts`` in scripts without spaces look like whole phrases:
    more than half of their distinct words occur in one distinct text only and their median
    length is at least :data:`UNSEGMENTED_LENGTH` characters (docs/languages.md, "The guard").
    A text repeated word for word counts once: a sentence read as one "word" is then as rare as
    a phrase, however often the sentence recurs."""
    counts = Counter(word for text in dict.fromkeys(texts)
                     for word in dict.fromkeys(segmenter.words(text)) if UNSPACED_RE.search(word))
    if not counts:
        return None
    once = sum(count == 1 for count in counts.values()) / len(counts)
    length = median(len(word) for word in counts)
    if once <= UNSEGMENTED_ONCE or length < UNSEGMENTED_LENGTH:
        return None
    return (f"words look unsegmented: {once:.0%} of the {plural(len(counts), 'distinct word')} "
            f"in scripts without spaces occur in one distinct text only, median length "
            f"{length:g} characters; cues and leakage are not meaningful with segmenter "
            f"{segmenter.name!r} (docs/languages.md)")


#: Language code of each unspaced script (the language of a text mostly in it).
SCRIPT_LANGUAGES = {"han": "zh", "kana": "ja", "thai": "th", "lao": "lo", "khmer": "km",
                    "myanmar": "my"}
#: English function words (none of them common in another Latin-script language): text is
#: English when they are at least ENGLISH_SHARE of its words (SNLI 19%, CommonsenseQA 17%).
ENGLISH_WORDS = frozenset("the is are was were be been of and to with for it that this he she "
                          "they his her their not has have".split())
ENGLISH_SHARE = 0.05


def text_language(texts: list[str], shares: dict[str, float], segmenter: Segmenter) -> str:
    """``en`` for English, the code of the main unspaced script's language, else ``other``: which
    ICQ features can run (docs/languages.md, "Features")."""
    main = main_unspaced_script(shares)
    if main is not None:
        return SCRIPT_LANGUAGES[main]
    words = [word for text in texts for word in segmenter.words(text)]
    english = sum(word in ENGLISH_WORDS for word in words)
    return "en" if words and english >= ENGLISH_SHARE * len(words) else "other"


@dataclass(frozen=True)
class ScanSegmentation:
    """The segmenter a scan uses, its choice, the text's language (results.json
    ``segmentation``) and warnings."""

    choice: Choice
    segmenter: Segmenter
    language: str = "en"
    warnings: list[str] = field(default_factory=list)
    unsegmented: bool = False  # the guard fired: no conclusion but leakage (docs/methods.md §17)

    def section(self) -> SegmentationSection:
        """results.json ``segmentation``."""
        return SegmentationSection(**asdict(self.choice), language=self.language,
                                   unsegmented=True if self.unsegmented else None)


def build_segmenter(name: str) -> Segmenter:
    """The registered segmenter ``name``, or a Hugging Face tokenizer for ``hf:PATH``."""
    if name.startswith("hf:"):
        from cuelens.models.hf_segmenter import load_hf_segmenter

        return load_hf_segmenter(name)
    return get_segmenter(name)


STREAMED = "these chunks were cut into words with unicode"


def check_streamable(requested: str) -> None:
    """A scan streamed on Ray cuts words on its workers, each building the driver's registered
    segmenter by name (docs/languages.md): an ``hf:PATH`` tokenizer, loaded here and given to no
    worker, is one :class:`UserError` line, before any reading."""
    if requested.startswith("hf:"):
        raise UserError(f"{option_name('segmenter')} {requested} needs exact statistics (--stats "
                        "exact) or --engine local: statistics streamed on Ray cut words on the "
                        "workers, which are given no hf: tokenizer (docs/languages.md)")


def streamed_segmentation(texts: list[str], requested: str = "auto") -> ScanSegmentation:
    """The segmentation of chunks encoded with ``unicode`` (loaded outside
    :func:`~cuelens.audit.chunk_scan.scan_files`, which chooses the segmenter first),
    ``texts`` their sample: the exact scan's (:func:`scan_segmentation`) where that cuts with
    ``unicode``, else ``unicode`` with a warning that ``auto`` would have chosen another
    segmenter, and the guard's."""
    best = choose_segmenter(texts, requested)
    if best.name == "unicode":
        return chosen_segmentation(texts, best)
    segmenter = get_segmenter("unicode")
    warnings = [f"{best.reason}: the {best.name} segmenter would cut it into words, but "
                f"{STREAMED}; scan with --stats exact"]
    warning = unsegmented_warning(texts, segmenter)
    return ScanSegmentation(Choice(requested, "unicode", STREAMED, best.scripts), segmenter,
                            text_language(texts, best.scripts, segmenter),
                            warnings + ([warning] if warning else []), warning is not None)


def scan_segmentation(dataset: Dataset, requested: str = "auto") -> ScanSegmentation:
    """Choose (``auto``) and build the segmenter of ``dataset``; check its words on a sample."""
    texts = sample_texts(dataset)
    return chosen_segmentation(texts, choose_segmenter(texts, requested))


def chosen_segmentation(texts: list[str], choice: Choice) -> ScanSegmentation:
    """The segmenter of ``choice``, built, and its words checked on ``texts`` (a sample)."""
    segmenter = build_segmenter(choice.name)
    guard = unsegmented_warning(texts, segmenter)
    warnings = [w for w in (choice.warning, guard) if w]
    return ScanSegmentation(choice, segmenter, text_language(texts, choice.scripts, segmenter),
                            warnings, guard is not None)
