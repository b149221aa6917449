"""``winellbot fit placement``: fit the section placer's term weights on backtest tasks.

The placer adds up terms per section (:data:`winellbot.pipeline.placement.TERMS`). This
command computes them with the production placer for every held-out sentence of the tasks,
alone (as the backtest's oracle documents are), and fits one weight per term by maximising
the likelihood of the right section under a softmax over the article's sections (a
conditional logit, L2-regularised towards 0). It prints the share placed right in-sample
and out-of-fold (5-fold cross-validation by task: the weights that place a task's sentences
never saw that task), next to the centroid alone and the hand-set words-and-vectors weights,
and with ``--write`` stores the weights in ``winellbot/data/placement.json``.

Two kinds of placements are learnt from: the held-out sentences alone (as the oracle
back-test gives them) and the passages the offline extractor proposes from the tasks'
documents that cover a held-out sentence, with their context and source.

Reads ``held_out`` (it is a training tool, not the bot): tune here, and judge the result on
tasks it was not fitted on.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from winellbot.pipeline.placement import EMBEDDED, FITTED, HAND_SET, TERMS

# lazy imports: the CLI builds its parser (this module's register) on every call, `winellbot health`
# included, so what the fits run is imported when they run.

FOLDS = 5
L2 = 0.01
# Which weights each kind of placement fits: a statement on its own, or a passage in its source.
KINDS = {"sentence": "alone", "passage": "in_source"}
# The terms each weight set may use. A passage in its source is placed without its embedding
# (pipeline.offline.meaning.MeaningPlacer embeds statements alone only); fitted with the meaning
# term too, they placed worse than without it (docs/results.md, "Placement of a passage in its source").
FITTED_TERMS = {"alone": TERMS, "in_source": tuple(t for t in TERMS if t not in EMBEDDED)}


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("fit", help="fit the offline pipeline's placement weights, punctuation restorer "
                                          "or acceptability score on backtest tasks")
    p.add_argument("what", choices=["placement", "punctuation", "acceptability"])
    p.add_argument("tasks_dir", metavar="TASKS_DIR")
    p.add_argument("--write", action="store_true",
                   help=f"store the weights in winellbot/data ({FITTED}, punctuation.safetensors, "
                        "acceptability.json)")
    p.add_argument("--verdicts", metavar="FILE",
                   help="acceptability: the verdict store (default: winellbot/data/verdicts/dev.jsonl)")
    p.add_argument("--min-posts", type=float, default=1.0, metavar="N",
                   help="acceptability: the threshold must still post N lines per task on average "
                        "(default: %(default)s)")
    p.add_argument("--from-state", action="store_true",
                   help="acceptability: also learn from the wiki's outcomes in the state of --config "
                        "(adopted/accepted positive, rejected with a reason negative, expired weakly negative)")
    p.add_argument("--config", help="acceptability --from-state: the TOML config naming the state")
    p.add_argument("--embedding-cache", metavar="FILE", help="embedding cache (default: none, in memory)")
    p.add_argument("--limit", type=int, metavar="N")
    p.add_argument("--model", default="all-mpnet-base-v2", choices=["all-mpnet-base-v2", "all-MiniLM-L6-v2"],
                   help="the sentence model of the meaning term (default: %(default)s)")
    p.add_argument("--epochs", type=float, help="passes over the windows (punctuation; default: the trainer's)")
    p.add_argument("--max-windows", type=int, default=0,
                   help="windows sampled for training, at most (punctuation; default: all)")
    p.add_argument("--folds", default="all",
                   help="the folds to measure: all, none or e.g. 0,1 (punctuation; default %(default)s)")
    return p


def placement_rows(tasks, embedder) -> list[tuple[str, str, object, object]]:
    """(task id, kind, terms matrix sections x TERMS, right-section mask) per placement to learn from.

    Two kinds: every held-out sentence alone (as the oracle's documents are), and every passage
    the offline extractor proposes from a task's documents that covers a held-out sentence
    (lexical judge), with its context and source as the pipeline places it.
    """
    import numpy as np

    from winellbot.bench.score import THRESHOLD, LexicalJudge, placed_in
    from winellbot.bench.tasks import article_from_task
    from winellbot.pipeline.offline.criteria import OfflineCriteria
    from winellbot.pipeline.offline.extractor import OfflineExtractor
    from winellbot.pipeline.offline.profile import profile
    from winellbot.pipeline.pagetext import unglue
    from winellbot.pipeline.placement import SectionPlacer, context_of

    every = {t: 1.0 for t in TERMS}  # every term computed
    judge, extractor = LexicalJudge(), OfflineExtractor()
    rows = []

    def add(task, kind, placer, text, context, document_text, held):
        evidence = placer.evidence(text, context, document_text)
        x = np.array([[terms[t] for t in TERMS] for _, terms in evidence], dtype=float)
        y = np.array([placed_in(path, held.section_path) for path, _ in evidence], dtype=float)
        if evidence and y.any():
            rows.append((task.id, kind, x, y))

    for task in tasks:
        view = task.bot_view()
        article = article_from_task(view)
        placer = SectionPlacer(article, weights=every, embedder=embedder)
        passages = []
        criteria = OfflineCriteria().induce(article)
        for document in view.documents:
            for update in extractor.extract(article, criteria, document):
                held = [h for h in task.held_out if judge.recall(h.text, update.text) >= THRESHOLD]
                if held:
                    passages.append((update, unglue(document.text, profile(article).casing), held[0]))
        embedder.embed([h.text for h in task.held_out] + [u.quote for u, _, _ in passages])  # one batch
        for held in task.held_out:
            add(task, "sentence", placer, held.text, "", held.text, held)
        for update, text, held in passages:
            add(task, "passage", placer, update.quote, context_of(update.quote, text, extractor.context), text, held)
    return rows


def only(rows, terms):
    """``rows`` with the columns of the terms not in ``terms`` set to 0 (their weights fit to 0)."""
    import numpy as np

    keep = np.array([t in terms for t in TERMS], dtype=float)
    return [(task, kind, x * keep, y) for task, kind, x, y in rows]


def fit_softmax(rows, l2: float = L2):
    """Weights maximising sum over rows of log P(right section), P = softmax(x @ w) over sections."""
    import numpy as np
    from scipy.optimize import minimize

    def loss(w):
        total, grad = 0.0, np.zeros_like(w)
        for _, _, x, y in rows:
            z = x @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            right = float(p @ y)
            total -= np.log(right + 1e-12)
            grad -= x.T @ (p * y / (right + 1e-12) - p)
        return total + l2 * float(w @ w), grad + 2 * l2 * w

    return minimize(loss, np.zeros(rows[0][2].shape[1]), jac=True, method="L-BFGS-B").x


def accuracy(rows, w) -> float:
    import numpy as np

    return float(np.mean([y[int(np.argmax(x @ w))] > 0 for _, _, x, y in rows])) if rows else 0.0


def out_of_fold(rows) -> list[bool]:
    """Per row, whether weights fitted on the other folds (folds by task) place it right."""
    import numpy as np

    tasks = sorted({r[0] for r in rows})
    fold = {task: i % FOLDS for i, task in enumerate(tasks)}
    right = [False] * len(rows)
    for k in range(FOLDS):
        w = fit_softmax([r for r in rows if fold[r[0]] != k])
        for i, (task, _, x, y) in enumerate(rows):
            if fold[task] == k:
                right[i] = bool(y[int(np.argmax(x @ w))] > 0)
    return right


def run(args: argparse.Namespace) -> int:
    if args.what == "punctuation":
        from winellbot.bench.punct_fit import run as fit_punctuation

        return fit_punctuation(args)
    if args.what == "acceptability":
        from winellbot.bench.accept_fit import run as fit_acceptability

        return fit_acceptability(args)
    import numpy as np

    from winellbot.bench.tasks import load_tasks
    from winellbot.meaning import Embedder, EmbeddingCache

    tasks = load_tasks(args.tasks_dir, limit=args.limit)
    embedder = Embedder(EmbeddingCache(args.embedding_cache) if args.embedding_cache else None, model=args.model)
    rows = placement_rows(tasks, embedder)
    compare = {"centroid alone": np.array([1.0 if t == "meaning" else 0.0 for t in TERMS]),
               "words and word vectors (hand-set)": np.array([HAND_SET[t] for t in TERMS])}
    weights, figures = {}, {}
    for kind, fitted in KINDS.items():
        mine = [r for r in rows if r[1] == kind]
        w = fit_softmax(only(mine, FITTED_TERMS[fitted]))
        w = w / w[0] if w[0] > 0 else w  # the word cosine weighs 1, as in the hand-set weights
        figures[fitted] = {"placements": len(mine), "in_sample": round(accuracy(mine, w), 4),
                           "out_of_fold": round(float(np.mean(out_of_fold(only(mine, FITTED_TERMS[fitted])))), 4),
                           **{name: round(accuracy(mine, v), 4) for name, v in compare.items()}}
        # Fitted weights replace the hand-set ones only where they place better out of fold.
        better = figures[fitted]["out_of_fold"] > figures[fitted]["words and word vectors (hand-set)"]
        weights[fitted] = {t: round(float(v), 4) for t, v in zip(TERMS, w)} if better else dict(HAND_SET)
        figures[fitted]["kept"] = "fitted" if better else "hand-set"
    print(json.dumps({"weights": weights, "figures": figures}, indent=2))
    if args.write:
        path = Path(__file__).resolve().parents[1] / "data" / FITTED
        record = {"weights": weights, "model": args.model,
                  "command": f"winellbot fit placement {args.tasks_dir} --model {args.model} --write",
                  "fitted_on": "the WikiGenBench dev back-test: held-out sentences alone ('alone'), and the "
                               "offline extractor's passages that cover one, in their source ('in_source')",
                  "figures": figures}
        path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return 0
