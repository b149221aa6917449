"""Editor examples from an article's own cited sentences (as the bench's examples are made).

Each sentence of a content section that carries a citation becomes one example: the paragraph
without it (``original``), the passage of the cited page that supports it (``source``) and the
paragraph as it stands (``target``). Cited pages come through the project's fetcher, with its
guards. The same builder runs over back-test tasks, whose articles have no references left: there
every task document except the distractors is a candidate page for every sentence.
"""
from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from winellbot.article import named_ref_urls, parse_article, plain_text, ref_urls
from winellbot.bench.tasks import article_from_task
from winellbot.editor.examples import EditorExample, Source
from winellbot.editor.shortedit import sentence_ends
from winellbot.editor.windows import passage, support, support_problem
from winellbot.errors import ArticleParseError, FetchError
from winellbot.models import Document, SearchResult
from winellbot.pipeline.agent_edit import mask, unmask

MIN_WORDS, MAX_WORDS = 8, 60
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]+")


@dataclass(frozen=True)
class CitedSentence:
    section_path: tuple[str, ...]
    sentences: tuple[str, ...]  # the paragraph's sentences, plain text
    index: int  # which one is taken out
    urls: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return self.sentences[self.index]


def is_candidate(sentence: str) -> bool:
    """The bench's rule for a sentence worth taking out: a whole, factual sentence of 8 to 60 words."""
    words = sentence.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS or not re.match(r"[A-Z0-9\"'(]", sentence):
        return False
    if not re.search(r"[.!?][\"')\u201d]*$", sentence):
        return False
    return bool(re.search(r"\d", sentence)) or len(_CAPITALISED.findall(" ".join(words[1:]))) >= 2


def paragraph_sentences(wikitext: str, named: dict[str, tuple[str, ...]]) -> list[tuple[str, tuple[str, ...]]]:
    """(plain sentence, URLs its references cite) for each sentence of a paragraph's wikitext."""
    masked, stash = mask(wikitext)
    out, start = [], 0
    for end in sentence_ends(masked):
        chunk = unmask(masked[start:end], stash)
        start = end
        text = plain_text(chunk)
        if text:
            out.append((text, ref_urls(chunk, named)))
    return out


def cited_sentences(title: str, wikitext: str) -> list[CitedSentence]:
    """The candidate sentences of an article's content sections that carry a citation."""
    try:
        article = parse_article(title, wikitext)
    except ArticleParseError:
        return []
    named = named_ref_urls(wikitext)
    found = []
    for section in article.sections:
        if not section.path:
            continue  # the lead summarises; its sentences are not edits of their own
        for para in section.paragraphs:
            pairs = paragraph_sentences(para.wikitext, named)
            texts = tuple(t for t, _ in pairs)
            if len(texts) < 2:
                continue
            for i, (text, urls) in enumerate(pairs):
                if urls and is_candidate(text):
                    found.append(CitedSentence(section.path, texts, i, urls))
    return found


def make_example(example_id: str, title: str, cited: CitedSentence, document: Document,
                 rng: random.Random, meta: dict) -> tuple[EditorExample | None, str]:
    """The example for one sentence and one supporting page, or (None, why not)."""
    found = passage(cited.text, document.text, rng)
    problem = support_problem(cited.text, found)
    if problem:
        return None, problem
    original = " ".join(s for i, s in enumerate(cited.sentences) if i != cited.index)
    example = EditorExample(example_id, title, cited.section_path, original,
                            Source(document.url, document.title, found.text), " ".join(cited.sentences),
                            {**meta, "support": round(found.support, 3), "kind": "cited"})
    return example, ""


def examples_from_article(title: str, wikitext: str, fetch: Callable[[str], Document], *,
                          seed: int = 0, skipped: Counter | None = None) -> list[EditorExample]:
    """Examples from an article's cited sentences; ``fetch(url)`` returns the page (FetchError: skip)."""
    skipped = skipped if skipped is not None else Counter()
    rng = random.Random(f"{seed}:{title}")
    out = []
    for n, cited in enumerate(cited_sentences(title, wikitext)):
        example, why = None, "no cited page could be read"
        for url in cited.urls:
            try:
                document = fetch(url)
            except FetchError:
                continue
            example, why = make_example(f"cited-{_slug(title)}-{n}", title, cited, document, rng,
                                        {"article": title, "url": url})
            if example:
                break
        if example:
            out.append(example)
        else:
            skipped[why] += 1
    return out


def fetch_with(fetcher) -> Callable[[str], Document]:
    """``fetch(url)`` over a :class:`winellbot.interface.Fetcher` (the project's WebFetcher)."""
    return lambda url: fetcher.fetch(SearchResult(url=url, title=""))


def examples_from_task(task, *, seed: int = 0, per_article: int = 40,
                       skipped: Counter | None = None) -> list[EditorExample]:
    """Examples from a back-test task's article, its documents standing in for the cited pages.

    Training data only: the distractors (documents about other articles) are left out by their
    label, which the bot itself never sees.
    """
    skipped = skipped if skipped is not None else Counter()
    documents = [d for d in task.documents if task.document_origins.get(d.id) != "distractor"]
    rng = random.Random(f"{seed}:{task.id}")
    article_id = task.id.removeprefix("wgb-")
    out: list[EditorExample] = []
    for n, cited in enumerate(_task_sentences(task)):
        if len(out) >= per_article:
            break
        best = max(documents, key=lambda d: support(cited.text, d.text), default=None)
        if best is None:
            continue
        example, why = make_example(f"cs-{article_id}-{n}", task.title, cited, best, rng,
                                    {"article": article_id, "document": best.id})
        if example:
            out.append(example)
        else:
            skipped[why] += 1
    return out


def _task_sentences(task) -> Iterable[CitedSentence]:
    """Every candidate sentence of a task's article (they carry no references: any may be cited)."""
    article = article_from_task(task.bot_view())
    for section in article.sections:
        if not section.path:
            continue
        for para in section.paragraphs:
            texts = tuple(s for _, s in _plain_sentences(para.text))
            if len(texts) < 2:
                continue
            for i, text in enumerate(texts):
                if is_candidate(text):
                    yield CitedSentence(section.path, texts, i)


def _plain_sentences(text: str) -> list[tuple[int, str]]:
    out, start = [], 0
    for end in sentence_ends(text):
        out.append((start, text[start:end].strip()))
        start = end
    return [(s, t) for s, t in out if t]


def _slug(title: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", title).strip("_")[:60] or "article"
