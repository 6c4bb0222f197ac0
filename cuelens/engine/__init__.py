"""Loaders for large inputs — ``memory``, ``local`` (streamed into compact columns or chunk files)
and ``ray`` — each giving the same :class:`~cuelens.data.Dataset`;
:func:`cuelens.audit.engines.load_for_scan` chooses one (docs/large-datasets.md)."""
