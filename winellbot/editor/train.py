"""LoRA supervised fine-tuning of the local editor (transformers + peft), loss on the answer only.

Each example becomes (prompt, answer) through :func:`winellbot.editor.shortedit.training_pair`;
the prompt is formatted with the tokenizer's chat template and its tokens are masked out of the
loss (label -100), so the model learns to write the edit, not to repeat the paragraph. The base
is a model folder, a GGUF file or the bundled SmolLM2 (:mod:`winellbot.llm.local_model`).

Hardware is transformers' ``Trainer``'s business: CPU here, the GPU when there is one, several
GPUs when started with ``accelerate launch -m winellbot.cli editor train ...`` (the same code).
Checkpoints are written every ``save_steps``; ``resume=True`` continues from the last one.
"""
from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path

from winellbot.editor.examples import EditorExample
from winellbot.editor.shortedit import PROMPT, training_pair
from winellbot.llm.local_model import COPIED, EDITOR_FILE, ThreadChooser, fast_dtype, load_model, load_tokenizer
from winellbot.llm.prompts import load_prompt
from winellbot.llm.transformers_backend import plain_prompt

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class TrainConfig:
    base: str
    output: str
    epochs: float = 3.0
    learning_rate: float = 3e-4
    batch_size: int = 1
    grad_accum: int = 8
    rank: int = 16
    alpha: int = 32
    layers: int = 8  # LoRA on the top layers only: back-propagation stops there (0: every layer)
    dropout: float = 0.05
    max_length: int = 1024
    max_steps: int = -1
    save_steps: int = 50
    seed: int = 0
    resume: bool = False
    progress: bool = True
    loss_sample: int = 4  # examples on which the loss is measured before and after training
    copied: bool = True  # answers copied from the source (shortedit.copied_answer), decoded held to it


@dataclass
class TrainResult:
    output: Path
    examples: int
    skipped: int
    steps: int
    loss_before: float
    loss_after: float
    log: list = field(default_factory=list)
    main: bool = True  # False in the other processes of a multi-GPU run (they write nothing)


def encode(tokenizer, messages, answer: str, max_length: int) -> dict:
    """Token ids and labels: prompt tokens are -100, the answer and its end token are learned."""
    chat = [{"role": m.role, "content": m.content} for m in messages]
    if getattr(tokenizer, "chat_template", None):
        prompt = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        special = False
    else:
        prompt, special = plain_prompt(messages), True
    prompt_ids = tokenizer(prompt, add_special_tokens=special)["input_ids"]
    answer_ids = tokenizer(answer, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    prompt_ids = prompt_ids[-max(1, max_length - len(answer_ids)):]  # as the backend cuts: keep the end
    ids = (prompt_ids + answer_ids)[:max_length]
    labels = ([-100] * len(prompt_ids) + answer_ids)[:max_length]
    return {"input_ids": ids, "labels": labels}


def encode_examples(tokenizer, examples: list[EditorExample], max_length: int,
                    copied: bool = False) -> tuple[list[dict], int]:
    """Encoded training pairs and how many examples had no whole-sentence insertion to learn."""
    rows, skipped = [], 0
    for ex in examples:
        pair = training_pair(ex, copied=copied)
        if pair is None:
            skipped += 1
            continue
        rows.append(encode(tokenizer, pair[0], pair[1], max_length))
    return rows, skipped


class _Collator:
    """Right-padded batches that carry only the logits the loss needs.

    The loss is on the answer only, so the vocabulary projection (49k words x every position for
    SmolLM2: a fifth of a step's work) is computed from the token before the first answer token on:
    ``logits_to_keep`` and labels cut to the same tail (the model shifts them by one itself).
    """

    def __init__(self, pad_id: int) -> None:
        self.pad_id = pad_id

    def __call__(self, rows: list[dict]) -> dict:
        import torch

        width = max(len(r["input_ids"]) for r in rows)
        ids = [r["input_ids"] + [self.pad_id] * (width - len(r["input_ids"])) for r in rows]
        labels = [r["labels"] + [-100] * (width - len(r["labels"])) for r in rows]
        mask = [[1] * len(r["input_ids"]) + [0] * (width - len(r["input_ids"])) for r in rows]
        first = min((next((i for i, x in enumerate(row) if x != -100), width) for row in labels), default=0)
        keep = min(width, width - first + 1)
        return {"input_ids": torch.tensor(ids), "labels": torch.tensor([row[width - keep:] for row in labels]),
                "attention_mask": torch.tensor(mask), "logits_to_keep": keep}


def mean_loss(model, rows: list[dict], pad_id: int) -> float:
    """The mean answer-token loss of ``model`` on ``rows`` (no gradients)."""
    import torch

    if not rows:
        return math.nan
    model.eval()
    device = next(model.parameters()).device
    total = 0.0
    with torch.no_grad():
        for row in rows:
            batch = {k: v.to(device) if hasattr(v, "to") else v for k, v in _Collator(pad_id)([row]).items()}
            total += float(model(**batch).loss)
    return total / len(rows)


def train(examples: list[EditorExample], config: TrainConfig) -> TrainResult:
    """Fine-tune a LoRA adapter on ``examples``; writes the adapter and :data:`EDITOR_FILE` to ``output``."""
    from peft import LoraConfig, get_peft_model
    from transformers import Trainer, TrainingArguments, set_seed

    set_seed(config.seed)
    tokenizer = load_tokenizer(config.base)
    rows, skipped = encode_examples(tokenizer, examples, config.max_length, config.copied)
    if not rows:
        raise ValueError("no example inserts whole sentences: nothing to train on")
    dtype = fast_dtype()  # the frozen base in bfloat16 where that is fast; the adapter stays float32
    model = load_model(config.base, dtype=dtype)
    total = model.config.num_hidden_layers
    top = list(range(max(0, total - config.layers), total)) if config.layers else None
    model = get_peft_model(model, LoraConfig(r=config.rank, lora_alpha=config.alpha, lora_dropout=config.dropout,
                                             target_modules=list(LORA_TARGETS), layers_to_transform=top,
                                             task_type="CAUSAL_LM"))
    threads = None if _cuda() else ThreadChooser()
    if threads:
        threads.apply()
    probe = random.Random(config.seed).sample(rows, min(config.loss_sample, len(rows)))
    before = mean_loss(model, probe, tokenizer.pad_token_id)
    output = Path(config.output)
    args = TrainingArguments(
        output_dir=str(output / "checkpoints"), num_train_epochs=config.epochs, max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size, gradient_accumulation_steps=config.grad_accum,
        learning_rate=config.learning_rate, lr_scheduler_type="cosine", warmup_steps=_warmup(rows, config),
        logging_steps=5, save_steps=config.save_steps, save_total_limit=2, seed=config.seed,
        report_to=[], disable_tqdm=not config.progress, remove_unused_columns=False,
        dataloader_num_workers=0, bf16=dtype == "bfloat16", use_cpu=not _cuda(),
    )
    trainer = Trainer(model=model, args=args, train_dataset=rows, data_collator=_Collator(tokenizer.pad_token_id),
                      callbacks=[_free_cores_callback(threads)] if threads else [])
    resume = config.resume and any((output / "checkpoints").glob("checkpoint-*"))
    trainer.train(resume_from_checkpoint=True if resume else None)
    after = mean_loss(model, probe, tokenizer.pad_token_id)
    if trainer.is_world_process_zero():
        model.save_pretrained(str(output))
        info = {"base": str(config.base), "prompt": load_prompt(PROMPT).version, "answer": COPIED if config.copied else "short-edit-1",
                "dtype": dtype or "float32"}
        (output / EDITOR_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return TrainResult(output, len(rows), skipped, trainer.state.global_step, before, after,
                       [h for h in trainer.state.log_history if "loss" in h], trainer.is_world_process_zero())


def _free_cores_callback(threads: ThreadChooser):
    from transformers import TrainerCallback

    class FreeCores(TrainerCallback):
        """Before each step, as many CPU threads as other processes leave cores (see local_model.cpu_threads)."""

        def on_step_begin(self, args, state, control, **kwargs):
            threads.apply()

    return FreeCores()


def _warmup(rows: list, config: TrainConfig) -> int:
    steps = config.max_steps if config.max_steps > 0 else math.ceil(
        len(rows) / (config.batch_size * config.grad_accum) * config.epochs)
    return max(1, steps // 20)


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()
