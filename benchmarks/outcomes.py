"""Does the bot tell what became of its suggestions, and at what cost in requests?

On a throwaway local MediaWiki, the bot posts one suggestion for each scripted case through its
writer (the queue in its userspace), and ``--pages`` articles in all carry a posted suggestion (the
rest imported as the bot would have posted them, as in ``review_cycle.py``). Then a scripted editor
adopts some facts (citing the bot's source; rewording the fact with another source, or with none),
sets verdicts on the boxes (rejected with reasons, accepted, withdrawn; an accepted set by the bot's
own account and a rejected set by an IP, which must not count), edits unrelated text of the other
articles (some sharing a figure or the names of their fact), leaves some alone, backdates one post
past the expiry, and after a cycle has seen one adoption, reverts it. The real bot
(``commands.build_bot``, offline pipeline on an empty corpus) runs its cycles; each case's outcome
is then compared with what the script did.

Requests of the outcome check itself are counted per cycle (Pywikibot's HTTP calls while it runs):
the targets are none for a cycle where no article changed, and at most 2 per 500 changed articles.
Prints one JSON object: ``cases``, ``correct``, ``adopted_precision``, ``adopted_recall``,
``requests_per_cycle``, ``pages`` (and the cases that were wrong, if any).

    .venv/bin/python benchmarks/outcomes.py [--pages 500]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ARTICLE = """'''{t}''' is a fictional harbour town in Westmark.

== History ==
{t} was founded in 1802 as a fishing village. The harbour wall was built in 1850.<ref>{{{{cite news|url=https://archive.example.org/{n}|title=Founding}}}}</ref>

== Transport ==
A ferry connects the town with Eastholm every morning.

== References ==
{{{{Reflist}}}}
"""
FACT = ("The ferry terminal of {t} reopened on {d} May 2026 after a {m} million euro rebuild led by "
        "engineer Halvard Brenn{n}.")
SOURCE = "https://news.example.org/ferry-{n}"
OTHER = "https://coastweekly.example.net/terminal-{n}"
CITE = "<ref>{{{{cite news|url={u}|title=Terminal news}}}}</ref>"
# case -> (what the script does, the outcome it must be read as)
CASES = {
    "cited": ("adopt, citing the bot's source", "adopted"),
    "cited_reworded": ("adopt in other words, citing the bot's source", "adopted"),
    "other_source": ("adopt in other words, citing another source", "adopted"),
    "uncited": ("adopt in other words, citing nothing", "adopted"),
    "adopted_and_accepted": ("adopt, citing the source, and accept on the box", "adopted"),
    "rejected_not_new": ("reject on the box: not new", "rejected"),
    "rejected_two": ("reject on the box: wrong section, too long", "rejected"),
    "accepted": ("accept on the box", "accepted"),
    "withdrawn": ("withdraw on the box", "withdrawn"),
    "left": ("nothing", "open"),
    "unrelated": ("an unrelated sentence sharing the fact's year", "open"),
    "same_names": ("an unrelated sentence naming the fact's engineer", "open"),
    "source_elsewhere": ("an unrelated sentence citing another page of the same site", "open"),
    "reverted": ("adopt, citing the source; after a cycle, revert", "open"),
    "bot_accepted": ("accept on the box, as the bot's own account", "open"),
    "ip_rejected": ("reject on the box, as an IP", "open"),
    "expired": ("nothing, posted 61 days ago", "expired"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=500, help="articles with a posted suggestion (default 500)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from winellbot.wiki.site import prepare_pywikibot

    scratch = Path(tempfile.mkdtemp(prefix="winellbot-outcomes-"))
    prepare_pywikibot(scratch / "pywikibot")  # before anything imports pywikibot
    from winellbot.localwiki import serving
    from winellbot.processes import stopping_on_signals

    try:  # the wiki is stopped however it ends (Ctrl-C and SIGTERM too)
        with stopping_on_signals(), serving(scratch / "wiki") as wiki:
            result = measure(wiki, scratch, max(args.pages, len(CASES)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result, indent=2))
    return 0 if met(result) else 1


def met(r: dict) -> bool:
    """The targets: every case right; no request for a cycle without changes; at most 2 per 500."""
    cycles = r["requests_per_cycle"]
    cheap = all(c["requests"] <= 2 * -(-c["changed_pages"] // 500) for c in cycles)
    return r["correct"] == r["cases"] and cheap and r["adopted_precision"] == r["adopted_recall"] == 1.0


def _suggestion(title: str, n: int):
    from winellbot.models import Citation, Document, Edit, Suggestion, Update

    fact = FACT.format(t=title, d=1 + n % 27, m=f"{2 + n % 7}.{n % 10}", n=f" {_surname(n)}")
    text = fact + " Passengers had used a temporary pier during the works."
    doc = Document(f"d{n}", SOURCE.format(n=n), f"Ferry terminal {n}", text, "2026-05-15", "Westmark Gazette")
    edit = Edit("A ferry connects the town with Eastholm every morning.",
                f"A ferry connects the town with Eastholm every morning. {fact}", fact,
                Citation(doc.url, doc.title, "Westmark Gazette", "2026-05-15"))
    return Suggestion(title, 1, ("Transport",), 0, edit, Update(text, ("Transport",), fact, doc)), fact


def _surname(n: int) -> str:
    """A made-up second name per case, so no two cases' facts share their names."""
    return "".join(chr(ord("a") + (n // 26 ** k) % 26) for k in range(3)).capitalize() + "vik"


def _settings(wiki, scratch: Path):
    from winellbot.config import Settings

    creds = wiki.credentials
    s = Settings()
    s.review.mode = "direct"  # posts as the bot did before the review page: what this measures
    s.wiki.api_url, s.wiki.username, s.wiki.bot_password_app = wiki.api_url, creds.bot_user, creds.bot_app
    s.wiki.watchlist_page, s.wiki.put_throttle = f"User:{creds.bot_user}/Watchlist", 0.0
    s.search.corpus_dir = str(scratch / "news")
    (scratch / "news").mkdir(exist_ok=True)
    s.state.path = str(scratch / "state.sqlite")
    s.posting.max_per_wiki_per_day = 10_000  # the scripted cases are posted in one go
    os.environ["WINELLBOT_BOT_PASSWORD"] = creds.bot_password
    return s


def measure(wiki, scratch: Path, pages: int) -> dict:
    """Post, script the editors, run the cycles; returns the benchmark's figures."""
    from winellbot import commands, factory
    from winellbot.state.db import State

    s = _settings(wiki, scratch)
    names = list(CASES) + [f"bulk{n}" for n in range(pages - len(CASES))]
    titles = {c: f"Outcome town {n:04d}" for n, c in enumerate(names)}
    found = {c: _suggestion(titles[c], n) for n, c in enumerate(names)}
    content = {titles[c]: ARTICLE.format(t=titles[c], n=n) for n, c in enumerate(names)}
    content[s.wiki.watchlist_page] = "\n".join(f"* [[{t}]]" for t in titles.values())
    content[s.wiki.shutoff] = "run"
    wiki.import_pages(content, link_updates=False)
    state = State(s.state.path)
    parts = factory.build_wiki(s, scratch)
    bot = commands.build_bot(s, state, wiki=parts)
    _post(bot, state, parts, {c: found[c][0] for c in CASES}, via_writer=True)
    _post(bot, state, parts, {c: found[c][0] for c in names[len(CASES):]}, via_writer=False, wiki=wiki)
    _backdate(state, found["expired"][0].id, days=61)

    cycles = [_cycle(s, state, parts, "no article changed")]
    _script(wiki, parts, s, titles, found, names[len(CASES):])
    cycles.append(_cycle(s, state, parts, "after the scripted edits"))
    wiki.edit(titles["reverted"], ARTICLE.format(t=titles["reverted"], n=names.index("reverted")), "revert")
    cycles.append(_cycle(s, state, parts, "after the revert"))
    return _score(state, found, cycles, pages)


def _post(bot, state, parts, suggestions: dict, *, via_writer: bool, wiki=None) -> None:
    """Post through the bot's own writer, or (bulk) import the queue pages and record them."""
    from winellbot.article import parse_article
    from winellbot.models import PipelineResult
    from winellbot.wiki.render import render_queue_entry

    run_id = state.start_run("offline")
    for s in suggestions.values():
        state.record_result(run_id, s.article_title, PipelineResult((s,)))
    titles = [s.article_title for s in suggestions.values()]
    if not via_writer:
        queue = {bot.queue_page(t): render_queue_entry(s, bot_user=bot.settings.wiki.username, style="fact")
                 for t, s in zip(titles, suggestions.values())}
        wiki.import_pages(queue, link_updates=False)
    texts = {t: (text, revid, ts) for t, text, revid, ts in parts.reader.read(titles)}
    latest = parts.reader.latest_revisions([bot.queue_page(t) for t in titles])
    for title, s in zip(titles, suggestions.values()):
        article = parse_article(title, *texts[title][:1], revid=texts[title][1], timestamp=texts[title][2])
        if via_writer:
            bot.post(article, opted_in=False)
        else:
            target = bot.queue_page(title)
            state.record_post([s.id], target, latest[target][0], "")
            state.saw_target(target, latest[target][0])
            bot.track_outcomes(article, [s])
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    for title, (_, revid, _) in texts.items():  # checked now, due again in six days
        state.touch_page(title, last_revid=revid, last_checked=now.isoformat(),
                         next_due=(now + dt.timedelta(days=6)).isoformat())
    state.finish_run(run_id)


def _backdate(state, sid: str, days: int) -> None:
    then = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=days)).replace(microsecond=0).isoformat()
    with state.db.atomic():
        state.db.execute("update posts set posted_at = ? where suggestion_id = ?", [then, sid])
        state.db.execute("update outcomes set posted_at = ? where suggestion_id = ?", [then, sid])


def _script(wiki, parts, s, titles: dict, found: dict, bulk: list[str]) -> None:
    """The scripted editors' edits (see :data:`CASES`)."""
    def add(case: str, sentence: str) -> None:
        n = list(titles).index(case)
        text = ARTICLE.format(t=titles[case], n=n).replace("every morning.", "every morning. " + sentence)
        wiki.edit(titles[case], text, "scripted editor")

    def fact(case):
        return found[case][1]

    def cite(case, url=None):
        return CITE.format(u=url or SOURCE.format(n=list(titles).index(case)))

    for case in ("cited", "adopted_and_accepted", "reverted"):
        add(case, fact(case) + cite(case))
    for case in ("cited_reworded", "other_source", "uncited"):
        n = list(titles).index(case)
        d, m = 1 + n % 27, f"{2 + n % 7}.{n % 10}"
        reworded = (f"In May 2026 the rebuilt terminal, a {m} million euro project overseen by Halvard Brenn "
                    f"{_surname(n)}, reopened on the {d}th.")
        add(case, reworded + {"cited_reworded": cite(case), "other_source": cite(case, OTHER.format(n=n)),
                              "uncited": ""}[case])
    add("unrelated", "The town hall was repainted in 2026.")
    add("same_names", f"Halvard Brenn {_surname(list(titles).index('same_names'))} opened a bakery near the harbour.")
    add("source_elsewhere", "A new lifeboat station opened." + cite("x", "https://news.example.org/lifeboat"))
    boxes = {"rejected_not_new": "status=rejected|reason=not new", "rejected_two": "status=rejected|reason=wrong section, too long",
             "accepted": "status=accepted", "adopted_and_accepted": "status=accepted", "withdrawn": "status=withdrawn"}
    for case, status in boxes.items():
        _set_box(wiki.edit, parts.reader, s, titles[case], status)
    _set_box(lambda title, text, summary: _bot_edit(parts, title, text), parts.reader, s, titles["bot_accepted"],
             "status=accepted")
    _set_box(lambda title, text, summary: _ip_edit(wiki, title, text), parts.reader, s, titles["ip_rejected"],
             "status=rejected|reason=off topic")
    wiki.import_pages({titles[c]: ARTICLE.format(t=titles[c], n=list(titles).index(c)).replace(
        "every morning.", "every morning and evening.") for c in bulk}, link_updates=False)


def _set_box(edit, reader, s, title: str, status: str) -> None:
    queue = f"{s.wiki.queue}/{title}"
    text = reader.page_text(queue)
    edit(queue, text.replace("status=pending", status, 1), "reviewer")


def _bot_edit(parts, title: str, text: str) -> None:
    import pywikibot

    page = pywikibot.Page(parts.site, title)
    page.text = text
    page.save(summary="a bot sets a status", bot=True, quiet=True)


def _ip_edit(wiki, title: str, text: str) -> None:
    import requests

    session = requests.Session()
    token = session.get(wiki.api_url, params={"action": "query", "meta": "tokens", "format": "json"}).json()
    reply = session.post(wiki.api_url, data={"action": "edit", "title": title, "text": text, "format": "json",
                                             "token": token["query"]["tokens"]["csrftoken"]}).json()
    if "error" in reply:
        raise RuntimeError(f"the IP edit failed: {reply['error']}")


def _cycle(s, state, parts, label: str) -> dict:
    """One cycle of the real bot; the requests made while its outcome check ran are counted."""
    from counting import CountingHTTP

    from winellbot import commands

    bot = commands.build_bot(s, state, wiki=parts)
    counts: list[int] = []
    check = bot.check_outcomes

    def counted(report=None):  # instrumentation: the requests of this stage alone
        with CountingHTTP() as counter:
            found = check(report)
        counts.append(counter.count)
        counted.found = found
        return found

    bot.check_outcomes = counted
    report = bot.run()
    found = counted.found
    return {"cycle": label, "changed_pages": found.changed_pages if found else 0,
            "requests": counts[0] if counts else None, "errors": report.counter["errors"]}


# how an adopted fact came in (and with which source), or the reasons of a rejection
DETAILS = {"cited": ("cited", "news.example.org"), "cited_reworded": ("cited", "news.example.org"),
           "adopted_and_accepted": ("cited", "news.example.org"), "other_source": ("sentence", "coastweekly.example.net"),
           "uncited": ("sentence", ""), "rejected_not_new": ("not_new",), "rejected_two": ("wrong_section", "too_long")}


def _detail(row: dict, outcome: str) -> tuple:
    from urllib.parse import urlparse

    if outcome == "adopted":
        source = row["adopted_source"] or ""
        return (row["adopted_how"], urlparse(source if "://" in source else "//" + source).hostname or "")
    if outcome == "rejected":
        return tuple((row["reasons"] or "").split(","))
    return ()


def _score(state, found: dict, cycles: list[dict], pages: int) -> dict:
    from winellbot.outcomes.report import outcome_of
    from winellbot.state.outcomes import OutcomeStore

    rows = {r["id"]: r for r in OutcomeStore(state).history()}
    wrong, tp, fp, fn = {}, 0, 0, 0
    for case, (_, expected) in CASES.items():
        got = outcome_of(rows[found[case][0].id])
        adopted, should = rows[found[case][0].id]["adopted_revid"] is not None, expected == "adopted"
        tp, fp, fn = tp + (adopted and should), fp + (adopted and not should), fn + (should and not adopted)
        detail = _detail(rows[found[case][0].id], got)
        if got != expected or detail != DETAILS.get(case, detail):
            wrong[case] = {"expected": [expected, DETAILS.get(case)], "got": [got, detail]}
    bulk_adopted = sum(1 for r in rows.values() if r["adopted_revid"] is not None) - tp - fp
    fp += bulk_adopted  # the bulk articles' unrelated edits adopt nothing
    return {"cases": len(CASES), "correct": len(CASES) - len(wrong),
            "adopted_precision": round(tp / (tp + fp), 3) if tp + fp else 0.0,
            "adopted_recall": round(tp / (tp + fn), 3) if tp + fn else 0.0,
            "requests_per_cycle": cycles, "pages": pages, **({"wrong": wrong} if wrong else {})}


if __name__ == "__main__":
    sys.exit(main())
