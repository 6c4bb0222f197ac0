"""``audit score`` and ``audit score-pairs``: sentence log-probabilities under language models
and minimal-pair accuracy (SPEC §9)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from cuelens.commands.common import SeedOpt, console, user_errors

ModelOpt = Annotated[list[str], typer.Option(
    "--model", "-m", help="ngram:DIR, lstm:DIR, rnn:DIR, or a Hugging Face causal/masked model "
                          "(local directory, alias or hub id). Repeat for several models.")]
KindOpt = Annotated[Optional[str], typer.Option(
    "--kind", help="Force the Hugging Face model kind: causal or masked (default: from config).")]
DeviceOpt = Annotated[str, typer.Option("--device", help="auto, cpu or cuda.")]
BaseOpt = Annotated[float, typer.Option("--base", help="Logarithm base (default e; 2 = bits).")]
BowOpt = Annotated[bool, typer.Option(
    "--bow-correction/--no-bow-correction",
    help="Causal models: Pimentel & Meister word-boundary correction (off = the common buggy "
         "value, for comparison).")]
MethodOpt = Annotated[str, typer.Option("--mlm-method", help="Masked models: pll or chain.")]
OrdersOpt = Annotated[int, typer.Option("--orders", help="Random word orders for --mlm-method chain.")]
BatchOpt = Annotated[int, typer.Option("--batch-size", help="Sentences per causal-model batch.")]
PunctOpt = Annotated[bool, typer.Option(
    "--detach-punct", help="Causal models: punctuation written without a space is its own word "
                           "(default: it belongs to the word before it).")]
CHUNK = 2048


def _scorers(models, kind, device, base, bow_correction, mlm_method, orders, seed, batch_size,
             detach_punct):
    from cuelens.errors import UserError
    from cuelens.models.lm import load_scorer

    if not models:
        raise UserError("give at least one --model")
    scorers = []
    for spec in models:
        scorer = load_scorer(spec, device=device, kind=kind, base=base,
                             bow_correction=bow_correction, mlm_method=mlm_method, orders=orders,
                             seed=seed, batch_size=batch_size, detach_punct=detach_punct)
        inner = getattr(scorer, "scorer", scorer)
        if hasattr(inner, "scheme"):
            console.print(f"{spec}: word scheme {inner.scheme.describe()}, bow correction "
                          f"{'on' if bow_correction and inner.scheme.kind == 'bow' else 'off'}",
                          soft_wrap=True, highlight=False)
        scorers.append(scorer)
    return scorers


def _score_all(scorer, sentences: list[str]):
    """Scores of all sentences, in chunks under a progress bar."""
    import numpy as np

    from cuelens.commands.model_options import item_progress

    out = []
    with item_progress() as progress:
        task = progress.add_task(f"scoring with {scorer.name}", total=len(sentences))
        for begin in range(0, len(sentences), CHUNK):
            out.append(scorer.score(sentences[begin:begin + CHUNK]))
            progress.advance(task, len(out[-1]))
    return np.concatenate(out) if out else np.zeros(0)


@user_errors
def score(
    sentences: Annotated[Path, typer.Argument(
        help="Sentences: one per line, or JSONL with a \"sentence\" field (optionally .gz).")],
    model: ModelOpt = [],
    words: Annotated[bool, typer.Option("--words", help="Add per-word surprisals.")] = False,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Write JSONL here (default: a TSV table on stdout).")] = None,
    kind: KindOpt = None, device: DeviceOpt = "auto", base: BaseOpt = math.e,
    bow_correction: BowOpt = True, mlm_method: MethodOpt = "pll", orders: OrdersOpt = 100,
    seed: SeedOpt = 0, batch_size: BatchOpt = 32, detach_punct: PunctOpt = False,
) -> None:
    """Log-probability of each sentence under one or more language models.

    Example: audit score sentences.txt --model ngram:models/tri --model gpt2 --words --out scores.jsonl
    """
    from cuelens.io import check_outputs, write_jsonl
    from cuelens.models.lm import spec_path
    from cuelens.models.lm.text import read_sentences

    check_outputs([out], [sentences, *map(spec_path, model)])
    texts = read_sentences(sentences)
    scorers = _scorers(model, kind, device, base, bow_correction, mlm_method, orders, seed,
                       batch_size, detach_punct)
    totals = {s.name: _score_all(s, texts) for s in scorers}
    rows: list[dict] = []
    for i, text in enumerate(texts):
        row: dict[str, Any] = {"sentence": text,
                               "logprob": {name: round(float(v[i]), 6)
                                           for name, v in totals.items()}}
        if words:
            row["surprisal"] = {s.name: [[w, round(-v, 6)] for w, v in s.word_scores(text)]
                                for s in scorers}
        rows.append(row)
    if out is not None:
        write_jsonl(out, rows)
        console.print(f"wrote {len(rows)} sentences to {out}")
        return
    names = list(totals)
    typer.echo("\t".join(["sentence", *names]))
    for row in rows:
        typer.echo("\t".join([row["sentence"], *[f"{row['logprob'][n]:.4f}" for n in names]]))
        for name, pairs in row.get("surprisal", {}).items():
            typer.echo(f"  {name}: " + " ".join(f"{w}/{s:.2f}" for w, s in pairs))


def pair_accuracy(good, bad, paradigm: list[str], field: list[str]) -> dict:
    """``{"overall", "n", "by_paradigm", "by_field"}``: the fraction of pairs whose good sentence
    scores strictly higher (ties count as errors)."""
    import numpy as np

    correct = (np.asarray(good) > np.asarray(bad)).astype(np.float64)

    def by(groups: list[str]) -> dict[str, float]:
        keys, inverse = np.unique(np.asarray(groups), return_inverse=True)
        sums = np.bincount(inverse, weights=correct)
        counts = np.bincount(inverse)
        return {str(k): round(float(s / c), 6) for k, s, c in zip(keys, sums, counts)}

    return {"overall": round(float(correct.mean()), 6), "n": int(len(correct)),
            "by_paradigm": by(paradigm), "by_field": by(field)}


@user_errors
def score_pairs(
    pairs: Annotated[Path, typer.Argument(
        help="Minimal pairs: JSONL (optionally .gz) with sentence_good / sentence_bad, and "
             "optionally paradigm and field (BLiMP format).")],
    model: ModelOpt = [],
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Write the accuracies as JSON (kind score_pairs) here.")] = None,
    kind: KindOpt = None, device: DeviceOpt = "auto",
    bow_correction: BowOpt = True, mlm_method: MethodOpt = "pll", orders: OrdersOpt = 100,
    seed: SeedOpt = 0, batch_size: BatchOpt = 32, detach_punct: PunctOpt = False,
) -> None:
    """Minimal-pair accuracy (good sentence more probable than bad) per model, paradigm and field.

    Example: audit score-pairs blimp.jsonl.gz --model ngram:models/tri --model gpt2 --out blimp.json
    """
    from rich.table import Table

    from cuelens.io import check_outputs, write_json
    from cuelens.models.lm import spec_path
    from cuelens.models.lm.text import read_pairs

    check_outputs([out], [pairs, *map(spec_path, model)])
    data = read_pairs(pairs)
    scorers = _scorers(model, kind, device, math.e, bow_correction, mlm_method, orders, seed,
                       batch_size, detach_punct)
    results = {}
    for scorer in scorers:
        both = _score_all(scorer, data.good + data.bad)
        results[scorer.name] = pair_accuracy(both[: len(data.good)], both[len(data.good):],
                                             data.paradigm, data.field)
    fields = sorted({f for r in results.values() for f in r["by_field"]})
    table = Table(title=f"minimal-pair accuracy ({len(data.good)} pairs)")
    for column in ["model", "overall", *fields]:
        table.add_column(column, justify="left" if column == "model" else "right")
    for name, r in results.items():
        table.add_row(name, f"{100 * r['overall']:.1f}",
                      *[f"{100 * r['by_field'].get(f, float('nan')):.1f}" for f in fields])
    from rich.console import Console

    Console().print(table)
    if out is not None:
        write_json(out, {"kind": "score_pairs", "models": results})
        console.print(f"wrote {out}")
