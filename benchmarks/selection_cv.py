"""Selection by meaning, measured: do embedding, corroboration and spaCy features choose better suggestions?

    .venv/bin/python benchmarks/selection_cv.py ../shared/bench/wikigenbench-dev [--limit N] [--shortlist 20]

The deployed offline pipeline (:func:`winellbot.factory.build_pipeline` on the default
settings) runs its update loop on each task; the ``--shortlist`` updates it kept with the best
extractor score are the candidates (the pipeline proposes the best by that score). Each
candidate gets the features below and the label "brings back a held-out fact" (the bench's
lexical judge). For each feature set a conditional logit (a softmax over a task's candidates,
the objective of choosing within a task; :func:`winellbot.bench.fit.fit_softmax`) is fitted and
the facts covered by each task's 5 best candidates are counted in-sample and out-of-fold
(5 folds by task, as ``winellbot fit placement``), before the gates. Diversity (skip a
candidate too close in meaning to one already chosen) is measured on the score order.

Features: ``score`` (the extractor's), ``subject`` (cosine with the title and lead),
``sections`` (best cosine with a section centroid), ``nearest`` (best cosine with one article
sentence), ``corroboration`` (mean of the 3 best cosines with candidates of other documents),
``names``/``dates``/``numbers`` (spaCy entities whose words the article lacks), ``cased``.

Reads ``held_out``: an analysis tool, not the bot. Run it on a quiet machine: the loop reads
every document of every task (the backtest's work) and the models read each candidate once.
"""
from __future__ import annotations

import argparse

SETS = (("score",), ("score", "subject"), ("score", "corroboration"), ("score", "subject", "corroboration"),
        ("score", "subject", "corroboration", "cased"), ("score", "names", "dates", "numbers"),
        ("score", "subject", "corroboration", "names", "dates", "numbers"),
        ("score", "subject", "sections", "nearest", "corroboration", "names", "dates", "numbers", "cased"))
KINDS = {"names": {"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "EVENT", "WORK_OF_ART", "LAW", "PRODUCT"},
         "dates": {"DATE", "TIME"}, "numbers": {"CARDINAL", "QUANTITY", "MONEY", "PERCENT", "ORDINAL"}}


def candidates(task, pipeline, embedder, nlp, shortlist: int) -> list[dict]:
    """The task's shortlisted kept updates as feature rows, each with the facts it covers."""
    import numpy as np

    from winellbot.bench.score import THRESHOLD, LexicalJudge
    from winellbot.bench.tasks import article_from_task
    from winellbot.pipeline.offline.profile import profile
    from winellbot.search.corpus import LocalCorpus
    from winellbot.text import clean_suggestion_text, content_tokens, split_sentences

    view = task.bot_view()
    article = article_from_task(view)
    corpus = LocalCorpus()
    corpus.add(view.documents)
    kept = pipeline.loop.run(article, pipeline.inducer.induce(article), corpus, None).kept
    kept = sorted(kept, key=lambda u: -u.score)[:shortlist]
    if not kept:
        return []
    by_section = [[s for p in sec.paragraphs for s in split_sentences(p.text) if content_tokens(s)]
                  for sec in article.sections if sec.path]
    sentences = [s for sec in by_section for s in sec]
    lead = " ".join(p.text for sec in article.sections if not sec.path for p in sec.paragraphs)
    subject = embedder.embed([f"{article.title}. {lead[:600]}"])[0]
    centroids = np.array([v / np.linalg.norm(v) for v in (embedder.embed(s).mean(axis=0) for s in by_section if s)]
                         or [np.zeros_like(subject)])
    said = embedder.embed(sentences) if sentences else np.zeros((1, len(subject)))
    vectors = embedder.embed([u.text for u in kept])
    close = vectors @ vectors.T
    vocabulary, judge = profile(article).vocabulary, LexicalJudge()
    docs = nlp.pipe([u.text for u in kept], disable=[p for p in nlp.pipe_names if p not in ("tok2vec", "ner")])
    rows = []
    for i, (u, doc) in enumerate(zip(kept, docs)):
        per_doc: dict[str, float] = {}
        for j, other in enumerate(kept):
            if other.document.id != u.document.id:
                per_doc[other.document.id] = max(per_doc.get(other.document.id, -1.0), float(close[i, j]))
        best = sorted(per_doc.values(), reverse=True)[:3] or [0.0]
        new = [e for e in doc.ents if not set(content_tokens(e.text)) <= vocabulary]
        text = clean_suggestion_text(u.text)
        rows.append({"score": u.score, "subject": float(vectors[i] @ subject),
                     "sections": float((centroids @ vectors[i]).max()), "nearest": float((said @ vectors[i]).max()),
                     "corroboration": float(np.mean(best)),
                     **{k: float(sum(e.label_ in labels for e in new)) for k, labels in KINDS.items()},
                     "cased": float(all(note not in u.reason for note in ("lost its case", "list, table or menu"))),
                     "vector": vectors[i], "document": u.document.id,
                     "covers": {k for k, h in enumerate(task.held_out) if judge.recall(h.text, text) >= THRESHOLD}})
    return rows


def covered(rows: list[dict], order) -> int:
    return len(set().union(*(rows[i]["covers"] for i in list(order)[:5]))) if rows else 0


def logit(tasks: dict, features, folds: int) -> tuple[int, int]:
    """Facts in the top 5 when ordered by a conditional logit over ``features``: in-sample, out-of-fold."""
    import numpy as np

    from winellbot.bench.fit import fit_softmax

    every = [r for rows in tasks.values() for r in rows]
    mean = np.array([np.mean([r[f] for r in every]) for f in features])
    scale = np.array([np.std([r[f] for r in every]) or 1.0 for f in features])
    x = {t: (np.array([[r[f] for f in features] for r in rows]) - mean) / scale for t, rows in tasks.items()}
    train = [(t, "", x[t], np.array([float(bool(r["covers"])) for r in rows])) for t, rows in tasks.items()]
    train = [row for row in train if row[3].any()]
    fold = {t: i % folds for i, t in enumerate(sorted(tasks))}

    def facts(w, which) -> int:
        return sum(covered(tasks[t], np.argsort(-(x[t] @ w), kind="stable")) for t in which)

    in_sample = facts(fit_softmax(train, 10.0), tasks)
    out = sum(facts(fit_softmax([r for r in train if fold[r[0]] != k], 10.0), [t for t in tasks if fold[t] == k])
              for k in range(folds))
    return in_sample, out


def diverse(rows: list[dict], threshold: float) -> list[int]:
    """Score order, skipping a candidate whose cosine with one already chosen reaches ``threshold``."""
    chosen: list[int] = []
    for i, r in enumerate(rows):
        if len(chosen) < 5 and all(float(r["vector"] @ rows[j]["vector"]) < threshold for j in chosen):
            chosen.append(i)
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks_dir")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--shortlist", type=int, default=20)
    args = parser.parse_args()

    from winellbot import factory
    from winellbot.bench.fit import FOLDS
    from winellbot.bench.tasks import load_tasks
    from winellbot.config import Settings
    from winellbot.meaning import english

    settings = Settings()
    pipeline, embedder, nlp = factory.build_pipeline(settings), factory.build_embedder(settings), english()
    loaded = load_tasks(args.tasks_dir, limit=args.limit)
    tasks = {t.id: candidates(t, pipeline, embedder, nlp, args.shortlist) for t in loaded}
    facts = sum(len(t.held_out) for t in loaded)
    reach = sum(len(set().union(*(r["covers"] for r in rows))) for rows in tasks.values() if rows)
    print(f"{facts} facts; the {args.shortlist} best-scored kept updates of each task cover {reach}; "
          f"the top 5 by score {sum(covered(rows, range(len(rows))) for rows in tasks.values())}")
    for features in SETS:
        in_sample, out = logit(tasks, features, FOLDS)
        print(f"{' + '.join(features)}: top 5 cover {in_sample} in-sample, {out} out-of-fold")
    for threshold in (0.6, 0.7, 0.8):
        print(f"score order, no two within cosine {threshold}: "
              f"{sum(covered(rows, diverse(rows, threshold)) for rows in tasks.values())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
