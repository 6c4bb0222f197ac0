"""Synthetic NLI and multiple-choice datasets with planted cues of known strength (:data:`NLI_CUES`,
:data:`MCQ_CUES`; rates and word distribution: README, "What the demo wrote"), the demo data and
ground truth of the scan's tests; other languages: docs/languages.md."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from cuelens.errors import UserError
from cuelens.jsonio import write_jsonl

NLI_LABELS = ("contradiction", "entailment", "neutral")


@dataclass(frozen=True)
class PlantedCue:
    """``word`` appears in an instance of ``label`` with probability ``rate_with``, else
    ``rate_other``."""

    word: str
    label: str
    rate_with: float
    rate_other: float


NLI_CUES = (PlantedCue("nobody", "contradiction", 0.30, 0.02),
            PlantedCue("outdoors", "entailment", 0.25, 0.02),
            PlantedCue("possibly", "neutral", 0.25, 0.02))
MCQ_CUES = (PlantedCue("definitely", "right", 0.40, 0.05),)

CORE_WORDS = (
    "a the man woman child dog cat girl boy person people group team player worker student "
    "is are was were sits stands runs walks plays holds watches reads eats drinks carries "
    "looks rides throws jumps sings talks waits works smiles cooks paints builds opens "
    "in on at near under over beside behind with to from of for and while "
    "street park beach kitchen table car bike ball book hat shirt water street field room "
    "red blue green small large old young happy busy tall quiet bright wooden long "
    "two three some several many one his her their its this that"
).split()
_SYLLABLES = ("ba be bi bo bu da de di do du ka ke ki ko ku la le li lo lu ma me mi mo mu "
              "na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu").split()


def make_vocabulary(size: int) -> list[str]:
    """The hand-written core words, then deterministic pseudo-words up to ``size`` types."""
    reserved = {cue.word for cue in NLI_CUES + MCQ_CUES}
    words = list(dict.fromkeys(w for w in CORE_WORDS if w not in reserved))
    if size > len(words):
        n = len(_SYLLABLES)
        order = np.random.default_rng(12345).permutation(n ** 3)[: size - len(words)]
        words += [_SYLLABLES[k // (n * n)] + _SYLLABLES[(k // n) % n] + _SYLLABLES[k % n]
                  for k in order]
    return words[:size]


@dataclass(frozen=True)
class Language:
    """Generated text in another script (docs/languages.md): filler ``words`` (a short list of
    common words, drawn Zipfian), the planted ``cues`` (same rates as :data:`NLI_CUES`), the
    ``joiner`` between words ('' for scripts written without spaces) and the sentence ``end``."""

    words: tuple[str, ...]
    cues: tuple[PlantedCue, ...]
    joiner: str
    end: str

    def sentence(self, words: list[str]) -> str:
        return self.joiner.join(words) + self.end


def _language(words: str, cues: str, joiner: str, end: str) -> Language:
    contradiction, entailment, neutral = cues.split()
    return Language(tuple(words.split()), (PlantedCue(contradiction, "contradiction", 0.30, 0.02),
                                           PlantedCue(entailment, "entailment", 0.25, 0.02),
                                           PlantedCue(neutral, "neutral", 0.25, 0.02)),
                    joiner, end)


#: Language code → its generated text; the cues mean "not/never", "outdoors", "maybe".
LANGUAGES: dict[str, Language] = {
    "hi": _language("आदमी औरत बच्चा कुत्ता बिल्ली लड़की लड़का लोग खाना पानी किताब घर सड़क बगीचा "
                    "मेज़ गाड़ी गेंद चलता दौड़ता बैठता खाता पीता पढ़ता देखता गाता है हैं था में पर "
                    "के साथ और एक दो लाल नीला छोटा बड़ा पुराना", "नहीं बाहर शायद", " ", "।"),
    "th": _language("ผู้ชาย ผู้หญิง เด็ก สุนัข แมว คน บ้าน ถนน รถ น้ำ หนังสือ อาหาร สวน ทะเล "
                    "โต๊ะ เดิน วิ่ง นั่ง กิน ดื่ม อ่าน ดู ร้องเพลง ใน บน กับ และ สอง สาม เล็ก ใหญ่ "
                    "สีแดง", "ไม่ ข้างนอก อาจจะ", "", ""),
    "ja": _language("男性 女性 子供 犬 猫 人 家 道 車 水 本 料理 公園 海 机 歩く 走る 座る 食べる "
                    "飲む 読む 見る 歌う が を で に と は 二人 三人 小さい 大きい 赤い",
                    "決して 屋外 たぶん", "", "。"),
    "zh": _language("男人 女人 孩子 狗 猫 人们 房子 街道 汽车 水 书 饭菜 公园 大海 桌子 走路 "
                    "跑步 坐着 吃饭 喝水 读书 看着 唱歌 在 和 里 上 两个 三个 小 大 红色",
                    "没有 户外 可能", "", "。"),
}


class _Sentences:
    """Draws filler sentences from a Zipfian vocabulary (``words``; default
    :func:`make_vocabulary`)."""

    def __init__(self, rng: np.random.Generator, vocab_size: int,
                 words: tuple[str, ...] | None = None) -> None:
        self.rng = rng
        self.words = np.asarray(words or make_vocabulary(vocab_size), dtype=object)
        weights = 1.0 / np.arange(1, len(self.words) + 1)
        self.p = weights / weights.sum()

    def draw(self, n: int, mean_extra: float = 4.5, minimum: int = 3) -> list[list[str]]:
        lengths = minimum + self.rng.poisson(mean_extra, size=n)
        flat = self.words[self.rng.choice(len(self.words), size=int(lengths.sum()), p=self.p)]
        bounds = np.concatenate([[0], np.cumsum(lengths)])
        return [list(flat[bounds[i]:bounds[i + 1]]) for i in range(n)]


def _plant(rng: np.random.Generator, words: list[str], label: str, cues, draws) -> list[str]:
    """``words`` with each cue word inserted at a random place when its draw (one uniform per
    cue) falls under its rate for ``label``."""
    for cue, draw in zip(cues, draws):
        if draw < (cue.rate_with if cue.label == label else cue.rate_other):
            words.insert(int(rng.integers(0, len(words) + 1)), cue.word)
    return words


def _sentence(words: list[str]) -> str:
    return " ".join(words).capitalize() + "."


def make_nli(n: int, *, seed: int = 0, vocab_size: int = 2000, cues=NLI_CUES,
             id_prefix: str = "nli", language: str = "en") -> list[dict]:
    """``n`` NLI records ``{id, premise, hypothesis, label}`` with the planted ``cues``;
    ``language`` other than ``en``: text of :data:`LANGUAGES` with its own cues."""
    rng = np.random.default_rng(seed)
    sentence = _sentence
    if language != "en":
        if language not in LANGUAGES:
            raise UserError(f"unknown language {language!r}; choose from en, "
                            f"{', '.join(LANGUAGES)}")
        sentence, cues = LANGUAGES[language].sentence, LANGUAGES[language].cues
    sentences = _Sentences(rng, vocab_size, LANGUAGES[language].words
                           if language != "en" else None)
    labels = rng.choice(len(NLI_LABELS), size=n)
    premises = sentences.draw(n, mean_extra=9.0, minimum=5)
    hypotheses = sentences.draw(n)
    draws = rng.random((n, len(cues)))
    records = []
    for i in range(n):
        label = NLI_LABELS[labels[i]]
        hypothesis = _plant(rng, hypotheses[i], label, cues, draws[i])
        records.append({"id": f"{id_prefix}-{i}", "premise": sentence(premises[i]),
                        "hypothesis": sentence(hypothesis), "label": label})
    return records


def make_mcq(n: int, *, seed: int = 0, n_choices: int = 2, vocab_size: int = 2000,
             cues=MCQ_CUES, id_prefix: str = "mcq") -> list[dict]:
    """``n`` MCQ records ``{id, premise, choices, label}``; cues mark right/wrong choices."""
    rng = np.random.default_rng(seed)
    sentences = _Sentences(rng, vocab_size)
    answers = rng.integers(0, n_choices, size=n)
    premises = sentences.draw(n, mean_extra=9.0, minimum=5)
    choices = sentences.draw(n * n_choices)
    draws = rng.random((n * n_choices, len(cues)))
    records = []
    for i in range(n):
        options = []
        for j, k in enumerate(range(i * n_choices, (i + 1) * n_choices)):
            role = "right" if j == answers[i] else "wrong"
            options.append(_sentence(_plant(rng, choices[k], role, cues, draws[k])))
        records.append({"id": f"{id_prefix}-{i}", "premise": _sentence(premises[i]),
                        "choices": options, "label": int(answers[i])})
    return records


def write_demo_data(out_dir: str | Path, *, size: int = 3000, seed: int = 0,
                    test_fraction: float = 0.2, vocab_size: int | None = None,
                    language: str = "en") -> dict[str, Path]:
    """Write ``nli/{train,test}.jsonl`` and ``mcq/{train,test}.jsonl`` under ``out_dir``
    (another ``language``: the NLI data only, in that language).

    ``size`` is the number of training items per task; the test split has
    ``size * test_fraction`` items (at least 200). Returns the two dataset directories.
    """
    out_dir = Path(out_dir)
    n_test = max(200, int(size * test_fraction))
    vocab = vocab_size or (400 if size <= 20000 else 30000)
    paths = {}
    makers: dict[str, Callable[..., list[dict]]] = {"nli": make_nli, "mcq": make_mcq} \
        if language == "en" else {"nli": partial(make_nli, language=language)}
    for task, make in makers.items():
        records = make(size + n_test, seed=seed, vocab_size=vocab)
        directory = out_dir / task
        write_jsonl(directory / "train.jsonl", records[:size])
        write_jsonl(directory / "test.jsonl", records[size:])
        paths[task] = directory
    return paths
