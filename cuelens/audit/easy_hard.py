"""The easy/hard split of docs/methods.md §4.

``k`` iterations, each a seeded, grouped split of the evaluation items (questions for MCQ) into
``n`` folds (items sharing a premise or text stay together, :mod:`cuelens.audit.groups`; iteration
``i`` uses :func:`~cuelens.audit.groups.iteration_seed`); each fold is predicted by the headline (metric, aggregator) fitted on the other folds plus
the train split when there is one. ``C[q]`` accumulates correct predictions (an MCQ tie among
``t`` choices adds ``1/t``); ``q`` is easy when ``C[q] > k/2``. Linear aggregators warm-start
across the ``n·k`` refits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cuelens.audit.fitting import Fit, ModelBank, ScanData, ScoringOptions, over_folds, \
    predict_cues
from cuelens.audit.groups import iteration_seed


@dataclass
class EasyHard:
    score: np.ndarray  # C[q] / k per evaluation item
    easy: np.ndarray  # bool per evaluation item


def easy_hard_split(data: ScanData, options: ScoringOptions, metric: str, aggregator: str,
                    n_folds: int, iterations: int, progress=None) -> EasyHard:
    """Per-item ``C[q]/k`` and the easy mask over ``data.eval_items``."""
    bank = ModelBank(options.seed)
    model = (metric, aggregator)
    counter = np.zeros(len(data.eval_items))
    for iteration in range(iterations):
        folds = data.eval_folds(n_folds, iteration_seed(options.seed, iteration))

        def fold_fn(fit_rows, eval_rows, inner):
            fit = Fit.of_rows(data.pool, fit_rows, inner, options)
            return predict_cues(data.pool, fit, eval_rows, [model], bank)

        counter += over_folds(data.pool, data.eval_items, data.train_items, folds, fold_fn)[model]
        if progress is not None:
            progress("easy_hard", (iteration + 1) / iterations)
    return EasyHard(score=counter / iterations, easy=counter > iterations / 2)
