"""Text from a web page cannot make a live link of any protocol MediaWiki knows, and a source URL
cannot break out of its citation: checked on the escaper and on what the real wiki renders."""
import pytest

from winellbot.escape import check_proposed_wikitext, escape_text
from winellbot.models import Citation, Document, Paragraph, Suggestion, Update
from winellbot.pipeline.offline.editor import OfflineEditor
from winellbot.search.urls import citation_url
from winellbot.wiki.render import cite_news, render_section

# MediaWiki 1.39's $wgUrlProtocols, less "//" (needs brackets, which are always escaped).
PROTOCOLS = ["bitcoin:", "ftp://", "ftps://", "geo:", "git://", "gopher://", "http://", "https://", "irc://",
             "ircs://", "magnet:", "mailto:", "matrix:", "mms://", "news:", "nntp://", "redis://", "sftp://",
             "sip:", "sips:", "sms:", "ssh://", "svn://", "tel:", "telnet://", "urn:", "worldwind://", "xmpp:"]
HOSTILE = " ".join(f"see {p}evil.example/x{i}" for i, p in enumerate(PROTOCOLS)) + " MAILTO:boss@evil.example"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_no_protocol_survives_the_escaper(protocol):
    for escaped in (escape_text(f"write to {protocol}someone@evil.example now"),
                    check_proposed_wikitext(f"write to {protocol}someone@evil.example now").text):
        assert protocol not in escaped.lower()
        assert protocol.split(":")[0] + "&#58;" in escaped.lower()  # still readable: the colon as &#58;


@pytest.mark.parametrize("url, expected", [
    ("https://news.example/a b[[Category:Spam]]", "https://news.example/a%20b%5B%5BCategory:Spam%5D%5D"),
    ("https://news.example/x|title=Forged}}{{delete", "https://news.example/x%7Ctitle=Forged%7D%7D%7B%7Bdelete"),
    ("https://news.example/~~~~", "https://news.example/%7E%7E%7E%7E"),
    ("https://user:pw@news.example/", None),
    ("mailto:a@news.example", None),
    ("javascript:alert(1)", None),
    ("https:///nohost", None),
])
def test_citation_urls_are_validated_and_encoded(url, expected):
    assert citation_url(url) == expected


def test_a_citation_with_a_hostile_url_keeps_it_inside_the_url_parameter():
    ref = cite_news(Citation("https://news.example/a b[[Category:Spam]]|x=1", "T", "W", "2026-01-01", "2026-01-02"))
    assert "[[Category" not in ref and "Category:Spam" in ref  # encoded in the URL, not dropped into the text
    assert check_proposed_wikitext(f"Text.{ref}").ok
    assert "url=" not in cite_news(Citation("mailto:x@y.example", "T"))


def test_the_wiki_renders_no_live_link_but_the_citation(site, make_page):
    from pywikibot.data.api import Request

    from winellbot.wiki.writer import WikiWriter

    article = make_page("The town has a harbour.", prefix="Linkless")
    url = "https://news.example/a b[[Category:Spam]]"
    doc = Document("d", url, f"Title {HOSTILE}", f"The harbour reopened. {HOSTILE}", "2026-01-01", "Gazette")
    update = Update(f"The harbour reopened. {HOSTILE}", ("",), f"Quote {HOSTILE}", doc)
    citation = Citation(url, doc.title, doc.publisher, "2026-01-01", "2026-01-02")
    paragraph = Paragraph("The town has a harbour.", "The town has a harbour.", 0, 23)
    edit = OfflineEditor().edit(paragraph, update, citation)
    s = Suggestion(article, 1, (), 0, edit, update)
    writer = WikiWriter(site, bot_user=site.username(), shutoff_page=make_page("run", prefix="Shutoff"))
    writer.post_talk_section(article, "Suggestions", render_section([s], bot_user=writer.bot_user), [s.id])
    parsed = Request(site=site, parameters={"action": "parse", "page": f"Talk:{article}",
                                            "prop": "externallinks|categories"}).submit()["parse"]
    assert parsed["categories"] == []
    links = [x if isinstance(x, str) else x.get("*", x.get("url")) for x in parsed["externallinks"]]
    assert links and all(link.startswith("https://news.example/a%20b") for link in links), links


def test_invisible_characters_never_reach_a_page():
    from winellbot.escape import escape_text

    assert escape_text("IGN\u200bORE\u2060 AL\u00adL\ufeff") == "IGNORE ALL"
