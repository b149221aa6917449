"""SectionPlacer: sentences go to the section whose words (and heading) they share.

These tests are about shared words, so word vectors are switched off (``WORDS``) whether or
not they are installed; tests/test_vectors.py and tests/test_meaning_pipeline.py cover meaning."""
from __future__ import annotations

from winellbot.bench.tasks import parse_simple_article
from winellbot.pipeline.placement import HAND_SET, Placement, SectionPlacer, context_of, placer_for

WORDS = {**HAND_SET, "vectors": 0.0}

WIKITEXT = """The Example Festival is a music festival held in Riverton.

== History ==
The festival was founded in 1998 by the Riverton arts council. Attendance grew every year until 2010.

== Lineup ==
=== 2022 ===
The 2022 edition featured Aurora Vale and the Night Owls. Tickets sold out in two hours.

=== 2023 ===
The 2023 edition was headlined by Marco Brandt. A storm cut the second day short.

== Reception ==
Critics praised the festival's small stages. The Riverton Gazette called it the best event of the summer.
"""


def placer() -> SectionPlacer:
    return SectionPlacer(parse_simple_article("Example Festival", WIKITEXT), weights=WORDS)


def test_sentence_goes_to_section_sharing_its_words():
    p = placer().place("Critics from the Gazette praised the new stages again.")
    assert isinstance(p, Placement)
    assert p.section_path == ("Reception",)
    assert p.score > 0
    assert "Reception" in p.reason


def test_deepest_section_is_chosen_for_subsection_facts():
    p = placer().place("Marco Brandt returned after the storm of the 2023 edition.")
    assert p.section_path == ("Lineup", "2023")


FILM = """Lead.

== Release ==
The film premiered in Rome in May 2021. It opened across Italy in June 2021 with a gala.

== Casting ==
Jane Doe joined the production first. Tom Roe signed on later.
"""


def test_word_of_the_heading_outweighs_a_few_shared_words():
    sentence = "Casting calls were held in Rome in May 2021."
    article = parse_simple_article("Film", FILM)
    without = SectionPlacer(article, weights={**WORDS, "heading": 0.0}).place(sentence)
    assert without.section_path == ("Release",)
    assert "heading" not in without.reason
    with_bonus = SectionPlacer(article, weights={**WORDS, "heading": 0.2}).place(sentence)
    assert with_bonus.section_path == ("Casting",)
    assert "1 word(s) of its heading" in with_bonus.reason


def test_context_helps_a_short_candidate():
    short = "It was cancelled."
    assert placer().place(short).section_path == ()
    p = placer().place(short, context="Marco Brandt headlined the 2023 edition before the storm.")
    assert p.section_path == ("Lineup", "2023")


def test_nothing_shared_goes_to_the_lead():
    p = placer().place("Quantum chromodynamics explains gluons.")
    assert p.section_path == ()
    assert p.score == 0.0
    assert "lead" in p.reason


def test_lead_and_empty_sections_are_never_chosen():
    article = parse_simple_article("X", "Lead about Riverton stages.\n\n== Empty ==\n\n== Stages ==\nRiverton has stages.\n")
    p = SectionPlacer(article, weights=WORDS).place("Riverton stages were rebuilt.")
    assert p.section_path == ("Stages",)


def test_placer_for_reuses_one_placer_per_article():
    article = parse_simple_article("Example Festival", WIKITEXT)
    assert placer_for(article) is placer_for(article)
    other = parse_simple_article("Example Festival", WIKITEXT + "\n== More ==\nMore text here.\n")
    assert placer_for(other) is not placer_for(article)


SOURCE = ("Officials said the venue will move to a new site next year. "
          "Marco Brandt was the headliner when a storm cut the second day short. "
          "The council confirmed the change on Monday.")


def test_source_words_around_a_passage_point_to_its_section():
    passage = "The council confirmed the change on Monday."
    article = parse_simple_article("Example Festival", WIKITEXT)
    alone = SectionPlacer(article, weights=WORDS).place(passage)
    assert alone.section_path != ("Lineup", "2023")
    placed = SectionPlacer(article, weights=WORDS).place(passage, document_text=SOURCE)
    assert placed.section_path == ("Lineup", "2023")
    assert "around it in the source" in placed.reason
    # Weight 0: the document is ignored.
    assert SectionPlacer(article, weights={**WORDS, "around": 0.0}).place(passage, document_text=SOURCE) == alone


def test_a_passage_not_found_in_the_document_is_placed_on_its_own_words():
    article = parse_simple_article("Example Festival", WIKITEXT)
    passage = "Critics from the Gazette praised the new stages again."
    p = SectionPlacer(article, weights=WORDS).place(passage, document_text=SOURCE)
    assert p.section_path == ("Reception",)
    # Its surroundings are unknown: no "around it" evidence, the same placement as the passage alone.
    assert p == SectionPlacer(article, weights=WORDS).place(passage)


def test_a_document_that_is_only_the_passage_adds_nothing_around_it():
    # "Around it" needs surroundings: a one-sentence source (a press line, the backtest's
    # oracle documents) would otherwise count the passage's own overlap with a section twice.
    article = parse_simple_article("Example Festival", WIKITEXT)
    passage = "Marco Brandt was the headliner when a storm cut the festival short in Riverton."
    alone = SectionPlacer(article, weights=WORDS).place(passage)
    assert SectionPlacer(article, weights=WORDS).place(passage, document_text=passage) == alone
    assert "around it" not in alone.reason


def test_context_is_found_at_word_boundaries_only():
    document = "Carban apple pie was served. Then an apple pie was served to the guests at noon."
    assert context_of("an apple pie was served", document, 2) == "served. Then an apple pie was served to the"
    assert context_of("apple pie was served. Then an apple", document, 0) == "apple pie was served. Then an apple"
    assert context_of("ban apple pie", document, 3) == ""  # only inside a word: not this passage
    # a passage of one or two words is found where it first stands (the index of three-word runs it
    # replaced found such a passage only at the document's very end)
    assert context_of("Then", document, 1) == "served. Then an"


def test_context_is_read_around_the_copy_that_matches_the_whole_passage():
    # A headline repeats its story's opening words: the passage was read from the story, so its
    # surroundings are the story's, not the headline's.
    headline = "The council of Quillhaven voted on Monday to close the harbour"
    story = headline + " bridge for repairs until the spring."
    document = f"{headline}. Menu Sport Weather. {story} The ferry will run instead."
    passage = story
    assert context_of(passage, document, 3) == f"Menu Sport Weather. {story} The ferry will"
    # a passage that matches nowhere whole is still found at its opening's first copy
    assert context_of(headline + " harbour for good", document, 0).startswith("The council of Quillhaven")


def test_the_margin_is_the_winners_lead_over_the_runner_up_and_among_limits_the_choice():
    placer = SectionPlacer(parse_simple_article("Example Festival", WIKITEXT), weights=WORDS)
    sentence = "Marco Brandt returned after the storm of that edition."  # no year: see the dated sections below
    scores = {path: sum(WORDS[k] * terms[k] for k in terms) for path, terms in placer.evidence(sentence)}
    placed = placer.place(sentence)
    assert (placed.section_path, placed.runner_up) == (("Lineup", "2023"), ("Lineup", "2022"))
    assert placed.margin == round(scores[("Lineup", "2023")] - scores[("Lineup", "2022")], 4) > 0
    among = placer.place(sentence, among=(("Lineup", "2022"), ("History",)))
    assert among.section_path == ("Lineup", "2022") and among.runner_up == ("History",)


SEASONS = """Harbour Rovers F.C. is a football club.

== Seasons ==
=== 1974–75 Coast Cup ===
Harbour Rovers reached the Coast Cup final in May 1975 and lost to Dunmere on penalties.

=== 1998–99 ===
Harbour Rovers won the Coast Cup final in May 1999 against Dunmere.

== Players ==
Notable players of the club include Ewan Rook, who joined from Dunmere.
"""


def test_heading_spans_read_the_years_a_section_covers():
    from winellbot.pipeline.placement import heading_span
    assert heading_span("1974–75 Texaco Cup") == (1974, 1975)
    assert heading_span("Invasion of Salvador (1624-1625)") == (1624, 1625)
    assert heading_span("Capture (27 December 2022 – 16 January 2023)") == (2022, 2023)
    assert heading_span("Independent circuit (2022–present)")[0] == 2022
    assert heading_span("Before 2000") == (0, 1999)
    assert heading_span("1960s") == (1960, 1969)
    assert heading_span("History") is None


def test_a_section_dated_apart_from_the_years_a_line_names_does_not_take_it():
    p = SectionPlacer(parse_simple_article("Harbour Rovers F.C.", SEASONS), weights=WORDS)
    line = "Harbour Rovers lost the Coast Cup final to Dunmere in May 2019."
    placed = p.place(line)
    assert placed.section_path == ("Players",)  # both seasons name other years
    assert "dated apart from its years" in placed.reason
    # A year inside a section's span, or no year at all, leaves the dated sections in play.
    assert p.place("Harbour Rovers lost the Coast Cup final to Dunmere in 1975.").section_path \
        == ("Seasons", "1974–75 Coast Cup")
    assert p.place("Harbour Rovers lost the Coast Cup final to Dunmere on penalties.").section_path[0] == "Seasons"


def test_years_that_fit_no_section_leave_every_section_in_play():
    only_seasons = SEASONS.split("== Players ==")[0]
    p = SectionPlacer(parse_simple_article("Harbour Rovers F.C.", only_seasons), weights=WORDS)
    placed = p.place("Harbour Rovers lost the Coast Cup final to Dunmere in May 2019.")
    assert placed.section_path[0] == "Seasons"
    assert "dated apart" not in placed.reason
