"""Perturbation operators (docs/methods.md §7), one registry shared by ``audit stress`` and ``audit augment``.

Importing this package registers the built-in operators: co, mt, neg+, neg-, ner, pr, pi, adv,
syn, voice (``crossover``/``mutation`` are aliases of co/mt).
"""

from cuelens.augment.operators import lexical, pronouns, surface, syntax  # noqa: F401
from cuelens.augment.operators.registry import (CORRECT, OPERATORS, WRONG, OpContext, Operator,
                                                get_operator, parse_ops)

__all__ = ["CORRECT", "OPERATORS", "WRONG", "OpContext", "Operator", "get_operator", "parse_ops"]
