"""Perturbation operators (docs/methods.md §7), one registry shared by ``audit stress`` and ``audit augment``.

Importing this package registers the built-in operators: co, mt, neg+, neg-, ner, pr, pi, adv,
syn, voice (``crossover``/``mutation`` are aliases of co/mt); look them up here, where all of them
are registered.
"""

from cuelens.augment.operators import lexical, pronouns, surface, syntax  # noqa: F401
from cuelens.augment.operators.registry import ALIASES, CORRECT, OPERATORS, WRONG, OpContext, \
    Operator
from cuelens.errors import UserError

__all__ = ["CORRECT", "OPERATORS", "WRONG", "OpContext", "Operator", "get_operator", "parse_ops"]


def get_operator(name: str) -> Operator:
    """The operator called ``name`` (or one of its aliases, any case)."""
    key = ALIASES.get(name.lower(), name.lower())
    if key not in OPERATORS:
        raise OPERATORS.unknown(name)
    return OPERATORS[key]


def parse_ops(spec: str) -> list[Operator]:
    """Operators named in a comma-separated ``--ops`` value (order kept, duplicates dropped)."""
    names = [part.strip() for part in spec.split(",") if part.strip()]
    if not names:
        raise UserError("--ops names no operator")
    ops: dict[str, Operator] = {}
    for name in names:
        op = get_operator(name)
        ops.setdefault(op.name, op)
    return list(ops.values())
