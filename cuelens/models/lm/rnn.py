"""Word-level LSTM / Elman-RNN language models trained by the toolkit (SPEC §9).

Each sentence is read as ``<s> w_1 … w_m`` and predicts ``w_1 … w_m </s>``; its log-probability
is the sum of the log-softmax scores of those targets (see :mod:`.wordlevel`). Training: Adam,
cross-entropy over real tokens, gradient clipping, length-bucketed seeded batches, validation
perplexity after every epoch. Saved as ``model.safetensors`` + ``config.json`` + ``vocab.json``.
"""

from __future__ import annotations

from collections.abc import Callable

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from cuelens.data.readers import read_json
from cuelens.errors import UserError
from cuelens.models.lm.text import BOS, EOS, WordSplitter, build_vocab
from cuelens.models.lm.wordlevel import WordLevelScorer, read_config


@dataclass
class RNNConfig:
    """Architecture of a word-level recurrent LM (stored in ``config.json``)."""

    arch: str = "lstm"          # "lstm" or "rnn" (tanh Elman RNN)
    vocab_size: int = 0
    embedding_size: int = 128
    hidden_size: int = 256
    layers: int = 1
    dropout: float = 0.0


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
            self.out = nn.Linear(config.hidden_size, config.vocab_size)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            hidden, _ = self.rnn(self.drop(self.embed(ids)))
            return self.out(self.drop(hidden))

    return WordRNN()


def _batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator | None):
    """Length-sorted batches (sorted inside seeded chunks and shuffled when ``rng`` is given)."""
    order = np.argsort(-lengths, kind="stable")
    if rng is not None:
        order = rng.permutation(len(lengths))
        chunk = batch_size * 50
        order = np.concatenate([c[np.argsort(-lengths[c], kind="stable")]
                                for c in np.array_split(order, max(1, len(order) // chunk))])
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    if rng is not None:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


class RNNModel(WordLevelScorer):
    """A trained word-level LSTM/RNN; implements ``SentenceScorer``."""

    def __init__(self, config: RNNConfig, vocab: list[str], splitter: WordSplitter, network=None,
                 device: str = "cpu", name: str | None = None, batch_size: int = 64):
        self.config, self.vocab, self.splitter = config, vocab, splitter
        self.index = {word: i for i, word in enumerate(vocab)}
        self.device, self.batch_size = device, batch_size
        self.network = (network or _network(config)).to(device).eval()
        self.name = name or config.arch

    # ----------------------------------------------------------------- storage
    def save(self, directory: str | Path) -> None:
        from safetensors.torch import save_file

        from cuelens.io import write_json

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / ".model.safetensors.tmp"
        save_file({k: v.detach().cpu().contiguous() for k, v in self.network.state_dict().items()},
                  str(tmp))
        tmp.replace(directory / "model.safetensors")
        write_json(directory / "config.json", {**asdict(self.config),
                                               "splitter": self.splitter.to_dict()})
        write_json(directory / "vocab.json", self.vocab)

    @classmethod
    def load(cls, directory: str | Path, device: str = "cpu", name: str | None = None,
             arch: str | None = None) -> "RNNModel":
        from safetensors.torch import load_file

        directory = Path(directory)
        config = read_config(directory, (arch,) if arch else ("lstm", "rnn"))
        splitter = WordSplitter(**config.pop("splitter"))
        rnn_config = RNNConfig(**config)
        vocab = read_json(directory / "vocab.json")
        network = _network(rnn_config)
        try:
            network.load_state_dict(load_file(str(directory / "model.safetensors")))
        except (OSError, RuntimeError) as exc:
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

    def _logprobs(self, encoded: list[np.ndarray]) -> np.ndarray:
        import torch

        lengths = np.array([len(ids) + 1 for ids in encoded])
        out: list[np.ndarray] = [np.zeros(0)] * len(encoded)
        with torch.inference_mode():
            for index in _batches(lengths, self.batch_size, None):
                inputs, targets = self._io(encoded, index)
                logp = torch.log_softmax(self.network(inputs).float(), dim=-1)
                picked = logp.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
                values = picked.cpu().numpy()
                for row, i in enumerate(index):
                    out[i] = values[row, : lengths[i]]
        return np.concatenate(out).astype(np.float64)


def train_rnn(train: list[list[str]], valid: list[list[str]] | None, config: RNNConfig,
              splitter: WordSplitter, *, epochs: int = 5, batch_size: int = 32, lr: float = 2e-3,
              min_count: int = 1, max_vocab: int | None = None, seed: int = 0,
              device: str = "cpu", log: Callable[[str], None] | None = None,
              progress: Callable[[str, float], None] | None = None) -> RNNModel:
    """Train on ``train`` (lists of words).

    ``log`` receives one line per epoch (train and validation perplexity); ``progress`` receives
    ``(stage, fraction of all epochs done)`` after every batch. The library never prints.
    """
    import torch

    torch.manual_seed(seed)
    vocab = [*build_vocab(train, min_count, None if max_vocab is None else max_vocab - 2), BOS, EOS]
    config.vocab_size = len(vocab)
    model = RNNModel(config, vocab, splitter, device=device)
    encoded = [model.ids(words) for words in train]
    lengths = np.array([len(ids) + 1 for ids in encoded])
    optimiser = torch.optim.Adam(model.network.parameters(), lr=lr)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=-100)
    rng = np.random.default_rng(seed)
    for epoch in range(1, epochs + 1):
        batches = _batches(lengths, batch_size, rng)
        model.network.train()
        total, tokens = 0.0, 0
        for done, index in enumerate(batches, start=1):
            inputs, targets = model._io(encoded, index)
            logits = model.network(inputs)
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
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
            message += f", validation perplexity {model.perplexity(valid):.1f}"
        if log is not None:
            log(message)
    return model
