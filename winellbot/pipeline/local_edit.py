"""Stage 3 with the fine-tuned local editor (``[llm] editor_backend = "local"``).

The shipped adapter (or ``editor_model_dir``) runs in-process on its base model, merged, with
greedy decoding and a bounded reply. It answers a short edit, "After N: sentence"
(:mod:`winellbot.editor.shortedit`); code inserts the sentence after sentence N of the paragraph,
puts the citation right after it, and never touches the paragraph's other words. References and
templates are masked first, so the model cannot move or drop them. The sentence goes through the
same check as the agent editor's (:func:`winellbot.pipeline.agent_edit.minimal_change_problem`: no
markup, the update's numbers kept, the update actually in it); a reply that fails it, or has no
edit, falls back to appending the update, with the reason on the edit. Every gate then runs as
for any other edit.
"""
from __future__ import annotations

import random

from winellbot.editor.examples import EditTask, Source
from winellbot.editor.shortedit import apply_edit, ask_short_edit, parse_answer
from winellbot.editor.windows import passage
from winellbot.errors import ModelError
from winellbot.models import Citation, Edit, Paragraph, Update
from winellbot.pipeline.agent_common import Journal
from winellbot.pipeline.agent_edit import appended, cite_news, mask, minimal_change_problem, sentence, unmask
from winellbot.interface import Editor


class LocalEditor(Editor):
    """(paragraph, update, citation) -> the paragraph with one model-written, cited sentence inserted."""

    def __init__(self, client, *, title: str = "", journal: Journal | None = None, max_tokens: int = 96,
                 copied: bool = False, ranker=None) -> None:
        self.client = client
        self.title = title
        self.journal = journal or Journal()
        self.max_tokens = max_tokens
        self.copied = copied  # decoding held to the source's words (llm.copying)
        self.ranker = ranker  # and to one of its best runs (editor.spans)

    def edit(self, paragraph: Paragraph | None, update: Update, citation: Citation) -> Edit:
        """The edited paragraph; never raises on a model failure."""
        ref = cite_news(citation)
        if paragraph is None:
            return Edit("", sentence(update.text) + ref, update.text, citation, "a new paragraph for the section")
        masked, stash = mask(paragraph.wikitext)
        task = EditTask("", self.title, update.section_path, masked, self._source(update))
        try:
            reply = ask_short_edit(self.client, task, max_tokens=self.max_tokens, copied=self.copied,
                                   ranker=self.ranker)
        except ModelError as exc:
            self.journal.note("editor", f"appended the update instead: {exc}")
            return appended(paragraph, update, citation, f"local editor failed ({exc}); appended the update")
        short = parse_answer(reply)
        if short is None:
            return appended(paragraph, update, citation, "no edit in the local editor's reply; appended the update")
        candidate, _ = apply_edit(masked, short)
        problem = minimal_change_problem(masked, candidate, update.text, max_deleted_share=0.0)
        if problem:
            return appended(paragraph, update, citation, f"local edit rejected ({problem}); appended the update")
        new_masked, _ = apply_edit(masked, short, suffix=ref)
        return Edit(paragraph.wikitext, unmask(new_masked, stash), short.sentence, citation,
                    f"sentence written by the local editor, inserted after sentence {short.after}")

    @staticmethod
    def _source(update: Update) -> Source:
        """The passage of the update's page around its fact, as the editor was trained to read it."""
        doc = update.document
        found = passage(update.text + " " + update.quote, doc.text, random.Random(update.key)) if doc.text else None
        return Source(doc.url, doc.title, found.text if found else update.quote or update.text)
