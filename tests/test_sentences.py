"""Reading one source sentence as a fact line: what an editor rejects on sight is named, with the
rubric's error, and what the sentence brings that the article lacks is counted."""
import pytest

from winellbot.article import parse_article
from winellbot.sentences import read

ARTICLE = parse_article("Fellside Rovers", """'''Fellside Rovers''' is a football club in Fellside.

== History ==
The club was founded in 1899. It has played at Quarry Lane since 1921.

== Honours ==
The club won the County Cup in 1954.
""")


def problems(text: str) -> dict:
    return read(text, ARTICLE).problems


@pytest.mark.parametrize("text, error, why", [
    ("After a clash eliminated the early leaders at the cup final in May.", "unclear", "subordinate clause"),
    ("Said those transactions were never completed by the club in 2025.", "unclear", "verb 'Said'"),
    ("The board signed a new sponsor for the stand in the summer of.", "unclear", "cut short"),
    ("He scored twice in the final against Lowbridge Town in 2026.", "unclear", "points back"),
    ("The stand was rebuilt at a cost of 2 million pounds in 2025.", "unclear", "'the stand'"),
    ("The two-tier stand adds 3,280 seats and raises the ground's capacity to 12,480.", "unclear",
     "'the two-tier'"),
    ("Fellside Rovers beat Lowbridge Town 2-1 in the final last week.", "unclear", "relative to the page's date"),
    ("Will the club move to a new ground before the 2027 season?", "unclear", "a question"),
    ("131 supporters who travelled to the final at Lowbridge, which the club lost 2-1 in 2026.", "unclear",
     "not a sentence"),
    ("In all, 425 supporters travelled to the final at Lowbridge Town in May 2026.", "unclear", "'In all'"),
    ("Some examples are the County Cup of 1954 and the Shield won at Quarry Lane in 1961.", "unclear",
     "'Some examples'"),
    ("Fellside Rovers won the County Cup octoberthe final was held at Quarry Lane.", "unclear", "run together"),
    ("Fellside Rovers won the County Cup after extra time in the final at the flooded groundhowever.", "unclear",
     "run together"),
    ("On 10 May 2026, follows Dale Hart well into his tenure as the manager of the club at Quarry Lane.", "unclear",
     "comes before its subject"),
    ("Record crowd of 5,800 at Quarry Lane in May 2026, was the largest since the ground opened.", "unclear",
     "lone comma"),
    ("Supporters of Fellside Rovers are gathering at Quarry Lane for the County Cup final in May 2026.",
     "unclear", "as it happens"),
    ("Dale Hart to leave Fellside Rovers for Lowbridge Town at the end of the 2026 season.",
     "unclear", "headline"),
    ("Imagine a ground with the noise of 5,800 supporters of Fellside Rovers in May 2026.", "unclear", "bare verb"),
    ("Fellside Rovers won the cup, share this article on Facebook and Twitter today.", "furniture", "page text"),
    ("Home News Fixtures Results Tables Players Tickets Shop Club History Contact.", "furniture", "capitalised"),
    ("Trending now 422k views Fellside Rovers signed Dale Hart from Lowbridge Town in May 2026.", "furniture",
     "page text"),
    ("Read also Fellside Rovers: a history of Quarry Lane since the ground opened in 1921.", "furniture", "page text"),
    ("We were delighted when Fellside Rovers won the County Cup in 2026.", "subjective", "first person"),
    ("\u201cThis is the greatest day in the history of our wonderful club and town,\u201d the coach said.",
     "subjective", "quotation"),
    ("Tune in to watch Fellside Rovers play Lowbridge Town live on Sunday 12 May 2026.", "primary", "broadcast"),
    ("Visitors planning a trip to Quarry Lane should note the new kick-off time of 3 pm in 2026.", "primary",
     "broadcast or a sale"),
    ("Fellside Rovers took the lead in the 34th minute when Dale Hart shot into the corner.", "primary",
     "play-by-play"),
])
def test_what_an_editor_rejects_is_named_with_the_rubrics_error(text, error, why):
    found = problems(text)
    assert error in found and why in found[error], found


@pytest.mark.parametrize("text", [
    "Fellside Rovers won the County Cup on 10 May 2026, beating Lowbridge Town 2-1 in the final.",
    "On its first day the new stand at Quarry Lane held 5,800 spectators, officials said on Monday.",
    "Listedtown Rovers 2 appointed Maria Olsen as their manager on 1 March 2026.",
    "The breathtaking renovation of Quarry Lane was completed in April 2026.",
    "The 16-member squad of Fellside Rovers includes eight players from the club's academy.",
    "In the 2026 final it was shown onscreen that Fellside Rovers had scored twice.",  # a word, not "on screen"
    "The kit supplier of Fellside Rovers was changed from Michelin to Umbro in 2026.",  # a name ending in "in"
    "The 131 supporters who travelled to Lowbridge in May 2026 were given free tickets by the club.",
    "In all the years since 1921, Fellside Rovers have played every home game at Quarry Lane.",
    "Fellside Rovers, founded in 1899, won the County Cup again in May 2026.",  # the commas are a pair
    "Absent from the final was Dale Hart, who had been injured in the semi-final in April 2026.",  # "was"
    "Fellside Rovers won the County Cup in 2026, said Maria Olsen, the club's manager.",  # a verb of saying
    "The stand at Quarry Lane is being rebuilt after the fire of March 2026.",  # a passive, not as it happens
])
def test_a_sentence_that_stands_alone_has_no_problem(text):
    assert problems(text) == {}


def test_news_counts_what_the_article_lacks_and_stated_what_one_of_its_sentences_holds():
    new = read("Fellside Rovers won the County Cup again in 2026, beating Lowbridge Town.", ARTICLE)
    assert new.new_figures == 1 and new.new_names >= 2 and new.news > 0
    old = read("The club was founded in 1899 in the town of Fellside.", ARTICLE)
    assert old.new_figures == 0 and old.stated >= 0.6
    assert read("His goal won it.", ARTICLE, parse=False).back == 2  # "His", "it"


def test_without_the_parser_a_missing_verb_is_not_reported():
    text = "The County Cup final of 2026 between the two clubs at Quarry Lane in Fellside."
    assert "unclear" in problems(text)
    assert read(text, ARTICLE, parse=False).problems == {}
