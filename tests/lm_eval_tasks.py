"""A local lm-evaluation-harness task over a JSONL file, as the golden-log script
(scripts/eval_log_goldens.py) and the peer benchmark (benchmarks/compare_peers.py) give it to
``lm_eval --include_path``: one multiple-choice task, test split only."""

from __future__ import annotations

from pathlib import Path


def task_yaml(name: str, data: Path, doc_to_text: str, doc_to_choice: str,
              metrics: tuple[str, ...] = ("acc",), target_delimiter: str | None = None) -> str:
    """The task's YAML: ``doc_to_text`` / ``doc_to_choice`` are lm-eval Jinja templates or
    field names; ``metrics`` are averaged, higher is better."""
    lines = [f"task: {name}", "dataset_path: json", "dataset_kwargs:", "  data_files:",
             f"    test: {data}", "test_split: test", "output_type: multiple_choice",
             f"doc_to_text: {doc_to_text}", "doc_to_target: label",
             f"doc_to_choice: {doc_to_choice}"]
    if target_delimiter is not None:
        lines.append(f'target_delimiter: "{target_delimiter}"')
    lines.append("metric_list:")
    for metric in metrics:
        lines += [f"  - metric: {metric}", "    aggregation: mean", "    higher_is_better: true"]
    return "\n".join(lines) + "\n"
