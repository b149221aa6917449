"""The offline editing stage: the passage appended to its paragraph with a ``{{cite news}}`` reference.
"""
from __future__ import annotations

from winellbot.models import (
    Citation,
    Edit,
    Paragraph,
    Update,
)
from winellbot.interface import (
    Editor,
)
from winellbot.pipeline.pagetext import safe_text
from winellbot.wiki.render import cite_news


class OfflineEditor(Editor):
    """Append the sentence to the paragraph with a cite news reference; the sentence is the added text."""

    def edit(self, paragraph: Paragraph | None, update: Update, citation: Citation) -> Edit:
        sentence = safe_text(update.text)
        ref = cite_news(citation)
        old = paragraph.wikitext if paragraph is not None else ""
        new = f"{old.rstrip()} {sentence}{ref}".strip()
        # quoted=True: the sentence keeps the source's wording, so the copying gate asks the
        # reviewer to paraphrase it instead of blocking it as copied prose.
        return Edit(old_paragraph=old, new_paragraph=new, added_text=sentence, citation=citation,
                    reason=f"appended the source's sentence: {update.reason}", quoted=True)
