"""A reviewer's revision, checked again when the job is about to post it.

The page checks the wording alone when it is submitted (:mod:`winellbot.review.checks`); the job has the
article and the source, so before a revision is written it meets what the bot's own line met: those
rules again, then the real gates of the configured chain that read the added text against the source
and the article: copying (the reviewer's words are measured as prose, so only what stands in quotation
marks may be the source's words), words to watch, duplicates (the article already says it, or another
suggestion of the page does), lexical source support, and the model's support judge where the chain has
one. :class:`RevisionCheck` answers the first finding that stops the revision, or None: a stopped
revision goes back to the queue with the finding and is never posted.

The gates run on :func:`revised`, a copy of the suggestion whose fact and added text are the reviewer's;
its ``id`` (derived from the fact) is not the suggestion's, so the caller keeps the original's.
"""
from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace

from winellbot.gates.base import GateChain
from winellbot.gates.duplicates import DuplicatesGate
from winellbot.models import Article, GateFinding, Suggestion
from winellbot.review.checks import MAX_CHARS, MAX_SENTENCES, MAX_WORDS, check_note, check_revision

# The gates of the chain that read the added text against its source or the article.
RECHECKED = ("support", "judge", "copying", "style", "duplicates")


def revised(suggestion: Suggestion, text: str, section_path: Sequence[str] | str | None = None) -> Suggestion:
    """``suggestion`` with the reviewer's ``text`` as its fact and added text (and ``section_path``, when
    given: a path, or the state's "A > B"); its source, quote and citation stay the bot's. Only a text
    other than the bot's counts as the reviewer's own prose (``Edit.quoted`` false); the bot's line kept
    word for word keeps its own."""
    text = " ".join(text.split())
    if isinstance(section_path, str):
        section_path = tuple(p.strip() for p in section_path.split(" > "))
    path = tuple(section_path) if section_path else suggestion.section_path
    edit = suggestion.edit
    own = text != " ".join(suggestion.update.text.split())
    old_text = edit.added_text
    paragraph = edit.new_paragraph.replace(old_text, text, 1) if old_text and old_text in edit.new_paragraph \
        else f"{edit.old_paragraph.rstrip()} {text}".strip()
    return replace(
        suggestion, section_path=path, findings=(),
        edit=replace(edit, added_text=text, new_paragraph=paragraph, quoted=edit.quoted and not own),
        update=replace(suggestion.update, text=text, section_path=path))


class _OtherSuggestions:
    """The state as the duplicate gate reads it, without the revised suggestion itself."""

    def __init__(self, state, suggestion_id: str) -> None:
        self.state, self.suggestion_id = state, suggestion_id

    def suggestions(self, **where) -> list[dict]:
        return [r for r in self.state.suggestions(**where) if r.get("id") != self.suggestion_id]


class RevisionCheck:
    """Checks a reviewer's revision as the bot's own line was checked (see the module's docstring).

    ``chain``: the configured gate chain (:func:`winellbot.factory.build_gates`); its gates named in
    :data:`RECHECKED` are run, the same objects with the same settings. ``language``: the wiki's.
    """

    def __init__(self, chain: GateChain, *, language: str = "en", max_words: int = MAX_WORDS,
                 max_chars: int = MAX_CHARS, max_sentences: int = MAX_SENTENCES) -> None:
        self.gates = tuple(g for g in chain.gates if g.name in RECHECKED)
        self.language = language
        self.limits = {"max_words": max_words, "max_chars": max_chars, "max_sentences": max_sentences}

    def check(self, article: Article, suggestion: Suggestion, text: str, *,
              section_path: Sequence[str] | str | None = None, note: str = "") -> GateFinding | None:
        """The first finding that stops posting ``text`` (with the reviewer's ``note``) as ``suggestion``'s
        revision, or None."""
        problems = check_revision(text, language=self.language, **self.limits) + \
            check_note(note, language=self.language)
        if problems:
            return GateFinding("revision", "block", " ".join(p.message for p in problems))
        checked = GateChain(self._for(suggestion)).check_one(article, revised(suggestion, text, section_path))
        return next((f for f in checked.findings if f.severity in ("hold", "block")), None)

    def _for(self, suggestion: Suggestion) -> list:
        """The gates, the duplicate gate's view of the state leaving out the suggestion under revision."""
        gates = []
        for gate in self.gates:
            if isinstance(gate, DuplicatesGate) and gate.state is not None:
                gate = copy.copy(gate)
                gate.state = _OtherSuggestions(gate.state, suggestion.id)
            gates.append(gate)
        return gates
