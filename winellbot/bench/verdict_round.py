"""A round of blind verdicts on what the bot posts, from the command line: the packet, then the merge.

``python -m winellbot.bench.verdict_round packet POSTED TASKS_DIR OUT --key KEY`` reads a back-test's
posted lines (``backtest --output``) and writes, with :func:`winellbot.bench.verdicts.write_packets`,
one shuffled packet of: every posted line the store has no verdict on, as many posted lines it has
judged already (drawn at random: whether the judge agrees with the store's), and ``--humans``
held-out sentences of the human editors (the calibration). ``OUT`` holds only what the judge reads
(``part-NN.md`` and ``answers.md``, how to answer); the key, from item numbers to origins, goes to
``KEY``, which must lie outside ``OUT``.

``python -m winellbot.bench.verdict_round merge KEY ANSWERS... --judge NAME`` appends the judge's
answers to the store (:func:`winellbot.bench.verdicts.merge`) and prints, for the lines judged
before, how often the new verdict is the stored one, and the verdicts of each kind of item.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

from winellbot.bench.tasks import load_tasks
from winellbot.bench.verdicts import (ERRORS, VERDICTS, by_line, human_items, items_from_lines, load_store, merge,
                                      text_hash, write_packets)
from winellbot.errors import WinellbotError

ANSWERS = f"""# How to answer

Judge each item on its own by the rubric (`verdicts.md` of the bench): would an editor use the posted
line as it stands? Write one JSON object per item, one per line, in a file `answers.jsonl`:

    {{"item": 1, "verdict": "accept", "new_fact": true, "errors": []}}

`verdict`: one of {", ".join(VERDICTS)}. `new_fact`: true when the line carries at least one fact new to
the article that belongs in it. `errors`: any of {", ".join(ERRORS)}.
"""


def packet(posted: str | Path, tasks_dir: str | Path, out: str | Path, key: str | Path, *, humans: int = 10,
           seed: int = 29, version: str = "posted", parts: int = 1, store: str | Path | None = None) -> dict:
    """Write the packet (see the module's docstring; ``store``: the verdict store, the shipped one
    by default); returns how many items of each kind it holds."""
    out, key = Path(out).resolve(), Path(key).resolve()
    if key.is_relative_to(out):
        raise WinellbotError(f"the key {key} must lie outside the judge's folder {out}")
    lines = [json.loads(x) for x in Path(posted).read_text("utf-8").splitlines() if x.strip()]
    judged = by_line(load_store(store))
    new = [x for x in lines if (x["task"], text_hash(x.get("fact") or x["text"])) not in judged]
    known = [x for x in lines if (x["task"], text_hash(x.get("fact") or x["text"])) in judged]
    rng = random.Random(seed)
    known = rng.sample(known, min(len(new), len(known)))
    tasks = {t.id: t for t in load_tasks(tasks_dir)}
    items = items_from_lines(new, f"{version}-new") + items_from_lines(known, f"{version}-judged")
    for item in items[len(new):]:
        item.extra["stored_verdict"] = judged[(item.task, text_hash(item.text))].verdict
    items += human_items(tasks.values(), humans, seed)
    write_packets(items, tasks, out, parts=parts, seed=seed, key=key,
                  header="# Blind verdicts: judge each item on its own (how to answer: answers.md)\n\n")
    (out / "answers.md").write_text(ANSWERS, "utf-8")
    return {"new": len(new), "judged_before": len(known), "human": humans, "posted_lines": len(lines)}


def merged_figures(key: str | Path, answers: list[str | Path]) -> dict:
    """The answers by kind of item, and their agreement with the store on lines judged before."""
    keys = {row["item"]: row for row in map(json.loads, Path(key).read_text("utf-8").splitlines()) if row}
    by_kind: dict[str, Counter] = {}
    agree = total = 0
    for path in answers:
        for line in Path(path).read_text("utf-8").splitlines():
            if line.strip():
                a = json.loads(line)
                k = keys.get(int(a["item"]))
                if k is None:
                    raise WinellbotError(f"{path}: item {a['item']} is not in the key {key}")
                by_kind.setdefault(k["version"], Counter())[a["verdict"].strip().lower()] += 1
                if "stored_verdict" in k:
                    total += 1
                    agree += a["verdict"].strip().lower() == k["stored_verdict"]
    return {"by_kind": {k: dict(v) for k, v in by_kind.items()}, "same_as_stored": f"{agree} of {total}"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m winellbot.bench.verdict_round", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("packet", help="write a blind packet of posted lines")
    a.add_argument("posted", help="the back-test's posted lines (backtest --output)")
    a.add_argument("tasks_dir")
    a.add_argument("out", help="the judge's folder")
    a.add_argument("--key", required=True, help="the key file, outside the judge's folder")
    a.add_argument("--humans", type=int, default=10)
    a.add_argument("--seed", type=int, default=29)
    a.add_argument("--version", default="posted", help="the name the store gives these lines")
    a.add_argument("--parts", type=int, default=1)
    m = sub.add_parser("merge", help="append a judge's answers to the verdict store")
    m.add_argument("key")
    m.add_argument("answers", nargs="+")
    m.add_argument("--judge", required=True, help="who judged, and in which round")
    m.add_argument("--store", help="the store (default: winellbot/data/verdicts/dev.jsonl)")
    args = p.parse_args(argv)
    if args.command == "packet":
        print(json.dumps(packet(args.posted, args.tasks_dir, args.out, args.key, humans=args.humans, seed=args.seed,
                                version=args.version, parts=args.parts)))
        return 0
    print(json.dumps(merged_figures(args.key, args.answers)))
    print(f"added {merge(args.key, args.answers, args.judge, args.store)} verdict(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
