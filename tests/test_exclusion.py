"""{{bots}} and {{nobots}} in every spelling editors use: the text check, and the real wiki.

The text check is what makes ``optout`` work at all (Pywikibot's ``botMayEdit`` ignores it) and
what sees a template saved a moment ago; the wiki tests fail when it is taken out.
"""
import pytest

from wikiscene import fact_suggestion
from winellbot.errors import PostingRefused
from winellbot.wiki.exclusion import exclusion
from winellbot.wiki.render import render_queue_entry, render_section
from winellbot.wiki.writer import WikiWriter

BOT, KIND = "WinellBot", "winellbot"

EXCLUDED = [
    "{{nobots}}", "{{Nobots}}", "{{NOBOTS}}", "{{ nobots }}", "{{Template:Nobots}}", "{{template:nobots}}",
    "{{No bots}}", "{{no_bots}}", "{{nobots|reason=archiving}}",
    "{{bots|deny=all}}", "{{bots|deny=WinellBot}}", "{{bots|deny=winellbot}}", "{{bots|deny=Other, WinellBot}}",
    "{{bots| deny = WinellBot }}", "{{Bots|Deny=WinellBot}}", "{{bots|deny=User:WinellBot}}",
    "{{nobots|deny=WinellBot}}",
    "{{bots|allow=none}}", "{{bots|allow=OtherBot}}", "{{nobots|allow=OtherBot}}", "{{bots|allow=}}",
    "{{bots|optout=all}}", "{{bots|optout=winellbot}}", "{{bots|optout=afd, winellbot}}", "{{bots|optout=Winellbot}}",
    "Talk.\n{{bots|deny=OtherBot}}\n{{bots|optout=all}}",
    "{{archive box|{{nobots}}}}",
]
ALLOWED = [
    "", "Plain talk.", "{{bots}}", "{{bots|allow=all}}", "{{bots|allow=WinellBot}}", "{{bots|allow=Other,winellbot}}",
    "{{bots|deny=none}}", "{{bots|deny=OtherBot}}", "{{bots|optout=afd,prod}}", "{{nobots|allow=WinellBot}}",
    "<!-- {{nobots}} -->", "<nowiki>{{nobots}}</nowiki>", "{{robots}}", "{{botsy|deny=all}}",
    "{{bots|allow=WinellBot}}\n{{bots|deny=OtherBot}}",
]


@pytest.mark.parametrize("text", EXCLUDED)
def test_the_text_check_excludes(text):
    assert exclusion(text, BOT, KIND)


@pytest.mark.parametrize("text", ALLOWED)
def test_the_text_check_allows(text):
    assert exclusion(text, BOT, KIND) == ""


def test_optout_names_a_message_type_not_a_bot():
    assert exclusion("{{bots|optout=winellbot}}", BOT, "other-kind") == ""
    assert exclusion("{{bots|optout=other-kind}}", BOT, "other-kind")


# -- on the real wiki: the talk page, the article, the queue ------------------------------------------

ON_WIKI = ["{{bots|optout=winellbot}}", "{{bots|optout=all}}", "{{Bots|Deny=WinellBot}}", "{{No bots}}",
           "{{bots|allow=none}}", "{{nobots|deny=all}}"]


@pytest.fixture
def writer(site, make_page):
    return WikiWriter(site, bot_user=site.username(), shutoff_page=make_page("run", prefix="Shutoff"),
                      message_type=KIND)


def _revisions(site, title):
    import pywikibot

    page = pywikibot.Page(site, title)
    return [r.revid for r in page.revisions()] if page.exists() else []


@pytest.mark.parametrize("template", ON_WIKI)
def test_exclusion_on_the_talk_page_is_honoured_on_the_wiki(writer, site, make_page, local_wiki, template):
    article = make_page("Article.", prefix="Excluding talk", talk=f"Talk.\n{template}")
    local_wiki.run_jobs()  # Pywikibot's own check sees the template too: the text check must still hold
    before = _revisions(site, f"Talk:{article}")
    s = fact_suggestion(article)
    with pytest.raises(PostingRefused):
        writer.post_talk_section(article, "Suggestions", render_section([s], bot_user=writer.bot_user), [s.id])
    assert _revisions(site, f"Talk:{article}") == before


@pytest.mark.parametrize("template", ON_WIKI)
def test_exclusion_on_the_article_is_honoured_for_talk_and_queue(writer, site, make_page, template):
    article = make_page(f"Article text.\n{template}", prefix="Excluding article")
    s = fact_suggestion(article)
    with pytest.raises(PostingRefused, match=article):
        writer.post_talk_section(article, "Suggestions", render_section([s], bot_user=writer.bot_user), [s.id])
    queue = f"User:{writer.bot_user}/Queue/{article}"
    with pytest.raises(PostingRefused, match=article):
        writer.post_queue(queue, render_queue_entry(s, bot_user=writer.bot_user), [s.id], article=article)
    assert _revisions(site, f"Talk:{article}") == [] and _revisions(site, queue) == []


def test_an_article_that_opts_out_is_skipped_by_the_cycle(scene, site):
    from wikiscene import ARTICLE, run_cycle

    listed = scene["listed"]
    scene["wiki"].edit(listed, ARTICLE.format(name=listed) + "\n{{bots|optout=winellbot}}\n")
    report, state, _ = run_cycle(scene["settings"], [listed])
    assert report.counter["refused"] == 1 and report.counter["suggestions"] == 0
    assert any("opts out of winellbot messages" in e["message"] for e in state.db["errors"].rows)
    assert _revisions(site, f"{scene['settings'].wiki.queue}/{listed}") == []
