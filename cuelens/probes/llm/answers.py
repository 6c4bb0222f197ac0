"""An LLM's answers to the test items through one prompt template: render each item, ask the
backend (through the response cache), then take the arg-max option score (score templates,
optionally length-normalised and calibrated) or parse the generated text (generate templates;
unparseable: ``-1``); docs/llm-probe.md, "Getting an answer". Below the LLM probe's statistics
(:mod:`cuelens.probes.llm.pipeline`), so that the ``llm`` prediction source needs nothing above."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import softmax

from cuelens.data.dataset import Dataset, Task
from cuelens.errors import UserError
from cuelens.probes.llm.backends import Backend, prepare_backend
from cuelens.probes.llm.cache import ResponseCache, cache_key
from cuelens.probes.llm.parsing import parse_answer
from cuelens.probes.llm.requests import Request, RequestTooLong
from cuelens.probes.llm.templates import PromptTemplate, content_free, item_fields

Progress = Callable[[str, float], None]
TOKENS = ("prompt_tokens", "completion_tokens")  # what a response counts


@dataclass
class Answers:
    """One template's predictions: ``pred`` (−1 = unparseable), option probabilities (score
    templates), generated texts (generate templates) and tokens used."""

    pred: np.ndarray
    probs: np.ndarray | None
    texts: list[str] | None
    prompt_tokens: int
    completion_tokens: int

    @property
    def parsed(self) -> np.ndarray:
        return self.pred >= 0


def make_request(template: PromptTemplate, fields: dict, label_names: list[str]) -> Request:
    prompt = template.render(fields).rstrip()
    if template.mode == "score":
        return Request("score", prompt, tuple(template.option_words(label_names, fields)))
    return Request("generate", prompt, max_new_tokens=template.max_new_tokens)


def ask(backend: Backend, template: PromptTemplate, requests: list[Request], ids: list[str], *,
        cache: ResponseCache | None = None, progress: Progress | None = None) -> list[dict]:
    """Responses to ``requests``: from the cache where present, else from the backend (each
    stored as soon as it arrives)."""
    keys = [cache_key(backend.name, backend.model, backend.settings, template.name,
                      template.digest, item, r.key_parts()) for item, r in zip(ids, requests)]
    responses: list[dict | None] = [cache.get(k) if cache is not None else None
                                     for k in keys]
    missing = [i for i, r in enumerate(responses) if r is None]
    done = len(requests) - len(missing)

    def store(j: int, response: dict) -> None:
        nonlocal done
        i = missing[j]
        responses[i] = response
        if cache is not None:
            cache.put(keys[i], response, backend=backend.name, model=backend.model,
                      template=template.name, item=ids[i])
        done += 1
        if progress is not None:
            progress(template.name, done / max(len(requests), 1))

    if missing:
        try:
            backend.run([requests[i] for i in missing], store)
        except RequestTooLong as error:
            raise UserError(f"prompt template {template.name!r}, item "
                            f"{ids[missing[error.index]]!r}: {error.message}") from None
    return responses  # type: ignore[return-value]


def _option_scores(responses: list[dict], normalize: bool) -> np.ndarray:
    logp = np.asarray([r["logprobs"] for r in responses], dtype=np.float64)
    if normalize:
        logp = logp / np.asarray([r["n_tokens"] for r in responses], dtype=np.float64)
    return logp


def answer(backend: Backend, template: PromptTemplate, dataset: Dataset, *,
           cache: ResponseCache | None = None, calibrate: bool = False, normalize: bool = False,
           progress: Progress | None = None) -> Answers:
    """Ask ``backend`` every test item of ``dataset`` through ``template``."""
    split, labels = dataset.test, dataset.label_names
    template.check(dataset.task, labels)
    prepare_backend(backend, [template])
    fields = [item_fields(split, i, labels) for i in range(len(split))]
    requests = [make_request(template, f, labels) for f in fields]
    responses = ask(backend, template, requests, list(split.ids), cache=cache,
                    progress=progress)
    used = [sum(r[k] for r in responses) for k in TOKENS]
    if template.mode == "generate":
        pred = np.asarray([parse_reply(template, r["text"], f, labels)
                           for r, f in zip(responses, fields)], dtype=np.int64)
        return Answers(pred, None, [r["text"] for r in responses], *used)
    scores = _option_scores(responses, normalize)
    if calibrate:
        free = [make_request(template, content_free(f, template), labels) for f in fields]
        unique = list(dict.fromkeys(free))
        answers = ask(backend, template, unique, ["__content_free__"] * len(unique),
                      cache=cache)
        used = [n + sum(r[k] for r in answers) for n, k in zip(used, TOKENS)]
        prior = dict(zip(unique, np.log(softmax(_option_scores(answers, normalize), axis=1))))
        scores = scores - np.stack([prior[r] for r in free])
    return Answers(scores.argmax(axis=1), softmax(scores, axis=1), None, *used)


def parse_reply(template: PromptTemplate, text: str, fields: dict, labels: list[str]) -> int:
    letters = template.task == Task.MCQ and template.options == "letters"
    found = parse_answer(text, template.option_words(labels, fields), letters=letters)
    return -1 if found is None else found
