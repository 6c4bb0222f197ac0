"""Causal (GPT-2 family) Hugging Face models: word probabilities per Pimentel & Meister
(docs/methods.md §9; the bow/eow schemes, ``detach_punct``: docs/lm.md, "Causal models")."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cuelens.errors import UserError
from cuelens.lm.scoring import SentenceTooLong, SentenceWithoutTokens
from cuelens.lm.shared_prefix import PREFIX_MASKS, SharedPrefixRows
from cuelens.audit.segmenters import UNSPACED_RE
from cuelens.lm.text import SubwordScorer, cut_unspaced
from cuelens.models.batching import sorted_batches

MARKERS = ("Ġ", "▁", " ")


@dataclass(frozen=True)
class WordScheme:
    """How a tokenizer marks word boundaries: ``kind`` is ``"bow"`` or ``"eow"``."""

    kind: str
    marker: str
    dummy_prefix: bool      # the tokenizer marks the first word by itself

    def describe(self) -> str:
        where = "beginning" if self.kind == "bow" else "end"
        return f"{self.kind} (tokens marking the {where} of a word with '{self.marker}')"


def detect_scheme(tokenizer) -> WordScheme:
    """Find the word-boundary marker by tokenising a probe text."""
    pieces = tokenizer.convert_ids_to_tokens(
        tokenizer("hello world", add_special_tokens=False)["input_ids"])
    for marker in MARKERS:
        if any(p.startswith(marker) for p in pieces[1:]):
            return WordScheme("bow", marker, pieces[0].startswith(marker))
    if pieces and pieces[-1].endswith("</w>"):
        return WordScheme("eow", "</w>", False)
    raise UserError(f"cannot tell how the tokenizer marks words (tokens: {pieces}); "
                    "only beginning- or end-of-word marked tokenizers are supported")


def token_mask(tokenizer, size: int, keep: Callable[[str], bool]) -> np.ndarray:
    """Boolean ``[size]``: the tokens, special ones excepted, whose text passes ``keep``."""
    mask = np.zeros(size, dtype=bool)
    tokens = tokenizer.convert_ids_to_tokens(list(range(min(size, len(tokenizer)))))
    mask[: len(tokens)] = [t is not None and keep(t) for t in tokens]
    mask[[i for i in tokenizer.all_special_ids if i < size]] = False
    return mask


def _regroup(flat: list, sizes: list[int]) -> list[list]:
    """``flat`` cut into consecutive pieces of the given ``sizes``."""
    ends = list(itertools.accumulate(sizes))
    return [flat[end - n:end] for end, n in zip(ends, sizes)]


def logits_to_keep_kind(model) -> str | None:
    """How ``model.forward`` takes ``logits_to_keep``, so the vocabulary layer runs only where a
    log-probability is read: ``"mask"`` (a ``[batch, width]`` bool mask, through transformers'
    ``slice_logits_to_keep``, transformers ≥ 5.2x), ``"positions"`` (a 1-D tensor of positions
    kept in every row: the older ``hidden_states[:, indices, :]``, still used by a few
    architectures) or ``None`` (no such argument: full logits)."""
    import inspect

    if "logits_to_keep" not in inspect.signature(model.forward).parameters:
        return None
    try:
        source = inspect.getsource(type(model).forward)
    except (OSError, TypeError):
        return "positions"
    return "mask" if "slice_logits_to_keep(" in source else "positions"


class CausalScorer(SubwordScorer):
    """Sentence and word log-probabilities under a causal LM; implements ``SentenceScorer``."""

    def __init__(self, model, tokenizer, *, name: str, device: str = "cpu",
                 bow_correction: bool = True, batch_size: int = 32, detach_punct: bool = False,
                 batch_tokens: int | None = None):
        import torch
        import transformers

        self.model, self.tokenizer, self.name = model.to(device).eval(), tokenizer, name
        self.device, self.batch_size, self.bow_correction = device, batch_size, bow_correction
        # padded tokens per forward (continuation scoring): the fastest budgets measured on the
        # CPU box and an H100 (docs/BENCHMARKS.md, "LLM option scoring on a GPU")
        self.batch_tokens = batch_tokens or (1024 if str(device) == "cpu" else 8192)
        self._shared_prefix = int(transformers.__version__.split(".")[0]) >= 5
        self._logits_to_keep = logits_to_keep_kind(model)
        self.scheme = detect_scheme(tokenizer)
        bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else \
            tokenizer.eos_token_id
        if bos is None:
            raise UserError(f"model '{name}': the tokenizer has neither a BOS nor an EOS token "
                            "to use as the start-of-text context")
        self.bos, self.eos = bos, tokenizer.eos_token_id
        size = model.get_output_embeddings().weight.shape[0]
        bow, marker = self.scheme.kind == "bow", self.scheme.marker
        none = np.zeros(size, dtype=bool)
        # B: tokens beginning with the marker; P: unmarked ones starting with a non-alphanumeric
        starts = token_mask(tokenizer, size, lambda t: t.startswith(marker)) if bow else none
        punct = token_mask(tokenizer, size, lambda t: t != "" and not t.startswith(marker) and
                           not t[0].isalnum()) if bow and detach_punct else none
        self._starts, self._punct = starts | punct, punct
        boundary = self._starts.copy()
        if self.eos is not None:
            boundary[self.eos] = True
        unmarked = ~self._starts
        unmarked[[i for i in tokenizer.all_special_ids if i < size]] = False
        unmarked[len(tokenizer):] = False
        self._boundary = torch.from_numpy(boundary).to(device)
        self._boundary_ids = torch.from_numpy(np.flatnonzero(boundary)).to(device)
        self._unmarked = torch.from_numpy(unmarked).to(device)
        self.max_length = getattr(model.config, "n_positions", None) or \
            getattr(model.config, "max_position_embeddings", None)

    # ----------------------------------------------------------------- tokenisation
    def _tokenize(self, sentences: list[list[str]]) -> list[list[list[int]]]:
        """Token ids of every word of every sentence (one fast-tokenizer call)."""
        space = "" if self.scheme.dummy_prefix else " "
        flat = [w if i == 0 else space + w for words in sentences for i, w in enumerate(words)]
        ids = self.tokenizer(flat, add_special_tokens=False)["input_ids"] if flat else []
        pieces = _regroup(ids, [len(words) for words in sentences])
        if not self._punct.any():
            return pieces
        return [[w for piece in words for w in self._split_punct(piece)] for words in pieces]

    def _split_punct(self, tokens: list[int]) -> list[list[int]]:
        """Cut a whitespace word's tokens at punctuation tokens and right after them."""
        words: list[list[int]] = []
        for i, t in enumerate(tokens):
            if not words or self._punct[t] or self._punct[tokens[i - 1]]:
                words.append([t])
            else:
                words[-1].append(t)
        return words

    # ----------------------------------------------------------------- core
    def _batch_terms(self, rows: list[np.ndarray]):
        """Token log-probs ``[n, L−1]``, boundary mass ``[n, L]`` and first-word denominator."""
        import torch

        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        attention = np.zeros((len(rows), width), dtype=np.int64)
        for j, r in enumerate(rows):
            ids[j, : len(r)], attention[j, : len(r)] = r, 1
        ids_t = torch.from_numpy(ids).to(self.device)
        logits = self.model(input_ids=ids_t,
                            attention_mask=torch.from_numpy(attention).to(self.device)).logits
        logits = logits.float()
        log_z = torch.logsumexp(logits, dim=-1)
        token = logits[:, :-1].gather(-1, ids_t[:, 1:, None]).squeeze(-1) - log_z[:, :-1]
        if not (self.bow_correction and self.scheme.kind == "bow"):
            return token.cpu().numpy(), None, None
        neg = torch.finfo(logits.dtype).min
        mass = torch.logsumexp(logits.masked_fill(~self._boundary, neg), dim=-1) - log_z
        first = (torch.logsumexp(logits[:, 0].masked_fill(~self._unmarked, neg), dim=-1)
                 - log_z[:, 0])
        return token.cpu().numpy(), mass.cpu().numpy(), first.cpu().numpy()

    def word_logprobs(self, sentences: list[str]) -> list[np.ndarray]:
        """Corrected log-probability of every whitespace word of every sentence."""
        return self.token_word_logprobs(self._tokenize([s.split() for s in sentences]))

    def token_word_logprobs(self, tokens: list[list[list[int]]],
                            by_token: bool = False) -> list[np.ndarray]:
        """Word log-probabilities of already tokenised texts (texts → words → token ids);
        ``by_token``: each token's share instead (see :meth:`_words`)."""
        import torch

        rows = [np.array([self.bos, *[t for w in words for t in w]], dtype=np.int64)
                for words in tokens]
        limit = self.max_length
        too_long = [i for i, r in enumerate(rows) if limit and len(r) > limit]
        if too_long and limit:
            raise SentenceTooLong(too_long[0], len(rows[too_long[0]]), limit)
        no_tokens = [i for i, r in enumerate(rows) if len(r) == 1 and tokens[i]]
        if no_tokens:  # words the tokenizer drops: log p = 0 would be probability 1
            raise SentenceWithoutTokens(no_tokens[0])
        out: list[np.ndarray] = [np.zeros(0)] * len(rows)
        with torch.inference_mode():
            for batch in sorted_batches(np.array([len(r) for r in rows]), self.batch_size):
                index = [i for i in batch if len(rows[i]) > 1]
                if not index:
                    continue
                token, mass, first = self._batch_terms([rows[i] for i in index])
                for j, i in enumerate(index):
                    out[i] = self._words(tokens[i], token[j], None if mass is None else mass[j],
                                         None if first is None else first[j], by_token)
        return out

    def _words(self, words: list[list[int]], token: np.ndarray, mass, first,
               by_token: bool = False) -> np.ndarray:
        """The log-probability of each word; ``by_token``: of each token, its word's boundary
        terms on its first and last token (the tokens of a word add up to it)."""
        lengths = np.array([len(w) for w in words])
        ends = np.cumsum(lengths)                    # token position of each word's last token
        starts = ends - lengths + 1
        cumulative = np.concatenate([[0.0], np.cumsum(token[: ends[-1]], dtype=np.float64)])
        logp = cumulative[ends] - cumulative[starts - 1]
        terms = token[: ends[-1]].astype(np.float64)
        if mass is None:
            return terms if by_token else logp
        mass = mass.astype(np.float64)
        if self._punct.any():    # after a punctuation token a new word surely starts
            flat = np.array([t for w in words for t in w])
            mass[1: len(flat) + 1][self._punct[flat]] = 0.0
        denominator = mass[starts - 1]
        if not self._starts[words[0][0]]:
            denominator[0] = first
        if by_token:
            some = lengths > 0
            np.add.at(terms, ends[some] - 1, mass[ends[some]])
            np.add.at(terms, starts[some] - 1, -denominator[some])
            return terms
        return logp + mass[ends] - denominator

    # ----------------------------------------------------------------- SentenceScorer
    def word_scores(self, sentence: str) -> list[tuple[str, float]]:
        """Words and their log-probabilities; a word of a script written without spaces is
        cut as a scan would cut it (:func:`cut_unspaced`; a fast tokenizer is needed)."""
        tokens = self._tokenize([sentence.split()])
        words = [self.tokenizer.decode(w).strip() for w in tokens[0]]
        pairs = list(zip(words, self.token_word_logprobs(tokens)[0].tolist()))
        if not (UNSPACED_RE.search(sentence) and self.tokenizer.is_fast):
            return pairs
        sizes = [len(w) for w in tokens[0]]
        return cut_unspaced(sentence, pairs, _regroup(list(range(sum(sizes))), sizes),
                            self._token_offsets(sentence),
                            self.token_word_logprobs(tokens, by_token=True)[0])

    def _token_offsets(self, sentence: str) -> np.ndarray:
        """``[n, 2]`` character spans in ``sentence`` of its tokens as :meth:`_tokenize` cuts
        it (a word's marker space belongs to the word)."""
        space = "" if self.scheme.dummy_prefix else " "
        out = []
        for i, match in enumerate(re.finditer(r"\S+", sentence)):
            prefix = space if i else ""
            encoded = self.tokenizer(prefix + match.group(), add_special_tokens=False,
                                     return_offsets_mapping=True)
            out += [(match.start() + max(a - len(prefix), 0),
                     match.start() + max(b - len(prefix), 0)) for a, b in encoded["offset_mapping"]]
        return np.array(out, dtype=np.int64).reshape(-1, 2)

    def next_word_logprobs(self, prefix: str, candidates: list[str]) -> np.ndarray:
        """Corrected ``log p(candidate | prefix)`` of each candidate as the next word (pruning
        for the synthetic pair search, docs/methods.md §9); the prefix may be empty."""
        head = prefix.strip()
        texts = [f"{head} {c}" if head else c for c in candidates]
        return np.array([w[-1] for w in self.word_logprobs(texts)], dtype=np.float64)

    # ----------------------------------------------------------------- prompt continuations
    def continuation_logprobs(self, prompts: list[str], continuations: list[list[str]], *,
                              on_batch=None) -> list[tuple[np.ndarray, np.ndarray]]:
        """``log p(c | prompt)`` of every continuation ``c`` of every prompt, and its token count,
        one shared-prefix row per prompt (docs/llm-probe.md, "Scoring"; docs/lm.md, "Prompt
        continuations"). ``on_batch(n)`` reports finished prompts."""
        import torch

        space = "" if self.scheme.dummy_prefix else " "
        prompt_ids = [[self.bos, *ids] for ids in
                      self.tokenizer(list(prompts), add_special_tokens=False)["input_ids"]]
        flat = [space + c for options in continuations for c in options]
        flat_ids = self.tokenizer(flat, add_special_tokens=False)["input_ids"] if flat else []
        cont_ids = _regroup(flat_ids, [len(options) for options in continuations])
        for i, (p, cs) in enumerate(zip(prompt_ids, cont_ids)):
            if not cs or any(len(c) == 0 for c in cs):
                raise UserError(f"prompt {i + 1}: empty answer option")
            longest = len(p) + max(len(c) for c in cs)
            if self.max_length and longest > self.max_length:
                raise UserError(f"prompt {i + 1} and its answer have {longest} tokens, more "
                                f"than the model's {self.max_length}")
        mask = PREFIX_MASKS.get(getattr(self.model.config, "_attn_implementation", "")) \
            if self._shared_prefix else None
        shared = mask is not None
        rows = [(i, [j]) for i, cs in enumerate(cont_ids) for j in range(len(cs))] if not \
            shared else [(i, list(range(len(cs)))) for i, cs in enumerate(cont_ids)]
        width = [len(prompt_ids[i]) + sum(len(cont_ids[i][j]) for j in js) for i, js in rows]
        order = np.argsort([-w for w in width], kind="stable")
        values: list[list[float]] = [[0.0] * len(cs) for cs in cont_ids]
        left = [len(cs) for cs in cont_ids]
        with torch.inference_mode():
            begin = 0
            while begin < len(order):
                n = max(1, min(self.batch_size, self.batch_tokens // width[order[begin]]))
                batch = [rows[r] for r in order[begin:begin + n]]
                begin += n
                got = self._continuation_batch(SharedPrefixRows(
                    [prompt_ids[i] for i, _ in batch],
                    [[cont_ids[i][j] for j in js] for i, js in batch]), mask)
                done = 0
                for (i, js), row in zip(batch, got):
                    for j, v in zip(js, row):
                        values[i][j] = v
                    left[i] -= len(js)
                    done += left[i] == 0
                if on_batch is not None and done:
                    on_batch(done)
        return [(np.array(v, dtype=np.float64), np.array([len(c) for c in cs]))
                for v, cs in zip(values, cont_ids)]

    def _continuation_batch(self, rows: SharedPrefixRows, mask) -> list[list[float]]:
        """Corrected log-probabilities of the continuations of one batch of rows."""
        import torch

        device = self.device
        ids = torch.from_numpy(rows.ids).to(device)
        keep = torch.from_numpy(rows.keep).to(device)
        groups = torch.from_numpy(rows.groups).to(device)
        kwargs = {"attention_mask": (groups >= 0).long()} if mask is None else \
            {"attention_mask": mask(groups, self.model.dtype)}
        if self._logits_to_keep == "mask":
            kwargs["logits_to_keep"] = keep
        elif self._logits_to_keep == "positions":    # the batch's union of kept positions
            columns = keep.any(dim=0).nonzero()[:, 0]
            kwargs["logits_to_keep"], keep = columns, keep[:, columns]
        logits = self.model(input_ids=ids, position_ids=torch.from_numpy(rows.positions).to(
            device), **kwargs).logits
        logits = (logits[keep] if logits.dim() == 3 else logits).float()     # [kept, V]
        predictors = torch.from_numpy(rows.predictors).to(device)
        targets = torch.from_numpy(rows.targets).to(device)
        log_z = torch.logsumexp(logits, dim=-1)
        token = logits[predictors, targets] - log_z[predictors]
        total = torch.zeros(len(rows.ends), dtype=torch.float64, device=device).index_add_(
            0, torch.from_numpy(rows.owners).to(device), token.double())
        if self.bow_correction and self.scheme.kind == "bow":
            at = torch.from_numpy(np.concatenate([rows.ends, rows.starts])).to(device)
            mass = torch.logsumexp(logits[at][:, self._boundary_ids], dim=-1) - log_z[at]
            total += (mass[: len(rows.ends)] - mass[len(rows.ends):]).double()
        return _regroup(total.cpu().numpy().tolist(), rows.counts)
