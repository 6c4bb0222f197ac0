"""Language-model scorers and their registry :data:`SCORERS` behind ``load_scorer(spec)``
(docs/methods.md §9; model specs: docs/lm.md, "How the scorers compute")."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuelens.errors import UserError, check_at_least_1, check_seed
from cuelens.lm.scoring import SentenceScorer
from cuelens.models import hub
from cuelens.registry import Registry


@dataclass(frozen=True)
class ScorerOptions:
    """Options shared by every loader (see :func:`load_scorer`)."""

    device: str = "auto"
    bow_correction: bool = True
    mlm_method: str = "pll"
    orders: int = 100
    seed: int = 0
    batch_size: int = 32
    detach_punct: bool = False
    open_vocab: bool = False

    def __post_init__(self) -> None:
        """A batch size or number of word orders below 1 is one error naming its option
        (``--batch-size 0`` was a traceback, ``-1`` scored every sentence 0); so is an unknown
        method or device, whichever models use it (they were ignored by the others)."""
        from cuelens.lm.masked import METHODS

        check_at_least_1(batch_size=self.batch_size, orders=self.orders)
        if self.mlm_method not in METHODS:
            raise UserError(f"unknown masked-LM method (--mlm-method) '{self.mlm_method}' "
                            f"(use {' or '.join(METHODS)})")
        hub.check_device(self.device)
        check_seed(self.seed)


def _word_level(model, options: ScorerOptions):
    """Word-level models: switch on the open-vocabulary spelling model (see ``wordlevel``)."""
    if options.open_vocab:
        model.open_vocab = True
        model.name += "+open-vocab"
    return model


def _ngram(target: str, options: ScorerOptions) -> SentenceScorer:
    from cuelens.lm.ngram import NgramModel

    return _word_level(NgramModel.from_pretrained(target, name=f"ngram:{target}"), options)


def _recurrent(arch: str) -> Callable[[str, ScorerOptions], SentenceScorer]:
    def load(target: str, options: ScorerOptions) -> SentenceScorer:
        from cuelens.lm.rnn import RNNModel

        model = RNNModel.from_pretrained(target, device=hub.pick_device(options.device),
                                         arch=arch, name=f"{arch}:{target}")
        return _word_level(model, options)

    return load


def _hf_model(auto_class: str, name: str):
    import transformers

    # as the classifier loader does: transformers' load report and progress bars are no
    # lines of ours (a checkpoint without an LM head printed a 20-line table before our error)
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    model, info = hub.from_pretrained(getattr(transformers, auto_class), name,
                                      output_loading_info=True)
    missing = info.get("missing_keys") or []
    if missing:
        raise UserError(f"model '{name}' has no trained weights for {sorted(missing)[:3]}… "
                        f"(it is not a complete {auto_class[len('AutoModelFor'):]} checkpoint)")
    return model, hub.from_pretrained(transformers.AutoTokenizer, name)


def _causal(target: str, options: ScorerOptions) -> SentenceScorer:
    from cuelens.lm.causal import CausalScorer

    model, tokenizer = _hf_model("AutoModelForCausalLM", target)
    return CausalScorer(model, tokenizer, name=target, device=hub.pick_device(options.device),
                        bow_correction=options.bow_correction, batch_size=options.batch_size,
                        detach_punct=options.detach_punct)


def _masked(target: str, options: ScorerOptions) -> SentenceScorer:
    from cuelens.lm.masked import MaskedScorer

    model, tokenizer = _hf_model("AutoModelForMaskedLM", target)
    return MaskedScorer(model, tokenizer, name=target, device=hub.pick_device(options.device),
                        method=options.mlm_method, orders=options.orders, seed=options.seed)


SCORERS: Registry[Callable[[str, ScorerOptions], SentenceScorer]] = Registry("scorer", {
    "ngram": _ngram, "lstm": _recurrent("lstm"), "rnn": _recurrent("rnn"),
    "causal": _causal, "masked": _masked,
})
WORD_LEVEL = ("ngram", "lstm", "rnn")
CAUSAL_TYPES = {"gpt2", "gpt_neo", "gpt_neox", "gptj", "opt", "llama", "mistral", "bloom",
                "openai-gpt", "qwen2", "phi", "falcon", "ctrl", "xglm"}
MASKED_TYPES = {"bert", "roberta", "xlm-roberta", "electra", "distilbert", "camembert",
                "albert", "deberta", "deberta-v2", "mpnet", "xlm"}


def word_level_arch(spec: str) -> str | None:
    """``ngram``/``lstm``/``rnn`` when ``spec`` is a directory saved by a word-level model."""
    import json

    config = Path(spec) / "config.json"
    if not config.is_file():
        return None
    try:
        model_type = str(json.loads(config.read_text(encoding="utf-8")).get("model_type", ""))
    except (OSError, ValueError, AttributeError):
        return None
    arch = model_type.removeprefix("cuelens-")
    return arch if model_type.startswith("cuelens-") and arch in WORD_LEVEL else None


def detect_kind(name: str) -> str:
    """``causal`` or ``masked``, from the model's config."""
    import transformers

    config = hub.from_pretrained(transformers.AutoConfig, name)
    architectures = " ".join(getattr(config, "architectures", None) or [])
    if getattr(config, "is_decoder", False) or "CausalLM" in architectures or \
            "LMHeadModel" in architectures or config.model_type in CAUSAL_TYPES:
        return "causal"
    if "MaskedLM" in architectures or config.model_type in MASKED_TYPES:
        return "masked"
    raise UserError(f"cannot tell whether model '{name}' is causal or masked "
                    f"(model_type '{config.model_type}'); pass --kind causal|masked")


def spec_path(spec: str) -> Path | None:
    """The local file or directory a scorer spec reads (``ngram:DIR`` → ``DIR``; a local
    Hugging Face directory), or ``None`` for a hub name: outputs must never be written there."""
    prefix, sep, target = spec.partition(":")
    path = Path(target if sep and prefix in WORD_LEVEL else spec)
    return path if path.exists() else None


def load_scorer(spec: str, *, device: str = "auto", kind: str | None = None, base: float = math.e,
                bow_correction: bool = True, mlm_method: str = "pll", orders: int = 100,
                seed: int = 0, batch_size: int = 32, detach_punct: bool = False,
                open_vocab: bool = False) -> SentenceScorer:
    """The scorer named by ``spec`` (docs/lm.md, "Model specs"). Scores are natural logs unless
    ``base`` is given, in which case they are divided by ``ln(base)`` (``base=2``: bits).
    ``detach_punct``: causal models treat punctuation as separate words (see ``causal``).
    ``open_vocab``: word-level models spell unknown words (see ``wordlevel``; its name gets
    ``+open-vocab``); sub-word models have an open vocabulary already."""
    check_base(base)
    if kind is not None and kind not in ("causal", "masked"):
        raise UserError(f"unknown model kind (--kind) '{kind}' (use causal or masked)")
    options = ScorerOptions(device, bow_correction, mlm_method, orders, seed, batch_size,
                            detach_punct, open_vocab)
    prefix, sep, target = spec.partition(":")
    if sep and prefix in WORD_LEVEL:
        if not target:
            raise UserError(f"model spec '{spec}' needs a directory after '{prefix}:'")
        scorer = SCORERS[prefix](target, options)
    elif (arch := word_level_arch(spec)) is not None:
        scorer = SCORERS[arch](spec, options)
    elif sep and not Path(spec).exists():  # no hub id holds a colon: a mistyped prefix
        raise UserError(f"unknown model spec '{spec}': '{prefix}:' is none of "
                        f"{', '.join(p + ':' for p in WORD_LEVEL)} (a Hugging Face model is a "
                        "name or a directory, without a prefix)")
    else:
        scorer = SCORERS[kind or detect_kind(spec)](spec, options)
    return scorer if base == math.e else RebasedScorer(scorer, base)


_UNIT_FREE = ("unknown", "oov_counts")


def check_base(base: float) -> None:
    """A logarithm base must be a finite positive number other than 1 (``nan`` gave every
    score ``nan`` and ``inf`` every score ``-0``, silently)."""
    if not (math.isfinite(base) and base > 0 and base != 1):
        raise UserError("the logarithm base (--base) must be a finite positive number other "
                        f"than 1, not {base}")


class RebasedScorer:
    """A scorer whose log-probabilities are in base ``base`` (e.g. bits for ``base=2``)."""

    def __init__(self, scorer: SentenceScorer, base: float):
        check_base(base)
        self.scorer, self.factor, self.name = scorer, 1.0 / math.log(base), scorer.name

    def score(self, sentences: list[str]):
        return self.scorer.score(sentences) * self.factor

    def word_scores(self, sentence: str) -> list[tuple[str, float]]:
        return [(w, v * self.factor) for w, v in self.scorer.word_scores(sentence)]

    def __getattr__(self, name: str) -> Any:
        """Forward the unit-free optional capabilities (``unknown``, ``oov_counts``) when the
        wrapped scorer has them, so ``hasattr`` tells the truth; nothing else is forwarded
        (a log-probability capability would need rebasing)."""
        if name in _UNIT_FREE:
            return getattr(self.scorer, name)
        raise AttributeError(name)
