"""The model card written beside a trained adapter: data, counts, command, losses, figures."""
from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path

from winellbot.editor.evaluate import figures, table
from winellbot.editor.predict import NoChange, build_predictor

CARD = "README.md"
FIGURES_FILE = "figures.json"


def validation_figures(adapter: Path, examples: list) -> dict[str, dict]:
    """The trained editor's figures on ``examples``, beside no change (the floor)."""
    editor = build_predictor("model", str(adapter))  # as `editor apply --model` runs it (copying or not)
    predicted = {e.id: editor.predict(e.task()) for e in examples}
    return {"no change": figures(examples, {e.id: NoChange().predict(e.task()) for e in examples}),
            "this editor": figures(examples, predicted)}


def write_card(result, config, *, data: list[str], command: str, examples: list, dropped: Counter,
               validation: list, note: str = "") -> Path:
    """Write README.md (and figures.json when there is a validation set) beside the adapter."""
    output = Path(config.output)
    rows = validation_figures(output, validation) if validation else {}
    if rows:
        (output / FIGURES_FILE).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    sources = Counter(e.meta.get("kind", "bench") for e in examples)
    lines = [
        "# winellbot local editor (LoRA adapter)",
        "",
        f"Base model: `{config.base}`. Trained {dt.date.today().isoformat()} by `winellbot editor train`.",
        "Task: given a paragraph (sentences numbered) and a source page, answer `After N: <one new sentence>`;",
        "winellbot inserts that sentence after sentence N and adds the citation itself.",
        *(["Answers are copied: trained on the source's run of words closest to the human sentence, and decoded",
           "held to runs of the source's words (`answer: copied-span-1` in editor.json; winellbot.llm.copying)."]
          if getattr(config, "copied", False) else []),
        "",
        "## Data",
        "",
        f"Files: {', '.join(f'`{Path(d).name}`' for d in data)}. "
        f"{result.examples} training pair(s) from {len({e.article for e in examples})} article(s) "
        f"({', '.join(f'{k}: {v}' for k, v in sources.items())}); {result.skipped} example(s) without a "
        "whole-sentence insertion skipped.",
        *([note] if note else []),
        "Filtered out before training (the source shares the sentence's words without stating it): "
        + (", ".join(f"{why}: {n}" for why, n in dropped.items()) or "none") + ".",
        "",
        "## Training",
        "",
        f"Command: `{command}`",
        "",
        f"LoRA rank {config.rank}, alpha {config.alpha}, dropout {config.dropout}, on every linear layer of "
        + (f"the top {config.layers} layers; " if config.layers else "every layer; ") +
        f"{config.epochs:g} epoch(s), learning rate {config.learning_rate:g} (cosine), batch "
        f"{config.batch_size} x {config.grad_accum} accumulated; {result.steps} steps; loss on the answer only.",
        f"Answer loss on a sample of training pairs: {result.loss_before:.3f} before, {result.loss_after:.3f} after.",
    ]
    if rows:
        lines += ["", f"## Figures on {len(validation)} held-out example(s) (articles not trained on)", "",
                  table(rows)]
    path = output / CARD
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
