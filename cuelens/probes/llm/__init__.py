"""Zero-shot LLM probing through prompt templates: templates, backends, parsing, the response cache,
one template's answers and the per-template pipeline (docs/methods.md §14, docs/llm-probe.md)."""
