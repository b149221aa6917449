"""The fact as the unit of a suggestion: a passage becomes its one sentence that stands alone and
brings news, with the source's own words for it; what cannot stand is held with the reason."""
from winellbot.article import parse_article
from winellbot.gates.registry import default_gates
from winellbot.models import Citation, Document, Edit, Suggestion, Update
from winellbot.pipeline.offline.fact import FactPicker

ARTICLE = parse_article("Fellside Rovers", """'''Fellside Rovers''' is a football club in Fellside.

== History ==
The club was founded in 1899. It has played at Quarry Lane since 1921.

== Honours ==
The club won the County Cup in 1954.
""")

PASSAGE = ("The club was founded in 1899 and has played at Quarry Lane since 1921. He said it was a great day. "
           "Fellside Rovers won the County Cup on 10 May 2026, beating Lowbridge Town 2-1 in the final. "
           "Share this article.")


def update(text: str, quote: str | None = None, doc_text: str | None = None) -> Update:
    doc = Document("d1", "https://news.example/cup", "Rovers win the cup", doc_text or text)
    return Update(text=text, section_path=("Honours",), quote=quote or text, document=doc, score=2.0,
                  reason="passage reason")


def test_the_sentence_that_stands_alone_and_brings_news_is_the_fact():
    [fact] = FactPicker().refine(ARTICLE, [update(PASSAGE)])
    assert fact.text == "Fellside Rovers won the County Cup on 10 May 2026, beating Lowbridge Town 2-1 in the final."
    assert fact.quote == fact.text  # a cased page: its own sentence
    assert fact.reason.startswith("the sentence brings") and "passage reason" in fact.reason


def test_a_page_that_lost_its_case_gives_its_own_words_as_the_quote():
    raw = "the club was founded in 1899 fellside rovers won the county cup on 10 may 2026 beating lowbridge town"
    restored = "The club was founded in 1899. Fellside Rovers won the County Cup on 10 May 2026, beating Lowbridge Town."
    [fact] = FactPicker().refine(ARTICLE, [update(restored, quote=raw)])
    assert fact.text.startswith("Fellside Rovers won")
    assert fact.quote == "fellside rovers won the county cup on 10 may 2026 beating lowbridge town"


def test_an_opening_joiner_is_dropped_from_the_line_but_not_from_the_quote():
    text = "However, Fellside Rovers won the County Cup on 10 May 2026 at Quarry Lane."
    [fact] = FactPicker().refine(ARTICLE, [update(text)])
    assert fact.text.startswith("Fellside Rovers won") and fact.quote.startswith("However,")


def test_two_passages_with_the_same_sentence_give_one_fact():
    picked = FactPicker().refine(ARTICLE, [update(PASSAGE), update(PASSAGE)])
    assert len(picked) == 1


def test_a_passage_with_no_sentence_that_stands_is_held_with_the_reason():
    [fact] = FactPicker().refine(ARTICLE, [update("He said it was a great day for them and the whole town.")])
    s = Suggestion("Fellside Rovers", 1, ("Honours",), None,
                   Edit("", fact.text, fact.text, Citation(fact.document.url, fact.document.title), quoted=True),
                   fact)
    checked = default_gates().check_one(ARTICLE, s)
    assert checked.blocked
    assert any(f.gate == "clarity" and "points back" in f.message for f in checked.findings)


def test_a_fact_the_article_already_states_is_held_by_novelty():
    fact = update("The club was founded in 1899 and has played at Quarry Lane since 1921.")
    s = Suggestion("Fellside Rovers", 1, ("History",), None,
                   Edit("", fact.text, fact.text, Citation(fact.document.url, fact.document.title), quoted=True),
                   fact)
    held = [f for f in default_gates().check_one(ARTICLE, s).findings if f.gate == "novelty"]
    assert held and held[0].severity == "hold"


def test_a_sentence_that_names_no_one_before_its_pronoun_gives_way_to_one_that_stands():
    passage = ("In 2026 they paid 48,000 pounds for floodlights built by Harlow Electrical at Quarry Lane. "
               "Fellside Rovers switched on new floodlights at Quarry Lane in June 2026.")
    [fact] = FactPicker().refine(ARTICLE, [update(passage)])
    assert fact.text.startswith("Fellside Rovers switched on")


def test_stands_says_which_sentences_of_a_page_could_be_a_fact_line():
    from winellbot.pipeline.offline.fact import stands
    from winellbot.sentences import read

    def ok(s):
        return stands(ARTICLE, read(s, ARTICLE, parse=False))

    assert ok("Fellside Rovers won the County Cup on 10 May 2026, beating Lowbridge Town 2-1 in the final.")
    assert not ok("He said it was a great day for the club and the whole town.")  # leans on the sentence before
    assert not ok("The club was founded in 1899 and has played at Quarry Lane since 1921.")  # the article's own
    assert not ok("Lowbridge Town, beaten 2-1 in the final on 10 May 2026 at Quarry Lane.")  # no verb with a subject
