"""spaCy's greedy transition-based parses (dependencies, entities) stepped from Python, the GIL
held (docs/icq-features.md, "Speed").

spaCy's parser and entity recogniser run their transition loop in compiled code with the GIL
released (``Parser.greedy_parse``); its Cython modules are built with profiling hooks (spaCy
builds them so for Python < 3.12), and every call of the loop's small inline functions (an
arg-max per hidden unit, the state's stack and buffer queries) takes the GIL back to ask whether
a profiler runs: about 60% of the parser's loop on SNLI hypotheses. :func:`parse` runs the same
loop from Python with the GIL held, where those checks cost nothing: spaCy's own step model
scores the states (``model.predict``) and its ``transition_states`` applies the best valid
transition, in the batches of the component's ``pipe`` (a batch sorted by length, in quarter
batches). The parses and entities equal ``pipe``'s on every text of COPA, SNLI and MNLI dev
(tests/test_features_stepped_parse.py checks real text); the output layer's matrix product runs
on numpy's BLAS instead of BLIS.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


def parse(parser: Any, docs: Iterable[Any], batch_size: int) -> Iterator[Any]:
    """The docs of ``parser.pipe(docs, batch_size=batch_size)``, parsed in place and in order;
    a parser with a beam (``beam_width`` > 1) is left to its own ``pipe``."""
    from spacy.util import minibatch

    if parser.cfg.get("beam_width", 1) != 1:
        yield from parser.pipe(docs, batch_size=batch_size)
        return
    for batch in minibatch(docs, size=batch_size):
        in_order = list(batch)
        by_length = sorted(in_order, key=len)
        for part in minibatch(by_length, size=max(batch_size // 4, 2)):
            part = list(part)
            parser.set_annotations(part, _greedy_states(parser, part))
        yield from in_order


def _greedy_states(parser: Any, docs: list[Any]) -> list[Any]:
    """The final parse states of ``docs``: at each step, every unfinished state takes its
    best-scoring valid transition, as in ``Parser.greedy_parse``."""
    states = parser.moves.init_batch(docs)
    if not any(len(doc) for doc in docs):
        return states
    model = parser.model.predict(docs)
    todo = [state for state in states if not state.is_final()]
    while todo:
        todo = parser.transition_states(todo, model.predict(todo))
    model.clear_memory()
    return states
