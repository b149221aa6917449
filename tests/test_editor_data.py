"""Editor examples from a real local wiki's revision history (API and dumpBackup.php) and its cited sentences.

One page is edited several times: one edit adds a cited sentence (kept), one only reformats, one adds a
cited sentence that the next edit reverts, one adds a sentence to the References section, one cites a page
that does not say what the sentence says. The cited pages are served by a local HTTP server that the
project's fetcher may read only because loopback is allowed here.
"""
from __future__ import annotations

from collections import Counter

import pytest

from search_http import LocalServer, Reply
from winellbot.editor import history
from winellbot.editor.cited import examples_from_article, fetch_with
from winellbot.editor.shortedit import answer_of
from winellbot.errors import UnsafeURLError
from winellbot.search.fetch import WebFetcher

PAGES = {
    "/works": ("Bridge works start",
               "Work on the harbour bridge began in 2020, the council said, with a budget of 350 million pounds."),
    "/opening": ("Harbour bridge opens to traffic",
                 "The new harbour bridge opened to traffic on Monday morning after four years of work. "
                 "The council leader said the bridge opened on 3 May 2024 and carried about 3,000 vehicles "
                 "in its first hour, far more than the transport office had expected. Critics called the "
                 "ceremony a costly spectacle and a waste of public money. Cyclists will use a separate lane."),
    "/cost": ("What the bridge cost",
              "The final cost of the crossing was 412 million pounds, the council said on Friday, some "
              "sixty million above the original estimate because of steel prices. Many readers wrote in to "
              "say the design is the most beautiful in the country. The southern pier was redesigned twice."),
    "/reverted": ("Bridge to get toll",
                  "A toll of two pounds will be charged on the bridge from 1 June 2024, the council decided "
                  "at its meeting on Tuesday. Commentators said the toll was unfair on local families."),
    "/unrelated": ("Football results",
                   "The home side won the derby three goals to one on Saturday in front of a full stadium. "
                   "The manager praised the young striker who scored twice in the second half of the match."),
}

BASE = """The '''Harbour Bridge''' is a road bridge in Port Elwin.

== History ==
Work on the bridge began in 2020.<ref>{{{{cite news |url={u}/works |title=Works start}}}}</ref> \
The bridge was built by the Elwin Construction Company.
{extra_history}
== Design ==
The bridge has a main span of 240 metres and two lanes in each direction.{design_extra}

== References ==
{{{{reflist}}}}{references_extra}
"""

ADDED = (" The bridge opened on 3 May 2024 and carried about 3,000 vehicles in its first hour."
         "<ref>{{{{cite news |url={u}/opening |title=Opening}}}}</ref>")


def versions(u: str) -> list[tuple[str, str]]:
    """(summary, page text) for each edit, in order."""
    def page(history_added="", extra_history="", design_extra="", references_extra="", bold=True):
        text = BASE.format(u=u, extra_history=extra_history, design_extra=design_extra,
                           references_extra=references_extra)
        text = text.replace("Elwin Construction Company.", "Elwin Construction Company." + history_added, 1)
        return text if bold else text.replace("'''Harbour Bridge'''", "Harbour Bridge")

    opening = ADDED.replace("{{{{", "{{").replace("}}}}", "}}").format(u=u)
    cost = (" The final cost of the crossing was 412 million pounds, sixty million above the estimate."
            f"<ref>{{{{cite news |url={u}/cost |title=Cost}}}}</ref>")
    toll = (" A toll of two pounds will be charged on the bridge from 1 June 2024."
            f"<ref>{{{{cite news |url={u}/reverted |title=Toll}}}}</ref>")
    wrong = (" The bridge was closed for three days in 2023 after the home side won the derby."
             f"<ref>{{{{cite news |url={u}/unrelated |title=Results}}}}</ref>")
    refs = f"\n* A sentence in the references section about the bridge in 2024.<ref>{u}/cost</ref>"
    return [
        ("create", page()),
        ("add the opening", page(opening)),                                    # kept
        ("formatting only", page(opening, bold=False)),                         # formatting
        ("add the toll", page(opening + toll, bold=False)),                     # reverted below
        ("revert", page(opening, bold=False)),                                  # the revert
        ("references only", page(opening, references_extra=refs, bold=False)),  # non-content section
        ("add a wrong claim", page(opening, design_extra=wrong, bold=False)),   # unsupported
        ("add the cost", page(opening, design_extra=wrong + cost, bold=False)),  # kept
    ]


@pytest.fixture
def cited_pages():
    with LocalServer() as server:
        for path, (title, text) in PAGES.items():
            server.routes[path] = Reply(body=f"<html><head><title>{title}</title></head><body><article>"
                                             f"<h1>{title}</h1><p>{text}</p></article></body></html>")
        yield server


@pytest.fixture
def bridge_page(local_wiki, make_page, cited_pages):
    steps = versions(cited_pages.url)
    title = make_page(steps[0][1])
    revids = [local_wiki.edit(title, text, summary) for summary, text in steps[1:]]
    return title, revids


def check_examples(examples, revids, skipped):
    by_rev = {e.meta["revid"]: e for e in examples}
    assert set(by_rev) == {revids[0], revids[-1]}, skipped  # the opening and the cost
    opening, cost = by_rev[revids[0]], by_rev[revids[-1]]
    assert opening.section_path == ("History",) and cost.section_path == ("Design",)
    assert opening.original == ("Work on the bridge began in 2020. "
                                "The bridge was built by the Elwin Construction Company.")
    assert opening.target.endswith("first hour.") and "3,000 vehicles" in opening.target
    assert "3,000 vehicles" in opening.source.text and "3 may 2024" in opening.source.text.lower()
    assert cost.original == ("The bridge has a main span of 240 metres and two lanes in each direction. "
                             "The bridge was closed for three days in 2023 after the home side won the derby.")
    assert "412 million pounds" in cost.source.text
    edit = answer_of(opening)
    assert edit.after == 2 and edit.sentence.startswith("The bridge opened on 3 May 2024")
    assert skipped["reverted or reverting edit"] == 2
    assert skipped["no change to the text's sentences (formatting only)"] >= 1
    assert skipped["weak support"] + skipped["the sentence's words are scattered over the page"] == 1
    assert "toll" not in " ".join(e.target for e in examples)


def test_history_examples_through_the_api(local_wiki, bridge_page, cited_pages):
    title, revids = bridge_page
    skipped = Counter()
    fetch = fetch_with(WebFetcher(allow_private=True))
    examples = history.examples_from_wiki(local_wiki.api_url, [title], fetch, skipped=skipped)
    check_examples(examples, revids, skipped)
    assert examples[0].meta["comment"] == "add the opening" and examples[0].meta["user"] == "Admin"


def test_history_examples_from_dumpbackup(local_wiki, bridge_page, cited_pages, tmp_path):
    title, revids = bridge_page
    dump = local_wiki.dump(tmp_path / "dump.xml")
    pages = dict(history.dump_revisions(str(dump)))
    assert [r.comment for r in pages[title]][-1] == "add the cost"
    miner = history.HistoryMiner(fetch_with(WebFetcher(allow_private=True)))
    examples = miner.examples(title, pages[title])
    check_examples(examples, revids, miner.skipped)
    api = history.examples_from_wiki(local_wiki.api_url, [title], fetch_with(WebFetcher(allow_private=True)))
    assert [e.to_json() for e in examples] == [e.to_json() for e in api]  # same edits, same passages


def test_the_fetchers_guard_still_applies(local_wiki, bridge_page):
    title, _ = bridge_page
    refused = Counter()
    fetch = fetch_with(WebFetcher())  # loopback not allowed: every cited page is refused
    with pytest.raises(UnsafeURLError):
        fetch(local_wiki.api_url)
    assert history.examples_from_wiki(local_wiki.api_url, [title], fetch, skipped=refused) == []
    assert refused["no cited page could be read"] == 3  # the opening, the wrong claim, the cost


def test_cited_sentences_of_the_latest_revision(local_wiki, bridge_page, cited_pages):
    title, _ = bridge_page
    text = history.site_revisions(__import__("winellbot.wiki.site", fromlist=["connect"]).connect(
        local_wiki.api_url), title)[-1].text
    skipped = Counter()
    examples = examples_from_article(title, text, fetch_with(WebFetcher(allow_private=True)), skipped=skipped)
    sentences = {answer_of(e).sentence for e in examples}
    assert "The bridge opened on 3 May 2024 and carried about 3,000 vehicles in its first hour." in sentences
    assert any("412 million pounds" in s for s in sentences)
    assert not any("derby" in s for s in sentences)  # cites a page that does not say it
    assert all(e.meta["kind"] == "cited" for e in examples)
