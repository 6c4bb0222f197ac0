"""NEGATION (docs/methods.md §5): the dependency label ``neg`` or a word of :data:`NEGATION_WORDS`
(the negative determiners, pronouns and prepositions the parser does not label), matched on the
lower-cased token with typographic apostrophes read as ASCII ones.

Chinese and Japanese text (no English parse): a word of :data:`NEGATION_LEXICONS`, or two
adjacent words that together are one (fugashi cuts ません into ませ + ん), among the words of the
scan's segmenter (docs/languages.md)."""

from __future__ import annotations

from cuelens.audit.features.base import PRESENT, DocFeature, Feature, TextFeature
from cuelens.audit.tokenize import word_tokens

NEGATION_WORDS = frozenset({
    "no", "not", "n't", "nt", "never", "nothing", "nobody", "none", "neither", "nor", "without",
    "nowhere", "noone", "cannot",
})


class Negation(DocFeature):
    name = "negation"
    label = "NEGATION"
    components = ("tok2vec", "parser")

    def values(self, doc) -> tuple[str, ...]:
        for token in doc:
            if token.dep_ == "neg" or token.lower_.replace("\u2019", "'") in NEGATION_WORDS:
                return PRESENT
        return ()

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
