"""Perturbation operators (docs/methods.md §7), one registry shared by ``audit stress`` and ``audit augment``.

The table :data:`OPERATORS` lists the built-in operators: syn, pr, pi, ner, co, mt, adv, neg+,
neg-, voice (``crossover``/``mutation`` are aliases of co/mt); look them up here.
"""

from cuelens.errors import option_name
from cuelens.augment.operators import lexical, pronouns, surface, syntax
from cuelens.augment.operators.registry import ALIASES, CORRECT, WRONG, OpContext, Operator
from cuelens.errors import UserError
from cuelens.registry import Registry

__all__ = ["CORRECT", "OPERATORS", "WRONG", "OpContext", "Operator", "get_operator", "parse_ops"]

#: operator name → :class:`Operator` (``ops``/``--ops``; the order ``audit stress`` runs them in)
OPERATORS: Registry[Operator] = Registry("operator", [(op.name, op) for op in (
    Operator.of("syn", lexical.synonym, source=WRONG),
    Operator.of("pr", pronouns.switch_pronoun),
    Operator.of("pi", pronouns.pronoun_to_name),
    Operator.of("ner", pronouns.replace_name),
    Operator.of("co", surface.crossover, needs_parse=False),
    Operator.of("mt", surface.mutation, needs_parse=False),
    Operator.of("adv", surface.emphasis_adverb, source=WRONG),
    Operator.of("neg+", syntax.add_negation),
    Operator.of("neg-", syntax.remove_negation),
    Operator.of("voice", syntax.swap_subject_object),
)], field="ops")


def get_operator(name: str, option: str | None = None) -> Operator:
    """The operator called ``name`` (or one of its aliases, any case); ``option``: the option
    that named it, for the error (``--sc-ops``; ``None``: ``ops``, the API's argument and
    ``--ops``)."""
    key = ALIASES.get(name.lower(), name.lower())
    if key not in OPERATORS:
        raise OPERATORS.unknown(name, option)
    return OPERATORS[key]


def parse_ops(spec: str, option: str | None = None) -> list[Operator]:
    """Operators named in a comma-separated ``ops`` value (order kept, duplicates dropped);
    ``option``: the option that took it, for the errors (``None``: ``ops (--ops)``)."""
    names = [part.strip() for part in spec.split(",") if part.strip()]
    if not names:
        raise UserError(f"{option or option_name('ops')} names no operator")
    ops: dict[str, Operator] = {}
    for name in names:
        op = get_operator(name, option)
        ops.setdefault(op.name, op)
    return list(ops.values())
