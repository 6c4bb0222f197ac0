"""Loaders for large inputs (docs/large-datasets.md): ``memory``, today's loader (whole files as
Python records); ``local``, streamed into compact columns (:mod:`cuelens.engine.streaming`), or
into chunk files (:mod:`cuelens.engine.chunks`); ``ray``, the local engine's reading on Ray
workers (:mod:`cuelens.audit.ray_passes`, extra ``cuelens[ray]``). Every engine produces the same
:class:`~cuelens.data.Dataset`, so results are identical for the same inputs and seed;
:func:`cuelens.audit.engines.load_for_scan` chooses one.
"""
