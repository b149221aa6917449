"""WikiReader against the local MediaWiki: opt-in discovery, watchlists, batched revisions and text."""

import pytest

from winellbot.errors import ConfigError
from winellbot.wiki.reader import WikiReader


@pytest.fixture
def optin(make_page) -> str:
    """A fresh opt-in template name for this test, so other tests' opt-ins do not leak in."""
    name = make_page.title(prefix="Optin")
    make_page.wiki.edit(f"Template:{name}", "<small>opted in</small>")
    return name


def test_watched_titles_union_of_optin_watchlist_and_extra(site, local_wiki, make_page, optin):
    import pywikibot

    on_article = make_page(f"Text. {{{{{optin}}}}}")
    on_talk = make_page("Plain article.", talk=f"{{{{{optin}}}}}\n== Hi ==")
    not_opted = make_page("No template here.")
    template_user_elsewhere = make_page(f"{{{{{optin}}}}}", namespace="User")  # not an article
    listed = make_page("Listed one.")
    watchlist = make_page(
        f"Intro line [[Ignored link]]\n* [[{listed}]]\n# [[{on_article}|label]] -- again\n"
        f"* [[User:Someone]]\n* [[:{not_opted}]]\n*[[]]\n", namespace="User")
    extra_talk = make_page("Extra article.", talk="talk")
    extra = [pywikibot.Page(site, f"Talk:{extra_talk}"), pywikibot.Page(site, "User:Nobody")]

    reader = WikiReader(site)
    titles = reader.watched_titles(optin, watchlist, extra)

    assert titles == sorted({on_article, on_talk, listed, not_opted, extra_talk})
    assert template_user_elsewhere not in titles
    assert "Ignored link" not in titles


def test_watched_titles_without_watchlist(site, make_page, optin):
    on_article = make_page(f"{{{{{optin}}}}}")
    assert WikiReader(site).watched_titles(optin) == [on_article]


def test_opted_in_checks_article_and_talk(site, make_page, optin):
    on_article = make_page(f"{{{{{optin}}}}}")
    on_talk = make_page("x", talk=f"{{{{{optin}}}}}")
    plain = make_page("x", talk="no template")
    lower = on_article[0].lower() + on_article[1:]
    reader = WikiReader(site, optin_template=optin)
    assert reader.opted_in([on_article, on_talk, plain, lower, "Never created page"]) == {
        on_article, on_talk, lower}
    with pytest.raises(ConfigError):
        WikiReader(site).opted_in([on_article])


def test_optin_through_template_redirect(site, local_wiki, make_page, optin):
    alias = make_page.title(prefix="Alias")
    local_wiki.edit(f"Template:{alias}", f"#REDIRECT [[Template:{optin}]]")
    via_alias = make_page(f"{{{{{alias}}}}}")
    assert WikiReader(site).opted_in([via_alias], optin) == {via_alias}


def test_latest_revisions_reports_newest_and_skips_missing(site, local_wiki, make_page):
    first = make_page("one")
    second_rev = local_wiki.edit(first, "one, edited")
    other = make_page("two")
    missing = make_page.title()
    lowercase = other[0].lower() + other[1:]

    revisions = WikiReader(site).latest_revisions([first, other, missing, lowercase, "Bad[title"])

    assert set(revisions) == {first, other, lowercase}
    assert revisions[first][0] == second_rev
    assert revisions[other] == revisions[lowercase]
    assert revisions[first][1].endswith("Z") and revisions[first][1][4] == "-"


def test_read_yields_text_in_given_order_in_small_batches(site, local_wiki, make_page):
    titles = [make_page(f"Body {n} with <ref>r</ref>") for n in range(5)]
    newest = local_wiki.edit(titles[2], "Body 2 changed")
    wanted = [titles[4], titles[0], make_page.title(), titles[2], titles[1], titles[3]]

    rows = list(WikiReader(site, text_batch=2).read(wanted))

    assert [row[0] for row in rows] == [titles[4], titles[0], titles[2], titles[1], titles[3]]
    assert rows[0][1] == "Body 4 with <ref>r</ref>"
    assert rows[2][1:3] == ("Body 2 changed", newest)


def test_page_text_fresh_and_none_when_missing(site, local_wiki, make_page):
    title = make_page("first", namespace="User")
    reader = WikiReader(site)
    assert reader.page_text(title) == "first"
    local_wiki.edit(title, "second")
    assert reader.page_text(title) == "second"
    assert reader.page_text(make_page.title()) is None


def test_batches_use_one_request_per_maxlimit(site, local_wiki, make_page, monkeypatch):
    from pywikibot.comms import http

    titles = [make_page.title() for _ in range(120)]
    local_wiki.import_pages({title: "x" for title in titles}, link_updates=False)
    reader = WikiReader(site)
    limit = site.maxlimit  # warm the paraminfo cache before counting
    assert limit == 500  # the bot has apihighlimits
    calls = []
    real = http.request
    monkeypatch.setattr(http, "request", lambda *a, **k: calls.append(k.get("uri")) or real(*a, **k))

    assert len(reader.latest_revisions(titles)) == 120
    assert len(calls) == 1
