"""Where the offline pipeline uses the bundled models (:mod:`winellbot.meaning`).

* :class:`MeaningPlacer`: the pipeline's chosen updates placed again, by meaning as well as words.
* :class:`SecondChoice`: a posted line's last look at its section, where its source barely decides.
* :class:`Restatements`: an update that an article sentence already states in other words is
  not new, unless it names, dates or counts something that sentence does not.
* :class:`SentenceCutter`: a passage cut short to fit a suggestion ends at a sentence's end
  (spaCy's sentences) or, failing that, at a clause's, never mid-clause.

They embed only what a cheaper step has short-listed (see :mod:`winellbot.meaning` on speed).
"""
from __future__ import annotations

from dataclasses import replace

from winellbot.gates.textnorm import singulars
from winellbot.meaning import english, named_facts
from winellbot.models import Article, Update
from winellbot.pipeline.offline.profile import profile
from winellbot.pipeline.pagetext import safe_text, unglue
from winellbot.pipeline.pipeline import per_article
from winellbot.pipeline.placement import context_of, placer_for, placers
from winellbot.text import content_tokens, split_sentences, words


class MeaningPlacer:
    """Places the pipeline's chosen updates again, by meaning as well as words.

    The extractor places every passage it proposes by words (cheap); only the few that the
    pipeline keeps in the end are placed again with the fitted weights of
    :func:`winellbot.pipeline.placement.fitted_weights`, and only a statement with no words
    around it in its source is embedded for that (the weights fitted for passages in their
    source give meaning no weight), so a task costs a few embeddings, not a hundred. The
    reason names the evidence of the final placement.
    """

    def __init__(self, embedder, *, context: int = 120) -> None:
        self.embedder = embedder
        self.placers = placers(embedder)
        self.context = context

    def refine(self, article: Article, updates: list[Update]) -> list[Update]:
        casing = profile(article).casing
        out = []
        for u in updates:
            text = unglue(u.document.text, casing)
            near = context_of(u.quote, text, self.context)
            words_only = placer_for(article).place(u.quote, near, document_text=text)
            placed = self.placers(article).place(u.quote, near, document_text=text)
            reason = u.reason.replace(words_only.reason, placed.reason) if words_only.reason in u.reason \
                else f"{u.reason}; placed again by meaning: {placed.reason}"
            out.append(replace(u, section_path=placed.section_path, reason=reason))
        return out


class SecondChoice:
    """A posted line's last look at its section: the source's second choice where that barely trails.

    A fact line is placed by its words in its source (:class:`MeaningPlacer`). Where those barely
    prefer one section (the winner less than ``unsure`` ahead of the runner-up), the line's own
    sentence, placed alone by its words and meaning between the two (the fitted ``alone`` weights;
    only those two sections' sentences are embedded), decides; the runner-up wins only if it does not
    hold the first (a broader section agrees with the narrower, less precisely). It runs only for
    what the gates and the score let through (:func:`winellbot.pipeline.pipeline.propose_checked`):
    over every candidate, embedding the sections with the placement's model costs too much. The
    reason's placement is the new one, so that the post names the section it was moved to. Figures:
    docs/results.md, "Placing a fact line".
    """

    def __init__(self, embedder, *, context: int = 120, unsure: float = 0.1) -> None:
        self.placers = placers(embedder)
        self.context = context
        self.unsure = unsure

    def settle(self, article: Article, update: Update) -> Update:
        """``update`` in the source's second choice of section, or as it was."""
        text = unglue(update.document.text, profile(article).casing)
        placer = self.placers(article)
        placed = placer.place(update.quote, context_of(update.quote, text, self.context), document_text=text)
        first, second = placed.section_path, placed.runner_up
        if placed.margin >= self.unsure or not second or first[:len(second)] == second \
                or tuple(update.section_path) != tuple(first):
            return update
        alone = placer.place(update.text, among=(first, second))
        if alone.section_path != second:
            return update
        why = f"{alone.reason}; its source's words barely preferred {' > '.join(first)}"
        reason = update.reason.replace(placed.reason, why) if placed.reason in update.reason \
            else f"{update.reason}; placed again: {why}"
        return replace(update, section_path=second, reason=reason)


@per_article
def _sentences_in_sections(article: Article) -> tuple[tuple[str, frozenset[str]], ...]:
    """Every sentence of the article with content words, lead included, each with the content
    tokens of its section's prose (:func:`winellbot.gates.textnorm.singulars`: "hundreds" is
    "several hundred")."""
    out = []
    for sec in article.sections:
        section = singulars(content_tokens(" ".join(para.text for para in sec.paragraphs)))
        out.extend((s, section) for para in sec.paragraphs for s in split_sentences(para.text) if content_tokens(s))
    return tuple(out)


@per_article
def article_sentences(article: Article) -> tuple[str, ...]:
    """Every sentence of the article with content words, lead included."""
    return tuple(s for s, _ in _sentences_in_sections(article))


class Restatements:
    """Finds the article sentence that already states a short update in other words.

    A statement (at most ``max_words`` words: one or two sentences) is restated when its
    embedding's cosine with an article sentence reaches ``threshold`` and every name, date
    and number spaCy finds in it is also in that sentence. The second condition matters:
    sentence embeddings hardly tell "placed in Group 1 with Everton" from "in Group 1 with
    Birmingham City". ``threshold`` is 0.85, not lower: "the bridge was closed" and "the mayor
    opened the bridge" are closer than 0.8. A statement with two or more names, dates or
    numbers, all in the sentence, is restated from ``named_threshold`` (0.8): what it shares is
    specific. At ``threshold``, the names may also sit anywhere in that sentence's section, a
    plural number word read as its singular ("hundreds" against "several hundred"): a retelling
    often joins two sentences ("began in 1987", where the lead gives the year in its next sentence).
    A longer passage is compared sentence by sentence, not as a whole (against one sentence the
    cosine of a whole passage says little): it is not new when every one of its sentences is
    restated (a town's "at a glance" piece that retells the article's history in other words).
    Thresholds and cosines measured: docs/results.md, "Novelty: the restatement thresholds".
    """

    def __init__(self, embedder, *, threshold: float = 0.85, named_threshold: float = 0.8,
                 max_words: int = 40) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.named_threshold = named_threshold
        self.max_words = max_words
        self._vectors = per_article(lambda article: embedder.embed(list(article_sentences(article))))

    def find(self, article: Article, text: str) -> str | None:
        """Why ``text`` is not new (the restating sentence and the cosine), or None."""
        if not article_sentences(article):
            return None
        if len(words(text)) <= self.max_words:
            return self._restating(article, text)
        parts = [p for p in split_sentences(text) if content_tokens(p)]
        if len(parts) < 2 or any(len(words(p)) > self.max_words for p in parts):
            return None
        first = None
        for part in parts:  # the first new sentence ends the check: most passages stop at one
            why = self._restating(article, part)
            if why is None:
                return None
            first = first or why
        return f"each of its {len(parts)} sentences is already in the article in other words; the first: {first}"

    def _restating(self, article: Article, text: str) -> str | None:
        closeness = self._vectors(article) @ self.embedder.embed([text])[0]
        lowest = min(self.threshold, self.named_threshold)
        near = [i for i in closeness.argsort()[::-1] if closeness[i] >= lowest]
        if not near:
            return None  # most passages end here, before spaCy reads them
        facts = named_facts(text)
        # Below the bar of meaning alone, two or more shared names and figures vouch for a match.
        bar = lowest if len(facts) >= 2 else self.threshold
        for i in near:
            sentence, section = _sentences_in_sections(article)[i]
            if closeness[i] >= bar and facts <= set(content_tokens(sentence)):
                return (f"an article sentence already says this in other words (meaning {closeness[i]:.2f}), "
                        f"with the same names, dates and numbers: \u201c{_short(sentence)}\u201d")
            # A retelling often joins what one section says in two sentences ("began in 1987", where
            # the lead gives the year in its next sentence): at full closeness, that sentence's
            # section may hold the names.
            if closeness[i] >= self.threshold and singulars(facts) <= section:
                return (f"an article section already says this in other words (meaning {closeness[i]:.2f} "
                        f"with its sentence \u201c{_short(sentence)}\u201d), with the same names, dates "
                        f"and numbers")
        return None


def _short(sentence: str) -> str:
    return sentence if len(sentence) <= 120 else sentence[:117] + "..."


_CLAUSE_END = (",", ";", ":", "\u2014", "\u2013")


class SentenceCutter:
    """Ends a passage that had to be cut short at a sentence's or clause's end.

    The extractor fits a cased page's run of sentences into a suggestion's word budget and
    cuts the last sentence where the budget ends, which can be mid-clause, and a scraped page
    may hide a sentence end from the rule-based splitter ("1949.Minton's"). spaCy reads the
    passage, only for the few updates the pipeline keeps: whole sentences are kept while they
    fit; a first sentence longer than the budget ends at its last comma, semicolon, colon or
    dash within it, with an ellipsis. Texts that lost their punctuation are left alone: spaCy
    finds almost none of their sentence ends (figures: docs/results.md, "Passages cut mid-clause").
    """

    def refine(self, article: Article, updates: list[Update]) -> list[Update]:
        return [self.cut(u) for u in updates]

    def cut(self, update: Update) -> Update:
        budget = len(words(update.text))
        if budget >= len(words(update.quote)) or not any(c in update.quote for c in ".!?"):
            return update  # not cut short, or a text without sentence punctuation

        kept: list[str] = []
        for sentence in english()(update.quote, disable=["ner"]).sents:  # the parser ends sentences
            if len(words(" ".join(kept + [sentence.text]))) > budget:
                break
            kept.append(sentence.text)
        if kept:
            return replace(update, text=safe_text(" ".join(kept)))
        head = words(update.quote)[:budget]
        ends = [i for i, w in enumerate(head) if w.endswith(_CLAUSE_END)]
        if not ends or ends[-1] < budget // 3:
            return update  # no clause end in reach: the cut stays where it was
        return replace(update, text=safe_text(" ".join(head[: ends[-1] + 1]).rstrip(",;:\u2014\u2013 ") + " \u2026"))
