"""Editorial gates: what an editor rejects on sight in a fact line, held with the reason.

Each gate reads the suggestion's fact (the update's text) with :func:`winellbot.sentences.read`
and holds it for one of the rubric's errors (``../shared/bench/verdicts.md`` in the project's
workspace; docs/posting.md, *One fact, or nothing*):

* ``clarity``: not a sentence an article could hold as it stands (a fragment, a question, a
  pronoun or "the stand" pointing back, a time relative to the page's date, words run together;
  and the line-alone rules of :mod:`winellbot.gates.standalone`: a pronoun before anyone is named,
  a time with no year that only the page's date fixes, a line cut at an abbreviation);
* ``furniture``: page text (bylines, share buttons, menus, time stamps, tables; a dateline glued
  to the sentence, a caption or headline run into it);
* ``tone``: someone's own voice (the first or second person, mostly a quotation);
* ``primary``: text a source quotes or performs (scripture, play-by-play, a broadcast's promotion);
* ``novelty``: nothing the article lacks, one article sentence already says most of it, or it is dated
  the day of a month that the lead gives (the article's own event, retold).

With ``reword`` (the reviewed mode, where a reviewer can reword a line before approving it), what only
wording mends does not hold: the clarity gate's findings and the tone gate's "mostly a quotation" become
a ``flag`` of the gate :data:`~winellbot.gates.base.REWORD`, and the line goes to the review queue marked
for rewording.
"""
from __future__ import annotations

from winellbot.gates import standalone
from winellbot.gates.base import REWORD, Gate
from winellbot.models import Article, GateFinding, Suggestion
from winellbot.sentences import STATED, read


class _ReadingGate(Gate):
    """Holds a suggestion whose fact earns the rubric's ``error``; with ``reword``, flags it for rewording
    instead where the reason is one of wording (:meth:`wording`)."""

    error = ""

    def __init__(self, *, reword: bool = False) -> None:
        self.reword = reword

    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        reading = read(suggestion.update.text, article)
        why = reading.problems.get(self.error) or standalone.problems(suggestion.update.text).get(self.error)
        if not why:
            return []
        if self.reword and self.wording(why):
            return [GateFinding(REWORD, "flag", f"to reword ({self.name}): {why}")]
        return [self.finding("hold", why)]

    def wording(self, why: str) -> bool:
        """Whether a reviewer's rewording mends what ``why`` says (none of this gate's reasons here)."""
        return False


class ClarityGate(_ReadingGate):
    name, error = "clarity", "unclear"

    def wording(self, why: str) -> bool:
        return True  # too long, a pronoun or a time pointing back, not a sentence: all said otherwise


class FurnitureGate(_ReadingGate):
    name, error = "furniture", "furniture"


class ToneGate(_ReadingGate):
    name, error = "tone", "subjective"

    def wording(self, why: str) -> bool:
        return why.startswith("mostly a quotation")  # the first or second person is someone's voice: held


class PrimaryGate(_ReadingGate):
    name, error = "primary", "primary"


class NoveltyGate(Gate):
    """Holds a fact that brings no name, figure or word the article lacks, that one article sentence
    already states for the most part (:data:`STATED` of its words), or that names a day of a month
    the article's lead names: a page that dates a line by the day of the article's own event is
    retelling that event."""

    name = "novelty"

    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        reading = read(suggestion.update.text, article, parse=False)
        if reading.news <= 0:
            return [self.finding("hold", "says nothing the article lacks: every name, figure and word is in it")]
        if reading.stated >= STATED:
            return [self.finding("hold", f"an article sentence already holds {reading.stated:.0%} of its words")]
        if reading.lead_day:
            return [self.finding("hold", "dated the day the article's lead gives: a retelling of the article's "
                                         "own event")]
        return []
