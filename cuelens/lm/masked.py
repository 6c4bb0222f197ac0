"""Masked (BERT/RoBERTa/ELECTRA) Hugging Face models: the ``pll`` and ``chain`` estimators
(docs/methods.md §9; docs/lm.md, "Masked models")."""

from __future__ import annotations

import itertools
import re
import zlib

import numpy as np

from cuelens.errors import UserError
from cuelens.lm.scoring import SentenceError, SentenceTooLong, SentenceWithoutTokens
from cuelens.audit.segmenters import UNSPACED_RE
from cuelens.lm.text import SubwordScorer, cut_unspaced

METHODS = ("pll", "chain")   # pseudo-log-likelihood, chain rule over random word orders


def _head_roberta(model, hidden):
    return model.lm_head(hidden)


def _head_distilbert(model, hidden):
    hidden = model.vocab_layer_norm(model.activation(model.vocab_transform(hidden)))
    return model.vocab_projector(hidden)


# model_type -> vocabulary head applied to selected hidden states. Other models fall back to
# the full forward pass (correct, but the head then runs at every position).
MLM_HEADS = {"bert": lambda model, hidden: model.cls(hidden), "roberta": _head_roberta,
             "xlm-roberta": _head_roberta, "camembert": _head_roberta,
             "electra": lambda model, hidden: model.generator_lm_head(
                 model.generator_predictions(hidden)),
             "distilbert": _head_distilbert}


def _hidden_bert_like(model, ids, attention, pos):
    """Final hidden states at ``pos`` only, for BERT-style post-LN encoders: every layer but the
    last runs as usual; the last computes keys/values for all tokens but its query, attention
    output and feed-forward only at the masked position (exact, about one layer cheaper)."""
    import torch
    import torch.nn.functional as F

    base = model.base_model
    hidden = base.embeddings(input_ids=ids)
    if hasattr(base, "embeddings_project"):     # ELECTRA with embedding size != hidden size
        hidden = base.embeddings_project(hidden)
    # no padding (the usual case: copies are length-sorted) → no mask, SDPA's fastest path;
    # else the additive [n, 1, 1, L] mask: 0 for tokens, the dtype minimum for padding
    mask = None if bool(attention.all()) else \
        (1.0 - attention[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min
    for layer in base.encoder.layer[:-1]:
        out = layer(hidden, mask)
        hidden = out[0] if isinstance(out, tuple) else out
    last = base.encoder.layer[-1]
    sa, n, width = last.attention.self, ids.shape[0], ids.shape[1]
    heads, size = sa.num_attention_heads, sa.attention_head_size
    query_in = hidden[torch.arange(n, device=ids.device), pos]
    query = sa.query(query_in).view(n, heads, 1, size)
    key = sa.key(hidden).view(n, width, heads, size).transpose(1, 2)
    value = sa.value(hidden).view(n, width, heads, size).transpose(1, 2)
    context = F.scaled_dot_product_attention(query, key, value, attn_mask=mask)
    attended = last.attention.output.LayerNorm(
        last.attention.output.dense(context.reshape(n, heads * size)) + query_in)
    return last.output.LayerNorm(last.output.dense(last.intermediate(attended)) + attended)


# model_type -> hidden states at the masked positions only (see _hidden_bert_like).
PARTIAL_ENCODERS = {name: _hidden_bert_like for name in
                    ("bert", "roberta", "xlm-roberta", "camembert", "electra")}


class MaskedScorer(SubwordScorer):
    """Sentence and word scores under a masked LM; implements ``SentenceScorer``."""

    def __init__(self, model, tokenizer, *, name: str, device: str = "cpu", method: str = "pll",
                 orders: int = 100, seed: int = 0, max_tokens: int = 8192):
        if method not in METHODS:
            raise UserError(f"unknown masked-LM method '{method}' (use pll or chain)")
        if tokenizer.mask_token_id is None:
            raise UserError(f"model '{name}': the tokenizer has no mask token")
        self.model, self.tokenizer, self.name = model.to(device).eval(), tokenizer, name
        self.device, self.method, self.orders, self.seed = device, method, orders, seed
        self.max_tokens = max_tokens
        model_type = getattr(model.config, "model_type", "")
        self._head = MLM_HEADS.get(model_type)
        absolute = getattr(model.config, "position_embedding_type", "absolute") == "absolute"
        self._partial = PARTIAL_ENCODERS.get(model_type) if self._head and absolute else None

    # ----------------------------------------------------------------- encoding
    def _encode(self, sentences: list[str]):
        """Token ids (with special tokens), real-token positions and their whitespace word."""
        enc = self.tokenizer(sentences, return_special_tokens_mask=True,
                             return_offsets_mapping=True, truncation=False)
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit:
            limit -= 2 * (self.model.config.model_type in ("roberta", "xlm-roberta", "camembert"))
        out = []
        for i, sentence in enumerate(sentences):
            ids = np.asarray(enc["input_ids"][i], dtype=np.int64)
            if limit and len(ids) > limit:
                raise SentenceTooLong(i, len(ids), limit)
            positions = np.flatnonzero(np.asarray(enc["special_tokens_mask"][i]) == 0)
            if not len(positions) and sentence.split():
                raise SentenceWithoutTokens(i)
            starts = np.array([m.start() for m in re.finditer(r"\S+", sentence)])
            offsets = np.asarray(enc["offset_mapping"][i])[positions, 0]
            word = np.searchsorted(starts, offsets, side="right") - 1 if len(starts) else offsets
            out.append((ids, positions, np.maximum(word, 0)))
        return out

    # ----------------------------------------------------------------- model core
    def _logprobs(self, ids: np.ndarray, attention: np.ndarray, pos: np.ndarray,
                  target: np.ndarray) -> np.ndarray:
        """``log p(target | ids)`` at ``pos`` for every row of one padded batch."""
        import torch

        ids_t = torch.from_numpy(ids).to(self.device)
        att_t = torch.from_numpy(attention).to(self.device)
        rows = torch.arange(len(ids), device=self.device)
        pos_t = torch.from_numpy(pos).to(self.device)
        if self._head is None:
            logits = self.model(input_ids=ids_t, attention_mask=att_t).logits[rows, pos_t]
        elif self._partial is not None:
            logits = self._head(self.model, self._partial(self.model, ids_t, att_t, pos_t))
        else:
            hidden = self.model.base_model(input_ids=ids_t, attention_mask=att_t)[0]
            logits = self._head(self.model, hidden[rows, pos_t])
        logp = torch.log_softmax(logits.float(), dim=-1)
        return logp[rows, torch.from_numpy(target).to(self.device)].cpu().numpy()

    def _run_rows(self, make_rows, lengths: np.ndarray) -> np.ndarray:
        """Evaluate rows ``0..n−1`` (``make_rows(index) -> ids, pos, target``), longest first,
        in batches of at most ``max_tokens`` tokens."""
        import torch

        order = np.argsort(-lengths, kind="stable")
        out = np.zeros(len(lengths))
        begin = 0
        with torch.inference_mode():
            while begin < len(order):
                width = int(lengths[order[begin]])
                index = order[begin:begin + max(1, self.max_tokens // width)]
                ids, pos, target = make_rows(index, width)
                attention = (np.arange(width)[None, :] < lengths[index][:, None]).astype(np.int64)
                out[index] = self._logprobs(ids, attention, pos, target)
                begin += len(index)
        return out

    # ----------------------------------------------------------------- PLL
    def _pll_tokens(self, encoded) -> list[np.ndarray]:
        """PLL term of every real token of every sentence."""
        pad = self.tokenizer.pad_token_id or 0
        sent = np.concatenate([np.full(len(p), i) for i, (_, p, _) in enumerate(encoded)])
        pos = np.concatenate([p for _, p, _ in encoded]).astype(np.int64)
        lengths = np.array([len(encoded[i][0]) for i in sent])
        width = max(len(ids) for ids, _, _ in encoded)
        table = np.full((len(encoded), width), pad, dtype=np.int64)
        for i, (ids, _, _) in enumerate(encoded):
            table[i, : len(ids)] = ids

        def make_rows(index, w):
            ids = table[sent[index], :w].copy()
            target = ids[np.arange(len(index)), pos[index]].copy()
            ids[np.arange(len(index)), pos[index]] = self.tokenizer.mask_token_id
            return ids, pos[index], target

        flat = self._run_rows(make_rows, lengths)
        return np.split(flat, np.cumsum([len(p) for _, p, _ in encoded])[:-1])

    # ----------------------------------------------------------------- chain
    def _chain_queries(self, ids, positions, word, rng):
        """States (sets of revealed tokens) and queries for all word orders of one sentence."""
        n_words = int(word.max()) + 1
        tokens_of = [positions[word == w] for w in range(n_words)]
        token_orders = [list(itertools.permutations(range(len(toks)))) if len(toks) <= 3 else
                        [tuple(rng.permutation(len(toks))) for _ in range(6)] for toks in tokens_of]
        states: dict[bytes, int] = {}
        queries = []        # (order r, word w, token order o, state id, position)
        for r in range(self.orders):
            revealed = np.zeros(len(ids), dtype=bool)
            for w in rng.permutation(n_words):
                for o, perm in enumerate(token_orders[w]):
                    state = revealed.copy()
                    for t in perm:
                        key = state.tobytes()
                        states.setdefault(key, len(states))
                        queries.append((r, w, o, states[key], tokens_of[w][t]))
                        state[tokens_of[w][t]] = True
                revealed[tokens_of[w]] = True
        return states, np.array(queries, dtype=np.int64), [len(p) for p in token_orders]

    def _chain_words(self, encoded, by_token: bool = False) -> list[np.ndarray]:
        """Per-word chain terms (mean over word orders) of every sentence (``by_token``: per
        token position, the terms of a word's tokens adding up to it). Each sentence draws
        its orders from its own stream, seeded by ``seed`` and its token ids: its estimate
        does not depend on the sentences scored with it (and ``word_scores`` adds up to it)."""
        out = []
        for ids, positions, word in encoded:
            rng = np.random.default_rng([self.seed, zlib.crc32(ids.tobytes())])
            states, queries, n_orders = self._chain_queries(ids, positions, word, rng)
            masks = np.frombuffer(b"".join(states), dtype=bool).reshape(len(states), len(ids))
            pairs, inverse = np.unique(queries[:, 3:5], axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)

            def make_rows(index, w, ids=ids, masks=masks, pairs=pairs, positions=positions):
                rows = np.repeat(ids[None, :w], len(index), axis=0)
                hidden = ~masks[pairs[index, 0]][:, :w]
                hidden[:, np.setdiff1d(np.arange(w), positions)] = False
                rows[hidden] = self.tokenizer.mask_token_id
                return rows, pairs[index, 1], ids[pairs[index, 1]]

            logp = self._run_rows(make_rows, np.full(len(pairs), len(ids)))[inverse]
            weights = 1.0 / np.array(n_orders)[queries[:, 1]] / self.orders
            unit, size = (queries[:, 4], len(ids)) if by_token else \
                (queries[:, 1], int(word.max()) + 1)
            out.append(np.bincount(unit, weights=logp * weights, minlength=size))
        return out

    # ----------------------------------------------------------------- SentenceScorer
    def word_logprobs(self, sentences: list[str]) -> list[np.ndarray]:
        """Per whitespace word: the sum of its tokens' PLL terms, or its chain term."""
        keep = [i for i, s in enumerate(sentences) if s.split()]
        out = [np.zeros(0)] * len(sentences)
        if not keep:
            return out
        try:
            encoded = self._encode([sentences[i] for i in keep])
        except SentenceError as error:  # its index counts the non-empty sentences
            raise error.at(keep[error.index]) from None
        if self.method == "chain":
            per_word = self._chain_words(encoded)
        else:
            per_word = [np.bincount(word, weights=terms, minlength=len(s.split()))
                        for terms, (_, _, word), s in zip(self._pll_tokens(encoded), encoded,
                                                          [sentences[i] for i in keep])]
        for i, words in zip(keep, per_word):
            out[i] = words
        return out

    def word_scores(self, sentence: str) -> list[tuple[str, float]]:
        """Whitespace words and their values; a word of a script written without spaces is cut
        as a scan would cut it (:func:`cut_unspaced`)."""
        pairs = list(zip(sentence.split(), self.word_logprobs([sentence])[0].tolist()))
        if not UNSPACED_RE.search(sentence):
            return pairs
        encoded = self._encode([sentence])
        _, positions, word = encoded[0]
        terms = self._pll_tokens(encoded)[0] if self.method == "pll" else \
            self._chain_words(encoded, by_token=True)[0][positions]
        offsets = np.asarray(self.tokenizer(sentence, return_offsets_mapping=True)
                             ["offset_mapping"])[positions]
        return cut_unspaced(sentence, pairs, [np.flatnonzero(word == w).tolist()
                                              for w in range(len(pairs))], offsets, terms)

    def masked_word_logprobs(self, sentence: str, position: int,
                             candidates: list[str]) -> np.ndarray:
        """``log p(candidate | sentence with word ``position`` masked)`` for each candidate (the
        candidate's tokens fill the masked slot left to right), for candidate ranking in the
        synthetic pair search (docs/methods.md §9)."""
        words = sentence.split()
        if not 0 <= position < len(words):
            raise UserError(f"word position {position} is outside the sentence")
        space = " " if position > 0 else ""
        pieces = self.tokenizer([space + c for c in candidates],
                                add_special_tokens=False)["input_ids"]
        ids, positions, word = self._encode([sentence])[0]
        slot = positions[word == position]
        left, right = ids[: slot[0]], ids[slot[-1] + 1:]
        out = np.zeros(len(candidates))
        for k in sorted({len(p) for p in pieces}):
            group = [i for i, p in enumerate(pieces) if len(p) == k]
            fill = np.array([pieces[i] for i in group], dtype=np.int64).reshape(len(group), k)
            base = np.concatenate([left, np.full(k, self.tokenizer.mask_token_id), right])
            rows = np.repeat(base[None, :], len(group), axis=0)
            for j in range(k):
                pos = np.full(len(group), len(left) + j)

                def make_rows(index, w, rows=rows, pos=pos, target=fill[:, j]):
                    return rows[index, :w], pos[index], target[index]

                out[group] += self._run_rows(make_rows, np.full(len(group), len(base)))
                rows[:, len(left) + j] = fill[:, j]
        return out
