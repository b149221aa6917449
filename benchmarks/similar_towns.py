"""Similar articles, news for some: does any page receive another page's news?

N fictional towns whose articles read alike (the same county, the same kind of history, economy
and transport; each names its neighbour once), and news for the first K of them (one new fact
each, of the same few kinds). Every article runs the production path (the configured pipeline,
then the default gates) against one corpus holding all the news, as a cycle over a watchlist of
N pages would. Reported: pages that received a suggestion from another town's news (goal 0),
and towns with news that received their own (their fact is still proposed).

Before the subject gate, 900 of 1,000 pages with news for 100 received another town's news.

    .venv/bin/python benchmarks/similar_towns.py [--pages 1000] [--news 100]
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

FIRST = ("Ash", "Bram", "Cal", "Dun", "El", "Fen", "Gar", "Hol", "Ire", "Kel", "Lang", "Mor", "Nor", "Ost",
         "Pen", "Quil", "Rad", "Sel", "Thorn", "Ul", "Ves", "Wil", "Yar", "Zen", "Brock", "Carn", "Drum",
         "Elm", "Frost", "Glen")
LAST = ("mere", "ford", "wick", "haven", "by", "ton", "stead", "bury", "holm", "worth", "combe", "dale",
        "field", "gate", "ham", "hurst", "ley", "minster", "mouth", "port", "shaw", "thorpe", "wold", "moor",
        "brook", "cliff", "den", "fell", "garth", "hithe", "lowe", "ness", "rigg", "sey")

ARTICLE = """'''{name}''' is a market town in the county of Westmark, {km} km north of {neighbour}. \
It had a population of {people:,} at the 2021 census.

== History ==
{name} grew up around a river crossing in the 12th century and received a market charter in 1252. \
The railway reached the town in 1868, and the harbour was rebuilt after a storm in 1953.

== Economy ==
The economy of {name} rests on farming, tourism and a small fishing fleet. The weekly market is held \
on Thursdays in the town square.

== Transport ==
{name} railway station lies on the Westmark coast line, with trains to the county town every hour. \
The town council runs a park and ride service in summer.
"""

NEWS = (
    ("{name} opens a new library", "A new public library opened in {name} on {day} June 2026, the town "
     "council of {name} said. The library in {name} cost {money} million euros and holds 40,000 books."),
    ("{name} elects a new mayor", "{person} was elected mayor of {name} on {day} May 2026, the first "
     "mayor of {name} from the Harbour Party. {person} won {share} per cent of the vote in {name}."),
    ("Footbridge opens in {name}", "A footbridge over the river in {name} opened on {day} April 2026. "
     "The bridge in {name} is 80 metres long and cost {money} million euros, the council of {name} said."),
)
PEOPLE = ("Ada Kestrel", "Bo Lindqvist", "Cara Moss", "Dev Annand", "Emil Rook", "Fay Okafor", "Gus Hale")


def town_names(pages: int) -> list[str]:
    names = [a + b for a, b in itertools.product(FIRST, LAST)]
    if pages > len(names):
        raise SystemExit(f"at most {len(names)} towns")
    return names[:pages]


def towns(pages: int, with_news: int) -> tuple[list[tuple[str, str]], list]:
    """(title, wikitext) for each town, and the news documents (ids name the town they are about)."""
    from winellbot.models import Document

    names = town_names(pages)
    articles = [(name, ARTICLE.format(name=name, neighbour=names[(i + 1) % pages], km=3 + i % 17,
                                      people=4000 + 37 * i)) for i, name in enumerate(names)]
    docs = []
    for i, name in enumerate(names[:with_news]):
        title, text = NEWS[i % len(NEWS)]
        fill = {"name": name, "day": 1 + i % 28, "money": 2 + i % 9, "share": 40 + i % 30,
                "person": PEOPLE[i % len(PEOPLE)]}
        docs.append(Document(id=f"news-{name}", url=f"https://news.example.org/{name.lower()}/{i}",
                             title=title.format(**fill), text=text.format(**fill), published="2026-06-30",
                             publisher="Westmark Gazette (fictional)"))
    return articles, docs


def run(pages: int, with_news: int, acceptability_threshold: float = -1.0) -> dict:
    """Per town, the documents of the suggestions that no gate stopped; then the two counts.
    ``acceptability_threshold`` 0 lets the acceptability score hold nothing (the subject gate alone)."""
    from winellbot import factory
    from winellbot.article import parse_article
    from winellbot.config import Settings
    from winellbot.pipeline.pipeline import propose_checked
    from winellbot.search.corpus import LocalCorpus
    from winellbot.state.db import State

    settings = Settings()
    settings.pipeline.acceptability_threshold = acceptability_threshold
    pipeline, gates = factory.build_pipeline(settings), factory.build_gates(settings, State())
    articles, docs = towns(pages, with_news)
    corpus = LocalCorpus()
    corpus.add(docs)
    wrong, own = {}, set()
    for title, wikitext in articles:
        result = propose_checked(pipeline, gates, parse_article(title, wikitext), corpus,
                                 limit=settings.pipeline.max_suggestions)
        about = {s.update.document.id.removeprefix("news-") for s in result.suggestions if not s.blocked}
        if about - {title}:
            wrong[title] = sorted(about - {title})
        if title in about:
            own.add(title)
    return {"pages": pages, "with_news": with_news, "wrong": wrong, "own": own}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--news", type=int, default=100)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    began = time.perf_counter()
    r = run(args.pages, args.news)
    print(f"{r['pages']} similar towns, news for {r['with_news']}: {len(r['wrong'])} page(s) received another "
          f"town's news; {len(r['own'])} of {r['with_news']} towns with news received their own "
          f"({time.perf_counter() - began:.0f} s)")
    for title, about in list(r["wrong"].items())[:10]:
        print(f"  {title} <- news about {', '.join(about)}")
    return 0 if not r["wrong"] else 1


if __name__ == "__main__":
    sys.exit(main())
