"""The sources gate: listed domains refused with their reason, matched on label boundaries only."""
from __future__ import annotations

import pytest

from winellbot.errors import ConfigError
from winellbot.gates.sources import DomainList, SourcesGate, load_domain_rules
from winellbot.models import Article, Citation, Document, Edit, Suggestion, Update

ARTICLE = Article("Harbour Museum", "", ())


def make(url: str, cite_url: str | None = None) -> Suggestion:
    doc = Document("d1", url, "A page", "The museum reopened in 2024.")
    return Suggestion(
        article_title=ARTICLE.title, revid=1, section_path=("History",), paragraph_index=0,
        edit=Edit("Old.", "Old. New.", "The museum reopened in 2024.", Citation(cite_url or url, "A page")),
        update=Update("The museum reopened in 2024.", ("History",), "", doc),
    )


def check(url: str, gate: SourcesGate | None = None, cite_url: str | None = None):
    return (gate or SourcesGate()).check(ARTICLE, make(url, cite_url))


@pytest.mark.parametrize("url, severity, listed", [
    ("https://www.dailymail.co.uk/news/article-1/museum.html", "block", "dailymail.co.uk"),
    ("https://www.thesun.co.uk/news/1/", "block", "thesun.co.uk"),
    ("http://breitbart.com/x", "block", "breitbart.com"),
    ("https://www.rt.com/news/1-museum/", "block", "rt.com"),
    ("https://sputniknews.lt/20240101/x.html", "block", "sputniknews.*"),
    ("https://en.wikipedia.org/wiki/Harbour_Museum", "block", "wikipedia.org"),
    ("https://en.m.wikipedia.org/wiki/Harbour_Museum", "block", "wikipedia.org"),
    ("https://www.wikiwand.com/en/Harbour_Museum", "block", "wikiwand.com"),
    ("https://dbpedia.org/page/Harbour_Museum", "block", "dbpedia.org"),
    ("https://alchetron.com/Harbour-Museum", "block", "alchetron.com"),
    ("https://medium.com/@someone/museum-1", "hold", "medium.com"),
    ("https://someone.blogspot.com/2024/01/museum.html", "hold", "blogspot.com"),
    ("https://www.reddit.com/r/museums/comments/1", "hold", "reddit.com"),
    ("https://www.imdb.com/title/tt1/", "hold", "imdb.com"),
    ("https://WWW.QUORA.COM./What-is", "hold", "quora.com"),  # case and trailing dot
    ("https://nypost.com/2024/01/01/museum/", "hold", "nypost.com"),
])
def test_listed_domains_are_refused_with_reason(url, severity, listed):
    findings = check(url)
    assert [f.severity for f in findings] == [severity]
    assert f"listed as {listed}" in findings[0].message and ":" in findings[0].message


@pytest.mark.parametrize("url", [
    "https://bbc.co.uk.example.net/news/museum",  # look-alike: the rule's name is only a subdomain here
    "https://dailymail.co.uk.evil.example/x",
    "https://notrt.com/museum",  # a suffix of the text, not of the labels
    "https://art.com/museum",
    "https://wikipedia.org.example.com/wiki/X",
    "https://www.mediumrare.com/x",
    "https://www.bbc.co.uk/news/museum",  # unknown domains are allowed
    "https://apnews.com/article/museum",
    "http://192.0.2.7/report.pdf",
])
def test_lookalikes_and_unknown_domains_pass(url):
    assert check(url) == []


def test_rule_matches_subdomains_on_label_boundaries(tmp_path):
    extra = tmp_path / "domains.toml"
    extra.write_text('[deprecated.domains]\n"bbc.co.uk" = "test rule"\n', "utf-8")
    gate = SourcesGate(extra_path=extra)
    assert [f.severity for f in check("https://news.bbc.co.uk/1/hi/x.stm", gate)] == ["block"]
    assert [f.severity for f in check("https://bbc.co.uk/x", gate)] == ["block"]
    assert check("https://bbc.co.uk.example.net/x", gate) == []
    assert check("https://notbbc.co.uk/x", gate) == []


def test_operator_file_allows_and_overrides(tmp_path):
    extra = tmp_path / "domains.toml"
    extra.write_text('[allowed.domains]\n"medium.com" = "our own publication lives here"\n\n'
                     '[local_ban]\nseverity = "block"\ndescription = "banned locally"\n'
                     '[local_ban.domains]\n"example.org" = "test site"\n', "utf-8")
    gate = SourcesGate(extra_path=extra)
    assert check("https://medium.com/@x/y", gate) == []
    findings = check("https://www.example.org/page", gate)
    assert [f.severity for f in findings] == ["block"] and "test site" in findings[0].message


def test_most_specific_rule_wins():
    rules = load_domain_rules()
    extra = dict(rules)
    extra["news.example.com"] = rules["wikipedia.org"].__class__("news.example.com", "allowed", "none", "ok", "ok")
    extra["example.com"] = rules["medium.com"].__class__("example.com", "user_generated", "hold", "ugc", "blogs")
    lookup = DomainList(extra).lookup
    assert lookup("https://a.news.example.com/x").severity == "none"
    assert lookup("https://blog.example.com/x").severity == "hold"


def test_citation_url_is_checked_too():
    findings = check("https://apnews.com/article/museum", cite_url="https://en.wikipedia.org/wiki/X")
    assert [f.severity for f in findings] == ["block"]


def test_url_without_host_is_held():
    assert [f.severity for f in check("not a url")] == ["hold"]


def test_bad_severity_is_a_config_error(tmp_path):
    extra = tmp_path / "domains.toml"
    extra.write_text('[weird]\nseverity = "maybe"\n[weird.domains]\n"x.org" = "y"\n', "utf-8")
    with pytest.raises(ConfigError):
        load_domain_rules(str(extra))


@pytest.mark.parametrize("url", [
    "https://www.researchgate.net/publication/1_Harbour_museums",
    "https://uni.academia.edu/paper/harbour",
    "https://www.linkedin.com/in/someone",
])
def test_copies_and_self_descriptions_are_flagged_for_the_reviewer_not_stopped(url):
    [finding] = check(url)
    assert finding.severity == "flag"
    assert "cite the original" in finding.message
