"""A report a person would rather look at than read: a table and a PNG plot per run."""
from __future__ import annotations

import json
from pathlib import Path

from winellbot.llm.usage import table as llm_table
from winellbot.plots import pyplot, save

HEADLINE = ("c_soft", "c_hard", "c_hard_top", "s_acc", "cover_precision", "mean_best_recall", "readable")


def table(runs: dict[str, dict]) -> str:
    """A Markdown table of the headline figures, one row per run, plus per-origin C_soft/C_hard."""
    origins = sorted({o for f in runs.values() for o in f.get("by_origin", {})})
    cols = list(HEADLINE) + [f"{o} {m}" for o in origins for m in ("c_soft", "c_hard")] + \
        ["suggestions_per_task", "words_per_suggestion", "token_change"]
    lines = ["| run | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, f in runs.items():
        cells = []
        for col in cols:
            if " " in col:
                origin, metric = col.split(" ")
                value = f.get("by_origin", {}).get(origin, {}).get(metric)
            else:
                value = f.get(col)
            cells.append(_cell(col, value))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(col: str, value) -> str:
    if value is None:
        return "-"
    if col in ("suggestions_per_task", "words_per_suggestion", "token_change"):
        return f"{value:.1f}"
    return f"{100 * value:.1f}%"


def plot(runs: dict[str, dict], path: str | Path) -> Path:
    """Grouped bars of the headline figures per run, saved as PNG (needs matplotlib)."""
    plt = pyplot()
    if plt is None:
        raise ImportError("the back-test's plot needs matplotlib (pip install 'winellbot[report]')")
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / max(1, len(runs))
    for i, (name, f) in enumerate(runs.items()):
        xs = [j + i * width for j in range(len(HEADLINE))]
        values = [100 * (f.get(k) or 0.0) for k in HEADLINE]
        bars = ax.bar(xs, values, width, label=name)
        ax.bar_label(bars, fmt="%.0f", fontsize=7)
    ax.set_xticks([j + width * (len(runs) - 1) / 2 for j in range(len(HEADLINE))])
    ax.set_xticklabels(HEADLINE, rotation=20, ha="right")
    ax.set_ylabel("%")
    ax.set_ylim(0, 105)
    ax.set_title("winellbot backtest")
    ax.legend()
    return save(fig, path)


def write_report(runs: dict[str, dict], directory: str | Path, *, notes: list[str] = ()) -> list[Path]:
    """``report.md`` (``notes``, such as the configuration, then the table), ``figures.json`` and
    ``figures.png`` in ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    md = directory / "report.md"
    head = "".join(f"- {note}\n" for note in notes) + ("\n" if notes else "")
    text = "# Backtest\n\n" + head + table(runs) + "\n![figures](figures.png)\n"
    for name, figures in runs.items():
        if figures.get("llm"):
            text += (f"\n## Model calls: {name}\n\n{llm_table(figures['llm'])}\n"
                     f"Model tokens per task: {figures['llm'].get('tokens_per_task')}\n")
    md.write_text(text, encoding="utf-8")
    js = directory / "figures.json"
    js.write_text(json.dumps(runs, indent=2), encoding="utf-8")
    return [md, js, plot(runs, directory / "figures.png")]
