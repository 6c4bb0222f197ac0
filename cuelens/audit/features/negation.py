"""NEGATION (docs/methods.md §5): a negating word among the text's words, no parse. English: a
word of :data:`NEGATION_WORDS` or :data:`NEGATION_CONTRACTIONS` among the words of the
``unicode`` segmenter, whatever segmenter the scan uses; Chinese and Japanese: a word of
:data:`NEGATION_LEXICONS`, or two adjacent words that together are one, among the words of the
scan's segmenter. The rules, and their agreement with the earlier detector on spaCy's parse:
docs/icq-features.md ("Detectors"), docs/languages.md.
"""

from __future__ import annotations

from cuelens.audit.features.base import PRESENT, Feature, TextFeature
from cuelens.audit.segmenters import get_segmenter
from cuelens.audit.tokenize import word_tokens

NEGATION_WORDS = frozenset({
    "no", "not", "n't", "nt", "never", "nothing", "nobody", "none", "neither", "nor", "without",
    "nowhere", "noone", "cannot",
})
#: Contractions written without an apostrophe that spaCy's tokenizer exceptions cut into a word
#: and "nt" (or "not" + "ve"): "dont" → "do", "nt"; the ``unicode`` segmenter keeps them whole.
NEGATION_CONTRACTIONS = frozenset("""
    aint arent cant cantve couldnt couldntve darent didnt didntve doesnt doesntve dont dontve
    hadnt hadntve hasnt havent isnt maynt mayntve mightnt mightntve mustnt mustntve neednt
    needntve notve oughtnt oughtntve shant shantve shouldnt shouldntve wasnt werent wont wontve
    wouldnt wouldntve""".split())


class Negation(TextFeature):
    name = "negation"
    label = "NEGATION"
    lexicon = NEGATION_WORDS | NEGATION_CONTRACTIONS

    def values(self, text: str) -> tuple[str, ...]:
        words = get_segmenter("unicode").words(text)
        return PRESENT if any(word in self.lexicon for word in words) else ()

    def for_language(self, language: str) -> Feature | None:
        if language in NEGATION_LEXICONS:
            return LexiconNegation(NEGATION_LEXICONS[language])
        return super().for_language(language)


#: Negation words by language: negating adverbs, verbs and their common compounds (Chinese;
#: 非常 "very" is left out), negative auxiliaries and their inflected stems (Japanese, UniDic
#: morphemes).
NEGATION_LEXICONS = {
    "zh": frozenset("不 没 没有 无 未 非 别 莫 勿 毋 否 甭 不是 不会 不能 不要 不用 不可 不可能 "
                    "不得 没人 无法 无人 从未 从不 绝不 决不 毫无 并非 并不 并没有 未曾 尚未".split()),
    "ja": frozenset("ない ず ぬ なく なかっ なかった ません 無い 無し 無く 不 非 未 無 "
                    "決して いいえ".split()),
}


class LexiconNegation(TextFeature):
    """NEGATION from a word list (:data:`NEGATION_LEXICONS`) on the scan's words."""

    name = "negation"
    label = "NEGATION"
    english_only = False

    def __init__(self, lexicon: frozenset[str]) -> None:
        self.lexicon = lexicon

    def values(self, text: str) -> tuple[str, ...]:
        words = word_tokens(text)
        pairs = (a + b for a, b in zip(words, words[1:]))
        return PRESENT if any(w in self.lexicon for w in words) or \
            any(p in self.lexicon for p in pairs) else ()
