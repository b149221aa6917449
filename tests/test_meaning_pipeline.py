"""The offline pipeline with the bundled models: meaning where words mislead or miss."""
import pytest

from winellbot.bench.tasks import parse_simple_article
from winellbot.errors import ConfigError
from winellbot.meaning import Embedder
from winellbot.models import Document, Update
from winellbot.pipeline.offline.aggregator import OfflineAggregator
from winellbot.pipeline.offline.meaning import Restatements, SecondChoice
from winellbot.pipeline.placement import (
    HAND_SET,
    TERMS,
    SectionPlacer,
    fitted_model,
    fitted_weights,
    placers,
)
from winellbot.wiki.render import in_words

pytestmark = pytest.mark.slow  # loads all-MiniLM-L6-v2 (and spaCy) once per session


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture(scope="module")
def placement_embedder() -> Embedder:
    return Embedder(model=fitted_model())  # the model the placement weights were fitted with


FILM = """Silent Harbour is a 2021 Italian drama film.

== Production ==
Filming took place in Rome and Naples in 2020. The director cast unknown actors in the leading roles, and the score was recorded in Milan.

== Reception ==
Critics praised the photography and the performances. The film holds an approval rating of 85% on Rotten Tomatoes.
"""


def test_meaning_places_a_sentence_whose_words_point_elsewhere(placement_embedder):
    embedder = placement_embedder
    article = parse_simple_article("Silent Harbour", FILM)
    sentence = "Writing from Rome, one reviewer called it a masterpiece."
    # Its only shared word is a filming location: words (and word vectors) say Production.
    assert SectionPlacer(article, weights={**HAND_SET, "vectors": 0.0}).place(sentence).section_path == ("Production",)
    assert SectionPlacer(article).place(sentence).section_path == ("Production",)
    placed = SectionPlacer(article, weights=fitted_weights()["alone"], embedder=embedder).place(sentence)
    assert placed.section_path == ("Reception",)
    assert "sentence meaning" in placed.reason


def test_the_nearest_term_is_the_closest_of_a_sections_sentences(placement_embedder):
    article = parse_simple_article("Silent Harbour", FILM)
    placer = SectionPlacer(article, weights={t: 1.0 for t in TERMS}, embedder=placement_embedder)
    sentence = "The soundtrack was recorded by an orchestra in Milan."
    terms = dict(placer.evidence(sentence))[("Production",)]
    production = placement_embedder.embed([
        "Filming took place in Rome and Naples in 2020.",
        "The director cast unknown actors in the leading roles, and the score was recorded in Milan."])
    closest = placement_embedder.embed([sentence])[0] @ production.T
    assert terms["nearest"] == pytest.approx(float(closest.max()), abs=1e-4)
    assert terms["nearest"] > terms["meaning"]  # one sentence is about the score; the section's mean is not


def test_the_placement_weights_are_used_only_with_the_model_they_were_fitted_with(embedder):
    assert embedder.model_name != fitted_model()
    with pytest.raises(ConfigError, match="fitted with"):
        placers(embedder)


def test_a_passage_in_its_source_keeps_the_weights_fitted_for_passages(placement_embedder):
    embedder = placement_embedder
    article = parse_simple_article("Silent Harbour", FILM)
    fitted = fitted_weights()
    placer = SectionPlacer(article, weights=fitted["alone"], in_source=fitted["in_source"], embedder=embedder)
    source = ("Filming took place in Rome and Naples in 2020, the producers said. "
              "Writing from Rome, one reviewer called it a masterpiece. The crew returned to Naples.")
    in_source = placer.place("Writing from Rome, one reviewer called it a masterpiece.", document_text=source)
    alone = placer.place("Writing from Rome, one reviewer called it a masterpiece.")
    assert alone.section_path == ("Reception",)
    assert in_source.section_path == ("Production",)  # the restated filming sentence around it decides
    assert "around it in the source" in in_source.reason and "sentence meaning" not in in_source.reason


BRIDGE = """Elmford is a town on the Elm River.

== Transport ==
The mayor opened the new bridge over the Elm River on Monday. Buses cross it every ten minutes.
"""
DOC = Document("d1", "https://news.example.org/elm", "Elm bridge", "")


def update(text: str) -> Update:
    return Update(text=text, section_path=("Transport",), quote=text, document=DOC, score=1.0)


def test_a_paraphrase_of_an_article_sentence_is_not_new(embedder):
    article = parse_simple_article("Elmford", BRIDGE)
    paraphrase = update("On Monday the town's mayor officially opened its newly built bridge across the Elm River.")
    # Only 55% of its content words are in the article's sentence: words alone call it new.
    assert OfflineAggregator().aggregate(article, paraphrase, ()).action == "add"
    decision = OfflineAggregator(restatements=Restatements(embedder)).aggregate(article, paraphrase, ())
    assert decision.action == "ignore"
    assert "in other words" in decision.reason and "The mayor opened the new bridge" in decision.reason


def test_the_same_words_with_another_date_are_new(embedder):
    article = parse_simple_article("Elmford", BRIDGE)
    other_day = update("On Friday the town's mayor officially opened its newly built bridge across the Elm River.")
    decision = OfflineAggregator(restatements=Restatements(embedder)).aggregate(article, other_day, ())
    assert decision.action == "add"


RETOLD = ("Elmford is a small market town that lies on the banks of the Elm River. "
          "On Monday the town's mayor officially opened its newly built bridge across the Elm River. "
          "Buses go across it every ten minutes, according to the town.")


def test_a_passage_that_retells_the_article_sentence_by_sentence_is_not_new(embedder):
    article = parse_simple_article("Elmford", BRIDGE)
    retold = update(RETOLD)
    assert len(retold.text.split()) > 40  # too long to compare as one statement
    decision = OfflineAggregator(restatements=Restatements(embedder)).aggregate(article, retold, ())
    assert decision.action == "ignore", decision.reason
    assert "each of its 3 sentences" in decision.reason


def test_one_new_sentence_keeps_a_retelling_passage(embedder):
    article = parse_simple_article("Elmford", BRIDGE)
    news = update(RETOLD + " The bridge cost 12 million pounds and was paid for by the shire council.")
    decision = OfflineAggregator(restatements=Restatements(embedder)).aggregate(article, news, ())
    assert decision.action == "add", decision.reason


HARBOUR = """Saltmere is a fictional harbour town.

== History ==
The railway reached the town in 1871, and the boatyards grew rapidly in the decades that followed. It had a population of 18,400 at the 2020 census.
"""


def harbour_update(text: str) -> Update:
    return Update(text=text, section_path=("History",), quote=text, document=DOC, score=1.0)


def test_a_vague_date_in_other_words_does_not_make_a_paraphrase_new(embedder):
    # spaCy reads "the following decades" as a date; only a date's figures and calendar names count
    # among the names, dates and numbers that must match.
    article = parse_simple_article("Saltmere", HARBOUR)
    retold = harbour_update("The railway arrived in 1871 and the boatyards grew quickly in the following decades.")
    decision = OfflineAggregator(restatements=Restatements(embedder)).aggregate(article, retold, ())
    assert decision.action == "ignore", decision.reason
    assert "The railway reached the town in 1871" in decision.reason


def test_shared_figures_vouch_for_a_looser_paraphrase_and_other_figures_stay_new(embedder):
    article = parse_simple_article("Saltmere", HARBOUR)
    restatements = Restatements(embedder)
    census = "The 2020 census counted 18,400 residents."
    closeness = float(embedder.embed([census])[0] @ embedder.embed(["It had a population of 18,400 at the 2020 census."])[0])
    assert restatements.named_threshold <= closeness < restatements.threshold  # meaning alone would call it new
    decision = OfflineAggregator(restatements=restatements).aggregate(article, harbour_update(census), ())
    assert decision.action == "ignore", decision.reason
    other = harbour_update("The 2020 census counted 19,200 residents.")
    assert OfflineAggregator(restatements=restatements).aggregate(article, other, ()).action == "add"


FESTIVAL = """Lanternfall is a festival of light, music and boats held in the old harbour of Quillhaven. It was first held in 1987.

== Programme ==
The festival opens with the launch of several hundred paper lanterns from the harbour wall.

== Attendance ==
About 35,000 people attended in 2024.
"""


def festival_update(text: str, section: str = "Programme") -> Update:
    return Update(text=text, section_path=(section,), quote=text, document=DOC, score=1.0)


def test_a_statement_joining_two_sentences_of_a_section_is_not_new(embedder):
    # The year is in the lead's next sentence, not in the sentence that says the rest.
    article = parse_simple_article("Lanternfall", FESTIVAL)
    joined = festival_update("Lanternfall, the festival of light, music and boats in Quillhaven's old harbour, "
                             "began in 1987.")
    decision = OfflineAggregator(restatements=Restatements(embedder)).aggregate(article, joined, ())
    assert decision.action == "ignore", decision.reason
    assert "article section already says this" in decision.reason


def test_a_figure_from_another_section_keeps_a_statement_new(embedder):
    # 2024 is in the article, but not in the section of the sentence the statement is close to.
    article = parse_simple_article("Lanternfall", FESTIVAL)
    elsewhere = festival_update("Lanternfall, the festival of light, music and boats in Quillhaven's old harbour, "
                                "began in 2024.")
    assert OfflineAggregator(restatements=Restatements(embedder)).aggregate(article, elsewhere, ()).action == "add"


def test_a_plural_number_word_matches_the_article_and_another_number_stays_new(embedder):
    article = parse_simple_article("Lanternfall", FESTIVAL)
    restatements = Restatements(embedder)
    same = "The festival opens with the launch of hundreds of paper lanterns from the harbour wall."
    assert restatements.find(article, same) is not None  # "hundreds" is "several hundred"
    more = "The festival opens with the launch of thousands of paper lanterns from the harbour wall."
    assert restatements.find(article, more) is None


def test_a_posted_line_moves_to_its_sources_second_choice_where_that_barely_trails(placement_embedder):
    article = parse_simple_article("Silent Harbour", FILM)
    line = "At a screening in Rome, one critic called the film a masterpiece."
    settled = {}
    for name, source in (("barely", f"Tickets went on sale in May. {line} More screenings follow in June."),
                         ("clearly", f"Filming took place in Rome and Naples in 2020, the producers said. {line}")):
        doc = Document("d1", "https://news.example.org/film", "Film", source)
        u = Update(text=line, section_path=("Production",), quote=line, document=doc, score=1.0)
        for unsure in (0.0, 0.2):
            settled[name, unsure] = SecondChoice(placement_embedder, unsure=unsure).settle(article, u)
    # In its source the line's place name ties it to Production, by a little (0.12 ahead of
    # Reception) or, with a filming sentence of Production restated around it, by a lot.
    assert settled["barely", 0.0].section_path == ("Production",)
    assert settled["barely", 0.2].section_path == ("Reception",)
    assert "barely preferred Production" in settled["barely", 0.2].reason
    # What a reviewer reads names the section the line was moved to.
    assert "\u201cReception\u201d" in in_words(settled["barely", 0.2].reason)
    assert settled["clearly", 0.2].section_path == ("Production",)
    # Where the source barely prefers Production (by 0.18) but the line's own words side with it, the line stays.
    sequel = "Filming of a sequel began in Naples."
    doc = Document("d2", "https://news.example.org/film2", "Film",
                   f"Critics praised the first film. {sequel} More screenings follow.")
    u = Update(text=sequel, section_path=("Production",), quote=sequel, document=doc, score=1.0)
    assert SecondChoice(placement_embedder, unsure=0.2).settle(article, u) is u
