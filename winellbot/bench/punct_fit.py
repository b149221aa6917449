"""``winellbot fit punctuation``: train the punctuation restorer (:mod:`winellbot.pipeline.offline.punctuate`).

Training text is what the back-test tasks hold with its case and punctuation: the articles'
prose and the documents that kept them (``is_cased``: the search pages; the reference pages
lost theirs, and are what the model is for). Each text is cut into windows of words, each word
stripped as WikiGenBench strips its pages (lower case, marks and hyphens dropped), labelled with
the mark after it and its case. Out of fold (5 folds by task: a fold's texts are never trained
on by the model that reads them) it prints, per mark, precision, recall and F1, and the share of
capitalised words found; ``--write`` then trains on every task and stores the adapter and heads.

Reads only ``title``, ``wikitext`` and the documents' text: no ``held_out``, no origins.
"""
from __future__ import annotations

import argparse
import random
from pathlib import Path

from winellbot.bench.tasks import load_tasks
from winellbot.bundled import minilm_dir
from winellbot.llm.local_model import fast_device
from winellbot.pipeline.offline.punctuate import (
    CASES,
    LORA,
    MARKS,
    MAX_TOKENS,
    WEIGHTS,
    adapted_encoder,
    build_heads,
    first_pieces,
    lost_form,
    read,
    word_labels,
)
from winellbot.pipeline.pagetext import is_cased, unglue

FOLDS = 5
WINDOW = 100
# The shipped recipe: chosen on the dev tasks by the out-of-fold F1 of sentence ends (the recipes
# tried: docs/results.md, "The punctuation restorer").
EPOCHS = 18.0
RATE = 3e-3
BATCH = 32


def task_texts(task) -> list[str]:
    """The cased running text of a task: its article's paragraphs and its cased documents."""
    prose = [p for p in task.wikitext.split("\n\n") if p.strip() and not p.lstrip().startswith("=")]
    return ["\n".join(prose)] + [unglue(d.text) for d in task.documents if is_cased(d.text)]


def windows(text: str, size: int = WINDOW) -> list[tuple[list[str], list[int], list[int]]]:
    """The text's words as a stripped page has them, in windows of ``size``, with their labels."""
    kept = [(lost_form(w), word_labels(w)) for w in text.split()]
    kept = [(w, lab) for w, lab in kept if w]
    return [([w for w, _ in part], [lab[0] for _, lab in part], [lab[1] for _, lab in part])
            for part in (kept[i:i + size] for i in range(0, len(kept), size)) if len(part) >= 10]


def train(examples, *, epochs: float = EPOCHS, seed: int = 0, batch: int = BATCH, rate: float = RATE, log=print):
    """The LoRA-adapted encoder and the heads, fitted by cross-entropy on each word's first piece."""
    import torch
    from transformers import AutoTokenizer


    torch.manual_seed(seed)
    device = fast_device()
    tokenizer = AutoTokenizer.from_pretrained(minilm_dir(), local_files_only=True)
    encoder = adapted_encoder(minilm_dir())
    heads = build_heads(encoder.config.hidden_size)
    encoder.to(device).train()
    heads.to(device).train()
    params = [p for p in encoder.parameters() if p.requires_grad] + list(heads.parameters())
    optimiser = torch.optim.AdamW(params, lr=rate)
    order = list(range(len(examples)))
    steps = max(1, int(epochs * len(examples) / batch))
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: min(1.0, (s + 1) / 50) * (1 - s / steps))
    rng = random.Random(seed)
    for step in range(steps):
        if step * batch % len(order) < batch:
            rng.shuffle(order)
        chosen = [examples[order[(step * batch + k) % len(order)]] for k in range(batch)]
        enc, marks, cases = _batch(tokenizer, chosen, device)
        mark_logits, case_logits = heads(encoder(**enc).last_hidden_state)
        loss = torch.nn.functional.cross_entropy(mark_logits.reshape(-1, len(MARKS)), marks.reshape(-1),
                                                 ignore_index=-100) \
            + torch.nn.functional.cross_entropy(case_logits.reshape(-1, len(CASES)), cases.reshape(-1),
                                                ignore_index=-100)
        loss.backward()
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        if step % 50 == 0 or step == steps - 1:
            log(f"step {step + 1}/{steps}: loss {loss.item():.3f}")
    return tokenizer, encoder.eval(), heads.eval()


def _batch(tokenizer, chosen, device):
    """Token ids and labels (-100 on every piece but a word's first) of a batch of windows."""
    import torch

    enc = tokenizer([c[0] for c in chosen], is_split_into_words=True, truncation=True, max_length=MAX_TOKENS,
                    padding=True, return_tensors="pt")
    marks = torch.full(enc["input_ids"].shape, -100)
    cases = torch.full(enc["input_ids"].shape, -100)
    for row, (tokens, m, c) in enumerate(chosen):
        for w, pos in enumerate(first_pieces(enc.word_ids(row), len(tokens))):
            if pos >= 0:
                marks[row, pos], cases[row, pos] = m[w], c[w]
    return enc.to(device), marks.to(device), cases.to(device)


def predict(parts, examples, batch: int = 32) -> list[tuple[list[int], list[int]]]:
    """(marks, cases) per window of ``examples``, as the fitted parts read them."""
    out = []
    for i in range(0, len(examples), batch):
        for labels in read(*parts, [tokens for tokens, _, _ in examples[i:i + batch]]):
            out.append(([m for m, _ in labels], [c for _, c in labels]))
    return out


def figures(examples, predicted) -> dict[str, float]:
    """Precision, recall and F1 of sentence ends (full or question stop) and commas, and the share of
    capitalised and upper-case words given their capitals, over every word."""
    counts = {k: [0, 0, 0] for k in ("end", "comma", "capital")}  # found right, found, there
    for (_, marks, cases), (pm, pc) in zip(examples, predicted):
        for m, c, p, q in zip(marks, cases, pm, pc):
            for key, truth, guess in (("end", m >= 2, p >= 2), ("comma", m == 1, p == 1),
                                      ("capital", c >= 1, q >= 1)):
                counts[key][0] += truth and guess
                counts[key][1] += guess
                counts[key][2] += truth
    out = {}
    for key, (hit, found, there) in counts.items():
        precision, recall = hit / max(1, found), hit / max(1, there)
        out[key] = {"precision": round(precision, 3), "recall": round(recall, 3),
                    "f1": round(2 * precision * recall / max(1e-9, precision + recall), 3), "there": there}
    return out


def save(parts, path: Path = WEIGHTS) -> Path:
    """The adapter's and the heads' weights in one safetensors file (float16: under 2 MB)."""
    from safetensors.torch import save_file

    _, encoder, heads = parts
    state = {f"encoder.{k}": v.half().cpu().contiguous() for k, v in encoder.state_dict().items() if "lora_" in k}
    state.update({f"heads.{k}": v.half().cpu().contiguous() for k, v in heads.state_dict().items()})
    save_file(state, str(path), metadata={"base": "all-MiniLM-L6-v2", "lora": repr(LORA)})
    return path


def run(args: argparse.Namespace) -> int:
    tasks = load_tasks(args.tasks_dir, limit=args.limit)
    by_fold = [[] for _ in range(FOLDS)]
    for i, task in enumerate(sorted(tasks, key=lambda t: t.id)):
        by_fold[i % FOLDS].extend(w for text in task_texts(task) for w in windows(text))
    folds = list(range(FOLDS)) if args.folds == "all" else [] if args.folds == "none" else \
        [int(f) for f in args.folds.split(",") if f.strip()]
    cap = args.max_windows or None
    rng = random.Random(0)
    pooled_truth, pooled_guess = [], []
    for fold in folds:
        train_set = [w for k, ws in enumerate(by_fold) if k != fold for w in ws]
        rng.shuffle(train_set)
        parts = train(train_set[:cap], epochs=args.epochs or EPOCHS)
        guess = predict(parts, by_fold[fold])
        pooled_truth += by_fold[fold]
        pooled_guess += guess
        print(f"fold {fold}: {figures(by_fold[fold], guess)}")
    if pooled_truth:
        print(f"out of fold, folds {folds}: {figures(pooled_truth, pooled_guess)}")
    if args.write:
        everything = [w for ws in by_fold for w in ws]
        rng.shuffle(everything)
        print(f"written: {save(train(everything[:cap], epochs=args.epochs or EPOCHS))}")
    return 0
