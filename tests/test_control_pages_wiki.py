"""The review queue never writes one of the bot's own control pages (issue 45), on the real local wiki.

The shutoff page, the bot's user page, its watchlist page and its outcomes report are the bot's control
pages. A ``[wiki] queue_prefix`` naming one is refused when the configuration is read (tests/test_config.py);
these tests build the settings in code, as a caller that skips that check would, and show the writer
refusing anyway: the control pages keep their text, and later cycles still run.
"""
from __future__ import annotations

import pytest
from wikiscene import fact_suggestion, run_cycle

from winellbot.errors import UnsafeWriteError
from winellbot.wiki.render import render_queue_entry


def _revision(site, title: str) -> int | None:
    import pywikibot

    page = pywikibot.Page(site, title)
    return page.latest_revision_id if page.exists() else None


def test_the_writer_refuses_a_queue_write_to_a_control_page(site, make_page, local_wiki):
    from winellbot.wiki.writer import WikiWriter

    bot = site.username()
    shutoff = make_page("run", namespace="User", prefix=f"{bot}/Shutoff")
    watchlist = make_page("* [[Somewhere]]\n", namespace="User", prefix=f"{bot}/Watchlist")
    outcomes = f"User:{bot}/Outcomes {make_page.title()}"
    writer = WikiWriter(site, bot_user=bot, shutoff_page=shutoff,
                        control_pages={watchlist: "the watchlist page", outcomes: "the outcomes report"})
    article = make_page("Old.", prefix="Controlled")
    s = fact_suggestion(article)
    body = render_queue_entry(s, bot_user=bot)
    before = {t: _revision(site, t) for t in (shutoff, watchlist, outcomes, f"User:{bot}")}
    # spelled as an operator may write them: underscores, a lower-case namespace
    for target, says in ((shutoff.replace(" ", "_"), "the shutoff page"), (f"user:{bot}", "the bot's user page"),
                         (watchlist, "the watchlist page"), (outcomes, "the outcomes report")):
        with pytest.raises(UnsafeWriteError, match=f"it is {says}, not a page of the review queue"):
            writer.post_queue(target, body, [s.id])
        with pytest.raises(UnsafeWriteError, match=f"as the queue index: it is {says}"):
            writer.list_on_index(target, f"User:{bot}/Queue/{article}", article)
    assert {t: _revision(site, t) for t in before} == before
    assert writer.shutoff_allows()
    # a queue page of its own is still written
    queue = f"User:{bot}/Queue {make_page.title()}"
    assert writer.post_queue(queue, body, [s.id]).posted_ids == (s.id,)


@pytest.mark.parametrize("mode", ["single", "per-article"])
def test_a_queue_set_on_the_shutoff_page_leaves_it_alone_and_later_cycles_run(scene, site, mode):
    import pywikibot

    s = scene["settings"]
    s.wiki.queue_prefix, s.wiki.queue_mode = s.wiki.shutoff, mode  # past the configuration's own check
    report, state, _ = run_cycle(s, [scene["listed"]])
    assert pywikibot.Page(site, s.wiki.shutoff).get(force=True) == "run"
    assert report.counter["errors"] == 1 and not report.stopped
    [error] = state.db["errors"].rows
    assert f"it is the shutoff page (wiki.shutoff_page), not a page of the review queue" in error["message"]
    again, _, _ = run_cycle(s, [scene["listed"]])
    assert not again.stopped and again.pages == [scene["listed"]]
    assert pywikibot.Page(site, s.wiki.shutoff).get(force=True) == "run"


def test_a_queue_set_on_the_user_page_or_the_watchlist_leaves_them_alone(scene, site):
    import pywikibot

    s, bot = scene["settings"], scene["bot"]
    watchlist = pywikibot.Page(site, s.wiki.watchlist_page)
    before = {"user": _revision(site, f"User:{bot}"), "watchlist": watchlist.latest_revision_id}
    s.wiki.queue_mode = "single"
    for prefix in (f"User:{bot}", s.wiki.watchlist_page):
        s.wiki.queue_prefix = prefix
        report, state, _ = run_cycle(s, [scene["listed"]])
        assert report.counter["errors"] == 1 and not report.stopped
    messages = [e["message"] for e in state.db["errors"].rows]
    assert any("it is the bot's user page" in m for m in messages)
    assert any("it is the watchlist page (wiki.watchlist_page)" in m for m in messages)
    assert {"user": _revision(site, f"User:{bot}"),
            "watchlist": pywikibot.Page(site, s.wiki.watchlist_page).latest_revision_id} == before
    # the watchlist still lists the article: the next cycle watches it as before
    s.wiki.queue_prefix = ""
    report, state, _ = run_cycle(s, None)
    assert scene["listed"] in report.pages and report.counter["posted"] >= 1
