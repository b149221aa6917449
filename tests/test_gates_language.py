"""The language gate: text in another language than the wiki's, or bytes, is held; English passes."""
from __future__ import annotations

import pytest

from winellbot.errors import ConfigError
from winellbot.gates.registry import default_gates
from winellbot.gates.language import FUNCTION_SHARE, SURE, LanguageGate, function_share, language_of
from winellbot.models import Article, Citation, Document, Edit, Suggestion, Update
from winellbot.text import not_text

ARTICLE = Article("Harbour Museum", "", ())
ENGLISH = ("The museum reopened in March 2024 after a two-year restoration of its east wing, "
           "and its director said that the collection of ship models would return in the autumn.")
# Written for this test: the same kind of news in Dutch and in Italian.
DUTCH = ("Het museum is in maart 2024 weer opengegaan na een restauratie van twee jaar, en de directeur "
         "zei dat de verzameling scheepsmodellen in het najaar terugkeert naar de zalen.")
ITALIAN = ("Il museo ha riaperto nel marzo 2024 dopo un restauro durato due anni, e il direttore ha detto "
           "che la collezione di modelli di navi tornerà nelle sale in autunno.")


def make(added: str) -> Suggestion:
    doc = Document("d1", "https://news.example/museum", "A page", added)
    return Suggestion(
        article_title=ARTICLE.title, revid=1, section_path=("History",), paragraph_index=0,
        edit=Edit("Old.", f"Old. {added}<ref>x</ref>", f"{added}<ref>{{{{cite news|title=A page}}}}</ref>",
                  Citation(doc.url, "A page")),
        update=Update(added, ("History",), added, doc),
    )


@pytest.mark.parametrize("text, code", [(DUTCH, "nl"), (ITALIAN, "it")])
def test_a_passage_in_another_language_is_held_and_named(text, code):
    findings = LanguageGate("en").check(ARTICLE, make(text))
    assert [f.severity for f in findings] == ["hold"]
    assert f"({code}," in findings[0].message and "(en)" in findings[0].message


def test_english_prose_passes():
    assert LanguageGate("en").check(ARTICLE, make(ENGLISH)) == []


def test_english_words_keep_a_passage_the_identifier_is_sure_is_foreign():
    # Italian dish names make the identifier sure it is Italian; a third of the words are English
    # function words, so it is an English sentence about Italian food.
    menu = ("The menu at the Trattoria da Gino includes tagliatelle al ragu, risotto alla milanese, "
            "ossobuco e gremolata and tiramisu della casa, and it has been so since 1987.")
    found, sure = language_of(menu)
    assert found != "en" and sure >= SURE and function_share(menu) >= FUNCTION_SHARE
    assert LanguageGate("en").check(ARTICLE, make(menu)) == []


def test_a_list_of_names_the_identifier_is_unsure_of_passes():
    names = "Vincenzo Bellandi Marta Corradini Giulio Ferretti Paola Santini Lorenzo Baldini Chiara Marchetti"
    found, sure = language_of(names)
    assert found != "en" and sure < SURE and function_share(names) < FUNCTION_SHARE
    assert LanguageGate("en").check(ARTICLE, make(names)) == []


def test_codes_with_no_language_are_held_as_page_furniture():
    codes = "kq7vz3 id90412 trwx8hb2mqe9 pzl4 9fjx 2kdq wv7u"
    findings = LanguageGate("en").check(ARTICLE, make(codes))
    assert [f.severity for f in findings] == ["hold"] and "not prose in any language" in findings[0].message


def test_the_wiki_language_decides_which_text_is_foreign():
    gate = LanguageGate("nl")
    assert gate.check(ARTICLE, make(DUTCH)) == []
    assert [f.severity for f in gate.check(ARTICLE, make(ENGLISH))] == ["hold"]


def test_bytes_decoded_as_text_are_held():
    garbage = "stream x\ufffd\ufffdB\x15\ufffdz\ufffdD\ufffd+\ufffd\ufffd=vq\ufffd\x0eLs\ufffdq " * 3
    findings = LanguageGate("en").check(ARTICLE, make(garbage))
    assert [f.severity for f in findings] == ["hold"] and "not words" in findings[0].message
    # one undecodable byte in otherwise good English is enough: it would be posted as it is
    findings = LanguageGate("en").check(ARTICLE, make(ENGLISH.replace("two-year", "two\ufffdyear")))
    assert [f.severity for f in findings] == ["hold"] and "1 unreadable character" in findings[0].message


def test_an_empty_language_turns_the_language_check_off_but_not_the_bytes_check():
    gate = LanguageGate("")
    assert gate.check(ARTICLE, make(DUTCH)) == []
    assert [f.severity for f in gate.check(ARTICLE, make(ENGLISH + " \ufffd"))] == ["hold"]
    assert LanguageGate(" NL ").check(ARTICLE, make(DUTCH)) == []  # the code is read as written in the config


def test_an_unknown_language_code_is_a_config_error():
    with pytest.raises(ConfigError, match="wiki.language 'english'"):
        LanguageGate("english")


def test_the_default_chain_checks_the_language():
    held = default_gates().check(ARTICLE, [make(DUTCH)])[0]
    assert held.blocked and any(f.gate == "language" for f in held.findings)


@pytest.mark.parametrize("text", [
    "%PDF-1.7\n%\u00e2\u00e3\n4 0 obj\n<< /Length 5 0 R /Filter /FlateDecode >>\nstream",
    "x\ufffd\ufffd]Iw\x1c7\ufffd\ufffd\ufffdW\ufffd\ufffdj\ufffd\ufffd\ufffdK\ufffd/\ufffd\ufffdm\ufffd_w" * 20,
])
def test_a_files_bytes_are_not_text(text):
    assert not_text(text)


@pytest.mark.parametrize("text", [ENGLISH, DUTCH, "Η αστυνομία πυροβόλησε στη Βόρεια Καρολίνα.",
                                  "소녀시대 정규 7집 포에버 원 발매", "Tabs\tand\nnew lines\r\n are text."])
def test_pages_in_any_script_are_text(text):
    assert not_text(text) == ""
