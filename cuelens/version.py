"""The package version (one place: ``cuelens.__version__``, results.json ``tool.version``,
run.json)."""

__version__ = "0.1.0"
