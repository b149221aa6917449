"""The posting policy: the fact in one line, what it makes stale, one post per fact, caps, styles.

Hand-written fictional article and news; the rendering checks against the real local wiki use its
parser (action=parse), which is what a reader's browser is sent.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from wikiscene import run_cycle
from winellbot.article import parse_article
from winellbot.facts import key_sentence, same_fact, stale_sentence
from winellbot.models import Citation, Document, Edit, Suggestion, Update
from winellbot.posting import PostPlanner, resolve_style
from winellbot.sentences import MAX_WORDS, read
from winellbot.state.db import State
from winellbot.wiki.render import Notes, render_queue_entry, render_section, render_suggestion

ARTICLE = parse_article("Brindlemouth", """'''Brindlemouth''' is a fictional port town.<ref name="pop">{{cite news |title=Census |url=https://news.example.org/census |work=Courier |date=1 May 2021}}</ref>

== Government ==
The town is governed by a council of nine members and a mayor. Ada Vell of the Quay Party has been mayor since 2021.<ref name="pop" />

== Events ==
The 2026 regatta is scheduled for 11 to 13 September 2026. The regatta began in 1990.
""")

MAYOR = ("Rowan Pike has been elected mayor of Brindlemouth, ending Ada Vell's five years in the post. "
         "Pike won 54 percent of the vote in the election on 5 March 2026. Turnout was 47 percent.")
DATES_A = ("This year's Brindlemouth regatta will be held from 2 to 4 October 2026 instead of the planned "
           "11 to 13 September, its organisers said. Repairs to the quay are the reason.")
DATES_B = ("Sailors should note the new dates: the 2026 regatta will now run from 2 to 4 October. "
           "The organisers moved it from September because of quay repairs.")
RESTATED = "Brindlemouth's regatta began in 1990, and the town council has nine members."


def suggestion(text: str, url: str, section=("Government",), paragraph: str = "") -> Suggestion:
    doc = Document(url, url, f"News: {text[:30]}", text, "2026-03-06", "Courier (fictional)")
    update = Update(text, section, text, doc, reason="words best match the section")
    old = paragraph or "Ada Vell of the Quay Party has been mayor since 2021."
    cite = Citation(url, doc.title, "Courier (fictional)", "2026-03-06", "2026-03-07")
    edit = Edit(old, f"{old} {text}<ref>{{{{cite news |url={url} |title=x}}}}</ref>", text, cite, quoted=True)
    return Suggestion("Brindlemouth", 5, section, 0, edit, update)


def test_the_fact_line_is_the_sentence_that_carries_the_news_cut_short():
    assert key_sentence(MAYOR, ARTICLE).startswith("Rowan Pike has been elected mayor of Brindlemouth")
    long = "The regatta " + "and the harbour " * 30 + "grew."
    line = key_sentence("Brindlemouth is a port town. " + long, ARTICLE)
    assert line.endswith("…") and len(line.split()) == MAX_WORDS + 1


def test_a_fact_sentence_as_long_as_the_gates_allow_is_posted_whole():
    """The line the back-test shows (and the judges read) is the line the wiki gets: a fact sentence of
    31 to 35 words passes the gates, and was cut at 30 words, mid-phrase, on the wiki."""
    fact = ("Rowan Pike, who stood for the Harbour and Country group, won 54 percent of the vote in the "
            "Brindlemouth mayoral election held on Thursday 5 March 2026, against 39 percent for Ada Vell.")
    assert 30 < len(fact.split()) <= MAX_WORDS and not read(fact, ARTICLE).problems
    s = suggestion(fact, "https://c.example/pike")
    plan = PostPlanner(State(), max_per_page_per_week=5, max_per_wiki_per_day=10).plan(ARTICLE, [s])
    assert plan.notes[s.id].fact == fact
    assert "'''New fact:''' " + fact in render_section([s], bot_user="WinellBot", style="fact", notes=plan.notes)


def test_the_sentence_a_new_fact_makes_stale_is_named_and_a_restatement_names_none():
    assert stale_sentence(ARTICLE, MAYOR) == "Ada Vell of the Quay Party has been mayor since 2021."
    assert stale_sentence(ARTICLE, DATES_A) == "The 2026 regatta is scheduled for 11 to 13 September 2026."
    assert stale_sentence(ARTICLE, RESTATED) is None


def test_two_sources_of_the_same_fact_are_one_fact_and_other_facts_are_not():
    assert same_fact(DATES_A, DATES_B, ARTICLE)
    assert not same_fact(DATES_A, MAYOR, ARTICLE)
    assert not same_fact(MAYOR, RESTATED, ARTICLE)


@pytest.mark.parametrize("style, host, expected", [
    ("auto", "en.wikipedia.org", "fact"), ("auto", "de.wikipedia.org", "edit"), ("auto", "127.0.0.1:8765", "edit"),
    ("edit", "en.wikipedia.org", "edit"), ("fact", "127.0.0.1", "fact")])
def test_the_style_is_fact_on_english_wikipedia_unless_configured(style, host, expected):
    assert resolve_style(style, host) == expected


def _post(state: State, s: Suggestion, when: dt.datetime) -> None:
    state.record_result(state.start_run("offline"), s.article_title, _result(s))
    state.record_post([s.id], "Talk:Brindlemouth", 1, "x")
    state.db["posts"].update(state.db["posts"].count, {"posted_at": when.isoformat()})


def _result(*ss):
    from winellbot.models import PipelineResult

    return PipelineResult(tuple(ss))


def test_one_post_per_fact_with_the_other_source_listed_and_the_stale_sentence_named():
    state = State()
    a, b = suggestion(DATES_A, "https://a.example/dates", ("Events",)), suggestion(DATES_B, "https://b.example/d", ("Events",))
    mayor = suggestion(MAYOR, "https://c.example/mayor")
    plan = PostPlanner(state, max_per_page_per_week=5, max_per_wiki_per_day=10).plan(ARTICLE, [a, b, mayor])
    assert [s.id for s in plan.post] == [a.id, mayor.id]
    assert plan.merged == {b.id: f"same fact as suggestion {a.id}, posted with it as a further source"}
    assert plan.notes[a.id].also_reported == (b.edit.citation,)
    assert plan.notes[a.id].may_replace == "The 2026 regatta is scheduled for 11 to 13 September 2026."
    assert plan.notes[mayor.id].may_replace.startswith("Ada Vell")
    # a third source, a week later, of a fact already on the wiki is not posted again
    _post(state, a, dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=8))
    again = PostPlanner(state, max_per_page_per_week=5, max_per_wiki_per_day=10).plan(ARTICLE, [b])
    assert not again.post and "already posted" in again.merged[b.id]


def test_caps_per_article_per_week_and_per_wiki_per_day_hold_the_rest_back():
    state = State()
    now = dt.datetime.now(dt.timezone.utc)
    posted = [suggestion(f"Fact number {i} about the {i}th harbour crane, built in {1900 + i}.",
                         f"https://n.example/{i}") for i in range(3)]
    _post(state, posted[0], now - dt.timedelta(days=3))   # this week
    _post(state, posted[1], now - dt.timedelta(days=9))   # last week: does not count
    new = [suggestion(f"A new fact {i}: the {i}th ferry started in {2026 - i}.", f"https://m.example/{i}")
           for i in range(3)]
    plan = PostPlanner(state, max_per_page_per_week=2, max_per_wiki_per_day=10).plan(ARTICLE, new)
    assert [s.id for s in plan.post] == [new[0].id] and plan.capped == (new[1].id, new[2].id)
    assert "2 suggestions per article in 7 days (1 posted)" in plan.cap_reason
    _post(state, posted[2], now - dt.timedelta(hours=2))  # the only one in the last 24 hours
    plan = PostPlanner(state, max_per_page_per_week=9, max_per_wiki_per_day=2).plan(ARTICLE, new)
    assert len(plan.post) == 1 and "2 suggestions per day on the wiki (1 posted)" in plan.cap_reason


def test_fact_style_shows_the_fact_quote_section_and_a_ready_citation_and_no_article_prose():
    s = suggestion(MAYOR + " [[Category:Spam]] {{delete}}", "https://c.example/mayor")
    notes = Notes(fact="Rowan Pike has been elected mayor.", may_replace="Ada Vell has been mayor since 2021.",
                  also_reported=(Citation("https://d.example/x", "Other paper"),))
    text = render_suggestion(s, bot_user="WinellBot", style="fact", notes=notes)
    assert "'''New fact:''' Rowan Pike has been elected mayor." in text
    assert "'''suggested section:''' Government" in text
    assert "'''May replace:''' \"Ada Vell has been mayor since 2021.\"" in text
    assert "also reported by [https://d.example/x Other paper]" in text
    assert "&lt;ref&gt;&#123;&#123;cite news &#124;url=https&#58;//c.example/mayor" in text
    assert s.edit.new_paragraph not in text and "How the new paragraph would read" not in text
    assert "[[Category:Spam]]" not in text and "{{delete}}" not in text
    section = render_section([s], bot_user="WinellBot", style="fact", notes={s.id: notes})
    assert "none proposes article text" in section and text in section
    assert render_queue_entry(s, bot_user="WinellBot", style="fact", notes=notes).startswith("<!-- winellbot")


def _parse(wiki, text: str) -> str:
    reply = wiki.admin()._get(action="parse", text=text, contentmodel="wikitext", prop="text", formatversion="2")
    return reply["parse"]["text"]


def test_a_preview_of_a_paragraph_that_reuses_a_named_reference_renders_without_a_cite_error(local_wiki):
    paragraph = 'Ada Vell of the Quay Party has been mayor since 2021.<ref name="pop" />'
    s = suggestion(MAYOR, "https://c.example/mayor", paragraph=paragraph)
    # An edit-style preview is shown only for text that does not copy its source word for word (issue 14).
    source = replace(s.update.document, text="The council named Rowan Pike the new mayor on Friday.")
    s = replace(s, update=replace(s.update, quote="", document=source))
    from winellbot.article import named_ref_definitions

    with_refs = render_suggestion(s, bot_user="WinellBot", notes=Notes(references=named_ref_definitions(ARTICLE.wikitext)))
    without = render_suggestion(s, bot_user="WinellBot")
    assert "Cite error" in _parse(local_wiki, without), "the check can see the error"
    html = _parse(local_wiki, with_refs)
    assert "Cite error" not in html and "Census" in html


def test_a_cycle_posts_no_more_than_the_weekly_cap_and_keeps_the_rest_pending(scene):
    s = scene["settings"]
    s.posting.max_per_page_per_week = 1
    report, state, _ = run_cycle(s, [scene["listed"]])
    assert report.counter["capped"] >= 1
    posted = state.suggestions(page=scene["listed"], status="posted")
    assert len(posted) == 1 and state.suggestions(page=scene["listed"], status="proposed")
    report, state, _ = run_cycle(s, [scene["listed"]])
    assert len(state.suggestions(page=scene["listed"], status="posted")) == 1, "the cap holds across cycles"


def test_the_fact_line_skips_a_sentence_that_retells_the_article_in_other_words():
    retold = ("The town is governed nowadays by a council of nine members together with an elected mayor. "
              "The Brindlemouth regatta will move to 2 to 4 October 2026 because of quay repairs.")
    # The first sentence has three words the article lacks ("nowadays", "together", "elected"), none news.
    assert key_sentence(retold, ARTICLE).startswith("The Brindlemouth regatta will move")
    news = "Rowan Pike leads the town council of nine members as mayor now. Turnout was 47 percent."
    assert key_sentence(news, ARTICLE).startswith("Rowan Pike leads")  # a new name is news
