"""A tiny random Llama model with its own byte-level BPE tokenizer, built offline in about a second.

It writes nothing sensible (its weights are random) but it has the full shape of a real local
model: config, safetensors weights, a fast tokenizer and a chat template. Tests use it to run the
editor through :class:`winellbot.llm.transformers_backend.TransformersBackend`, and docs/models.md uses
it to show the local-editor setup without downloading anything::

    python -m winellbot.llm.tiny_model tiny-editor
"""
from __future__ import annotations

from pathlib import Path

SENTENCES = (
    "The team finished fourth in the championship with three wins.",
    "She won the race on 24 May 2025 and signed a new contract.",
    "The company announced its results for the year, with revenue up ten percent.",
    "He was appointed minister in June and resigned in December.",
    "The album was released in 2024 and reached number one in the charts.",
    "The city council approved the new bridge after a public vote.",
    "Reply with the updated paragraph only. Original paragraph. News.",
)
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def build_tiny_model(path: str | Path, *, seed: int = 0, chat_template: bool = True,
                     vocab_size: int = 600) -> Path:
    """Write a 2-layer, hidden-64 Llama and its tokenizer to ``path``; returns the path."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<s>", "</s>", "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(SENTENCES, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>",
                                        pad_token="<pad>")
    if chat_template:
        tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(str(path))

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=False,
    )
    LlamaForCausalLM(config).save_pretrained(str(path))
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m winellbot.llm.tiny_model DIR [--seed N]``: build the tiny model into DIR."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m winellbot.llm.tiny_model",
                                     description="Build a tiny random Llama editor model offline (for tests and demos).")
    parser.add_argument("dir", help="folder to write the model and tokenizer to")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(build_tiny_model(args.dir, seed=args.seed))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
