"""WikiWriter against the real local MediaWiki: safety checks, idempotency, rate limit, templates."""
import pytest

from winellbot.errors import ConfigError, PostingRefused, ShutoffError, UnsafeWriteError
from winellbot.models import Citation, Document, Edit, Suggestion, Update
from winellbot.wiki.render import SECTION_MARKER, parse_statuses, render_queue_entry, render_section
from winellbot.wiki.writer import NEW_SECTION_TAG, WikiWriter


def _suggestion(article: str, fact: str) -> Suggestion:
    doc = Document(id=fact, url=f"https://news.example/{abs(hash(fact))}", title=f"News: {fact}", text=fact)
    update = Update(text=fact, section_path=("History",), quote=f"Reported: {fact} [[Category:Spam]] {{{{delete}}}}",
                    document=doc)
    old = "The town was founded in 1850."
    ref = f"<ref>{{{{cite news|url={doc.url}|title={doc.title}}}}}</ref>"
    edit = Edit(old_paragraph=old, new_paragraph=f"{old} {fact}{ref}", added_text=fact,
                citation=Citation(url=doc.url, title=doc.title))
    return Suggestion(article_title=article, revid=1, section_path=("History",), paragraph_index=0,
                      edit=edit, update=update)


@pytest.fixture
def bot(site):
    return site.username()


@pytest.fixture
def shutoff(make_page):
    return make_page("run", prefix="Shutoff")


@pytest.fixture
def writer(site, bot, shutoff):
    return WikiWriter(site, bot_user=bot, shutoff_page=shutoff, new_section_interval_days=7)


def _revisions(site, title):
    import pywikibot
    page = pywikibot.Page(site, title)
    return [r.revid for r in page.revisions()] if page.exists() else []


def _post(writer, bot, article, *facts, title="Update suggestions"):
    ss = [_suggestion(article, f) for f in facts]
    body = render_section(ss, bot_user=bot)
    return ss, writer.post_talk_section(article, title, body, [s.id for s in ss])


def test_new_section_then_retry_posts_nothing_twice(writer, site, bot, make_page):
    article = make_page("Article text.", prefix="Town")
    ss, result = _post(writer, bot, article, "A bridge opened in 2024.", "The mayor resigned.")
    assert result.mode == "new-section"
    assert result.posted_ids == tuple(s.id for s in ss)
    talk = f"Talk:{article}"
    assert result.target == talk
    revs = _revisions(site, talk)
    assert result.revid == revs[0]
    import pywikibot
    text = pywikibot.Page(site, talk).get(force=True)
    assert text.count("== Update suggestions ==") == 1 and SECTION_MARKER in text
    assert parse_statuses(text) == {s.id: "pending" for s in ss}
    assert "[[Category:Spam]]" not in text and "{{delete}}" not in text
    again = writer.post_talk_section(article, "Update suggestions",
                                     render_section(ss, bot_user=bot), [s.id for s in ss])
    assert again.mode == "nothing" and again.posted_ids == () and set(again.skipped_ids) == {s.id for s in ss}
    assert _revisions(site, talk) == revs
    comment = next(iter(pywikibot.Page(site, talk).revisions(total=1)))["comment"]
    assert NEW_SECTION_TAG in comment and "2 suggestions" in comment


def test_second_post_within_interval_is_batched_into_the_bots_section(writer, site, bot, make_page):
    import pywikibot
    article = make_page("Article.", prefix="Village", talk="== Older discussion ==\nHello.")
    first, _ = _post(writer, bot, article, "Fact one.")
    second, result = _post(writer, bot, article, "Fact one.", "Fact two.", title="Another run")
    assert result.mode == "batched"
    assert result.posted_ids == (second[1].id,) and result.skipped_ids == (first[0].id,)
    text = pywikibot.Page(site, f"Talk:{article}").get(force=True)
    assert text.startswith("== Older discussion ==")
    assert "Another run" not in text
    assert text.count(SECTION_MARKER) == 1 and text.count("~~~~") == 0
    assert text.index(second[1].id) > text.index(first[0].id)
    # the intro counts what the section holds now, not what the first post found
    assert "It found 2 possible updates below." in text and "It found 1 possible" not in text


def test_batch_goes_before_a_later_human_section(writer, site, bot, make_page, local_wiki):
    import pywikibot
    article = make_page("Article.", prefix="Hamlet")
    _post(writer, bot, article, "Fact one.")
    talk = f"Talk:{article}"
    local_wiki.edit(talk, pywikibot.Page(site, talk).get(force=True) + "\n\n== Human section ==\nA question.\n")
    second, result = _post(writer, bot, article, "Fact two.")
    assert result.mode == "batched"
    text = pywikibot.Page(site, talk).get(force=True)
    assert text.index(second[0].id) < text.index("== Human section ==")
    assert text.rstrip().endswith("A question.")


def test_post_is_deferred_when_recent_section_is_gone(writer, site, bot, make_page, local_wiki):
    article = make_page("Article.", prefix="Hill")
    _post(writer, bot, article, "Fact one.")
    local_wiki.edit(f"Talk:{article}", "Archived.")
    before = _revisions(site, f"Talk:{article}")
    _, result = _post(writer, bot, article, "Fact two.")
    assert result.deferred and result.posted_ids == ()
    assert _revisions(site, f"Talk:{article}") == before


def test_interval_zero_always_opens_a_new_section(site, bot, shutoff, make_page):
    import pywikibot
    writer = WikiWriter(site, bot_user=bot, shutoff_page=shutoff, new_section_interval_days=0)
    article = make_page("Article.", prefix="River")
    _post(writer, bot, article, "Fact one.", title="Run one")
    _, result = _post(writer, bot, article, "Fact two.", title="Run two")
    assert result.mode == "new-section"
    text = pywikibot.Page(site, f"Talk:{article}").get(force=True)
    assert "== Run one ==" in text and "== Run two ==" in text


def test_writing_to_an_article_is_refused(writer, site, bot, make_page):
    import pywikibot
    article = make_page("Untouchable article text.", prefix="Article")
    before = _revisions(site, article)
    ss = [_suggestion(article, "Fact.")]
    with pytest.raises(UnsafeWriteError):
        writer.post_queue(article, render_queue_entry(ss[0], bot_user=bot), [ss[0].id])
    with pytest.raises(UnsafeWriteError):  # an interwiki prefix must not reach another wiki
        writer.post_queue(f"Wikipedia:{article}", render_queue_entry(ss[0], bot_user=bot), [ss[0].id])
    with pytest.raises(UnsafeWriteError):
        writer._save(pywikibot.Page(site, article), "vandalism", "test")
    with pytest.raises(UnsafeWriteError):
        writer._save(pywikibot.Page(site, f"Template:{article}"), "x", "test")
    with pytest.raises(UnsafeWriteError):
        writer._save(pywikibot.Page(site, f"User:Someone else/{article}"), "x", "test")
    assert _revisions(site, article) == before
    assert pywikibot.Page(site, article).get(force=True) == "Untouchable article text."


@pytest.mark.parametrize("talk_text", ["{{nobots}}\nPlease no bots.", "{{bots|deny=all}}"])
def test_nobots_refuses_and_leaves_the_page(writer, site, bot, make_page, local_wiki, talk_text):
    article = make_page("Article.", prefix="Quiet", talk=talk_text)
    local_wiki.run_jobs()
    before = _revisions(site, f"Talk:{article}")
    with pytest.raises(PostingRefused):
        _post(writer, bot, article, "Fact.")
    assert _revisions(site, f"Talk:{article}") == before


@pytest.mark.parametrize("template", ["{{bots|deny=Other,{bot}}}", "{{bots|allow=Otherbot}}", "{{Nobots}}"])
def test_bots_template_is_honoured_even_before_link_tables_update(writer, site, bot, make_page, template):
    article = make_page("Article.", prefix="Named", talk=template.replace("{bot}", bot))  # no run_jobs()
    with pytest.raises(PostingRefused):
        _post(writer, bot, article, "Fact.")


def test_bots_template_allowing_this_bot_lets_it_post(writer, bot, make_page):
    article = make_page("Article.", prefix="Allowed", talk=f"{{{{bots|allow={bot}}}}}\n{{{{bots|deny=Otherbot}}}}")
    assert _post(writer, bot, article, "Fact.")[1].mode == "new-section"


@pytest.mark.parametrize("content", ["stop", "", "run please", "running", None, "true", "yes", "<!-- run -->",
                                     "#REDIRECT [[Run]]"])
def test_shutoff_page_stops_every_write(site, bot, make_page, local_wiki, content):
    shutoff = make_page.title(prefix="Shutoff")
    if content is not None:
        local_wiki.edit(shutoff, content or "<!-- -->")
    writer = WikiWriter(site, bot_user=bot, shutoff_page=shutoff)
    article = make_page("Article.", prefix="Stopped")
    with pytest.raises(ShutoffError):
        _post(writer, bot, article, "Fact.")
    assert _revisions(site, f"Talk:{article}") == []


def test_shutoff_is_read_before_each_write(writer, site, bot, shutoff, make_page, local_wiki):
    a1 = make_page("Article.", prefix="Before")
    assert _post(writer, bot, a1, "Fact.")[1].mode == "new-section"
    local_wiki.edit(shutoff, "  STOP  ")
    a2 = make_page("Article.", prefix="After")
    with pytest.raises(ShutoffError):
        _post(writer, bot, a2, "Fact.")
    local_wiki.edit(shutoff, " Run \n")
    assert _post(writer, bot, a2, "Fact.")[1].mode == "new-section"


def test_queue_in_bot_userspace_is_idempotent(writer, site, bot, make_page):
    import pywikibot
    queue = f"User:{bot}/Queue {make_page.title()}"
    ss = [_suggestion("Some article", "Fact one."), _suggestion("Other article", "Fact two.")]
    body = "".join(render_queue_entry(s, bot_user=bot) for s in ss)
    result = writer.post_queue(queue, body, [s.id for s in ss])
    assert result.mode == "queue" and len(result.posted_ids) == 2
    again = writer.post_queue(queue, body, [s.id for s in ss])
    assert again.mode == "nothing"
    text = pywikibot.Page(site, queue).get(force=True)
    assert text.count("== [[:Some article]]: History ==") == 1
    assert set(parse_statuses(text)) == {s.id for s in ss}
    with pytest.raises(UnsafeWriteError):
        writer.post_queue(f"User:Someone else/Queue {make_page.title()}", body, [s.id for s in ss])


def test_userspace_prefix_must_be_the_bots(site, bot):
    with pytest.raises(ConfigError):
        WikiWriter(site, bot_user=bot, shutoff_page="X", allowed_userspace_prefix="User:Someone else/")
    with pytest.raises(ConfigError):
        WikiWriter(site, bot_user=bot, shutoff_page="X", allowed_userspace_prefix="Wikipedia:Queue/")
    w = WikiWriter(site, bot_user=bot, shutoff_page="X", allowed_userspace_prefix=f"User:{bot}/Queues/")
    assert w.userspace_prefix == f"User:{bot}/Queues/"


def test_reviewer_status_is_read_back_and_shown_by_the_template(writer, site, bot, make_page, local_wiki):
    import pywikibot
    article = make_page("Article.", prefix="Reviewed")
    ss, _ = _post(writer, bot, article, "Fact one.", "Fact two.")
    talk = f"Talk:{article}"
    text = pywikibot.Page(site, talk).get(force=True)
    text = text.replace(f"id={ss[0].id}|status=pending", f"id={ss[0].id}|status=accepted", 1)
    text = text.replace(f"id={ss[1].id}|status=pending", f"id={ss[1].id}|status=nonsense", 1)
    local_wiki.edit(talk, text)
    assert parse_statuses(pywikibot.Page(site, talk).get(force=True)) == {ss[0].id: "accepted", ss[1].id: "pending"}


@pytest.mark.parametrize("status,shown", [
    ("accepted", "accepted"), ("done", "accepted"), ("rejected", "rejected"), ("withdrawn", "withdrawn"),
    ("pending", "pending"), ("", "pending"), ("whatever", "pending"), ("_s", "pending"),
])
def test_template_shows_unknown_status_as_pending(site, status, shown):
    html = site.expand_text(f"{{{{Winellbot suggestion|id=abcdef0123456789|status={status}}}}}")
    assert f'<span class="winellbot-status">{shown}</span>' in html
    assert "abcdef0123456789" in html


def test_optin_template_renders_its_notice(site):
    assert "accepts update suggestions from winellbot" in site.expand_text("{{Winellbot}}")


def test_posted_hostile_suggestion_renders_without_side_effects(writer, site, bot, make_page):
    from pywikibot.data.api import Request
    article = make_page("Article.", prefix="Hostile")
    s = _suggestion(article, "Fact [[Category:Injected]] {{delete}} ~~~~ __NOTOC__ </nowiki>")
    writer.post_talk_section(article, "Update suggestions", render_section([s], bot_user=bot), [s.id])
    parsed = Request(site=site, parameters={"action": "parse", "page": f"Talk:{article}",
                                            "prop": "categories|templates|sections|text"}).submit()["parse"]
    assert parsed["categories"] == []
    used = {t.get("title") or t.get("*") for t in parsed["templates"]}
    assert used <= {"Template:Winellbot suggestion", "Template:Winellbot suggestion status", "Template:Cite news"}
    assert "Template:Delete" not in used
    assert [sec["line"] for sec in parsed["sections"]] == ["Update suggestions"]
    html = parsed["text"]["*"] if isinstance(parsed["text"], dict) else parsed["text"]
    assert "<ins>" in html and "status" in html
    assert "[[Category:Injected]]" in html.replace("&#91;", "[").replace("&#93;", "]")


def test_talk_redirect_to_an_article_is_refused(writer, site, bot, make_page, local_wiki):
    import pywikibot
    target = make_page("Real article.", prefix="Target")
    article = make_page("Article.", prefix="Redirected")
    local_wiki.edit(f"Talk:{article}", f"#REDIRECT [[{target}]]")
    with pytest.raises(UnsafeWriteError):
        _post(writer, bot, article, "Fact.")
    assert pywikibot.Page(site, target).get(force=True) == "Real article."
