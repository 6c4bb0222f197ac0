"""Position-bias probe: does a model's answer depend on where the right answer sits? Scored live
(:func:`position_bias`) or from rotations run elsewhere (:func:`rotated_splits`,
:func:`position_bias_from_picks`); docs/mcq-artifacts.md, "Position-bias probe"."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy import stats

from cuelens.audit.chance import (ALPHA, _r, letter, p_text, position_chi_square,
                                  positions_verdict)
from cuelens.errors import UserError, check_seed
from cuelens.jsonio import jsonl_line
from cuelens.data.dataset import Split, Task
from cuelens.lm.scoring import SentenceError
from cuelens.wording import plural

ScoreFn = Callable[[list[str], list[list[str]]], list[np.ndarray]]
Progress = Callable[[str, float], None]
TIE = -2  # the pick of a rotation whose top score is shared by several positions


@dataclass
class Question:
    premise: str
    choices: list[str]
    gold: int


class ChoiceError(UserError):
    """A ``score_fn`` could not score choice ``position`` (as shown) of entry ``row`` of its
    call: ``error`` says why (:func:`position_bias` names the item in the user's file)."""

    def __init__(self, row: int, position: int, error: SentenceError) -> None:
        self.row, self.position, self.error = row, position, error
        super().__init__(error.describe(f"choice {position + 1} of question {row + 1}"))

    def __reduce__(self) -> tuple:
        return type(self), (self.row, self.position, self.error)


def item_name(questions: Split | Sequence[Question], i: int, choice: int) -> str:
    """Question ``i``'s premise with its choice ``choice`` (original order) as an error names
    it: by the item's id and input line for a split, else by its place in the list."""
    if not isinstance(questions, Split):
        return f"the premise of question {i + 1} followed by its choice {choice + 1}"
    line = questions.lines[i] if i < len(questions.lines) else 0
    where = f"{questions.path}, line {line}: " if line > 0 and questions.path else ""
    return f"{where}the premise of item {questions.ids[i]!r} followed by its choice {choice + 1}"


def as_questions(questions: Split | Sequence[Question]) -> list[Question]:
    """:class:`Question` list from an MCQ :class:`Split` (premise with its question) or as is."""
    if isinstance(questions, Split):
        return [Question(questions.premise_context(i), list(questions.choices[i]),
                         int(questions.labels[i])) for i in range(len(questions))]
    return list(questions)


def base_orders(questions: list[Question], seed: int) -> list[np.ndarray]:
    """Seeded random order of each question's choices: ``order[j]`` = original index (a seed
    outside 0 .. 2³² − 1 is a :class:`~cuelens.errors.UserError`)."""
    check_seed(seed)
    rng = np.random.default_rng(seed)
    return [rng.permutation(len(q.choices)) for q in questions]


def rotation(order: np.ndarray, r: int) -> np.ndarray:
    """Original choice index shown at each position in rotation ``r`` (``r`` mod k)."""
    return np.roll(order, r % len(order))


def rotated_splits(split: Split, seed: int) -> list[Split]:
    """One MCQ split per rotation ``r = 0 .. max k − 1`` (a question with fewer choices uses
    ``r mod k``), ids unchanged, ``label`` = the gold answer's new position; ids must be unique
    (predictions on the rotations are matched back by id)."""
    split.positions("so predictions on the rotations cannot be matched back to the items")
    questions = as_questions(split)
    orders = base_orders(questions, seed)
    out = []
    for r in range(max(len(q.choices) for q in questions)):
        part = split.subset(list(range(len(split))), name=f"{split.name}-rotation{r}")
        for i, q in enumerate(questions):
            shown = rotation(orders[i], r)
            part.choices[i] = [q.choices[j] for j in shown]
            part.labels[i] = int(np.flatnonzero(shown == q.gold)[0])
        out.append(part)
    return out


def cochran_q(correct: np.ndarray) -> tuple[float, int]:
    """Cochran's Q and its degrees of freedom for an ``items × k`` 0/1 matrix."""
    n, k = correct.shape
    columns, rows = correct.sum(axis=0), correct.sum(axis=1)
    total = rows.sum()
    denominator = k * total - (rows ** 2).sum()
    if denominator == 0:
        return 0.0, k - 1
    return float((k - 1) * (k * (columns ** 2).sum() - total ** 2) / denominator), k - 1


def position_bias_from_picks(questions: Split | Sequence[Question], picks: Sequence[np.ndarray],
                             seed: int = 0) -> dict:
    """The ``position_bias`` section from the position picked in each rotation.

    ``picks[r][i]``: the position the model chose for question ``i`` in rotation ``r`` (as laid
    out by :func:`rotated_splits` with the same ``seed``); rotations ``r ≥ k_i`` are ignored.
    A pick outside ``0 .. k_i − 1`` (e.g. −1, an unreadable answer) is no answer: wrong at its
    gold position, left out of ``predicted_positions``, never consistent, counted in
    ``unanswered``; :data:`TIE` (the top score shared) is no answer in the same way, counted in
    ``ties`` instead (it was the lower position, a preference for A).
    """
    items = as_questions(questions)
    orders = base_orders(items, seed)
    k = np.array([len(q.choices) for q in items], dtype=np.int64)
    width = int(k.max())
    correct = np.full((len(items), width), np.nan)  # [question, gold position]
    chosen = np.full((len(items), width), -1)  # original index picked, per rotation
    picked_position = np.full((len(items), width), -1)  # [question, gold position]
    for i, q in enumerate(items):
        for r in range(k[i]):
            shown = rotation(orders[i], r)
            position = int(picks[r][i])
            gold_at = int(np.flatnonzero(shown == q.gold)[0])
            chosen[i, r] = shown[position] if 0 <= position < k[i] else -1
            correct[i, gold_at] = float(chosen[i, r] == q.gold)
            picked_position[i, gold_at] = position
    by_position = [np.nanmean(correct[:, p]) for p in range(width)]
    statistic, df = 0.0, 0
    for value in np.unique(k):
        q_value, q_df = cochran_q(correct[k == value, :value])
        statistic, df = statistic + q_value, df + q_df
    p_value = float(stats.chi2.sf(statistic, df)) if df else 1.0
    consistent = [len(set(chosen[i, :k[i]].tolist())) == 1 and chosen[i, 0] >= 0
                  for i in range(len(items))]
    ties = sum(int((np.asarray(picks[r])[k > r] == TIE).sum()) for r in range(width))
    unanswered = sum(int((chosen[i, :k[i]] < 0).sum()) for i in range(len(items))) - ties
    balanced = balanced_positions(k, seed)
    predicted = picked_position[np.arange(len(items)), balanced]
    answered = predicted >= 0
    return {"n_items": len(items), "rotations": int(k.sum()), "seed": seed,
            "accuracy_all_rotations": _r(np.nanmean(correct)),
            "accuracy_by_position": [_r(a) for a in by_position],
            "n_by_position": [int((k > p).sum()) for p in range(width)],
            "spread": _r(max(by_position) - min(by_position)),
            "cochran_q": {"q": _r(statistic), "df": df,
                          "p_value": float(f"{p_value:.6g}"),
                          "significant": bool(p_value < ALPHA)},
            "predicted_positions": position_chi_square(predicted[answered], k[answered]),
            "consistency": _r(np.mean(consistent)), "unanswered": unanswered, "ties": ties}


def balanced_positions(k: np.ndarray, seed: int) -> np.ndarray:
    """Per question, the gold position of its balanced-subset rotation: within each group of
    questions with the same ``k``, positions 0..k−1 dealt round-robin over a seeded order."""
    rng = np.random.default_rng([seed, 1])
    out = np.zeros(len(k), dtype=np.int64)
    for value in np.unique(k):
        members = np.flatnonzero(k == value)
        out[members[rng.permutation(len(members))]] = np.arange(len(members)) % value
    return out


def position_bias(questions: Split | Sequence[Question], score_fn: ScoreFn, seed: int = 0, *,
                  batch_size: int = 256, progress: Progress | None = None) -> dict:
    """Score every rotation of every question with ``score_fn`` and analyse the picks.

    ``score_fn(premises, choices)`` gets parallel lists (one entry per rotated question) and returns
    one score array per entry, ``len(choices[i])`` long (higher = preferred); an all-NaN array
    is no answer, a top score shared by several choices a :data:`TIE` (see
    :func:`position_bias_from_picks`).
    """
    items = as_questions(questions)
    orders = base_orders(items, seed)
    width = max(len(q.choices) for q in items)
    jobs = [(r, i) for r in range(width) for i, q in enumerate(items) if r < len(q.choices)]
    picks = [np.zeros(len(items), dtype=np.int64) for _ in range(width)]
    for start in range(0, len(jobs), batch_size):
        batch = jobs[start:start + batch_size]
        shown = [rotation(orders[i], r) for r, i in batch]
        try:
            scores = score_fn([items[i].premise for _, i in batch],
                              [[items[i].choices[j] for j in s] for (_, i), s in zip(batch, shown)])
        except ChoiceError as error:   # it counts the questions and choices of this batch
            i, choice = batch[error.row][1], int(shown[error.row][error.position])
            raise error.error.at(i, item_name(questions, i, choice)) from None
        for (r, i), row in zip(batch, scores):
            picks[r][i] = top_position(np.asarray(row, dtype=np.float64))
        if progress is not None:
            progress("position bias", min(1.0, (start + len(batch)) / len(jobs)))
    return position_bias_from_picks(items, picks, seed)


def top_position(values: np.ndarray) -> int:
    """The position of the top score; −1 when every score is NaN, :data:`TIE` when the top
    score is shared (``np.argmax`` gave the lower position: a preference for A)."""
    if np.isnan(values).all():
        return -1
    top = np.flatnonzero(values == np.nanmax(values))
    return int(top[0]) if len(top) == 1 else TIE


def classifier_scorer(clf, batch_size: int | None = None) -> ScoreFn:
    """``score_fn`` of a multiple-choice :class:`~cuelens.models.classifier.Classifier`:
    P(choice) from its softmax, questions grouped by number of choices."""

    def score(premises: list[str], choices: list[list[str]]) -> list[np.ndarray]:
        out: list[np.ndarray] = [np.zeros(0)] * len(premises)
        sizes = np.array([len(c) for c in choices])
        for value in np.unique(sizes):
            members = np.flatnonzero(sizes == value)
            split = Split(name="rotation", path="", task=Task.MCQ)
            for i in members:
                split.append({"id": str(i), "premise": premises[i], "choices": choices[i],
                              "label": 0}, raw="", line=0)
            probs = clf.predict_proba(split, batch_size=batch_size)
            for row, i in zip(probs, members):
                out[i] = row.astype(np.float64)
        return out

    return score


def sentence_scorer(scorer) -> ScoreFn:
    """``score_fn`` of a :class:`~cuelens.lm.scoring.SentenceScorer` (a causal LM, n-gram,
    …): ``log p(premise + " " + choice)``, which ranks choices like ``log p(choice | premise)``."""

    def score(premises: list[str], choices: list[list[str]]) -> list[np.ndarray]:
        texts = [f"{p} {c}" for p, row in zip(premises, choices) for c in row]
        bounds = np.cumsum([0] + [len(row) for row in choices])
        try:
            flat = np.asarray(scorer.score(texts), dtype=np.float64)
        except SentenceError as error:   # its index counts the texts: name question and choice
            row = int(np.searchsorted(bounds, error.index, side="right")) - 1
            raise ChoiceError(row, error.index - int(bounds[row]), error) from None
        return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]

    return score


def position_verdict(section: dict) -> str:
    """Plain-English reading of a ``position_bias`` section."""
    ties = section.get("ties", 0)     # results written before ties were counted have none
    if section["unanswered"] + ties == section["rotations"]:
        why = "could be read" if not ties else \
            "was a single choice (its top score was shared by several, or unreadable)"
        return (f"No answer of the model {why} in any of the {section['rotations']:,} "
                "rotations: its position bias cannot be measured.")
    accs = section["accuracy_by_position"]
    low, high = int(np.argmin(accs)), int(np.argmax(accs))
    q = section["cochran_q"]
    runs = (f"is {100 * accs[low]:.1f}% wherever the right answer sits"
            if accs[low] == accs[high] else
            f"runs from {100 * accs[low]:.1f}% (answer at {letter(low)}) to "
            f"{100 * accs[high]:.1f}% (answer at {letter(high)}), a spread of "
            f"{100 * section['spread']:.1f} points")
    head = (f"With the right answer moved through every position, accuracy {runs} "
            f"(Cochran's Q {p_text(q['p_value'])})")
    head += (": the model's answers depend on where the right answer sits." if q["significant"]
             else ": no evidence that the position matters.")
    picks = positions_verdict(section["predicted_positions"], "the model's answers")
    tied = (f" In {plural(ties, 'rotation')} the top score was shared by several positions: "
            "no answer, counted wrong." if ties else "")
    return (f"{head} On a position-balanced subset: {picks} It gives the same answer under "
            f"every rotation for {100 * section['consistency']:.1f}% of the questions.{tied}")


def rotation_datasets(dataset, seed: int) -> list:
    """``dataset`` with its evaluated split replaced by each rotation (:func:`rotated_splits`)."""
    return [replace(dataset, test=split) for split in rotated_splits(dataset.test, seed)]


@dataclass
class PositionBiasOptions:
    """Settings of the probe's ``position_bias`` section: score every rotation with
    ``score_fn``, or use ``picks`` (one prediction array per rotation of
    :func:`rotation_datasets`); ``source`` names where the picks came from."""

    score_fn: ScoreFn | None = None
    picks: Sequence[np.ndarray] | None = None
    source: str = ""


MANIFEST = "rotations.json"  # written by ``audit rotate`` beside its rotation files


def items_digest(split: Split) -> str:
    """A short hash of an MCQ split's items as :func:`rotation_records` writes them (ids,
    texts, choices in their order, gold answers): the same only for the same test items."""
    text = "".join(jsonl_line(row) for row in rotation_records(split))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def rotation_manifest(split: Split, seed: int, files: Sequence[str]) -> dict:
    """What ``audit rotate`` records in :data:`MANIFEST`: the seed, the items' digest and the
    rotation files in rotation order."""
    return {"seed": seed, "items": len(split), "items_digest": items_digest(split),
            "files": list(files)}


def check_manifests(paths: Sequence, split: Split, seed: int) -> None:
    """Refuse predictions on rotations of other items or of another seed: each prediction file
    whose directory holds a :data:`MANIFEST` must be of rotations of ``split`` with ``seed``."""
    import json

    for path in paths:
        manifest = Path(path).parent / MANIFEST
        try:
            written = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # none there (or not ours): nothing to check against
        if not isinstance(written, dict) or "items_digest" not in written:
            continue
        said = f"the {MANIFEST} beside it (audit rotate) says these are predictions on rotations"
        if written["items_digest"] != items_digest(split):
            raise UserError(f"{said} of other test items ({written.get('items')}; the test split "
                            f"has {len(split)}), or of these in another order: rotate this test "
                            "split and predict its rotations", path=str(path))
        if written.get("seed") != seed:
            raise UserError(f"{said} written with --seed {written.get('seed')}; this probe lays "
                            f"rotations out with --seed {seed}: give --seed "
                            f"{written.get('seed')}", path=str(path))


def options_from_files(dataset, paths: Sequence, seed: int, id_field: str | None = None,
                       norm: str = "none") -> PositionBiasOptions:
    """Options from one predictions file (or evaluation log) per rotation, in rotation order,
    each read against its rotated dataset (:func:`rotation_datasets` with ``seed``); files
    beside an ``audit rotate`` :data:`MANIFEST` of other items or another seed are refused."""
    from cuelens.probes.sources import read_predictions

    rotated = rotation_datasets(dataset, seed)
    if len(paths) != len(rotated):
        raise UserError(f"--position-predictions needs {len(rotated)} files, one per rotation; "
                        f"got {len(paths)}")
    seen: dict[Path, int] = {}  # (an lm-eval directory may hold the log of every rotation)
    for r, path in enumerate(paths):
        first = seen.setdefault(Path(path).resolve(), r) if Path(path).is_file() else r
        if first != r:
            raise UserError(f"one file is given for rotations {first} and {r}: each rotation "
                            "needs the predictions on its own file (rotation_<r>.jsonl of audit "
                            "rotate)", path=str(path))
    check_manifests(paths, dataset.test, seed)
    picks = [read_predictions(path, data, id_field, norm, require_all=True).pred
             for path, data in zip(paths, rotated)]
    return PositionBiasOptions(picks=picks, source="predictions per rotation")


def section(ctx) -> dict | None:
    """The ``probe.position_bias`` section (None when not asked or not MCQ)."""
    opts: PositionBiasOptions | None = ctx.position_bias
    if opts is None or not ctx.multiple_choice("the position-bias probe is"):
        return None
    if opts.picks is not None:
        result = position_bias_from_picks(ctx.dataset.test, opts.picks, ctx.seed)
    elif opts.score_fn is not None:
        result = position_bias(ctx.dataset.test, opts.score_fn, ctx.seed, progress=ctx.progress)
    else:
        return None
    return {"source": opts.source, **result}


def rotation_records(split: Split) -> list[dict]:
    """Normalised MCQ records (``id``, ``premise``, ``choices``, ``label``, optional
    ``question``) of one rotated split, for a model run outside cuelens."""
    return [{"id": split.ids[i], "premise": split.premises[i], "choices": split.choices[i],
             "label": int(split.labels[i]),
             **({} if split.questions[i] is None else {"question": split.questions[i]})}
            for i in range(len(split))]
