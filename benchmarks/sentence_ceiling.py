"""How many held-out facts one source sentence could bring back: the ceiling of posting a sentence as it stands.

    .venv/bin/python benchmarks/sentence_ceiling.py ../shared/bench/wikigenbench-dev [--limit N] [--jobs 2]
        [--posted F.jsonl] [--held H.jsonl]

A posted fact line is one sentence of a source (:mod:`winellbot.pipeline.offline.fact`), so the
posted lines' coverage can be no higher than the share of held-out facts that some single sentence of
the task's documents covers (the bench's lexical judge: 60% of the fact's content words). Every
document is cut into sentences as the pipeline would read it: a cased page into the sentences of its
prose lines, as the extractor cuts it; a page that lost its case and punctuation after the bundled
punctuation model's marks (the whole page, not only the passages the extractor picks).

Printed: the facts covered by a sentence of at most 35 words (the fact line's limit), 50, 80 and any
length; of the first, those whose covering sentence stands as a fact line by the picker's reading
(:func:`winellbot.pipeline.offline.fact.stands`); with ``--posted``/``--held`` (a back-test's
output), the facts its posted lines and its held candidates cover.

Reads ``held_out``: an analysis tool, not the bot. Punctuating every restored page is slow (about
an hour of the dev machine's 2 cores for the 100 dev tasks).
"""
from __future__ import annotations

import argparse
from collections import Counter

LIMITS = (35, 50, 80, None)
STANDING = f"<= {LIMITS[0]} words, standing as a fact line"


def limit_name(limit: int | None) -> str:
    return f"<= {limit} words" if limit else "any length"


def task_counts(task) -> Counter:
    """The ceiling's counts for one task: per held-out fact, the shortest covering sentence."""
    from winellbot.bench.score import THRESHOLD, LexicalJudge
    from winellbot.bench.tasks import article_from_task
    from winellbot.pipeline.offline.fact import stands
    from winellbot.pipeline.offline.passages import sentence_spans
    from winellbot.pipeline.offline.profile import profile
    from winellbot.pipeline.offline.punctuate import bundled_model, punctuated
    from winellbot.pipeline.pagetext import has_capitals, is_cased, unglue
    from winellbot.sentences import read, sentences_of
    from winellbot.text import words

    article = article_from_task(task.bot_view())
    prof = profile(article)
    sentences = []
    for doc in task.documents:
        text = unglue(doc.text, prof.casing)
        if is_cased(text):  # the extractor's sentences: those of each prose line
            sentences += [s for _, _, s in sentence_spans(text) if s]
            continue
        if not has_capitals(text) and text.split():
            tokens = text.split()
            text = punctuated(tokens, bundled_model().marks(tokens), prof.casing, prof.name_pairs)
        sentences += sentences_of(text)
    judge, counts = LexicalJudge(), Counter(facts=len(task.held_out))
    for fact in task.held_out:
        covering = sorted((len(words(s)), s) for s in sentences if judge.recall(fact.text, s) >= THRESHOLD)
        for limit in LIMITS:
            if any(limit is None or n <= limit for n, _ in covering):
                counts[limit_name(limit)] += 1
        short = [s for n, s in covering if n <= LIMITS[0]]
        if any(stands(article, read(s, article, parse=False)) for s in short):
            counts[STANDING] += 1
    return counts


def backtest_counts(tasks, path: str, label: str) -> Counter:
    """The held-out facts that the ``fact`` lines of a back-test output file cover."""
    from winellbot.bench.backtest import read_suggestions
    from winellbot.bench.score import THRESHOLD, LexicalJudge

    judge, lines = LexicalJudge(), {}
    for row in read_suggestions(path):
        lines.setdefault(row["task"], []).append(row.get("fact") or row.get("text") or "")
    covered = sum(any(judge.recall(f.text, line) >= THRESHOLD for line in lines.get(t.id, ())) for t in tasks
                  for f in t.held_out)
    return Counter({label: covered})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks_dir")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--posted", default="", help="a back-test's output: the posted lines")
    parser.add_argument("--held", default="", help="a back-test's --held file: the held candidates")
    args = parser.parse_args()

    from concurrent.futures import ProcessPoolExecutor

    from winellbot.bench.tasks import load_tasks

    tasks = load_tasks(args.tasks_dir, limit=args.limit)
    total = Counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for counts in pool.map(task_counts, tasks):
            total.update(counts)
    for path, label in ((args.posted, "covered by the posted lines"), (args.held, "covered by a held candidate")):
        if path:
            total.update(backtest_counts(tasks, path, label))
    facts = total.pop("facts")
    print(f"{len(tasks)} tasks, {facts} held-out facts")
    names = [limit_name(limit) for limit in LIMITS]
    names.insert(1, STANDING)
    names += [label for path, label in ((args.posted, "covered by the posted lines"),
                                        (args.held, "covered by a held candidate")) if path]
    for name in names:
        print(f"  {name}: {total[name]} ({total[name] / max(1, facts):.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
