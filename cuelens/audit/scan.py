"""``run_word_audit``: the statistical core of ``audit scan`` (docs/methods.md §2–4).

Tokenise once, list cues fitted on the train split (or on all items when the file is
cross-validated), build the metric × aggregator leakage table with its baselines (and, for MCQ,
the artifact baselines of :mod:`cuelens.audit.mcq_baselines`), and split the
evaluation items into easy and hard with the headline (metric, aggregator). The returned
sections follow docs/results-schema.md: fractions, floats rounded to 6 decimals, deterministic
for a given seed. ``progress(stage, fraction)`` is called at stage boundaries; nothing prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from cuelens.audit.chunked_data import held_data
from cuelens.audit.config import ScanConfig, adapted, large_scan
from cuelens.audit.counts import TokenSequences
from cuelens.audit.examples import sort_value
from cuelens.audit.fitting import ModelBank
from cuelens.audit.groups import FOLD_SEEDS, iteration_seed
from cuelens.audit.leakage import EXTRA_FOLD_SEEDS, PRIOR, all_models, bow_name, \
    leakage_section
from cuelens.audit.item_parts import ItemParts
from cuelens.audit.mcq_baselines import baselines_of_parts
from cuelens.audit.metrics import METRICS, CountTable, bonferroni_z
from cuelens.audit.results import (CueFinding, CueRow, CueStats, EasyHardSection, LeakageSection,
                                   McqBaselinesSection)
from cuelens.audit.folds import Folds
from cuelens.audit.passes import EasyCounters, FoldModels, RunCounts, TokenStore, count_run, \
    fit_fold, keep_model, predict_run
from cuelens.audit.uncertainty import BELOW, CHANCE
from cuelens.data.dataset import Task
from cuelens.data.labels import rare_labels
from cuelens.engine.options import Progress
from cuelens.jsonio import json_number
from cuelens.wording import plural

SIGNIFICANCE = 0.05


def _numbers(values: np.ndarray) -> list:
    """Floats rounded to 6 decimals as Python numbers; ±∞ as "inf"/"-inf", NaN as None
    (:func:`cuelens.jsonio.json_number`; ``--alpha 0`` makes PMI/RD infinite)."""
    rounded = np.round(values.astype(np.float64), 6)
    out = rounded.tolist()
    if not np.isfinite(rounded).all():
        out = [json_number(x) for x in out]
    return out


def binomial_tails(joint: np.ndarray, labels: np.ndarray, z_prior: str) -> np.ndarray:
    """Exact one-sided p-values ``P(Bin(#(w), p0) ≥ #(w,l))`` of every (word, label) (``p0``:
    z's prior, docs/methods.md §2), one vectorised ``binom.sf`` over the ``V × L`` table: the
    normal approximation behind z is anti-conservative for rare words and rare labels (6 of 6
    occurrences with a 30% label: z = 3.98, exact p = 7·10⁻⁴), so a cue is significant only
    when this tail passes the Bonferroni level too."""
    from scipy.stats import binom

    n_labels = len(labels)
    p0 = labels / max(labels.sum(), 1) if z_prior == "empirical" else \
        np.full(n_labels, 1.0 / n_labels)
    word = joint.sum(axis=1, keepdims=True)
    return binom.sf(joint - 1, word, p0[None, :])


def cue_table(joint: np.ndarray, labels: np.ndarray, vocab: list[str], label_names: list[str],
              config: ScanConfig, fitted_on: str) -> tuple[list[CueRow], CueStats]:
    """The ``cues`` and ``cue_stats`` sections from the fitted split's ``#(w,l)`` (``V × L``)
    and label counts (docs/methods.md §2)."""
    keep = np.flatnonzero(joint.sum(axis=1) >= config.min_count)
    table = CountTable(joint[keep], labels, alpha=config.alpha, z_prior=config.z_prior)
    scores = {name: fn(table) for name, fn in METRICS.items()}
    n_tests = len(keep) * len(label_names)
    threshold = bonferroni_z(n_tests, SIGNIFICANCE)
    tails = binomial_tails(joint[keep], np.asarray(labels), config.z_prior)
    counts = dict(zip(label_names, np.asarray(labels).astype(np.int64).tolist()))
    excluded = {label: f"rare label: {plural(counts[label], 'item')}, fewer than "
                f"--min-label-items {config.min_label_items}"
                for label in rare_labels(counts, config.min_label_items)}
    tokens = np.array([vocab[i] for i in keep], dtype=object)
    token_list = tokens.tolist()
    word = table.word[:, 0].astype(np.int64).tolist()
    cues = []
    for l, label in enumerate(label_names):
        order = np.lexsort((tokens.astype(str), -scores[config.metric][:, l]))
        columns = {name: _numbers(values[order, l]) for name, values in scores.items()}
        columns["freq"] = joint[keep[order], l].astype(np.int64).tolist()
        rare = label in excluded  # docs/robustness.md, "Labels": never significant
        significant = ((scores["z"][order, l] > threshold)
                       & (tails[order, l] < SIGNIFICANCE / max(n_tests, 1))).tolist() \
            if not rare else [False] * len(order)
        names, reason = list(columns), excluded.get(label)
        rows = zip(*columns.values())  # each row's metrics, in the columns' order
        cues += [CueRow(token=token_list[i], label=label, count=word[i], label_count=count,
                        metrics=dict(zip(names, metrics)), significant=flag, excluded=reason)
                 for i, count, metrics, flag in zip(order.tolist(), columns["freq"], rows,
                                                    significant)]
    stats = CueStats(bonferroni_z=round(threshold, 6), n_tests=n_tests, alpha=SIGNIFICANCE,
                     min_count=config.min_count, fitted_on=fitted_on)
    return cues, stats


TOP_SIGNIFICANT = 10  # cues listed in ``cue_finding.top``


def significant_ids(cues: list[CueRow], vocab: list[str]) -> np.ndarray:
    """Feature ids of the significant cue tokens (any label)."""
    index = {token: i for i, token in enumerate(vocab)}
    return np.asarray(sorted({index[c.token] for c in cues if c.significant}),
                      dtype=np.int64)


def covered_items(seqs: TokenSequences, rows: np.ndarray, ids: np.ndarray, k: int) -> int:
    """How many items (``k`` consecutive instances each, ``rows`` of ``seqs``) hold at least
    one feature of ``ids`` in any instance."""
    if len(ids) == 0 or len(rows) == 0:
        return 0
    tokens, lengths = seqs.take(rows)
    hit = np.zeros(len(rows), dtype=bool)
    owner = np.repeat(np.arange(len(rows)), lengths)
    hit[owner[np.isin(tokens, ids)]] = True
    return int(hit.reshape(-1, k).any(axis=1).sum())


def cue_finding_section(cues: list[CueRow], cue_stats: CueStats, covered: int,
                        n_items: int) -> CueFinding:
    """The ``cue_finding`` section (docs/results-schema.md): the first of the scan's two
    findings — significant individual cues (z above the Bonferroni threshold of
    docs/methods.md §2), how many of the ``n_items`` evaluated items hold one (``covered``),
    and the strongest by z."""
    significant = [c for c in cues if c.significant]
    top = sorted(significant, key=lambda c: (-sort_value(c.metrics["z"]), -c.count,
                                             c.token, c.label))[:TOP_SIGNIFICANT]
    return CueFinding(n_significant=len(significant), items_covered=covered,
                      share_items=round(covered / n_items, 6) if n_items else 0.0,
                      bonferroni_z=cue_stats.bonferroni_z,
                      top=[{"token": c.token, "label": c.label, "z": c.metrics["z"]}
                           for c in top])


def easy_hard_section(n_easy: int, n_items: int, config: ScanConfig, leakage: LeakageSection,
                      split: str) -> EasyHardSection:
    """The ``easy_hard`` section: ``n_easy`` of the ``n_items`` evaluated items are easy under
    the headline (metric, aggregator) of ``leakage`` (docs/methods.md §4)."""
    best = leakage.best
    return EasyHardSection(easy=n_easy, hard=n_items - n_easy,
                           hard_fraction=round(1 - n_easy / n_items, 6), folds=config.folds,
                           iterations=config.iterations, seed=config.seed,
                           metric=best["metric"], aggregator=best["aggregator"], split=split,
                           chance_level=leakage.verdict in (CHANCE, BELOW))


@dataclass
class WordAudit:
    """The word-cue sections of results.json (:meth:`sections`), the easy mask of the evaluated
    items, and the leakage pass's fits of the headline model."""

    cues: list[CueRow]
    cue_stats: CueStats
    cue_finding: CueFinding
    leakage: LeakageSection
    easy_hard: EasyHardSection
    item_easy: np.ndarray  # one bool per evaluated item (spilled stores: memory-mapped)
    easy: EasyMask  # the same, read per chunk where the chunks are
    mcq_baselines: McqBaselinesSection | None = None  # cuelens.audit.mcq_baselines
    fits: list[FoldModels] = field(default_factory=list)  # the headline's leakage fold fits
    bank: ModelBank | None = None  # the leakage pass's models, in its last fold's state

    def sections(self) -> dict:
        """The word-cue fields of :class:`~cuelens.audit.results.ScanSections`."""
        return {"cues": self.cues, "cue_stats": self.cue_stats, "cue_finding": self.cue_finding,
                "leakage": self.leakage, "mcq_baselines": self.mcq_baselines,
                "easy_hard": self.easy_hard}


def leakage_counts(store: TokenStore, folds: Folds, config: ScanConfig) -> RunCounts:
    """The leakage run's count pass (outer folds when cross-validated)."""
    return count_run(store, folds, config.folds, config.seed, config.seed, store.n_fitting == 0,
                     adapted(config.scoring, store.n_eval).max_fit_items)


NEGLIGIBLE_SPREAD = 0.1  # of the headline's CI half-width: a large scan stops re-seeding below it


def settled(D: list[float], half_width: float) -> bool:
    """Whether re-seeding a large scan's folds may stop (docs/methods.md §11): the headline's D
    under every fold seed so far (the run's first) spreads less than
    :data:`NEGLIGIBLE_SPREAD` of its simultaneous interval's half-width."""
    return len(D) > 1 and max(D) - min(D) < NEGLIGIBLE_SPREAD * half_width


def cue_list(store: TokenStore, counts: RunCounts, label_names: list[str],
             config: ScanConfig) -> tuple[list[CueRow], CueStats]:
    """:func:`cue_table` of the fitted split (all items when cross-validated) from the leakage
    run's ``counts``."""
    cross_validated = store.n_fitting == 0
    fitted = slice(None, -1) if cross_validated else slice(-1, None)
    return cue_table(counts.joint[:, fitted].sum(axis=(1, 2)).astype(np.float64),
                     counts.labels[fitted].sum(axis=(0, 1)), store.vocab, label_names, config,
                     "all" if cross_validated else "train")


def word_audit(store: TokenStore, label_names: list[str], config: ScanConfig, folds: Folds,
               groups: dict, progress: Progress | None = None) -> WordAudit:
    """Cues, leakage table and easy/hard split from passes over ``store`` (docs/methods.md
    §2–4; cross-validated when it has no fitting split), ``folds`` assigning the items by
    ``groups`` (``leakage.groups``)."""
    options = adapted(config.scoring, store.n_eval)
    cross_validated = store.n_fitting == 0
    counts = leakage_counts(store, folds, config)
    cues, cue_stats = cue_list(store, counts, label_names, config)
    bank, kept = ModelBank(config.seed), list[FoldModels]()
    stage = None if progress is None else (lambda fraction: progress("leakage", fraction))
    tally = predict_run(store, counts, folds, config.folds, config.seed, options, bank,
                        all_models(), bow_name(store.task), progress=stage, kept=kept)
    del counts

    def fold_seed_D(model: tuple[str, str], first: float, half_width: float) -> list[float]:
        D: list[float] = []
        for r in range(1, EXTRA_FOLD_SEEDS + 1) if cross_validated else ():
            if large_scan(store.n_eval) and settled([first, *D], half_width):
                break
            reseeded = replace(options, seed=iteration_seed(config.seed, r, FOLD_SEEDS))
            counted = count_run(store, folds, config.folds, reseeded.seed, reseeded.seed, True,
                                options.max_fit_items)
            run = predict_run(store, counted, folds, config.folds, reseeded.seed, reseeded,
                              ModelBank(reseeded.seed), [model], None)
            D.append(run.accuracy(model) - run.accuracy(PRIOR))
        return D

    leakage = leakage_section({name: tally.accuracy(name) for name in tally.correct},
                              tally.moments, config.metric, config.flag_threshold, store.task,
                              config.seed, fold_seed_D, groups,
                              training_cap=None if options.max_fit_items == config.max_fit_items
                              else options.max_fit_items)
    model = headline(leakage)
    kept = keep_model(kept, model)
    mask, n_easy = easy_masks(store, easy_counters(store, folds, config, model, progress),
                              config.iterations / 2)
    easy_hard = easy_hard_section(n_easy, store.n_eval, config, leakage,
                                  "all" if cross_validated else "test")
    return WordAudit(cues, cue_stats, cue_finding(store, cues, cue_stats), leakage, easy_hard,
                     mask.whole(), mask, fits=kept, bank=bank)


def headline(leakage: LeakageSection) -> tuple[str, str]:
    """The headline (metric, aggregator) of a leakage section."""
    return leakage.best["metric"], leakage.best["aggregator"]


def fitting_fits(view: TokenStore, folds: Folds, config: ScanConfig, model: tuple[str, str],
                 bank: ModelBank) -> list[FoldModels]:
    """``model`` fitted on each outer fold's complement of the fitting split (``view``: its
    :meth:`~cuelens.audit.passes.TokenStore.fitting_store`; ``folds``: over the fitting
    items, the strategy's ``fitting()``), warm-starting from the leakage
    pass's ``bank``: the out-of-fold predictors of the fitting items (one count pass over the
    fitting chunks; memory as one leakage run)."""
    n_folds = max(config.folds, 2)
    options = adapted(config.scoring, view.n_eval)
    counted = count_run(view, folds, n_folds, config.seed, config.seed, True,
                        options.max_fit_items)
    return [fit_fold(view, counted, folds, fold, config.seed, options, bank, [model])
            for fold in range(n_folds) if counted.labels[fold].sum() > 0]


def cue_finding(store: TokenStore, cues: list[CueRow], cue_stats: CueStats) -> CueFinding:
    """:func:`cue_finding_section` from one pass over the evaluated chunks."""
    ids = significant_ids(cues, store.vocab)
    covered = sum(covered_items(chunk.seqs, np.arange(len(chunk.labels)), ids, store.k)
                  for chunk in store.chunks(fitting=False)) if len(ids) else 0
    return cue_finding_section(cues, cue_stats, covered, store.n_eval)


def easy_counters(store: TokenStore, folds: Folds, config: ScanConfig, model: tuple[str, str],
                  progress: Progress | None = None) -> EasyCounters:
    """The easy/hard counters (docs/methods.md §4): per evaluated chunk, ``C[q]``, how often
    ``model`` predicts each item right over the iterations (NLI one byte per item; a spilled
    store's in a file per chunk of its directory, added to where the chunk is predicted:
    :class:`~cuelens.audit.passes.EasyCounters`); an item is easy when ``C[q]`` exceeds half
    the iterations."""
    # NLI correctness is 0/1; MCQ ties count 1/t
    counter_type: type = np.float64 if store.task == Task.MCQ else \
        np.uint8 if config.iterations < 256 else np.uint32
    counters = EasyCounters.zeros(store, counter_type, model)
    bank, options = ModelBank(config.seed), adapted(config.scoring, store.n_eval)
    for iteration in range(config.iterations):
        fold_seed = iteration_seed(config.seed, iteration)
        counted = count_run(store, folds, config.folds, fold_seed, config.seed, True,
                            options.max_fit_items)
        predict_run(store, counted, folds, config.folds, fold_seed, options, bank,
                    [model], None, counters.add)
        if progress is not None:
            progress("easy_hard", (iteration + 1) / config.iterations)
    return counters


@dataclass(frozen=True)
class EasyMask:
    """The easy mask of the evaluated items (one bool each, by index among them): a spilled
    store's in a file (``source``), written and read chunk by chunk where the chunks are
    (:func:`easy_masks`; the item table's and the examples' tasks), else an array."""

    source: Path | np.ndarray

    def write(self, first: int, mask: np.ndarray) -> None:
        """Set the mask of items ``first …`` to ``mask``."""
        if isinstance(self.source, np.ndarray):
            self.source[first:first + len(mask)] = mask
            return
        with open(self.source, "r+b") as file:
            file.seek(first)
            file.write(mask.tobytes())

    def of(self, first: int, size: int) -> np.ndarray:
        """The mask of items ``first … first + size``."""
        return self.source[first:first + size] if isinstance(self.source, np.ndarray) else \
            np.fromfile(self.source, dtype=bool, count=size, offset=first)

    def whole(self) -> np.ndarray:
        """Every item's (a file memory-mapped read-only: nothing read until used)."""
        return self.source if isinstance(self.source, np.ndarray) else \
            np.memmap(self.source, dtype=bool, mode="r")


def _easy_part(shared: tuple[EasyCounters, float, EasyMask, int], first: int) -> int:
    """Chunk ``first``'s easy mask (its counters above the threshold) written into its part of
    the mask (a task of :meth:`~cuelens.audit.passes.ChunkPasses.map`; ``shared``: the
    counters, the threshold, the mask, the first evaluated item); its easy items."""
    counters, threshold, mask, start = shared
    easy = counters.counter(first) > threshold
    mask.write(first - start, easy)
    return int(easy.sum())


def easy_masks(store: TokenStore, counters: EasyCounters, threshold: float
               ) -> tuple[EasyMask, int]:
    """The easy mask of the evaluated items (docs/methods.md §4: an item is easy when its
    counter exceeds ``threshold``, half the iterations), each chunk's set on ``store.passes``
    from its counters (a spilled store's mask is a file of the counters' directory, not
    memory), and the number of easy items (the chunks' sums)."""
    if counters.directory is None:
        mask = EasyMask(np.zeros(store.n_eval, dtype=bool))
    else:
        with open(counters.directory / "mask.bin", "wb") as file:
            file.truncate(store.n_eval)
        mask = EasyMask(counters.directory / "mask.bin")
    evaluated = [(first,) for fitting, first, _ in store.sizes() if not fitting]
    return mask, sum(store.passes.map(_easy_part, (counters, threshold, mask, store.n_fitting),
                                      evaluated))


def add_mcq_baselines(audit: WordAudit, parts: ItemParts) -> None:
    """``audit.mcq_baselines`` of an MCQ dataset's ``parts``
    (:func:`~cuelens.audit.mcq_baselines.baselines_of_parts`), with the leakage table's
    choices-only BoW row."""
    bow = {b["name"]: b["accuracy"] for b in audit.leakage.baselines or []
           if b["name"] == bow_name(Task.MCQ)}
    audit.mcq_baselines = baselines_of_parts(parts, extra=bow)


def run_word_audit(dataset, config: ScanConfig | None = None, progress: Progress | None = None,
                   tokens: TokenSequences | None = None) -> WordAudit:
    """Cues, leakage table and easy/hard split of ``dataset`` held in memory (docs/methods.md
    §2–4): :func:`word_audit` over its store held in memory with the grouped, stratified folds
    (:func:`~cuelens.audit.chunked_data.held_data`) — the word-cue sections alone (the subsets
    table's; the whole scan is :func:`~cuelens.audit.pipeline.scan_dataset`).

    ``tokens``: the fitting-then-evaluation instance texts already encoded with the config's
    n-grams; ``None`` encodes them here.
    """
    config = config or ScanConfig()
    config.validate()
    report = progress or (lambda stage, fraction: None)
    report("tokenise", 0.0)
    data, folds = held_data(dataset, config, tokens)
    report("tokenise", 1.0)
    audit = word_audit(data.store, data.label_names, config, folds, folds.summary, report)
    if dataset.task == Task.MCQ:
        add_mcq_baselines(audit, ItemParts.of_dataset(dataset, config.folds, config.seed))
        report("mcq baselines", 1.0)
    return audit
