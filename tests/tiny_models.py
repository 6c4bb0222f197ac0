"""Tiny random-initialised BERT checkpoints for fast CPU tests (config + a word-level tokenizer
trained on the fly with ``tokenizers``)."""

from __future__ import annotations

from pathlib import Path

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def tiny_bert_dir(path: Path, texts: list[str], seed: int = 0, arch: str = "bert") -> Path:
    """Save a 1-layer, 32-wide BERT (or RoBERTa: no token type ids) and a whitespace
    word-level tokenizer over ``texts``."""
    import torch
    import transformers
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(texts, trainers.WordLevelTrainer(special_tokens=SPECIALS))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    inputs = ["input_ids", "token_type_ids", "attention_mask"]
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]",
        model_input_names=inputs if arch == "bert" else [inputs[0], inputs[2]])
    fast.save_pretrained(path)
    torch.manual_seed(seed)
    prefix = {"bert": "Bert", "roberta": "Roberta"}[arch]
    config = getattr(transformers, f"{prefix}Config")(
        vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=80, pad_token_id=0)
    getattr(transformers, f"{prefix}Model")(config).save_pretrained(path)
    return path


# --- planted-cue datasets (hand-countable; see tests/test_probe_stats.py) -------------------

LABELS = ["contradiction", "entailment", "neutral"]
FILLERS = ["someone is walking outside", "a person plays music", "people are eating food",
           "the man reads a book", "a woman rides a bike"]


def _nli(hypothesis: str, label: str) -> dict:
    return {"premise": "a person is near the house", "hypothesis": hypothesis, "label": label}


def _with_ids(prefix: str, rows: list[dict]) -> list[dict]:
    return [{"id": f"{prefix}{i}", **row} for i, row in enumerate(rows)]


def nli_planted() -> tuple[list[dict], list[dict]]:
    """Train: "nobody" in 20 items (16 C / 2 E / 2 N) + 40 plain items (8 C / 16 E / 16 N).
    Test: "nobody" in 32 items (12 C / 10 E / 10 N), 30 plain items (10 per label,
    4 with "cat")."""
    train = []
    for label, n in zip(LABELS, (16, 2, 2)):
        train += [_nli(f"nobody is near the house {FILLERS[j % 5]}", label)
                  for j in range(n)]
    for label, n in zip(LABELS, (8, 16, 16)):
        train += [_nli(FILLERS[j % 5], label) for j in range(n)]
    test = []
    for label, n in zip(LABELS, (12, 10, 10)):
        test += [_nli(f"nobody is near the house {FILLERS[j % 5]}", label)
                 for j in range(n)]
    for label in LABELS:
        test += [_nli(("a cat sleeps " if j < 2 and label != "neutral" else "")
                      + FILLERS[j % 5], label) for j in range(10)]
    return _with_ids("tr", train), _with_ids("te", test)


def _mcq(prefix: str, i: int, cue_choice: int | None, label: int) -> dict:
    choices = ["he went to the shop", "she opened the door"]
    if cue_choice is not None:
        choices[cue_choice] = "they never " + choices[cue_choice]
    return {"id": f"{prefix}{i}", "premise": "the day was long", "choices": choices,
            "label": label}


def mcq_planted() -> tuple[list[dict], list[dict]]:
    """Train: "never" in one choice of 20 questions, the correct one in 15; 20 plain questions.
    Test: "never" in one choice of 24 questions, correct in 14; 16 plain questions."""
    train = [_mcq("tr", i, i % 2, i % 2 if i < 15 else 1 - i % 2) for i in range(20)]
    train += [_mcq("tr", 20 + i, None, i % 2) for i in range(20)]
    test = [_mcq("te", i, i % 2, i % 2 if i < 14 else 1 - i % 2) for i in range(24)]
    test += [_mcq("te", 24 + i, None, i % 2) for i in range(16)]
    return train, test
