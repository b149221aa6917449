"""Attacks on where a post lands, against the real local wiki: the opt-in and the talk page are read
at the moment of writing, from the page being written, and a talk page's redirect cannot send the
bot's posts out of its namespace."""
from __future__ import annotations

import pytest
from wikiscene import fact_suggestion

from winellbot.errors import PostingRefused, UnsafeWriteError
from winellbot.wiki.render import render_section
from winellbot.wiki.writer import WikiWriter


@pytest.fixture
def writer(site, make_page):
    return WikiWriter(site, bot_user=site.username(), shutoff_page=make_page("run", prefix="Shutoff"),
                      optin_template="Winellbot")


def post(writer, article):
    s = fact_suggestion(article)
    return writer.post_talk_section(article, "Suggestions", render_section([s], bot_user=writer.bot_user), [s.id])


def ours(site, title: str) -> bool:
    import pywikibot

    page = pywikibot.Page(site, title)
    return page.exists() and "winellbot-suggestion" in page.get(force=True, get_redirect=True)


def test_a_talk_page_redirected_to_another_namespace_gets_nothing(writer, site, make_page, local_wiki):
    article = make_page("Article.", prefix="Pinfold")
    victim = make_page.title(prefix="Admin page")
    local_wiki.edit(f"User talk:{victim}", "{{Winellbot}}\nA user's own talk page.")
    local_wiki.edit(f"Talk:{article}", f"#REDIRECT [[User talk:{victim}]]")
    with pytest.raises(UnsafeWriteError, match="outside its namespace"):
        post(writer, article)
    assert not ours(site, f"User talk:{victim}") and not ours(site, f"Talk:{article}")


def test_an_opt_in_removed_before_the_write_stops_the_post(writer, site, make_page, local_wiki):
    article = make_page("Article.", prefix="Withdrawn", talk="{{Winellbot}}\nEarlier talk.")
    assert post(writer, article).posted_ids  # opted in: posted
    local_wiki.edit(f"Talk:{article}", "Earlier talk. We do not want the bot any more.")
    second = fact_suggestion(article, fact="Quillhaven opened a second harbour in 2026.")
    with pytest.raises(PostingRefused, match="opt-in"):
        writer.post_talk_section(article, "More", render_section([second], bot_user=writer.bot_user), [second.id])
    assert second.id not in __import__("pywikibot").Page(site, f"Talk:{article}").get(force=True)


def test_a_deleted_talk_page_is_not_brought_back(writer, site, make_page, local_wiki):
    import pywikibot

    article = make_page("Article.", prefix="Deleted talk", talk="{{Winellbot}}\nEarlier talk.")
    local_wiki.delete(f"Talk:{article}")
    with pytest.raises(PostingRefused, match="does not exist"):
        post(writer, article)
    assert not pywikibot.Page(site, f"Talk:{article}").exists()


def test_an_article_that_carries_the_opt_in_itself_gets_its_talk_page(writer, site, make_page):
    article = make_page("{{Winellbot}}\nArticle.", prefix="Opted article")
    assert post(writer, article).posted_ids and ours(site, f"Talk:{article}")


def test_an_opt_in_through_a_redirect_of_the_template_counts(writer, site, make_page, local_wiki):
    local_wiki.edit("Template:WinellBot opt-in", "#REDIRECT [[Template:Winellbot]]")
    article = make_page("Article.", prefix="Alias", talk="{{winellBot opt-in}}\nEarlier talk.")
    assert post(writer, article).posted_ids
