"""Zero-shot LLM probing through prompt templates (docs/methods.md §6, docs/llm-probe.md).

- :mod:`~cuelens.probes.llm.templates`: sandboxed Jinja2 templates with a declared answer format,
  and the built-in registry (``audit prompts``);
- :mod:`~cuelens.probes.llm.backends`: local ``transformers`` causal LMs and (via
  :mod:`~cuelens.probes.llm.openai`) OpenAI-compatible HTTP endpoints;
- :mod:`~cuelens.probes.llm.parsing`: answers read out of generated text;
- :mod:`~cuelens.probes.llm.cache`: the persistent SQLite response cache;
- :mod:`~cuelens.probes.llm.answers`: one template's answers to every test item;
- :mod:`~cuelens.probes.llm.pipeline`: per-template statistics, the verdict.
"""
