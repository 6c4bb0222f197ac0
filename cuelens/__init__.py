"""cuelens: audit NLP datasets for annotation artifacts ("cues") and test whether models exploit them.

Methods follow docs/SPEC (see README for citations). Sub-packages:
``data`` (loading and normalising datasets), ``audit`` (cue statistics, leakage, easy/hard, ICQ),
``models`` (shared model loading), ``probes`` (model cue-reliance tests), ``augment`` (perturbation
operators and LM scoring), ``reports`` (HTML reports).
"""

__version__ = "0.1.0"
