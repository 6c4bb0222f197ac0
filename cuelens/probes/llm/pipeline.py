"""The LLM prompt probe: ask a backend through each template
(:mod:`cuelens.probes.llm.answers`), then the probe's own statistics per template
(:mod:`cuelens.probes.sections`, :mod:`cuelens.probes.distribution`) and the verdict, the least
cue-reliant template (docs/methods.md §6, docs/llm-probe.md "Results and verdict")."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cuelens.audit.results import LLMProbeSection, Section
from cuelens.data.dataset import Dataset, Task
from cuelens.errors import UserError
from cuelens.probes.config import ProbeConfig
from cuelens.probes.cues import Cue, probe_cues
from cuelens.probes.llm.answers import Answers, Progress, answer, ask, make_request, parse_reply
from cuelens.probes.llm.backends import Backend, prepare_backend
from cuelens.probes.llm.cache import ResponseCache
from cuelens.probes.llm.templates import PromptTemplate
from cuelens.probes.predictions import Predictions
from cuelens.probes.sanity import MAX_UNPARSEABLE
from cuelens.probes.sections import ProbeContext, probe_sections


@dataclass(repr=False)  # bounded: never the whole results dict
class LLMProbe:
    """``llm_probe`` section and answers; with :func:`probe_llm_dataset`, the whole results
    (scan sections plus ``llm_probe``) and what :meth:`write` writes (the report:
    :class:`cuelens.results.LLMProbeResult`, above)."""

    section: dict                       # results.json ``llm_probe``
    answers: dict[str, Answers]         # template name -> answers
    dataset: Dataset | None = None
    results: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write predictions-TEMPLATE.jsonl, results.json and run.json: all or none."""
        from cuelens.audit.scan_outputs import run_info
        from cuelens.atomic import output_set
        from cuelens.jsonio import write_json, write_jsonl
        from cuelens.outputs import check_outputs

        if self.dataset is None:
            raise ValueError("only a probe_llm_dataset result can be saved")
        out_dir = Path(out_dir)
        files = {f"predictions:{name}": out_dir / f"predictions-{_slug(name)}.jsonl"
                 for name in self.answers}
        files.update(results=out_dir / "results.json", run=out_dir / "run.json")
        check_outputs(files.values(), self.inputs)
        with output_set():  # the files appear together or not at all
            for name, answers in self.answers.items():
                rows = Predictions(answers.pred, answers.probs).rows(self.dataset, answers.texts)
                write_jsonl(files[f"predictions:{name}"], rows)
            write_json(files["results"], self.results)
            write_json(files["run"], run_info(self.started, inputs=self.dataset.input_paths))
        return files


def _slug(name: str) -> str:
    """A template name as a file-name part."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


@dataclass(frozen=True, repr=False)
class TemplateSection(Section):
    """One template's entry of ``llm_probe.templates`` (docs/results-schema.md; ``None``: not
    computed)."""

    name: str
    mode: str
    style: str
    source: str
    description: str
    calibrated: bool
    length_normalized: bool
    n_items: int
    unparseable: dict
    tokens: dict
    accuracy: float
    sanity: dict
    accuracy_test: dict
    easy_hard: dict | None
    distribution_test: dict
    position_bias: dict | None


def template_context(answers: Answers, dataset: Dataset, cues: list[Cue], *,
                     item_easy: np.ndarray | None = None, seed: int = 0, n_boot: int = 1000,
                     min_items: int = 10) -> ProbeContext:
    """The probe context of one template's answers: its statistics and its correctness per
    test item (``ProbeContext.correct``) are read from it."""
    return ProbeContext(dataset=dataset, predictions=Predictions(answers.pred, answers.probs),
                        cues=cues, item_easy=item_easy, seed=seed, n_boot=n_boot,
                        min_items=min_items)


def template_section(template: PromptTemplate, answers: Answers, ctx: ProbeContext, *,
                     calibrate: bool = False, normalize: bool = False,
                     position_bias: dict | None = None) -> TemplateSection:
    """One template's entry of ``llm_probe.templates`` (docs/methods.md §6 statistics over
    ``ctx``, its :func:`template_context`; the distribution test over the parsed answers only);
    ``position_bias``: its :func:`template_position_bias`."""
    parsed = answers.parsed
    n_bad = int((~parsed).sum())
    scored = template.mode == "score"
    return TemplateSection(
        name=template.name, mode=template.mode, style=template.style, source=template.source,
        description=template.description, calibrated=calibrate and scored,
        length_normalized=normalize and scored, n_items=int(len(parsed)),
        unparseable={"n": n_bad, "rate": round(n_bad / max(len(parsed), 1), 6)},
        tokens={"prompt": answers.prompt_tokens, "completion": answers.completion_tokens,
                "total": answers.prompt_tokens + answers.completion_tokens},
        accuracy=ctx.accuracy, sanity=ctx.sanity(), accuracy_test=ctx.accuracy_test(),
        easy_hard=ctx.easy_hard(), distribution_test=ctx.distribution_test(),
        position_bias=position_bias)


def verdict(sections: list[dict], correct: dict[str, np.ndarray], cues: Sequence[Cue], *,
            n_boot: int = 1000, seed: int = 0) -> dict:
    """The least cue-reliant template (docs/llm-probe.md, "Results and verdict"): the smallest
    Σ|ΔAcc| among the readable templates with a tested cue, named only when it lies below every
    other's beyond the noise (:func:`_below_every_other`; ``correct``: each template's 0/1 per
    test item, ``cues``: the cues tested)."""
    tested = [s for s in sections if s["accuracy_test"]["cues"]
              and s["unparseable"]["rate"] <= MAX_UNPARSEABLE]
    if not tested:
        return {"least_cue_reliant": None, "measure": "total_abs_delta",
                "reason": "no template had a tested cue and at most "
                          f"{MAX_UNPARSEABLE:.0%} unparseable answers"}
    ranked = sorted(tested, key=lambda s: (s["accuracy_test"]["total_abs_delta"],
                                           -s["accuracy"], s["name"]))
    out = {"least_cue_reliant": None, "measure": "total_abs_delta",
           "ranking": [s["name"] for s in ranked]}
    if len(ranked) == 1:
        return {**out, "reason": f"one template (“{ranked[0]['name']}”) was tested: there is "
                                 "no other to compare its reliance on the cues with"}
    names = {c["cue"] for c in ranked[0]["accuracy_test"]["cues"]}
    masks = [c.test_mask for c in cues if c.name in names]
    differences = _below_every_other([s["name"] for s in ranked], correct, masks,
                                     n_boot=n_boot, seed=seed)
    out["differences"] = differences
    if all(d["ci_low"] > 0 for d in differences):
        return {**out, "least_cue_reliant": ranked[0]["name"]}
    close = next(d for d in differences if d["ci_low"] <= 0)
    return {**out, "reason": f"no template relies measurably less on the cues than the others: "
                             f"Σ|ΔAcc| of “{close['template']}” is {100 * close['difference']:+.1f}"
                             f" points from “{ranked[0]['name']}”'s (interval "
                             f"{100 * close['ci_low']:+.1f} to {100 * close['ci_high']:+.1f})"}


def _below_every_other(names: list[str], correct: dict[str, np.ndarray], masks: list[np.ndarray],
                       *, n_boot: int, seed: int) -> list[dict]:
    """Σ|ΔAcc| of each other template minus the first's, with a paired bootstrap interval over
    the test items (scipy's ``bootstrap``, ``paired``): one-sided level 5% / the number of
    templates each, so that naming a template when all rely equally on the cues stays at 5%
    (docs/llm-probe.md)."""
    from scipy.stats import bootstrap

    def total(right: np.ndarray, cue_masks: tuple[np.ndarray, ...]) -> np.ndarray:
        out = np.zeros(right.shape[:-1])
        for mask in cue_masks:
            with_cue, without = mask.sum(axis=-1), (1 - mask).sum(axis=-1)
            out = out + np.abs(np.divide((right * mask).sum(axis=-1), with_cue,
                                         out=np.zeros(with_cue.shape), where=with_cue > 0)
                               - np.divide((right * (1 - mask)).sum(axis=-1), without,
                                           out=np.zeros(without.shape), where=without > 0))
        return out

    level = 1 - 2 * 0.05 / len(names)
    first = correct[names[0]]
    rows = []
    for name in names[1:]:
        data = (correct[name], first, *(m.astype(float) for m in masks))
        statistic = lambda other, best, *cue_masks, axis=-1: (  # noqa: E731
            total(other, cue_masks) - total(best, cue_masks))
        result = bootstrap(data, statistic, n_resamples=n_boot, paired=True, vectorized=True,
                           confidence_level=level, method="percentile",
                           random_state=np.random.default_rng(seed))
        low, high = result.confidence_interval
        rows.append({"template": name, "difference": round(float(statistic(*data)), 6),
                     "ci_low": round(float(low), 6), "ci_high": round(float(high), 6)})
    return rows


def check_templates(dataset: Dataset, templates: list[PromptTemplate],
                    position_bias: bool = False) -> None:
    """Refuse (``UserError``), before any scan or request, two templates of one name, a
    template that cannot answer ``dataset``'s items, or ``position_bias`` on other than MCQ."""
    names = [t.name for t in templates]
    if len(set(names)) != len(names):
        raise UserError(f"prompt templates need distinct names, got {', '.join(names)}")
    if position_bias and dataset.task != Task.MCQ:
        raise UserError("the position-bias probe is for multiple-choice datasets")
    for template in templates:
        template.check(dataset.task, dataset.label_names)


def template_position_bias(backend: Backend, template: PromptTemplate, dataset: Dataset, *,
                           cache: ResponseCache | None = None, calibrate: bool = False,
                           normalize: bool = False, seed: int = 0,
                           progress: Progress | None = None) -> dict:
    """One MCQ template's ``position_bias`` section: every rotation of the test split
    (:func:`~cuelens.probes.position.rotation_datasets`) asked through ``template`` exactly like
    the test split itself (:func:`answer`); docs/llm-probe.md, "MCQ position bias"."""
    from cuelens.probes.position import position_bias_from_picks, rotation_datasets, top_position

    check_templates(dataset, [template], position_bias=True)
    rotated = rotation_datasets(dataset, seed)
    picks = []
    for r, data in enumerate(rotated):
        step = None if progress is None else (
            lambda _, done, r=r: progress(f"{template.name} rotations",
                                          (r + done) / len(rotated)))
        got = answer(backend, template, data, cache=cache, calibrate=calibrate,
                     normalize=normalize, progress=step)
        # a score template's shared top score is a tie, as in the position probe (not A)
        picks.append(got.pred if got.probs is None else
                     np.array([top_position(row) for row in got.probs], dtype=np.int64))
    return {"source": f"prompt {template.name}",
            **position_bias_from_picks(dataset.test, picks, seed)}


def run_llm_probe(dataset: Dataset, backend: Backend, templates: list[PromptTemplate],
                  cues: list[Cue], *, item_easy: np.ndarray | None = None,
                  cache: ResponseCache | None = None, calibrate: bool = False,
                  normalize: bool = False, seed: int = 0, n_boot: int = 1000,
                  min_items: int = 10, position_bias: bool = False,
                  progress: Progress | None = None) -> LLMProbe:
    """The ``llm_probe`` results section for every template, and each template's answers;
    ``position_bias`` (MCQ): also each template's :func:`template_position_bias`."""
    check_templates(dataset, templates, position_bias)
    prepare_backend(backend, templates)  # before any item: can the backend run them all?
    answers, sections, correct = {}, [], {}
    for template in templates:
        got = answer(backend, template, dataset, cache=cache, calibrate=calibrate,
                     normalize=normalize, progress=progress)
        answers[template.name] = got
        rotations = template_position_bias(
            backend, template, dataset, cache=cache, calibrate=calibrate, normalize=normalize,
            seed=seed, progress=progress) if position_bias else None
        ctx = template_context(got, dataset, cues, item_easy=item_easy, seed=seed,
                               n_boot=n_boot, min_items=min_items)
        correct[template.name] = ctx.correct
        sections.append(template_section(template, got, ctx, calibrate=calibrate,
                                         normalize=normalize, position_bias=rotations).to_json())
    section = {"model": backend.info(), "templates": sections,
               "verdict": verdict(sections, correct, cues, n_boot=n_boot, seed=seed)}
    return LLMProbe(section, answers)


def probe_llm_dataset(dataset: Dataset, backend: Backend, templates: list[PromptTemplate], *,
                      scan=None, config: ProbeConfig | None = None,
                      cache: ResponseCache | None = None, calibrate: bool = False,
                      normalize: bool = False, position_bias: bool = False,
                      inputs: Sequence[str | Path] = (),
                      progress: Progress | None = None) -> LLMProbe:
    """The whole ``audit probe --llm``: the scan (or ``scan``, a previous
    :class:`~cuelens.audit.pipeline.ScanResult`), its top cues, and every template's answers
    and statistics, as results.json content (scan sections plus ``llm_probe``); ``config``:
    the options it shares with the model probe (default :class:`ProbeConfig`)."""
    from cuelens.audit.pipeline import scan_dataset
    from cuelens.audit.scan import ScanConfig

    started = time.time()
    config = config or ProbeConfig()
    config.validate()
    check_templates(dataset, templates, position_bias)
    if scan is None:
        scan = scan_dataset(dataset, ScanConfig(seed=config.seed), progress=progress)
    warnings: list[str] = []
    cues, _ = probe_cues(dataset, scan.sections, config, warnings)
    run = run_llm_probe(dataset, backend, templates, cues, item_easy=scan.item_easy,
                        cache=cache, calibrate=calibrate, normalize=normalize, seed=config.seed,
                        n_boot=config.bootstrap, min_items=config.min_items,
                        position_bias=position_bias, progress=progress)
    results = probe_sections(scan.sections,
                             llm_probe=LLMProbeSection(**run.section)).to_json()
    return LLMProbe(run.section, run.answers, dataset=dataset, results=results,
                    warnings=warnings, inputs=[*dataset.input_paths, *(str(p) for p in inputs)],
                    started=started)


def mcq_score_fn(backend: Backend, template: PromptTemplate, *,
                 cache: ResponseCache | None = None
                 ) -> Callable[[list[str], list[list[str]]], list[np.ndarray]]:
    """``score_fn(premises, choices) -> [scores per choice]`` for the MCQ position-bias probe:
    option log-probabilities (score templates) or a one-hot of the parsed letter (generate
    templates; all NaN, i.e. no answer, when unparseable). ``audit probe --llm --position-bias``
    uses :func:`template_position_bias` instead (the question field kept apart, calibration)."""
    if template.task != Task.MCQ:
        raise ValueError(f"prompt '{template.name}' is not an MCQ template")
    prepare_backend(backend, [template])

    def score_fn(premises: list[str], choices: list[list[str]]) -> list[np.ndarray]:
        from string import ascii_uppercase

        fields = [{"id": f"q{i}", "premise": p, "labels": [], "choices": list(cs),
                   "question": "", "letters": list(ascii_uppercase[: len(cs)])}
                  for i, (p, cs) in enumerate(zip(premises, choices))]
        requests = [make_request(template, f, []) for f in fields]
        responses = ask(backend, template, requests, [r.prompt for r in requests], cache=cache)
        if template.mode == "score":
            return [np.asarray(r["logprobs"], dtype=np.float64) for r in responses]
        out = []
        for r, f in zip(responses, fields):
            k, n = parse_reply(template, r["text"], f, []), len(f["choices"])
            out.append(np.eye(n)[k] if k >= 0 else np.full(n, np.nan))
        return out

    return score_fn
