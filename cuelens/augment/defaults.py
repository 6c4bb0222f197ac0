"""Defaults of the perturbation commands, importable without loading the operators (the CLI's
``--help`` reads them; the operators pull in spaCy and lemminflect)."""

# The short-circuit test's operators (docs/methods.md §7): the default of `audit stress --ops`,
# `audit probe --sc-ops`, ShortCircuitOptions and cuelens.stress.
DEFAULT_STRESS_OPS = "co,mt,neg+,neg-,ner,pr,pi,adv,syn,voice"
