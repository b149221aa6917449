"""The shipped editor's recipe, out of fold: per fold, fit the span ranker and train the adapter
without that fold's articles, apply it to them, then score all held-out predictions together.

    .venv/bin/python benchmarks/editor_cv.py OUT_DIR ../shared/bench/editor-dev.jsonl var/editor/cited-dev.jsonl \
        [--folds 0 1 2 3 4] [--jobs N] [--epochs 2.5] [--max-steps N]

Each fold runs docs/editor.md's commands (``editor fit-spans``, ``editor train``, ``editor apply``)
with ``--holdout-fold K``; ``--jobs`` runs that many folds at once (on a GPU, all five fit; on 2
cores, one at a time: about 40 minutes a fold). The ranker is fitted on the first file alone, as
the shipped one is. Prints ``editor evaluate`` of the pooled held-out examples, then of each fold.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

WINELLBOT = [sys.executable, "-m", "winellbot.cli"]


def held_out(examples: list, fold: int, out: Path) -> Path:
    from winellbot.editor.examples import split_by_article, write_jsonl

    path = out / f"val-f{fold}.jsonl"
    write_jsonl((e.to_json() for e in split_by_article(examples, fold, 5)[1]), path)
    return path


def one_fold(fold: int, args, examples: list) -> tuple[Path, Path]:
    out = Path(args.out)
    adapter, val, pred = out / f"editor-f{fold}", held_out(examples, fold, out), out / f"pred-f{fold}.jsonl"
    with open(out / f"log-f{fold}.txt", "w", encoding="utf-8") as log:
        def call(*cmd: str) -> None:
            subprocess.run([*WINELLBOT, "editor", *cmd], check=True, stdout=log, stderr=subprocess.STDOUT)

        call("train", *args.data, "--output", str(adapter), "--holdout-fold", str(fold), "--epochs", str(args.epochs),
             "--learning-rate", "1e-3", "--save-steps", "1000", "--max-steps", str(args.max_steps), "--no-progress")
        call("fit-spans", args.data[0], "--output", str(adapter / "spans.json"), "--holdout-fold", str(fold))
        call("apply", str(val), "--model", str(adapter), "--output", str(pred), "--no-progress")
    return val, pred


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("data", nargs="+")
    parser.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--epochs", type=float, default=2.5)
    parser.add_argument("--max-steps", type=int, default=-1, help="stop training here (a quick check of the run)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from winellbot.editor.examples import load_examples

    examples = [e for path in args.data for e in load_examples(path)]
    with ThreadPoolExecutor(args.jobs) as pool:
        done = list(pool.map(lambda k: one_fold(k, args, examples), args.folds))
    pooled_val, pooled_pred = out / "val-all.jsonl", out / "pred-all.jsonl"
    for target, index in ((pooled_val, 0), (pooled_pred, 1)):
        target.write_text("".join(pair[index].read_text(encoding="utf-8") for pair in done), encoding="utf-8")
    for val, pred in [(pooled_val, pooled_pred), *done]:
        print(f"== {val.name}", flush=True)
        subprocess.run([*WINELLBOT, "editor", "evaluate", str(val), str(pred)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
