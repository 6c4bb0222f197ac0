"""``audit contrast``: controversial sentence pairs between language models (docs/methods.md §9)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from cuelens.commands.common import OutFileOpt, SeedOpt, console, user_errors
from cuelens.commands.model_options import DeviceOpt
from cuelens.errors import check_at_least_1
from cuelens.outputs import check_json_output
from cuelens.wording import plural

app = typer.Typer(help="Controversial sentence pairs between language models: natural selection, "
                       "synthetic search, and model–human consistency (docs/methods.md §9).\n\n"
                       "Example: audit contrast natural --scores logprobs.npz --out pairs.jsonl",
                  no_args_is_help=True)

ModelsOpt = Annotated[Optional[str], typer.Option(
    "--models", "--model", help="Comma-separated model names (keys of the scores file) or "
                                "scorer specs for the LM scoring layer.")]
SpecsOpt = Annotated[Optional[str], typer.Option(
    "--models", "--model", help="The two scorer specs m1,m2 (e.g. ngram:lm/tri,lstm:lm/lstm; "
                                "docs/lm.md).")]
JudgedOpt = Annotated[Optional[str], typer.Option(
    "--models", "--model", help="Comma-separated model names: the <model> of the "
                                "sentence1_<model>_prob columns (default: every model with "
                                "both columns).")]
HtmlOpt = Annotated[Optional[Path], typer.Option(
    "--html", help="Also write the HTML report (the same page as audit report) here.")]


def _check_outputs(outputs: list[Optional[Path]], inputs: list) -> None:
    """Refuse, before any work, outputs that overwrite an input or each other (or a model)."""
    from cuelens.outputs import check_outputs
    from cuelens.lm import spec_path

    check_outputs(outputs, [spec_path(p) if isinstance(p, str) else p for p in inputs])


def _nonempty_lines(path: Path, what: str, option: str, unit: str) -> list[str]:
    """The non-blank lines of ``path`` (a text file: :func:`~cuelens.lm.text.plain_lines`);
    none is an error naming it (an empty --init wrote '0 triplets', an empty --vocab searched
    nothing and reported the starting sentences)."""
    from cuelens.errors import UserError
    from cuelens.lm.text import plain_lines

    lines = plain_lines(path, option, unit)
    if not lines:
        raise UserError(f"no {what} in file", path=str(path))
    return lines


def _write_results(results: dict, path: Optional[Path], html: Optional[Path],
                   inputs: list) -> None:
    """Write a results file that ``audit report`` renders (when ``path`` is given) and
    ``--html`` (that file rendered by the report)."""
    from cuelens.jsonio import write_json

    if path:
        write_json(path, results)
    if html:
        from cuelens.reports import render_report

        render_report(results, html, inputs=inputs)


def _load_scorers(specs: list[str], device: str):
    """Scorers of the LM scoring layer (``cuelens.lm.load_scorer``) for ``specs``."""
    from cuelens.lm import load_scorer

    with console.status("loading language models"):
        return [load_scorer(spec, device=device) for spec in specs]


def _score_corpus(texts: list[str], specs: list[str], batch_size: int, corpus: Path | None,
                  device: str):
    """Log-probabilities of the lines of ``corpus``, one column per model, a row per line; a
    blank line is not scored (its row is NaN: never ranked)."""
    import numpy as np

    from cuelens.commands.score import score_all

    lines = [i for i, text in enumerate(texts) if text.strip()]
    scored = [score_all(scorer, [texts[i] for i in lines], batch_size, spec,
                        where=lambda k: f"line {lines[k] + 1} of {corpus}")
              for spec, scorer in zip(specs, _load_scorers(specs, device))]
    logprobs = np.full((len(texts), len(specs)), np.nan)
    logprobs[lines] = np.column_stack(scored)
    return logprobs


@app.command("natural")
@user_errors
def natural(
    out: OutFileOpt,
    scores: Annotated[Optional[Path], typer.Option(
        help="Per-model sentence log-probabilities: .npz (one array per model) or .jsonl.")] = None,
    corpus: Annotated[Optional[Path], typer.Option(
        "--corpus", "--sentences",
        help="Sentences, one per line: their texts (line i = index i), or, without --scores, "
             "the corpus to score with --models. With texts, sentences repeating a word other "
             "than a function word are dropped first (the published pre-filter).")] = None,
    function_words: Annotated[Optional[Path], typer.Option(
        help="Words allowed to repeat in the pre-filter, one per line (default: built-in "
             "articles and prepositions, docs/contrast.md).")] = None,
    models: ModelsOpt = None,
    per_pair: Annotated[int, typer.Option(help="Pairs selected per model pair.")] = 10,
    threshold: Annotated[float, typer.Option(
        help="Minimum fractional rank (0 to 1) of a sentence under the model that accepts "
             "it.")] = 0.5,
    solver: Annotated[str, typer.Option(help="lsa (linear_sum_assignment) | milp (HiGHS).")] = "lsa",
    summary: Annotated[Optional[Path], typer.Option(
        help="Write the objective, run facts and pairs as JSON here, a name ending in .json "
             "(kind contrast_pairs: audit report renders it).")] = None,
    batch_size: Annotated[int, typer.Option(
        help="Sentences of --corpus given to each of --models at a time (the progress bar "
             "advances after each); a model runs them in batches of its own (a Hugging Face "
             "causal model 32 sentences at most). Unused with --scores.")] = 256,
    device: DeviceOpt = "auto",
    html: HtmlOpt = None,
):
    """Select natural controversial sentence pairs for every model pair, exactly.

    Ranks each model's log-probabilities (fractional ranks in [0, 1], ties averaged, 0 = least
    probable), prunes each slot to its cheapest feasible candidates (provably optimal) and
    solves the assignment with each sentence used at most once.

    Example: audit contrast natural --scores natural_sentence_logprobs.npz --per-pair 10 --out pairs.jsonl
    """
    import numpy as np

    from cuelens.lm.contrast import natural as nat
    from cuelens.models import hub
    from cuelens.lm.contrast.scores import load_scores, on_corpus_lines, parse_models
    from cuelens.errors import UserError
    from cuelens.atomic import output_set
    from cuelens.jsonio import write_jsonl
    from cuelens.lm.text import check_jsonl_name, plain_lines

    check_json_output(summary, "--summary")
    _check_outputs([out, summary, html],
                   [scores, corpus, function_words, *(parse_models(models) or [])])
    check_jsonl_name(out)   # pairs.csv held JSON Lines
    check_at_least_1(per_pair=per_pair, batch_size=batch_size)
    nat.SOLVERS.get(solver)    # an unknown --solver before the scoring, not after it
    hub.check_device(device)
    if not 0 <= threshold <= 1:   # ranks are in [0, 1]; also refuses nan
        raise UserError(f"--threshold must be a rank between 0 and 1, not {threshold}")
    names = parse_models(models)
    if names is not None and len(names) < 2:   # before the corpus is scored, not after
        raise UserError(f"--models needs at least two models, got {models!r}")
    texts = plain_lines(corpus, "--corpus/--sentences", keep_blank=True) if corpus else None
    allowed = nat.FUNCTION_WORDS
    if function_words:   # read before the corpus is scored
        allowed = frozenset(word.lower() for word in
                            plain_lines(function_words, "--function-words", "word"))
    indices = None    # corpus line index of each row of logprobs, when not its position
    if scores is not None:
        names, logprobs, file_texts, indices = load_scores(scores, names)
        if texts is not None and corpus is not None:
            logprobs = on_corpus_lines(logprobs, indices, file_texts, texts, scores, corpus)
            indices = None
        else:
            texts = file_texts
    elif texts is not None and names:
        logprobs = _score_corpus(texts, names, batch_size, corpus, device)
    else:
        raise UserError("give --scores FILE, or --corpus FILE with --models m1,m2,…")
    written = np.ones(len(logprobs), dtype=bool) if texts is None else \
        np.array([bool(text.strip()) for text in texts], dtype=bool)
    if not written.any():
        raise UserError("no sentences in file (it is empty or every line is blank)",
                        path=str(corpus or scores))
    keep = np.flatnonzero(written)
    if texts is not None:
        keep = np.flatnonzero(written & nat.without_repeated_words(texts, allowed))
    n_written, n_blank = int(written.sum()), int((~written).sum())
    needed = per_pair * len(names) * (len(names) - 1)
    if len(keep) < needed <= n_written:   # the corpus has enough: say where they went
        raise UserError(f"{needed} sentences are needed but only {len(keep)} of the "
                        f"{n_written} are ranked: the repeated-word pre-filter dropped "
                        f"{n_written - len(keep)} (--function-words lists the words allowed "
                        "to repeat)", path=str(corpus or scores))
    started = time.perf_counter()
    ranks = nat.fractional_ranks(logprobs[keep])
    with console.status("solving the assignment"):
        selection = nat.select_natural_pairs(ranks, per_pair, threshold, solver)
    seconds = time.perf_counter() - started
    problems = nat.check_selection(ranks, selection, threshold)
    if problems:  # cannot happen for a correct solver; never write an invalid selection
        raise RuntimeError("; ".join(problems))
    rows = nat.pair_records(selection, names, logprobs[keep], ranks,
                            None if texts is None else [texts[i] for i in keep],
                            keep if indices is None else indices[keep])
    facts = {"objective": round(selection.objective, 9),
             "objective_definition": "sum over trials of rank(s1|model_1) + rank(s2|model_2); "
                                     "ranks are fractional in [0, 1], 0 = least probable",
             "models": names, "n_sentences": n_written,
             "n_blank_lines": n_blank,
             "repeated_word_filter": (f"dropped {plural(n_written - len(keep), 'sentence')} repeating "
                                      "a word other than a function word" if texts is not None
                                      else "not applied: no sentence texts (give --sentences)"),
             "n_sentences_ranked": int(len(keep)), "per_pair": per_pair,
             "n_trials": len(rows), "threshold": threshold, "solver": solver,
             "n_candidates_after_pruning": selection.n_candidates, "feasible": True,
             "non_finite_logprobs": int((~np.isfinite(logprobs[written])).sum())}
    with output_set():
        write_jsonl(out, rows)
        _write_results({"kind": "contrast_pairs", "method": "natural", **facts, "pairs": rows},
                       summary, html, [scores, corpus, function_words, out])
    if n_blank:
        console.print(f"skipped {plural(n_blank, 'blank line')} (not sentences)")
    console.print(f"repeated-word pre-filter: {facts['repeated_word_filter']}")
    console.print(f"selected {plural(len(rows), 'pair')} from {plural(len(ranks), 'sentence')} × "
                  f"{plural(len(names), 'model')} in {seconds:.2f}s; objective {selection.objective:.6f} "
                  f"({plural(selection.n_candidates, 'candidate')} after pruning) → "
                  f"{escape(str(out))}")


@app.command("synthetic")
@user_errors
def synthetic(
    out: OutFileOpt,
    init: Annotated[Path, typer.Option(help="Natural starting sentences, one per line.")],
    vocab: Annotated[Path, typer.Option(help="Candidate words, one per line.")],
    models: SpecsOpt = None,
    vocab_initial: Annotated[Optional[Path], typer.Option(
        help="Candidate words for the first position (default: --vocab).")] = None,
    function_words: Annotated[Optional[Path], typer.Option(
        help="Words allowed to repeat within a sentence, one per line.")] = None,
    n: Annotated[int, typer.Option("--n", help="Number of starting sentences (the first n "
                                               "distinct lines of --init).")] = 10,
    max_steps: Annotated[int, typer.Option(help="Most word positions tried per search.")] = 200,
    patience: Annotated[int, typer.Option(
        help="Stop after this many positions in a row without improvement.")] = 8,
    batch_size: Annotated[int, typer.Option(
        help="Candidate sentences (the word replacements at one position) given to a model at "
             "a time, bounding their memory; a model runs them in batches of its own (a Hugging "
             "Face causal model 32 sentences at most). The triplets do not depend on it.")] = 2048,
    device: DeviceOpt = "auto",
    seed: SeedOpt = 0,
    resume: Annotated[bool, typer.Option(
        help="Keep the triplets already in --out (an interrupted run of the same command) and "
             "go on after them.")] = False,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", help="Search this many starting sentences at once in worker processes "
                             "(0: one per CPU core); the output is the same as with 1.")] = 1,
    summary: Annotated[Optional[Path], typer.Option(
        help="Write run facts (time per sentence, success rate) and the triplets as JSON here, "
             "a name ending in .json (kind contrast_pairs: audit report renders it).")] = None,
    html: HtmlOpt = None,
):
    """Synthesise controversial triplets (n, s1, s2) by word-replacement search.

    s1 is rejected by model 1 and accepted by model 2 (log p(s1|m2) >= log p(n|m2)); s2 the
    reverse. Each output line has both models' log-probabilities and the controversiality; a
    line is appended as soon as its sentence is done, so an interrupted run keeps what it found
    (--resume continues it).

    Example: audit contrast synthetic --models ngram:lm/tri,lstm:lm/lstm --init natural_sentences_8word.txt --vocab vocab_low.txt --n 10 --out triplets.jsonl
    """
    from cuelens.commands.common import progress_bar
    from cuelens.errors import UserError
    from cuelens.atomic import output_set
    from cuelens.lm.contrast.scores import parse_models
    from cuelens.lm.text import check_jsonl_name, plain_lines
    from cuelens.lm.contrast.synthetic import Vocabulary
    from cuelens.lm.contrast.synthetic_run import run_synthetic
    from cuelens.errors import check_seed
    from cuelens.models import hub

    check_json_output(summary, "--summary")
    _check_outputs([out, summary, html],
                   [init, vocab, vocab_initial, function_words, *(parse_models(models) or [])])
    check_jsonl_name(out, gzip=False)   # its triplets are appended as they are found
    specs = parse_models(models)
    if not specs or len(specs) != 2:
        raise UserError("--models needs exactly two scorers: m1,m2")
    check_at_least_1(n=n, max_steps=max_steps, patience=patience, batch_size=batch_size)
    check_seed(seed)
    hub.check_device(device)
    lines = _nonempty_lines(init, "starting sentences", "--init", "sentence")
    index = {s: i for i, s in reversed(list(enumerate(lines)))}
    starts = [(index[s], s) for s in list(dict.fromkeys(lines))[:n]]
    words = Vocabulary(_nonempty_lines(vocab, "candidate words", "--vocab", "word"),
                       _nonempty_lines(vocab_initial, "candidate words", "--vocab-initial",
                                       "word") if vocab_initial else None,
                       frozenset(plain_lines(function_words, "--function-words", "word"))
                       if function_words else frozenset())
    # with several jobs each worker process loads the models from their specs
    m1, m2 = _load_scorers(specs, device) if jobs == 1 else specs
    with progress_bar("synthetic search") as progress:
        run = run_synthetic(starts, m1, m2, words, out, seed=seed, max_steps=max_steps,
                            patience=patience, batch_size=batch_size, resume=resume, jobs=jobs,
                            progress=progress, device=device)
    rows, seconds = run.rows, sorted(run.seconds)
    facts = {"models": specs, "n_sentences": len(rows), "seed": seed, "max_steps": max_steps,
             "patience": patience,
             "controversial_fraction": sum(r["controversial"] for r in rows) / max(len(rows), 1),
             "resumed_sentences": run.resumed,
             "seconds_per_sentence_median": seconds[len(seconds) // 2] if seconds else None,
             "seconds_total": round(sum(seconds), 3)}
    with output_set():
        _write_results({"kind": "contrast_pairs", "method": "synthetic", **facts,
                        "pairs": rows}, summary, html,
                       [init, vocab, vocab_initial, function_words, out])
    resumed = f" ({run.resumed} resumed)" if run.resumed else ""
    console.print(f"{plural(len(rows), 'triplet')}{resumed}, "
                  f"{facts['controversial_fraction']:.0%} controversial, "
                  f"{facts['seconds_total']:.1f}s → {escape(str(out))}")


@app.command("judge")
@user_errors
def judge(
    trials: Annotated[Path, typer.Option(
        help="CSV with sentence1, sentence2, sentence{1,2}_<model>_prob (and usually subject, "
             "rating, targeting columns).")],
    out: OutFileOpt,
    ratings: Annotated[Optional[Path], typer.Option(
        help="Separate CSV of human ratings: sentence1, sentence2, subject, rating.")] = None,
    models: JudgedOpt = None,
    midpoint: Annotated[float, typer.Option(
        help="Rating meaning 'no preference'; rating > midpoint = sentence2 preferred.")] = 3.5,
    subject_field: Annotated[str, typer.Option(help="Column naming the participant.")] = "subject",
    group_field: Annotated[Optional[str], typer.Option(
        help="Column naming participant groups for the tests (default: each participant).")] = None,
    all_trials: Annotated[bool, typer.Option(
        help="Evaluate every model on every trial, not only on the trials that targeted it.")]
        = False,
    html: HtmlOpt = None,
):
    """Model–human consistency: accuracy, signed-rank cosine, noise ceiling, Wilcoxon + FDR.

    Example: audit contrast judge --trials contstim_Nov2022_30_participants_anon_aligned_with_loso.csv.gz --out judge.json
    """
    from cuelens.lm.contrast import judge as jg
    from cuelens.lm.contrast.scores import parse_models
    from cuelens.atomic import output_set
    from cuelens.jsonio import format_number as num

    check_json_output(out, "--out")
    _check_outputs([out, html], [trials, ratings])
    df = jg.load_trials(trials, ratings, midpoint, subject_field, group_field)
    names = parse_models(models) or jg.model_names(df.columns)
    result = {"kind": "contrast_judge", "midpoint": midpoint, "n_rows": int(len(df)),
              "n_subjects": int(df["subject"].nunique()),
              "n_pairs": int(df["pair"].nunique()), **jg.judge(df, names, midpoint, all_trials)}
    check = jg.cross_check_majority(df, midpoint)
    if check is not None:
        result["cross_check"] = check
    with output_set():
        _write_results(result, out, html, [p for p in (trials, ratings, out) if p])
    for name, entry in result["models"].items():
        ceiling = entry["accuracy_noise_ceiling"]
        console.print(f"{escape(name)}: accuracy {num(entry['accuracy'])} (ceiling "
                      f"{num(ceiling['lower'])}–{num(ceiling['upper'])}), scsr "
                      f"{num(entry['scsr'])}, n={entry['n']}")
    console.print(f"→ {escape(str(out))}")
