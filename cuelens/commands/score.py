"""``audit score`` and ``audit score-pairs``: sentence log-probabilities under language models
and minimal-pair accuracy (docs/methods.md §9)."""

from __future__ import annotations

import math
from pathlib import Path
from collections.abc import Callable
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape

from cuelens.commands.common import SeedOpt, console, terminal_text, user_errors, visible
from cuelens.commands.model_options import DeviceOpt
from cuelens.wording import plural

ModelOpt = Annotated[list[str], typer.Option(
    "--model", "-m", help="ngram:DIR, lstm:DIR, rnn:DIR, or a Hugging Face causal/masked model "
                          "(local directory, alias or hub id). Repeat for several models.")]
KindOpt = Annotated[Optional[str], typer.Option(
    "--kind", help="Force the Hugging Face model kind: causal or masked (default: from config).")]
BaseOpt = Annotated[float, typer.Option("--base", help="Logarithm base (default e; 2 = bits).")]
BowOpt = Annotated[bool, typer.Option(
    "--bow-correction/--no-bow-correction",
    help="Causal models: Pimentel & Meister word-boundary correction (off = the common buggy "
         "value, for comparison).")]
MethodOpt = Annotated[str, typer.Option("--mlm-method", help="Masked models: pll or chain.")]
OrdersOpt = Annotated[int, typer.Option(
    "--orders", help="Random word orders for --mlm-method chain.")]
BatchOpt = Annotated[int, typer.Option("--batch-size", help="Sentences per causal-model batch.")]
PunctOpt = Annotated[bool, typer.Option(
    "--detach-punct", help="Causal models: punctuation written without a space is its own word "
                           "(default: it belongs to the word before it).")]
OpenVocabOpt = Annotated[bool, typer.Option(
    "--open-vocab", help="Word-level models (ngram/lstm/rnn): give unknown words a probability "
                         "by their spelling instead of all sharing <unk> (docs/lm.md).")]
CHUNK = 256  # sentences scored between progress updates


def _scorers(models, kind, device, base, bow_correction, mlm_method, orders, seed, batch_size,
             detach_punct, open_vocab):
    from cuelens.errors import UserError
    from cuelens.lm import load_scorer

    if not models:
        raise UserError("give at least one --model")
    scorers = []
    for spec in models:
        scorer = load_scorer(spec, device=device, kind=kind, base=base,
                             bow_correction=bow_correction, mlm_method=mlm_method, orders=orders,
                             seed=seed, batch_size=batch_size, detach_punct=detach_punct,
                             open_vocab=open_vocab)
        if any(s.name == scorer.name for s in scorers):  # results are keyed by the name
            raise UserError(f"model '{spec}' is given twice (as {scorer.name}); its results "
                            "would be written over each other")
        inner = getattr(scorer, "scorer", scorer)
        if hasattr(inner, "scheme"):
            console.print(f"{escape(spec)}: word scheme {inner.scheme.describe()}, bow correction "
                          f"{'on' if bow_correction and inner.scheme.kind == 'bow' else 'off'}",
                          soft_wrap=True, highlight=False)
        scorers.append(scorer)
    return scorers


def score_all(scorer, sentences: list[str], chunk: int = CHUNK, name: str | None = None,
              where: Callable[[int], str] = lambda i: f"sentence {i + 1}"):
    """Scores of all sentences, ``chunk`` at a time under a progress bar (``name``: the model's
    name shown, default the scorer's; ``where(i)``: how an error names sentence ``i``)."""
    import numpy as np

    from cuelens.commands.model_options import item_progress
    from cuelens.lm.scoring import SentenceError

    out = []
    with item_progress() as progress:
        task = progress.add_task(f"scoring with {name or scorer.name}", total=len(sentences))
        for begin in range(0, len(sentences), chunk):
            try:
                out.append(scorer.score(sentences[begin:begin + chunk]))
            except SentenceError as error:   # its index counts from the chunk's start
                index = begin + error.index
                raise error.at(index, where(index)) from None
            progress.advance(task, len(out[-1]))
    return np.concatenate(out) if out else np.zeros(0)


@user_errors
def score(
    sentences: Annotated[Path, typer.Argument(
        help="Sentences: one per line, or JSONL, CSV, TSV or Parquet with a \"sentence\" "
             "field (optionally .gz).")],
    model: ModelOpt = [],
    words: Annotated[bool, typer.Option("--words", help="Add per-word surprisals.")] = False,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Write JSON Lines here: a name ending in .jsonl, .ndjson or .json, "
                      "optionally .gz (default: a TSV table on stdout).")] = None,
    kind: KindOpt = None, device: DeviceOpt = "auto", base: BaseOpt = math.e,
    bow_correction: BowOpt = True, mlm_method: MethodOpt = "pll", orders: OrdersOpt = 100,
    seed: SeedOpt = 0, batch_size: BatchOpt = 32, detach_punct: PunctOpt = False,
    open_vocab: OpenVocabOpt = False,
) -> None:
    """Log-probability of each sentence under one or more language models.

    Words a model does not know are counted per sentence ("oov") and, with --words, marked
    ("unknown": their positions; [unk] after the word on the terminal).

    Example: audit score sentences.txt --model ngram:models/tri --model gpt2 --words
    --out scores.jsonl
    """
    from cuelens.jsonio import null_non_finite, write_jsonl
    from cuelens.outputs import check_outputs
    from cuelens.lm import spec_path
    from cuelens.lm.text import check_jsonl_name, read_sentences

    check_outputs([out], [sentences, *map(spec_path, model)])
    if out is not None:   # scores.csv held JSON Lines
        check_jsonl_name(out)
    lines, texts = read_sentences(sentences)
    from cuelens.lm.pairs import oov_counts

    scorers = _scorers(model, kind, device, base, bow_correction, mlm_method, orders, seed,
                       batch_size, detach_punct, open_vocab)
    totals = {s.name: score_all(s, texts, where=lambda i: f"line {lines[i]} of {sentences}")
              for s in scorers}
    counts = {s.name: c for s in scorers if (c := oov_counts(s, texts)) is not None}
    rows: list[dict] = []
    for i, (line, text) in enumerate(zip(lines, texts)):
        row: dict[str, Any] = {"line": line, "sentence": text,
                               "logprob": {name: round(float(v[i]), 6)
                                           for name, v in totals.items()},
                               "oov": {name: int(c[1][i]) for name, c in counts.items()}}
        if words:
            scored = {s.name: s.word_scores(text) for s in scorers}
            row["surprisal"] = {name: [[w, round(-v, 6)] for w, v in pairs]
                                for name, pairs in scored.items()}
            row["unknown"] = {s.name: [j for j, flag in enumerate(
                s.unknown([w for w, _ in scored[s.name]])) if flag]
                for s in scorers if hasattr(s, "unknown")}
        rows.append(row)
    for name, (n_words, n_unknown) in counts.items():
        console.print(f"{escape(name)}: {int(n_unknown.sum()):,} of "
                      f"{plural(int(n_words.sum()), 'word')} "
                      f"unknown ({100 * n_unknown.sum() / max(n_words.sum(), 1):.1f}%), in "
                      f"{int((n_unknown > 0).sum()):,} of {plural(len(texts), 'sentence')}",
                      highlight=False, soft_wrap=True)
    if out is not None:
        write_jsonl(out, null_non_finite(rows))   # probability 0: logprob null
        console.print(f"wrote {plural(len(rows), 'sentence')} to {escape(str(out))}")
        return
    names = list(totals)
    typer.echo("\t".join(["line", "sentence", *names]))
    for row in rows:
        typer.echo("\t".join([str(row["line"]), visible(row["sentence"]),
                               *[f"{row['logprob'][n]:.4f}" for n in names]]))
        for name, pairs in row.get("surprisal", {}).items():
            unknown = set(row["unknown"].get(name, []))
            typer.echo(f"  {name}: " + " ".join(
                f"{visible(w)}{'[unk]' if j in unknown else ''}/{s:.2f}"
                for j, (w, s) in enumerate(pairs)))


def _pair_sentence(path: Path, index: int, lines: list[int]) -> str:
    """Sentence ``index`` of the good sentences followed by the bad ones, by its field and the
    input line of its pair (``lines``)."""
    return (f"sentence_{'good' if index < len(lines) else 'bad'} on line "
            f"{lines[index % len(lines)]} of {path}")


@user_errors
def score_pairs(
    pairs: Annotated[Path, typer.Argument(
        help="Minimal pairs: JSONL (BLiMP format), CSV, TSV or Parquet (optionally .gz) with "
             "sentence_good / sentence_bad, and optionally paradigm and field.")],
    model: ModelOpt = [],
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Write the accuracies as JSON (kind score_pairs) here: a name ending "
                      "in .json.")] = None,
    kind: KindOpt = None, device: DeviceOpt = "auto",
    bow_correction: BowOpt = True, mlm_method: MethodOpt = "pll", orders: OrdersOpt = 100,
    seed: SeedOpt = 0, batch_size: BatchOpt = 32, detach_punct: PunctOpt = False,
    open_vocab: OpenVocabOpt = False,
) -> None:
    """Minimal-pair accuracy (good sentence more probable than bad) per model, paradigm and field.

    Ties (both sentences equally probable) count as errors and are reported separately, with
    the share of words and pairs outside each model's vocabulary (OOV).

    Example: audit score-pairs blimp.jsonl.gz --model ngram:models/tri --model gpt2 --out blimp.json
    """
    from rich.table import Table

    from cuelens.jsonio import write_json
    from cuelens.outputs import check_json_output, check_outputs
    from cuelens.lm import spec_path
    from cuelens.lm.pairs import evaluate_pairs
    from cuelens.lm.text import read_pairs

    check_json_output(out, "--out")
    check_outputs([out], [pairs, *map(spec_path, model)])
    data = read_pairs(pairs)
    scorers = _scorers(model, kind, device, math.e, bow_correction, mlm_method, orders, seed,
                       batch_size, detach_punct, open_vocab)
    results = {}
    for scorer in scorers:
        both = score_all(scorer, data.good + data.bad,
                         where=lambda i: _pair_sentence(pairs, i, data.lines))
        results[scorer.name] = evaluate_pairs(scorer, both, data.good, data.bad, data.paradigm,
                                              data.field)
    fields = sorted({f for r in results.values() for f in r["by_field"]})
    table = Table(title=f"minimal-pair accuracy % ({plural(len(data.good), 'pair')}; ties count "
                        "as errors; OOV: pairs with a word outside the model's vocabulary)")
    for column in ["model", "overall", "ties", "OOV pairs", "OOV words", *fields]:
        table.add_column(terminal_text(column),    # a field name is dataset text
                         justify="left" if column == "model" else "right", overflow="fold")
    for name, r in results.items():
        oov = r.get("oov")
        table.add_row(escape(name), f"{100 * r['overall']:.1f}",
                      f"{100 * r['ties']['overall']:.1f}",
                      f"{100 * oov['pair_rate']:.1f}" if oov else "n/a",
                      f"{100 * oov['word_rate']:.1f}" if oov else "n/a",
                      *[f"{100 * r['by_field'].get(f, float('nan')):.1f}" for f in fields])
    from rich.console import Console

    Console().print(table)
    if out is not None:
        write_json(out, {"kind": "score_pairs", "models": results})
        console.print(f"wrote {escape(str(out))}")
