"""Zero-shot LLM probing through prompt templates (docs/methods.md §6, docs/llm-probe.md):
:mod:`~cuelens.probes.llm.templates`, :mod:`~cuelens.probes.llm.backends` (with
:mod:`~cuelens.probes.llm.openai`), :mod:`~cuelens.probes.llm.parsing`,
:mod:`~cuelens.probes.llm.cache`, :mod:`~cuelens.probes.llm.answers` (one template's answers)
and :mod:`~cuelens.probes.llm.pipeline` (per-template statistics, the verdict).
"""
