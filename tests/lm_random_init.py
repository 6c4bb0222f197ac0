"""Random-initialised GPT-2 / BERT and freshly trained tokenizers (test helpers, not library).

Used by the unit tests (tiny models, a handful of sentences) and by the speed benchmark
(realistic sizes trained on a corpus); no checkpoint download is needed (docs/methods.md §9).
"""

from __future__ import annotations

from collections.abc import Iterable


def byte_level_bpe(sentences: Iterable[str], vocab_size: int, full_alphabet: bool = True):
    """A GPT-2-style byte-level BPE (``Ġ`` marks word starts) with ``<|endoftext|>``.

    ``full_alphabet=False`` keeps only the bytes seen in ``sentences`` (tiny vocabularies)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<|endoftext|>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet() if full_alphabet else [])
    tokenizer.train_from_iterator(sentences, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<|endoftext|>",
                                   eos_token="<|endoftext|>", pad_token="<|endoftext|>")


def wordpiece(sentences: Iterable[str], vocab_size: int):
    """A BERT-style lower-cased WordPiece tokenizer with ``[CLS] … [SEP]`` around the text."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from tokenizers import trainers
    from transformers import PreTrainedTokenizerFast

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.train_from_iterator(sentences, trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=special, show_progress=False))
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]",
                                   pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
                                   mask_token="[MASK]")


def gpt2(tokenizer, *, layers: int = 2, hidden: int = 32, heads: int = 2, positions: int = 64,
         seed: int = 0):
    """A randomly initialised ``GPT2LMHeadModel`` sized for ``tokenizer``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=positions, n_embd=hidden,
                        n_layer=layers, n_head=heads, bos_token_id=tokenizer.bos_token_id,
                        eos_token_id=tokenizer.eos_token_id)
    return GPT2LMHeadModel(config).eval()


def bert(tokenizer, *, layers: int = 2, hidden: int = 32, heads: int = 2, positions: int = 64,
         seed: int = 0):
    """A randomly initialised ``BertForMaskedLM`` sized for ``tokenizer``."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=heads, intermediate_size=4 * hidden,
                        max_position_embeddings=positions, pad_token_id=tokenizer.pad_token_id)
    return BertForMaskedLM(config).eval()
