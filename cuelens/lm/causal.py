"""Causal (GPT-2 family) Hugging Face models: word probabilities per Pimentel & Meister (docs/methods.md §9).

Text and context. A sentence is split into whitespace words ``w_1 … w_m``; word ``i > 0`` is
tokenised as ``" " + w_i`` and ``w_1`` without a space (unless the tokenizer adds a dummy prefix
itself), which for GPT-2-style tokenizers equals tokenising the whole single-spaced text.
Punctuation written without a space (``"cat."``) belongs to the word before it. The model reads
``[BOS] s_1 … s_T``; the BOS context is the tokenizer's ``bos_token`` (GPT-2: ``<|endoftext|>``,
falling back to ``eos_token``).

Word scheme, detected from the tokenizer and printed:

- ``bow`` (tokens that *begin* a word carry a marker: GPT-2's ``Ġ``, SentencePiece's ``▁``):
  ``log p(w_i) = Σ_{t∈w_i} log p(s_t | s_<t) + log Σ_{b∈B∪{eos}} p(b | s_≤e_i)
  − log Σ_{b∈B∪{eos}} p(b | s_<a_i)`` where ``B`` are the marked tokens. *First word*: written
  without the marker, so its denominator is the probability, given BOS, of the tokens that can
  start an unmarked word (every token outside ``B``, except eos and the special tokens); if the
  tokenizer marks the first word too, the usual denominator applies. *Last word*: its
  continuation term includes eos ("the text ends here"). The product of the corrected word
  probabilities telescopes to ``p(s_1 … s_T, then a word boundary | BOS) / p(first token unmarked
  | BOS)``.
- ``eow`` (tokens that *end* a word are marked, e.g. ``</w>``): the plain product is correct.

The sentence log-probability is the sum of its word log-probabilities. ``bow_correction=False``
gives the common uncorrected value ``Σ log p(s_t | s_<t)`` for comparison.

``detach_punct=True`` (bow scheme) makes punctuation its own word: ``P`` = unmarked tokens whose
first character is not alphanumeric; a word also starts at a ``P`` token and right after one,
the boundary set becomes ``B ∪ P ∪ {eos}``, the continuation term after a ``P`` token is 1 (a
new word surely starts), and ``P`` tokens leave the first-word denominator. The product still
telescopes to the probability of the text followed by a boundary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cuelens.errors import UserError
from cuelens.lm.text import TokenizerVocabulary

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


def punctuation_mask(tokenizer, scheme: WordScheme, size: int) -> np.ndarray:
    """Boolean ``[size]``: unmarked, non-special tokens starting with a non-alphanumeric char."""
    mask = np.zeros(size, dtype=bool)
    tokens = tokenizer.convert_ids_to_tokens(list(range(min(size, len(tokenizer)))))
    mask[: len(tokens)] = [t is not None and t[:1] != "" and not t.startswith(scheme.marker)
                           and not t[0].isalnum() for t in tokens]
    mask[[i for i in tokenizer.all_special_ids if i < size]] = False
    return mask


def word_start_mask(tokenizer, scheme: WordScheme, size: int) -> np.ndarray:
    """Boolean ``[size]``: the tokens of ``B`` (begin with the marker, not special)."""
    mask = np.zeros(size, dtype=bool)
    if scheme.kind != "bow":
        return mask
    tokens = tokenizer.convert_ids_to_tokens(list(range(min(size, len(tokenizer)))))
    mask[: len(tokens)] = [t is not None and t.startswith(scheme.marker) for t in tokens]
    mask[[i for i in tokenizer.all_special_ids if i < size]] = False
    return mask


class CausalScorer(TokenizerVocabulary):
    """Sentence and word log-probabilities under a causal LM; implements ``SentenceScorer``."""

    def __init__(self, model, tokenizer, *, name: str, device: str = "cpu",
                 bow_correction: bool = True, batch_size: int = 32, detach_punct: bool = False):
        import torch

        self.model, self.tokenizer, self.name = model.to(device).eval(), tokenizer, name
        self.device, self.batch_size, self.bow_correction = device, batch_size, bow_correction
        self.scheme = detect_scheme(tokenizer)
        bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else \
            tokenizer.eos_token_id
        if bos is None:
            raise UserError(f"model '{name}': the tokenizer has neither a BOS nor an EOS token "
                            "to use as the start-of-text context")
        self.bos, self.eos = bos, tokenizer.eos_token_id
        size = model.get_output_embeddings().weight.shape[0]
        starts = word_start_mask(tokenizer, self.scheme, size)
        punct = punctuation_mask(tokenizer, self.scheme, size) if detach_punct and \
            self.scheme.kind == "bow" else np.zeros(size, dtype=bool)
        boundary = starts | punct
        if self.eos is not None:
            boundary[self.eos] = True
        unmarked = ~(starts | punct)
        unmarked[[i for i in tokenizer.all_special_ids if i < size]] = False
        unmarked[len(tokenizer):] = False
        self._starts, self._punct = starts | punct, punct
        self._boundary = torch.from_numpy(boundary).to(device)
        self._unmarked = torch.from_numpy(unmarked).to(device)
        self.max_length = getattr(model.config, "n_positions", None) or \
            getattr(model.config, "max_position_embeddings", None)

    # ----------------------------------------------------------------- tokenisation
    def _tokenize(self, sentences: list[list[str]]) -> list[list[list[int]]]:
        """Token ids of every word of every sentence (one fast-tokenizer call)."""
        space = "" if self.scheme.dummy_prefix else " "
        flat = [w if i == 0 else space + w for words in sentences for i, w in enumerate(words)]
        ids = self.tokenizer(flat, add_special_tokens=False)["input_ids"] if flat else []
        out, k = [], 0
        for words in sentences:
            pieces = ids[k:k + len(words)]
            out.append([w for piece in pieces for w in self._split_punct(piece)]
                       if self._punct.any() else pieces)
            k += len(words)
        return out

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
        first = torch.logsumexp(logits[:, 0].masked_fill(~self._unmarked, neg), dim=-1) - log_z[:, 0]
        return token.cpu().numpy(), mass.cpu().numpy(), first.cpu().numpy()

    def word_logprobs(self, sentences: list[str]) -> list[np.ndarray]:
        """Corrected log-probability of every whitespace word of every sentence."""
        return self.token_word_logprobs(self._tokenize([s.split() for s in sentences]))

    def token_word_logprobs(self, tokens: list[list[list[int]]]) -> list[np.ndarray]:
        """Word log-probabilities of already tokenised texts (texts → words → token ids)."""
        import torch

        rows = [np.array([self.bos, *[t for w in words for t in w]], dtype=np.int64)
                for words in tokens]
        too_long = [i for i, r in enumerate(rows) if self.max_length and len(r) > self.max_length]
        if too_long:
            raise UserError(f"sentence {too_long[0] + 1} has {len(rows[too_long[0]])} tokens, "
                            f"more than the model's {self.max_length}")
        out: list[np.ndarray] = [np.zeros(0)] * len(rows)
        order = np.argsort([-len(r) for r in rows], kind="stable")
        with torch.inference_mode():
            for begin in range(0, len(order), self.batch_size):
                index = [i for i in order[begin:begin + self.batch_size] if len(rows[i]) > 1]
                if not index:
                    continue
                token, mass, first = self._batch_terms([rows[i] for i in index])
                for j, i in enumerate(index):
                    out[i] = self._words(tokens[i], token[j], None if mass is None else mass[j],
                                         None if first is None else first[j])
        return out

    def _words(self, words: list[list[int]], token: np.ndarray, mass, first) -> np.ndarray:
        lengths = np.array([len(w) for w in words])
        ends = np.cumsum(lengths)                    # token position of each word's last token
        starts = ends - lengths + 1
        cumulative = np.concatenate([[0.0], np.cumsum(token[: ends[-1]], dtype=np.float64)])
        logp = cumulative[ends] - cumulative[starts - 1]
        if mass is None:
            return logp
        mass = mass.astype(np.float64)
        if self._punct.any():    # after a punctuation token a new word surely starts
            flat = np.array([t for w in words for t in w])
            mass[1: len(flat) + 1][self._punct[flat]] = 0.0
        denominator = mass[starts - 1]
        if not self._starts[words[0][0]]:
            denominator[0] = first
        return logp + mass[ends] - denominator

    # ----------------------------------------------------------------- SentenceScorer
    def score(self, sentences: list[str]) -> np.ndarray:
        return np.array([w.sum() for w in self.word_logprobs(list(sentences))], dtype=np.float64)

    def word_scores(self, sentence: str) -> list[tuple[str, float]]:
        tokens = self._tokenize([sentence.split()])
        words = [self.tokenizer.decode(w).strip() for w in tokens[0]]
        return list(zip(words, self.token_word_logprobs(tokens)[0].tolist()))

    def next_word_logprobs(self, prefix: str, candidates: list[str]) -> np.ndarray:
        """Corrected ``log p(candidate | prefix)`` of each candidate as the next word (pruning
        for the synthetic pair search, docs/methods.md §9); the prefix may be empty."""
        head = prefix.strip()
        texts = [f"{head} {c}" if head else c for c in candidates]
        return np.array([w[-1] for w in self.word_logprobs(texts)], dtype=np.float64)

    # ----------------------------------------------------------------- prompt continuations
    def continuation_logprobs(self, prompts: list[str], continuations: list[list[str]], *,
                              on_batch=None) -> list[tuple[np.ndarray, np.ndarray]]:
        """``log p(c | prompt)`` of every continuation ``c`` of every prompt, and its token
        count (the LLM prompt probe, docs/methods.md §6).

        A continuation is a new word (or words) after the prompt: it is tokenised like a
        non-first word (with a leading space unless the tokenizer adds a dummy prefix), and with
        the word scheme ``bow`` its value carries the boundary correction of :meth:`_words`,
        ``Σ_t log p(s_t | ·) + log B(after c) − log B(after the prompt)`` (which telescopes over
        multi-word continuations). Prompts are scored once: they are length-sorted, left-padded
        and batched, their key/value cache is repeated for each continuation, and the
        continuations are scored against it. ``on_batch(n)`` reports finished prompts.
        """
        import torch

        space = "" if self.scheme.dummy_prefix else " "
        prompt_ids = [[self.bos, *ids] for ids in
                      self.tokenizer(list(prompts), add_special_tokens=False)["input_ids"]]
        flat = [space + c for options in continuations for c in options]
        flat_ids = self.tokenizer(flat, add_special_tokens=False)["input_ids"] if flat else []
        cont_ids, k = [], 0
        for options in continuations:
            cont_ids.append(flat_ids[k:k + len(options)])
            k += len(options)
        for i, (p, cs) in enumerate(zip(prompt_ids, cont_ids)):
            if not cs or any(len(c) == 0 for c in cs):
                raise UserError(f"prompt {i + 1}: empty answer option")
            longest = len(p) + max(len(c) for c in cs)
            if self.max_length and longest > self.max_length:
                raise UserError(f"prompt {i + 1} and its answer have {longest} tokens, more "
                                f"than the model's {self.max_length}")
        out: list[tuple[np.ndarray, np.ndarray]] = [(np.zeros(0), np.zeros(0))] * len(prompts)
        order = np.argsort([-len(p) for p in prompt_ids], kind="stable")
        widest = max((len(cs) for cs in cont_ids), default=1)
        step = max(1, self.batch_size // widest)
        with torch.inference_mode():
            for begin in range(0, len(order), step):
                index = [int(i) for i in order[begin:begin + step]]
                values = self._continuation_batch([prompt_ids[i] for i in index],
                                                  [cont_ids[i] for i in index])
                for i, v in zip(index, values):
                    out[i] = v
                if on_batch is not None:
                    on_batch(len(index))
        return out

    def _continuation_batch(self, prompts: list[list[int]], options: list[list[list[int]]]):
        import torch

        width = max(len(p) for p in prompts)
        ids = np.zeros((len(prompts), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for j, p in enumerate(prompts):   # left padding: every prompt ends at the last column
            ids[j, width - len(p):], mask[j, width - len(p):] = p, 1
        mask_t = torch.from_numpy(mask).to(self.device)
        positions = (mask_t.cumsum(-1) - 1).clamp(min=0)
        first = self.model(input_ids=torch.from_numpy(ids).to(self.device), attention_mask=mask_t,
                           position_ids=positions, use_cache=True)
        last = first.logits[:, -1].float()                       # predicts each option's 1st token
        rows = [j for j, cs in enumerate(options) for _ in cs]
        conts = [c for cs in options for c in cs]
        c_width = max(len(c) for c in conts)
        c_ids = np.zeros((len(conts), c_width), dtype=np.int64)
        c_mask = np.zeros_like(c_ids)
        for r, c in enumerate(conts):
            c_ids[r, : len(c)], c_mask[r, : len(c)] = c, 1
        rows_t = torch.tensor(rows, device=self.device)
        cache = first.past_key_values
        cache.batch_select_indices(rows_t)                       # one copy per option
        c_ids_t = torch.from_numpy(c_ids).to(self.device)
        c_mask_t = torch.from_numpy(c_mask).to(self.device)
        lengths = torch.tensor([len(p) for p in prompts], device=self.device)[rows_t]
        second = self.model(input_ids=c_ids_t,
                            attention_mask=torch.cat([mask_t[rows_t], c_mask_t], dim=1),
                            position_ids=lengths[:, None] + torch.arange(c_width,
                                                                         device=self.device),
                            past_key_values=cache)
        logits = torch.cat([last[rows_t][:, None], second.logits.float()], dim=1)  # [R, T+1, V]
        log_z = torch.logsumexp(logits, dim=-1)
        token = logits[:, :-1].gather(-1, c_ids_t[:, :, None]).squeeze(-1) - log_z[:, :-1]
        total = (token * c_mask_t).sum(dim=1)
        if self.bow_correction and self.scheme.kind == "bow":
            neg = torch.finfo(logits.dtype).min
            mass = torch.logsumexp(logits.masked_fill(~self._boundary, neg), dim=-1) - log_z
            ends = c_mask_t.sum(dim=1)
            total = total + mass.gather(1, ends[:, None]).squeeze(1) - mass[:, 0]
        total_np, counts = total.cpu().numpy().astype(np.float64), c_mask.sum(axis=1)
        values, r = [], 0
        for cs in options:
            values.append((total_np[r:r + len(cs)], counts[r:r + len(cs)]))
            r += len(cs)
        return values
