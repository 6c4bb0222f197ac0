"""Word-level LSTM / Elman-RNN language models trained by the toolkit (docs/methods.md §9;
training and saved files: docs/lm.md)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from cuelens.errors import UserError, check_at_least_1
from cuelens.lm.ngram import train_speller
from cuelens.lm.text import BOS, EOS, WordSplitter, build_vocab
from cuelens.lm.wordlevel import (WordLevelScorer, checked_splitter, checked_vocab, is_number,
                                  is_whole, read_config)
from cuelens.models.batching import sorted_batches


@dataclass
class RNNConfig:
    """Architecture of a word-level recurrent LM (stored in ``config.json``)."""

    arch: str = "lstm"          # "lstm" or "rnn" (tanh Elman RNN)
    vocab_size: int = 0
    embedding_size: int = 128
    hidden_size: int = 256
    layers: int = 1
    dropout: float = 0.0
    cutoffs: list[int] = field(default_factory=list)   # adaptive softmax clusters; [] = full
    div_value: float = 4.0                             # adaptive softmax tail size divisor


def _checked_config(config: dict, path: Path) -> RNNConfig:
    """The :class:`RNNConfig` of a saved model's ``config.json`` (its ``splitter`` and
    ``model_type`` taken out); an unknown field or a value of the wrong type or range is one
    :class:`UserError` naming it (they were tracebacks from the dataclass or from torch)."""
    unknown = sorted(set(config) - {f.name for f in fields(RNNConfig)})
    if unknown:
        raise UserError(f"unknown field(s) {', '.join(unknown)}", path=str(path))
    rnn_config = RNNConfig(**config)
    checks = {"vocab_size": is_whole(rnn_config.vocab_size, 3),
              "embedding_size": is_whole(rnn_config.embedding_size, 1),
              "hidden_size": is_whole(rnn_config.hidden_size, 1),
              "layers": is_whole(rnn_config.layers, 1),
              "dropout": is_number(rnn_config.dropout) and 0 <= rnn_config.dropout < 1,
              "cutoffs": isinstance(rnn_config.cutoffs, list)   # increasing, below vocab_size
              and all(is_whole(c, 1) for c in rnn_config.cutoffs)
              and rnn_config.cutoffs == sorted(set(rnn_config.cutoffs))
              and all(c < rnn_config.vocab_size for c in rnn_config.cutoffs),
              "div_value": is_number(rnn_config.div_value) and rnn_config.div_value > 0}
    for name, ok in checks.items():
        if not ok:
            raise UserError(f"field '{name}' has an invalid value: "
                            f"{getattr(rnn_config, name)!r}", path=str(path))
    return rnn_config


def _network(config: RNNConfig):
    import torch
    from torch import nn

    class WordRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(config.vocab_size, config.embedding_size)
            cell = nn.LSTM if config.arch == "lstm" else nn.RNN
            self.rnn = cell(config.embedding_size, config.hidden_size, config.layers,
                            batch_first=True,
                            dropout=config.dropout if config.layers > 1 else 0.0)
            self.drop = nn.Dropout(config.dropout)
            self.out = (nn.AdaptiveLogSoftmaxWithLoss(config.hidden_size, config.vocab_size,
                                                      config.cutoffs, config.div_value)
                        if config.cutoffs else nn.Linear(config.hidden_size, config.vocab_size))

        def hidden(self, ids: torch.Tensor, state=None):
            """Top-layer states ``(batch, time, hidden)`` and the final recurrent state."""
            hidden, state = self.rnn(self.drop(self.embed(ids)), state)
            return self.drop(hidden), state

        def log_softmax(self, hidden: torch.Tensor) -> torch.Tensor:
            """Log-probabilities over the vocabulary of every state in ``hidden``."""
            if not config.cutoffs:
                return torch.log_softmax(self.out(hidden).float(), dim=-1)
            flat = self.out.log_prob(hidden.reshape(-1, hidden.shape[-1]).float())
            return flat.reshape(*hidden.shape[:-1], -1)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.log_softmax(self.hidden(ids)[0])

        def target_log_probs(self, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
            """``log p(targets[b, t] | ids[b, ≤t])`` (an adaptive softmax computes only the
            clusters the targets fall in)."""
            hidden = self.hidden(ids)[0]
            if not config.cutoffs:
                return self.log_softmax(hidden).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
            flat = self.out(hidden.reshape(-1, hidden.shape[-1]).float(), targets.reshape(-1))
            return flat.output.reshape(targets.shape)

        def loss(self, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
            """Mean cross-entropy over the targets that are not padding (−100)."""
            hidden = self.hidden(ids)[0]
            if not config.cutoffs:
                logits = self.out(hidden)
                return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                   targets.reshape(-1), ignore_index=-100)
            keep = targets.reshape(-1) != -100
            return self.out(hidden.reshape(-1, hidden.shape[-1])[keep],
                            targets.reshape(-1)[keep]).loss

    return WordRNN()


def _training_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator):
    """Training batches: length-sorted inside seeded chunks, the batch order shuffled."""
    order = rng.permutation(len(lengths))
    chunk = batch_size * 50
    order = np.concatenate([c[np.argsort(-lengths[c], kind="stable")]
                            for c in np.array_split(order, max(1, len(order) // chunk))])
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


class RNNModel(WordLevelScorer):
    """A trained word-level LSTM/RNN; implements ``SentenceScorer``."""

    _train_speller = staticmethod(train_speller)

    def __init__(self, config: RNNConfig, vocab: list[str], splitter: WordSplitter, network=None,
                 device: str = "cpu", name: str | None = None, batch_size: int = 256):
        self.config, self.vocab, self.splitter = config, vocab, splitter
        self.index = {word: i for i, word in enumerate(vocab)}
        self.device, self.batch_size = device, batch_size
        self.network = (network or _network(config)).to(device).eval()
        self.name = name or config.arch

    # ----------------------------------------------------------------- storage
    def save_pretrained(self, directory: str | Path) -> None:
        """``config.json`` (``model_type`` ``cuelens-lstm``/``cuelens-rnn``), ``model.safetensors``
        and ``vocab.json`` (docs/lm.md)."""
        from safetensors.torch import save

        from cuelens.atomic import atomic_write_bytes
        from cuelens.jsonio import write_json

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(directory / "model.safetensors", save(
            {k: v.detach().cpu().contiguous() for k, v in self.network.state_dict().items()}))
        write_json(directory / "config.json", {
            "model_type": f"cuelens-{self.config.arch}", **asdict(self.config),
            "splitter": asdict(self.splitter)})
        write_json(directory / "vocab.json", self.vocab)

    @classmethod
    def from_pretrained(cls, directory: str | Path, device: str = "cpu", name: str | None = None,
                        arch: str | None = None) -> "RNNModel":
        """A model saved by :meth:`save_pretrained` (also the older layout without
        ``model_type``)."""
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        directory = Path(directory)
        config = read_config(directory, (arch,) if arch else ("lstm", "rnn"))
        splitter = checked_splitter(config.pop("splitter", None), directory / "config.json")
        config.pop("model_type", None)
        rnn_config = _checked_config(config, directory / "config.json")
        vocab = checked_vocab(directory, rnn_config.vocab_size)
        network = _network(rnn_config)
        try:
            network.load_state_dict(load_file(str(directory / "model.safetensors")))
        except (OSError, RuntimeError, SafetensorError) as exc:  # SafetensorError: cut short
            raise UserError(f"cannot load model weights: {exc}", path=str(directory)) from None
        return cls(rnn_config, vocab, splitter, network, device,
                   name or f"{rnn_config.arch}:{directory}")

    # ----------------------------------------------------------------- scoring
    def _io(self, encoded: list[np.ndarray], index: np.ndarray):
        """Inputs ``<s> w`` and targets ``w </s>`` (−100 = padding) of the rows at ``index``."""
        import torch

        width = max(len(encoded[i]) for i in index) + 1
        inputs = np.zeros((len(index), width), dtype=np.int64)
        targets = np.full((len(index), width), -100, dtype=np.int64)
        for row, i in enumerate(index):
            ids = encoded[i]
            inputs[row, : len(ids) + 1] = np.concatenate([[self.index[BOS]], ids])
            targets[row, : len(ids) + 1] = np.concatenate([ids, [self.index[EOS]]])
        return (torch.from_numpy(inputs).to(self.device),
                torch.from_numpy(targets).to(self.device))

    def _next_logprobs(self, prefix: np.ndarray) -> np.ndarray:
        """All vocabulary words after ``<s> prefix``: one forward pass over the prefix."""
        import torch

        ids = torch.from_numpy(np.concatenate([[self.index[BOS]], prefix]).astype(np.int64))
        with torch.inference_mode():
            hidden = self.network.hidden(ids[None].to(self.device))[0][:, -1]
            return self.network.log_softmax(hidden)[0].cpu().numpy().astype(np.float64)

    def _logprobs(self, encoded: list[np.ndarray]) -> np.ndarray:
        import torch

        lengths = np.array([len(ids) + 1 for ids in encoded])
        out: list[np.ndarray] = [np.zeros(0)] * len(encoded)
        with torch.inference_mode():
            for index in sorted_batches(lengths, self.batch_size):
                inputs, targets = self._io(encoded, index)
                picked = self.network.target_log_probs(inputs, targets.clamp(min=0))
                values = picked.cpu().numpy()
                for row, i in enumerate(index):
                    out[i] = values[row, : lengths[i]]
        return np.concatenate(out).astype(np.float64)


def train_rnn(train: list[list[str]], valid: list[list[str]] | None, config: RNNConfig,
              splitter: WordSplitter, *, epochs: int = 5, batch_size: int = 32, lr: float = 2e-3,
              min_count: int = 1, max_vocab: int | None = None, seed: int = 0,
              device: str = "cpu", log: Callable[[str], None] | None = None,
              progress: Callable[[str, float], None] | None = None,
              checkpoint: str | Path | None = None, plateau_decay: float = 1.0,
              max_seconds: float | None = None) -> RNNModel:
    """Train on ``train`` (lists of words).

    ``log`` receives one line per epoch (train and validation perplexity); ``progress`` receives
    ``(stage, fraction of all epochs done)`` after every batch. The library never prints.
    With ``valid``: ``checkpoint`` (a directory) always holds the epoch with the best validation
    perplexity, and the learning rate is multiplied by ``plateau_decay`` after an epoch that did
    not improve it. ``max_seconds``: no epoch starts that would, at the last epoch's pace, end
    after this budget.
    """
    import torch

    # epochs=0 returned an untrained model, batch_size=0 was a ZeroDivisionError
    check_at_least_1(epochs=epochs, batch_size=batch_size)
    torch.manual_seed(seed)
    vocab = build_vocab(train, min_count, None if max_vocab is None else max_vocab - 2)
    vocab = [vocab[0], BOS, EOS, *vocab[1:]]     # frequency order for an adaptive softmax
    config.vocab_size = len(vocab)
    model = RNNModel(config, vocab, splitter, device=device)
    encoded = [model.ids(words) for words in train]
    lengths = np.array([len(ids) + 1 for ids in encoded])
    optimiser = torch.optim.Adam(model.network.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    best, started = float("inf"), time.perf_counter()
    for epoch in range(1, epochs + 1):
        epoch_start = time.perf_counter()
        batches = _training_batches(lengths, batch_size, rng)
        model.network.train()
        total, tokens = 0.0, 0
        for done, index in enumerate(batches, start=1):
            inputs, targets = model._io(encoded, index)
            loss = model.network.loss(inputs, targets)
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.network.parameters(), 1.0)
            optimiser.step()
            n = int((targets != -100).sum())
            total, tokens = total + float(loss.detach()) * n, tokens + n
            if progress is not None:
                progress(f"epoch {epoch}/{epochs}", (epoch - 1 + done / len(batches)) / epochs)
        model.network.eval()
        message = f"epoch {epoch}: train perplexity {np.exp(total / tokens):.1f}"
        if valid:
            perplexity = model.perplexity(valid)
            message += f", validation perplexity {perplexity:.1f}"
            if perplexity < best:
                best = perplexity
                if checkpoint is not None:
                    model.save_pretrained(checkpoint)
            else:
                for group in optimiser.param_groups:
                    group["lr"] *= plateau_decay
        if log is not None:
            log(message)
        now = time.perf_counter()
        if max_seconds is not None and now - started + (now - epoch_start) > max_seconds:
            break
    return model
