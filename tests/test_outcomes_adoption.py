"""Reading a later revision of an article for a posted fact (winellbot.outcomes.adoption), and
reading reviewers' reasons (winellbot.outcomes.verdicts). Pure text: no wiki is needed to read a
revision's text; tests/test_outcomes_wiki.py runs the same on the real wiki."""
import json

from winellbot.article import parse_article
from winellbot.models import Citation, Document, Edit, Suggestion, Update
from winellbot.outcomes.adoption import AdoptionReader, fingerprint, normal_url
from winellbot.outcomes.verdicts import box_reasons, reasons_of

TITLE = "Brackwater"
BASE = """'''Brackwater''' is a harbour town.

== Transport ==
A ferry connects the town with Eastholm every morning.<ref>{{cite news|url=https://old.example.org/a|title=Old}}</ref>

== References ==
{{Reflist}}
"""
FACT = "The ferry terminal reopened on 14 May 2026 after a 3.1 million euro rebuild led by Halvard Brenn."
SOURCE = "https://news.example.org/ferry"


def _tracked():
    doc = Document("d", SOURCE, "Ferry", FACT, "2026-05-15", "Gazette")
    s = Suggestion(TITLE, 1, ("Transport",), 0, Edit("x", "x", FACT, Citation(SOURCE, "Ferry")),
                   Update(FACT + " A temporary pier was used.", ("Transport",), FACT, doc))
    row = fingerprint(parse_article(TITLE, BASE, revid=1), s)
    return {**row, **{k: json.loads(row[k]) for k in ("names", "figures", "words", "baseline_urls",
                                                      "baseline_sentences")}}


def _read(added: str):
    text = BASE.replace("</ref>\n", "</ref> " + added + "\n", 1)
    return AdoptionReader().read(TITLE, text, [_tracked()])[_tracked()["suggestion_id"]]


def test_the_fingerprint_keeps_what_the_fact_brings():
    row = _tracked()
    assert {"halvard", "brenn"} <= set(row["names"])
    assert {"2026", "14"} <= set(row["figures"])
    assert normal_url("https://old.example.org/a") in row["baseline_urls"]


def test_the_source_cited_is_an_adoption_with_that_source():
    found = _read("It reopened in May.<ref>{{cite news|url=https://www.news.example.org/ferry/|title=F}}</ref>")
    assert found is not None and found.how == "cited" and found.source == SOURCE


def test_a_new_sentence_stating_the_names_and_figures_adopts_with_its_own_source():
    found = _read("On 14 May 2026 the rebuilt terminal (3.1 million euros, overseen by Halvard Brenn) "
                  "reopened.<ref>[https://other.example.net/t Other]</ref>")
    assert found is not None and found.how == "sentence"
    assert found.source == "other.example.net/t"
    assert "Halvard Brenn" in found.sentence and found.section == ("Transport",)


def test_a_sentence_stating_the_fact_without_a_reference_is_adopted_uncited():
    found = _read("The terminal, rebuilt for 3.1 million euros under Halvard Brenn, reopened on 14 May 2026.")
    assert found is not None and (found.how, found.source) == ("sentence", "")


def test_unrelated_sentences_that_share_part_of_the_fact_are_not_adoptions():
    assert _read("The town hall was repainted in 2026.") is None
    assert _read("Halvard Brenn opened a bakery near the harbour.") is None
    assert _read("A museum opened on 14 May.<ref>[https://news.example.org/museum M]</ref>") is None


def test_a_citation_already_there_and_an_unchanged_article_adopt_nothing():
    row = _tracked()
    assert AdoptionReader().read(TITLE, BASE, [row])[row["suggestion_id"]] is None
    with_old = BASE.replace("every morning.", "every morning. The terminal reopened in 2026 after Halvard "
                            "Brenn's rebuild.<ref>{{cite news|url=https://old.example.org/a|title=Old}}</ref>")
    assert AdoptionReader().read(TITLE, with_old, [row])[row["suggestion_id"]] is None  # misses 14 and 3.1


def test_reasons_are_read_as_the_rubrics_error_codes():
    assert reasons_of("not new") == ("not_new",)
    assert reasons_of("Wrong section, too long") == ("wrong_section", "too_long")
    assert reasons_of("off_topic; I just dislike it") == ("off_topic", "other")
    assert reasons_of("") == ()
    page = "{{Winellbot suggestion|id=abcdef12|status=rejected|reason=not new}}"
    assert box_reasons(page) == {"abcdef12": "not new"}
