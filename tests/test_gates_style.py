"""The style gate: words to watch, each finding named, with the documented severity."""
from __future__ import annotations

import pytest

from winellbot.errors import ConfigError
from winellbot.gates.style import StyleGate, load_word_classes, term_pattern
from winellbot.models import Article, Citation, Document, Edit, Suggestion, Update

ARTICLE = Article("Orchard Theatre", "", ())


def make(added: str) -> Suggestion:
    doc = Document("d1", "https://news.example.org/theatre", "Theatre news", added)
    return Suggestion(
        article_title=ARTICLE.title, revid=1, section_path=("History",), paragraph_index=0,
        edit=Edit("Old.", "Old. " + added, added, Citation(doc.url, doc.title)),
        update=Update(added, ("History",), added, doc),
    )


def found(added: str, gate: StyleGate | None = None) -> dict[str, str]:
    """{class name as written in the message: severity}."""
    findings = (gate or StyleGate()).check(ARTICLE, make(added))
    assert all(f.gate == "style" for f in findings)
    return {f.message.split(":")[0]: f.severity for f in findings}


@pytest.mark.parametrize("added, cls, severity", [
    ("The legendary theatre staged an iconic production in 1998.", "puffery", "hold"),
    ("The theatre recently reopened its main hall.", "relative time", "hold"),
    ("The theatre currently employs 40 staff.", "relative time", "hold"),
    ("The season opens next year with a new play.", "relative time", "hold"),
    ("The roof was repaired three years ago.", "relative time", "hold"),
    ("The theatre is a world-class venue for drama.", "promotional", "block"),
    ("It offers an unparalleled experience for families.", "promotional", "block"),
    ("The group was described in the report as a cult.", "contentious label", "info"),  # attributed
    ("The group is a cult that controls its members.", "contentious label", "hold"),
    ("Some people say the building is haunted.", "unsupported attribution", "hold"),
    ("It is widely regarded as the finest stage in the county.", "unsupported attribution", "hold"),
    ("The so-called renovation took four years.", "doubt", "hold"),
    ("Interestingly, the stage was built in 1902.", "editorialising", "hold"),
    ("Of course, the tickets sold out in 1950.", "editorialising", "hold"),
    ("The manager admitted that ticket sales fell in 2019.", "said synonym", "info"),
    ("The founder passed away in 1971.", "euphemism", "hold"),
    ("The café took the lion's share of the revenue in 2001.", "cliche", "hold"),
    ("We reopened the theatre in 2005.", "first person", "block"),
    ("Our shows run every weekend.", "first person", "block"),
    ("I think the stage was rebuilt in 1950.", "first person", "block"),
    ("You can book seats online.", "second person", "block"),
    ("It is the best theatre in the region.", "superlative", "hold"),
    ("After a torrid first act, the cast were gloriously melodramatic in 2019.", "review", "hold"),
    ("The Gazette's critic wrote that the 2019 revival was riveting.", "review", "info"),  # attributed
    ("The founder was survived by two sons.", "survived by", "info"),
])
def test_words_to_watch_are_named(added, cls, severity):
    assert found(added).get(cls) == severity


@pytest.mark.parametrize("added", [
    "The theatre opened in 1902 and seats 850 people.",
    "The building was damaged by fire in March 1987 and rebuilt by 1990.",
    "After World War I the theatre showed films; Henry I Street runs beside it.",
    "The US Department of the Interior listed it in 1978.",
    "He was supposed to direct the play but withdrew.",
    "The cult film premiered at the theatre in 1975.",
    "The company celebrated its 50th anniversary in 2002.",
    "USA Today reviewed the production in 2010.",
    "The hall is now known as the Lindqvist Room.",
    "It won the Best Revival award in 2015.",
    "The uncontroversial plan passed in 2001.",
    "Her album Speak Now was released in 2010.",  # a title, not a time: held words skip titles
    "In the main event, The Acclaimed won the tag team titles in 2023.",
])
def test_clean_encyclopaedic_text_passes(added):
    assert found(added) == {}


@pytest.mark.parametrize("added", [
    '"We are thrilled to reopen this legendary stage," the director said.',
    'The critic called it "the best show I have ever seen".',
    'The poster read \u201cYou will love our world-class cast\u201d.',
])
def test_quoted_speech_is_exempt(added):
    assert found(added) == {}


def test_relative_time_inside_a_quote_still_counts():
    assert found('The director said "we open next year".') == {"relative time": "hold"}


def test_attributed_first_person_is_held_not_blocked():
    # Reference text loses its quotation marks; the attribution verb still shows who speaks.
    assert found("The mayor said we will rebuild the theatre by 2026.") == {"first person": "hold"}


def test_one_finding_per_class_naming_every_word():
    findings = StyleGate().check(ARTICLE, make("The legendary and iconic theatre is renowned."))
    assert [f.message.split(":")[0] for f in findings] == ["puffery", "mostly words to watch (100% of its content words)"]
    # (the theatre is not the subject here: it is "legendary, iconic, renowned" and nothing else)
    assert all(w in findings[0].message for w in ('"legendary"', '"iconic"', '"renowned"'))


def test_operator_file_adds_terms_and_disables_classes(tmp_path):
    extra = tmp_path / "words.toml"
    extra.write_text('[puffery]\nterms = ["fabulous"]\n\n[relative_time]\nenabled = false\n', "utf-8")
    gate = StyleGate(extra_path=extra)
    assert found("The fabulous theatre recently reopened in May 2025.", gate) == {"puffery": "hold"}
    assert found("The legendary theatre reopened in May 2025.", gate) == {"puffery": "hold"}  # shipped terms kept
    shown = tmp_path / "shown.toml"
    shown.write_text('[puffery]\nseverity = "flag"\n', "utf-8")  # an operator's wiki that shows them instead
    assert found("The legendary theatre reopened in May 2025.", StyleGate(extra_path=shown)) == {"puffery": "flag"}


def test_bad_operator_file_is_a_config_error(tmp_path):
    extra = tmp_path / "words.toml"
    extra.write_text('[puffery]\nseverity = "explode"\n', "utf-8")
    with pytest.raises(ConfigError):
        load_word_classes(str(extra))


@pytest.mark.parametrize("term, text, hit", [
    ("world-class", "a world class venue", True),
    ("world-class", "a world-class venue", True),
    ("lion's share", "the lion\u2019s share", True),
    ("controversial", "a non-controversial plan", False),
    ("cult", "a cultural centre", False),
])
def test_term_patterns_match_whole_words(term, text, hit):
    import re
    assert bool(re.search(term_pattern(term), text, re.IGNORECASE)) is hit


@pytest.mark.parametrize("added", [
    "The dating show Are You the One? returned in 2019.",
    "The campaign slogan Yes We Can was coined in 2008.",
    "Her album Our Little Secret was released in 2011.",
])
def test_person_words_inside_titles_pass(added):
    assert found(added) == {}


def test_person_words_opening_a_sentence_still_count():
    assert found("You should visit in 2020.") == {"second person": "block"}
    assert found("It said: We reopened in 2005.") == {"first person": "hold"}  # attributed


@pytest.mark.parametrize("added", [
    "Russian forces captured the industrial zone near mine #7 in January 2023.",
    "The act created Business One Stop Shop (BOSS) services in every city.",
])
def test_names_and_ordinary_nouns_are_not_taken_for_words_to_watch(added):
    assert found(added) == {}


def test_lower_case_promotional_wording_still_blocks():
    assert found("The centre is a one-stop shop for visitors.") == {"promotional": "block"}
