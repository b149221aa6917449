"""A fictional town scene on the real local wiki, shared by the bot's wiki tests.

Two fresh articles (one opted in on its talk page, one on a watchlist page), a shutoff page that
says "run", two news documents per town written for the test, and settings for all of it. The
``scene`` fixture (conftest.py) builds one per test; :func:`run_cycle` runs the real bot on it.
"""
from __future__ import annotations

import json
from pathlib import Path

from winellbot import commands, factory
from winellbot.config import Settings
from winellbot.models import Citation, Document, Edit, Suggestion, Update
from winellbot.state.db import State

ARTICLE = """'''{name}''' is a fictional harbour town in the test county of Westmark.

== History ==
{name} was founded in 1802 as a fishing village. The harbour wall was built in 1850.

== Government ==
The town council has eleven members. The mayor is elected every four years.
"""

NEWS = [
    {"id": "n1", "url": "https://news.example.org/{slug}-mayor", "title": "{name} elects a new mayor",
     "published": "2026-03-02", "publisher": "Westmark Gazette",
     "text": "{name} elected Maria Olsen as its new mayor on 1 March 2026. The town council confirmed that "
             "Olsen won 62 percent of the vote in the mayoral election. Olsen previously led the harbour board."},
    {"id": "n2", "url": "https://news.example.org/{slug}-harbour", "title": "{name} harbour wall repaired",
     "published": "2026-04-10", "publisher": "Coast Weekly",
     "text": "The harbour wall of {name}, built in 1850, was repaired at a cost of 4.2 million euros in 2026. "
             "Engineers finished the repairs of the harbour wall in April 2026 after two years of work."},
]


def write_news(folder: Path, name: str) -> None:
    slug = name.lower().replace(" ", "-")
    docs = [{k: (v.format(name=name, slug=slug) if isinstance(v, str) else v) for k, v in d.items()}
            for d in NEWS]
    for d in docs:
        d["id"] = f"{slug}-{d['id']}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "news.jsonl").write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")


def settings_for(local_wiki, tmp_path: Path, watchlist: str, shutoff: str) -> Settings:
    creds = local_wiki.credentials
    s = Settings()
    s.wiki.api_url = local_wiki.api_url
    s.wiki.username = creds.bot_user
    s.wiki.bot_password_app = creds.bot_app
    s.wiki.watchlist_page = watchlist
    s.wiki.shutoff_page = shutoff
    s.wiki.put_throttle = 0.0
    s.search.corpus_dir = str(tmp_path / "news")
    s.search.window_days = 36500
    s.state.path = str(tmp_path / "state.sqlite")
    # The scene's towns differ only by a made-up name; the acceptability score's estimate moves with
    # it. These tests are about the wiki, so its bar is 0 (tests/test_acceptability.py tests the bar).
    s.pipeline.acceptability_threshold = 0.0
    return s


def make_scene(local_wiki, make_page, tmp_path: Path) -> dict:
    """Two fresh articles: one opted in on its talk page, one only on the watchlist."""
    bot = local_wiki.credentials.bot_user
    opted = make_page.title("Optedtown")
    listed = make_page.title("Listedtown")
    local_wiki.edit(opted, ARTICLE.format(name=opted))
    local_wiki.edit(f"Talk:{opted}", "{{Winellbot}}\nEarlier talk.")
    local_wiki.edit(listed, ARTICLE.format(name=listed))
    watchlist = f"User:{bot}/Watchlist-{make_page.title('w').replace(' ', '')}"
    local_wiki.edit(watchlist, f"* [[{listed}]]\n")
    shutoff = f"User:{bot}/Shutoff-{make_page.title('s').replace(' ', '')}"
    local_wiki.edit(shutoff, "run")
    write_news(tmp_path / "news", opted)
    with (tmp_path / "news" / "news.jsonl").open("a", encoding="utf-8") as fh:
        write_news(tmp_path / "news2", listed)
        fh.write("\n" + (tmp_path / "news2" / "news.jsonl").read_text(encoding="utf-8"))
    settings = settings_for(local_wiki, tmp_path, watchlist, shutoff)
    return {"opted": opted, "listed": listed, "settings": settings, "wiki": local_wiki, "bot": bot}


def run_cycle(settings: Settings, titles, dry_run: bool = False):
    state = State(settings.state.path)
    bot = commands.build_bot(settings, state, dry_run=dry_run,
                             wiki=factory.build_wiki(settings, Path(settings.state.path).parent))
    return bot.run(titles, force=True), state, bot


def fact_suggestion(article: str, fact: str = "A bridge opened in 2024.") -> Suggestion:
    """One small suggestion for ``article`` (for writer tests that only need something to post)."""
    doc = Document(id="d", url="https://news.example/fact", title="News", text=fact)
    edit = Edit("Old.", f"Old. {fact}", fact, Citation(doc.url, "News"))
    return Suggestion(article, 1, ("History",), 0, edit, Update(fact, ("History",), "", doc))
