"""Rows that score several continuations of one prompt in one forward pass, the prompt computed
once (docs/lm.md, "Prompt continuations"). Kept positions: ``predictors[t]``/``targets[t]``
predict continuation token ``t``; ``starts[c]``/``ends[c]`` bound continuation ``c``.

>>> rows = SharedPrefixRows([[0, 5, 6]], [[[7], [8, 9]]])
>>> rows.ids.tolist(), rows.positions.tolist(), rows.groups.tolist()
([[0, 5, 6, 7, 8, 9]], [[0, 1, 2, 3, 3, 4]], [[0, 0, 0, 1, 2, 2]])
>>> rows.predictors.tolist(), rows.targets.tolist(), rows.ends.tolist()
([0, 0, 2], [7, 8, 9], [1, 3])
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


class SharedPrefixRows:
    """The arrays of one batch of rows (see the module docstring's example)."""

    def __init__(self, prompts: list[list[int]], continuations: list[list[list[int]]]):
        lengths = [len(p) + sum(len(c) for c in cs) for p, cs in zip(prompts, continuations)]
        width = max(lengths)
        shape = (len(prompts), width)
        self.ids = np.zeros(shape, dtype=np.int64)
        self.positions = np.zeros(shape, dtype=np.int64)
        self.groups = np.full(shape, -1, dtype=np.int64)     # -1 padding, 0 prompt, j + 1 c_j
        self.keep = np.zeros(shape, dtype=bool)
        predictors: list[int] = []
        targets: list[int] = []
        owners: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        offset = 0                         # flattened kept index of this row's prompt end
        for r, (prompt, options) in enumerate(zip(prompts, continuations)):
            n = len(prompt)
            self.ids[r, :n], self.positions[r, :n], self.groups[r, :n] = prompt, np.arange(n), 0
            self.keep[r, n - 1: lengths[r]] = True
            column = n
            for j, option in enumerate(options):
                m = len(option)
                span = slice(column, column + m)
                self.ids[r, span], self.positions[r, span] = option, np.arange(n, n + m)
                self.groups[r, span] = j + 1
                first = offset + 1 + column - n          # kept index of the option's 1st token
                predictors += [offset, *range(first, first + m - 1)]
                targets += option
                owners += [len(ends)] * m
                starts.append(offset)
                ends.append(first + m - 1)
                column += m
            offset += lengths[r] - n + 1
        self.predictors, self.targets, self.owners, self.starts, self.ends = (
            np.array(a, dtype=np.int64) for a in (predictors, targets, owners, starts, ends))
        self.counts = [len(cs) for cs in continuations]


def _allowed(groups, dtype=None):
    """Boolean ``[rows, 1, W, W]``: query ``q`` may attend to key ``k`` (causal; the prompt or
    the same continuation; padding sees padding and the prompt, which keeps it finite); the
    SDPA mask as it is (``dtype``, of the additive mask, unused)."""
    import torch

    width = groups.shape[1]
    causal = torch.ones(width, width, dtype=torch.bool, device=groups.device).tril()
    key, query = groups[:, None, :], groups[:, :, None]
    return (causal & ((key == 0) | (key == query)))[:, None]


def _additive_mask(groups, dtype):
    import torch

    allowed = _allowed(groups)
    return torch.zeros(allowed.shape, dtype=dtype, device=groups.device).masked_fill(
        ~allowed, torch.finfo(dtype).min)


#: Custom 4D attention masks by ``config._attn_implementation`` (transformers ≥ 5 passes a 4D
#: mask through as given): SDPA takes booleans (True = attend), eager attention adds the mask.
PREFIX_MASKS: dict[str, Callable] = {"sdpa": _allowed, "eager": _additive_mask}
