"""The offline pipeline's stages on a small hand-made article and corpus."""
import datetime as dt
from dataclasses import replace

from winellbot.article import parse_article
from winellbot.gates.base import Gate, GateChain
from winellbot.gates.editorial import NoveltyGate
from winellbot.interface import Memory
from winellbot.models import Citation, Document, Update
from winellbot.pipeline.offline.aggregator import OfflineAggregator
from winellbot.pipeline.offline.build import build_offline_pipeline
from winellbot.pipeline.offline.criteria import OfflineCriteria
from winellbot.pipeline.offline.editor import OfflineEditor
from winellbot.pipeline.offline.extractor import OfflineExtractor
from winellbot.pipeline.offline.navigator import OfflineNavigator
from winellbot.pipeline.pagetext import has_capitals, is_cased, safe_text, unglue
from winellbot.pipeline.pipeline import propose_checked
from winellbot.pipeline.restore import recase
from winellbot.search.corpus import LocalCorpus

ARTICLE = parse_article("Harbour Bridge", (
    "The Harbour Bridge is a road bridge in Port Town.\n\n"
    "== History ==\nConstruction of the Harbour Bridge began in 2020 under mayor Alice Brown. "
    "The Harbour Bridge opened to traffic in March 2024.\n\n"
    "== Design ==\nThe Harbour Bridge is a steel arch bridge designed by Nordic Engineering. "
    "Its main span is 240 metres long and it carries four lanes."))

NEWS = Document("n1", "https://news.example/bridge", "Bridge traffic record", (
    "Menu\nHome\nSport\n"
    "The Harbour Bridge carried 12,000 vehicles in its first week, mayor Alice Brown said on Friday, "
    "twice the number the council had forecast when construction began in 2020.\n"
    "We use cookies to improve your experience. Accept cookies to continue.\n"))
REFERENCE = Document("r1", "https://ref.example/design", "design", (
    "home news the harbour bridge is a steel arch bridge designed by nordic engineering its main span "
    "is 240 metres long the arch was assembled from 38 prefabricated segments shipped from rotterdam "
    "in 2022 and lifted into place by floating cranes"))
OTHER = Document("x1", "https://other.example/soup", "Soup", "A recipe for tomato soup with basil and cream.")


def test_criteria_are_characteristic_terms_of_each_section():
    criteria = OfflineCriteria().induce(ARTICLE)
    assert set(criteria.criteria) == {("History",), ("Design",)}
    assert "design" in criteria.for_section(("Design",)).split()
    assert "construction" in criteria.for_section(("History",)).split()


def test_navigator_reads_unread_results_and_stops_when_done():
    corpus = LocalCorpus()
    corpus.add([NEWS, REFERENCE])
    criteria = OfflineCriteria().induce(ARTICLE)
    nav = OfflineNavigator()
    first = nav.navigate(ARTICLE, criteria, Memory(), corpus)
    assert first.chosen is not None and "Harbour Bridge" in first.query
    second = nav.navigate(ARTICLE, criteria, Memory(queries=(first.query,), read_urls=(first.chosen.url,)), corpus)
    assert second.chosen is not None and second.chosen.url != first.chosen.url
    done = nav.navigate(ARTICLE, criteria, Memory(read_urls=(NEWS.url, REFERENCE.url)), corpus)
    assert done.chosen is None


def test_extractor_finds_new_facts_skips_boilerplate_and_places_them():
    criteria = OfflineCriteria().induce(ARTICLE)
    updates = OfflineExtractor().extract(ARTICLE, criteria, NEWS)
    assert updates, "the 12,000 vehicles sentence is new and about the subject"
    assert "12,000 vehicles" in updates[0].text
    assert not any("cookies" in u.text for u in updates)
    assert updates[0].section_path == ("History",)
    assert updates[0].reason and updates[0].quote


def test_extractor_recases_lowercase_reference_text():
    criteria = OfflineCriteria().induce(ARTICLE)
    assert not is_cased(REFERENCE.text) and is_cased(NEWS.text)
    updates = OfflineExtractor().extract(ARTICLE, criteria, REFERENCE)
    assert updates
    text = updates[0].text
    assert "Harbour Bridge" in text or "Nordic Engineering" in text
    assert text[0].isupper() and text.endswith(".")
    assert updates[0].section_path == ("Design",)
    assert "lost its case and punctuation" in updates[0].reason  # the reviewer is told
    news = OfflineExtractor().extract(ARTICLE, criteria, NEWS)
    assert news and not any("lost its case" in u.reason for u in news)


RESULTS = Document("t1", "https://stats.example/bridge", "Bridge records", (
    "Home News Records Harbour Bridge Traffic Records Week Vehicles Council Forecast Mayor Alice Brown\n"
    "Week 1 12000 vehicles Week 2 11500 vehicles Harbour Bridge Record 12000 Nordic Engineering Span 240 "
    "Port Town Toll Free Opened March 2024 Steel Arch Four Lanes Harbour Bridge Weekly Figures Archive"))


def test_a_list_page_is_not_said_to_have_lost_its_case():
    criteria = OfflineCriteria().induce(ARTICLE)
    assert not is_cased(RESULTS.text) and has_capitals(RESULTS.text) and not has_capitals(REFERENCE.text)
    updates = OfflineExtractor().extract(ARTICLE, criteria, RESULTS)
    assert updates
    assert all("list, table or menu" in u.reason and "lost its case" not in u.reason for u in updates)


def test_extractor_ignores_unrelated_documents():
    assert OfflineExtractor().extract(ARTICLE, OfflineCriteria().induce(ARTICLE), OTHER) == []


def _update(text, score=1.0, url="https://news.example/x"):
    return Update(text=text, section_path=("History",), quote=text, score=score,
                  document=Document("d", url, "t", text))


def test_aggregator_ignores_stated_replaces_longer_and_adds_new():
    agg = OfflineAggregator()
    stated = agg.aggregate(ARTICLE, _update("The Harbour Bridge opened to traffic in March 2024."), ())
    assert stated.action == "ignore" and "already says" in stated.reason
    short = _update("The bridge carried 12,000 vehicles in its first week.", score=1.0)
    assert agg.aggregate(ARTICLE, short, ()).action == "add"
    longer = _update("The bridge carried 12,000 vehicles in its first week, twice the forecast of the council.",
                     score=2.0, url="https://news.example/y")
    decision = agg.aggregate(ARTICLE, longer, (short,))
    assert decision.action == "replace" and decision.replaces == short.key
    assert agg.aggregate(ARTICLE, short, (longer,)).action == "ignore"


def test_editor_appends_a_safe_sentence_with_cite_news():
    para = ARTICLE.section(("History",)).paragraphs[0]
    cite = Citation(url="https://news.example/bridge", title="Bridge | record {{x}}", work="news.example",
                    date="2024-04-01", access_date="2024-05-01")
    edit = OfflineEditor().edit(para, _update("It carried [[12,000]] vehicles {{tmpl}} ~~~~."), cite)
    assert edit.added_text == "It carried 12,000 vehicles tmpl."
    assert edit.new_paragraph.startswith(para.wikitext.rstrip())
    assert "<ref>{{cite news |url=https://news.example/bridge |title=Bridge record x |work=news.example " \
           "|date=2024-04-01 |access-date=2024-05-01}}</ref>" in edit.new_paragraph
    assert safe_text("<script>x</script> ''bold'' http://evil.example/") == "script x /script bold"


def test_recase_uses_the_articles_capitalisation():
    assert recase(["the", "harbour", "bridge", "in", "port", "town"], {"harbour": "Harbour", "port": "Port"}) \
        == "The Harbour bridge in Port town."


def test_recase_restores_possessives_of_names_contractions_and_months():
    casing = {"ethiopia": "Ethiopia", "addis": "Addis"}
    assert recase("in april ethiopias ministry said it doesnt plan to close schools in addis".split(), casing) \
        == "In April Ethiopia's ministry said it doesn't plan to close schools in Addis."
    # A plural of an ordinary word is left alone: only names the article writes get an apostrophe.
    assert recase(["the", "schools", "reopened"], casing) == "The schools reopened."


def test_recase_reads_no_possessive_into_an_english_word_whose_stem_is_a_name():
    # The article names "New York" and "the Kings": "news" and "kings" are still words, not "New's".
    casing = {"new": "New", "york": "York", "king": "King", "ethiopia": "Ethiopia"}
    assert recase("news from york says kings and ethiopias teams".split(), casing) \
        == "News from York says kings and Ethiopia's teams."


def test_whole_pipeline_proposes_cited_suggestions():
    corpus = LocalCorpus()
    corpus.add([NEWS, REFERENCE, OTHER])
    result = build_offline_pipeline(max_suggestions=5, max_iterations=40, max_empty=10,
                                    today=dt.date(2024, 5, 1)).propose(ARTICLE, corpus)
    assert 1 <= len(result.suggestions) <= 5
    assert {s.update.document.id for s in result.suggestions} <= {"n1", "r1"}
    for s in result.suggestions:
        assert "{{cite news" in s.edit.new_paragraph and "access-date=2024-05-01" in s.edit.new_paragraph
        assert s.section_path in (("History",), ("Design",))
    assert any(d.action == "add" for d in result.decisions)


def test_recase_leaves_month_names_that_are_also_verbs():
    assert recase("officials may march in may".split(), {}) == "Officials may march in may."


def test_unglue_puts_back_the_spaces_a_scraper_dropped():
    assert unglue('Would he stay?Norwich City lost. Said "Yes."The end.') == \
        'Would he stay? Norwich City lost. Said "Yes." The end.'
    assert unglue("Crystal PalaceCrystal Palace block NorwichNorwich City") == \
        "Crystal Palace Crystal Palace block Norwich Norwich City"
    # Names written that way, abbreviations, times and the article's own words stay as they are.
    for text in ("McDonald, YouTube and DeSantis", "F.C. Porto at 10:30 in the U.S.", "a PlayStation game"):
        assert unglue(text, {"playstation"}) == text
    assert unglue("a PlayStation game") == "a Play Station game"


def test_extractor_proposes_run_together_page_text_with_its_spaces_back():
    glued = Document("g1", "https://news.example/glued", "Bridge", (
        "Bridge newsTraffic updates\nThe Harbour Bridge carried 12,000 vehicles in its first week, mayor "
        "Alice Brown said.The council had forecast half that number when construction began in 2020.\n"))
    updates = OfflineExtractor().extract(ARTICLE, OfflineCriteria().induce(ARTICLE), glued)
    assert updates and "said. The council" in updates[0].text
    assert "said.The" not in " ".join(u.text for u in updates)


class _ToDesign:
    """A settler that moves every update to the Design section (the last look's contract only)."""

    def settle(self, article, update):
        return replace(update, section_path=("Design",))


class _HoldDesign(Gate):
    """A gate that holds whatever is suggested for the Design section."""

    name = "design-hold"

    def check(self, article, suggestion):
        return [self.finding("hold", "not in Design")] if suggestion.section_path == ("Design",) else []


def _settled_run(gates):
    corpus = LocalCorpus()
    corpus.add([NEWS])
    pipeline = build_offline_pipeline(max_suggestions=5, max_iterations=40, max_empty=10, today=dt.date(2024, 5, 1))
    pipeline.settlers = (_ToDesign(),)
    return propose_checked(pipeline, gates, ARTICLE, corpus, limit=1).suggestions


def test_the_posted_line_gets_the_settlers_last_look_and_the_gates_check_it_again():
    settled = _settled_run(GateChain([NoveltyGate()]))
    assert settled and settled[0].section_path == ("Design",) and not settled[0].blocked
    assert "steel arch" in settled[0].edit.old_paragraph  # the edit is rebuilt on Design's paragraph
    kept = _settled_run(GateChain([_HoldDesign()]))  # the gates stop the new one: the line stays as it was
    assert kept and kept[0].section_path == ("History",) and not kept[0].blocked
