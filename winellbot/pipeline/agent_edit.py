"""Stage 3, the fine-grained editor, on a :class:`ModelClient` (an API model or a local one).

The model sees the paragraph with its references, templates and comments replaced by tokens such
as ``[R1]`` and returns only the new paragraph text. Code then checks that the change is small (few
words removed, nothing but the update added, every number and token kept, no new markup), puts the
citation after the sentence that changed, and restores the tokens. The citation is built here from
the :class:`Citation`, never by the model. When the model's paragraph fails a check, the update
sentence is appended to the paragraph instead, with the reason on the edit.
"""
from __future__ import annotations

import difflib
import re

from winellbot.interface import Editor
from winellbot.llm.client import ModelClient, attempt
from winellbot.llm.prompts import estimate_tokens, load_prompt
from winellbot.models import Citation, Edit, Paragraph, Update
from winellbot.pipeline.agent_common import Journal
from winellbot.search.urls import citation_url
from winellbot.text import content_tokens

_MASKS = (
    ("C", re.compile(r"<!--.*?-->", re.DOTALL)),
    ("R", re.compile(r"<ref\b[^>]*?/>|<ref\b[^>]*>.*?</ref\s*>", re.DOTALL | re.IGNORECASE)),
    ("T", re.compile(r"\{\{[^{}]*\}\}")),  # innermost first; repeated until none is left
)
_TOKEN = re.compile(r"\[([RTC])(\d+)\]")
_PIECE = re.compile(r"\[[RTC]\d+\]|\w+|[^\w\s]")
_NUMBER = re.compile(r"\d[\d,.]*\d|\d")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$|\[[RTC]\d+\])")
# an introduction or label before the paragraph: "Here is the updated paragraph:", "Sure!", "New paragraph:"
_OPENERS = r"(here\s+is|here's|sure|certainly|of course|okay|below is|(the\s+)?(updated|new|edited|revised)\s+paragraph)"
_PREAMBLE = re.compile(rf"^\s*{_OPENERS}\b[^\n]{{0,80}}$", re.IGNORECASE)
_INLINE = re.compile(rf"^\s*{_OPENERS}\b[^:\n]{{0,80}}:\s*", re.IGNORECASE)
_NOTE = re.compile(r"^\s*\(?\s*(note|notes|explanation|changes)\b\s*:", re.IGNORECASE)
_RISKY = ("[[", "{{", "}}", "<", "http", "www.", "''", "~~~", "__")
_PARAM_ESCAPES = {"|": "&#124;", "=": "&#61;", "{": "&#123;", "}": "&#125;", "[": "&#91;", "]": "&#93;",
                  "<": "&lt;", ">": "&gt;", "~": "&#126;", "'": "&#39;", "_": "&#95;"}


class LLMEditor(Editor):
    """(paragraph, update, citation) -> a minimal cited change, or the update appended."""

    def __init__(self, client: ModelClient, *, model: str = "", journal: Journal | None = None,
                 max_deleted_share: float = 0.2, max_tokens: int | None = None) -> None:
        self.client = client
        self.model = model
        self.journal = journal or Journal()
        self.max_deleted_share = max_deleted_share
        self.max_tokens = max_tokens

    def edit(self, paragraph: Paragraph | None, update: Update, citation: Citation) -> Edit:
        """The edited paragraph; never raises on a model failure."""
        ref = cite_news(citation)
        if paragraph is None:
            return Edit("", sentence(update.text) + ref, update.text, citation, "a new paragraph for the section")
        masked, stash = mask(paragraph.wikitext)
        news = update.text + (f" (date: {update.event_date})" if update.event_date else "")
        prompt = load_prompt("editor")
        if estimate_tokens(masked) > prompt.room(news=news):
            return appended(paragraph, update, citation, "the paragraph is longer than the editor's token "
                                                         "limit; appended the update")
        # the reply is the paragraph plus the news: room for both and a little rewording
        limit = self.max_tokens or min(prompt.output_tokens, estimate_tokens(masked) + estimate_tokens(news) + 40)
        messages = prompt.render(paragraph=masked, news=news)
        reply, failed = attempt(lambda: self.client.ask_text("editor", messages, model=self.model, max_tokens=limit,
                                                             version=prompt.version))
        if failed:
            self.journal.note("editor", f"appended the update instead: {failed}")
            return appended(paragraph, update, citation, f"editor failed ({failed}); appended the update")
        new_masked = clean_reply(reply, masked)
        problem = minimal_change_problem(masked, new_masked, update.text, self.max_deleted_share)
        if problem:
            return appended(paragraph, update, citation, f"model edit rejected ({problem}); appended the update")
        at, added = _change_span(masked, new_masked)
        new = unmask(new_masked[:at] + ref + new_masked[at:], stash)
        return Edit(paragraph.wikitext, new, unmask(added, stash).strip(), citation,
                    "minimal edit by the editor model")


def appended(paragraph: Paragraph, update: Update, citation: Citation, reason: str) -> Edit:
    """The fallback: the update as a sentence at the end of the paragraph, cited."""
    new = f"{paragraph.wikitext.rstrip()} {sentence(update.text)}{cite_news(citation)}"
    return Edit(paragraph.wikitext, new, update.text, citation, reason)


def sentence(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def cite_news(c: Citation) -> str:
    """``<ref>{{cite news |url= |title= |work= |date= |access-date=}}</ref>`` with every value escaped."""
    params = [("url", citation_url(c.url)), ("title", _param(c.title or c.url)), ("work", _param(c.work)),
              ("date", _param(c.date)), ("access-date", _param(c.access_date))]
    body = " ".join(f"|{k}={v}" for k, v in params if v)
    return f"<ref>{{{{cite news {body}}}}}</ref>"


def _param(value: str) -> str:
    value = re.sub(r"\s+", " ", value or "").strip()
    return "".join(_PARAM_ESCAPES.get(ch, ch) for ch in value)




# -- masking ------------------------------------------------------------------------
def mask(wikitext: str) -> tuple[str, dict[str, str]]:
    """``wikitext`` with comments, references and templates replaced by ``[C1]``, ``[R1]``, ``[T1]``."""
    stash: dict[str, str] = {}

    def sub(kind: str, pattern: re.Pattern, text: str) -> str:
        def put(m: re.Match) -> str:
            token = f"[{kind}{sum(k.startswith('[' + kind) for k in stash) + 1}]"
            stash[token] = m.group(0)
            return token
        return pattern.sub(put, text)

    text = wikitext
    for kind, pattern in _MASKS:
        previous = None
        while previous != text:  # nested templates: innermost first
            previous, text = text, sub(kind, pattern, text)
    return text, stash


def unmask(text: str, stash: dict[str, str]) -> str:
    for _ in range(len(stash) + 1):
        new = _TOKEN.sub(lambda m: stash.get(m.group(0), m.group(0)), text)
        if new == text:
            break
        text = new
    return text


# -- checking the model's paragraph -------------------------------------------------
def clean_reply(reply: str, original: str = "") -> str:
    """The paragraph in a model reply: fences, preambles, labels, notes and quotes removed.

    Models often introduce the paragraph ("Here is the updated paragraph:") or comment after it;
    of the blocks left, the one sharing most words with ``original`` is the paragraph.
    """
    text = re.sub(r"```\w*", "", reply).strip()
    blocks = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.strip().splitlines() if line.strip()]
        while lines and _PREAMBLE.match(lines[0]) and (lines[0].rstrip().endswith(":") or len(lines) > 1):
            lines.pop(0)  # an introduction on its own line
        block = _INLINE.sub("", " ".join(lines)).strip()
        if block and not block.endswith(":") and not _NOTE.match(block):
            blocks.append(block)
    if not blocks:
        return ""
    known = set(content_tokens(original))
    text = max(blocks, key=lambda b: len(known & set(content_tokens(b)))) if known else blocks[0]
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return re.sub(r"[ \t]*\n[ \t]*", " ", text)


def minimal_change_problem(old: str, new: str, update_text: str, max_deleted_share: float) -> str:
    """Why ``new`` is not a minimal, faithful edit of ``old`` carrying the update ("" if it is)."""
    if not new:
        return "empty reply"
    for risky in _RISKY:
        if new.count(risky) > old.count(risky):
            return f"added markup {risky!r}"
    if sorted(_TOKEN.findall(new)) != sorted(_TOKEN.findall(old)):
        return "dropped or duplicated an existing reference or template"
    a, b = _PIECE.findall(old), _PIECE.findall(new)
    deleted = inserted = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op in ("delete", "replace"):
            deleted += sum(1 for t in a[i1:i2] if t[0].isalnum())
        if op in ("insert", "replace"):
            inserted += sum(1 for t in b[j1:j2] if t[0].isalnum())
    words = sum(1 for t in a if t[0].isalnum()) or 1
    if deleted > max_deleted_share * words:
        return f"rewrote too much ({deleted} of {words} words removed or changed)"
    if inserted == 0:
        return "added nothing"
    update_words = len(update_text.split())
    if inserted > max(2 * update_words, update_words + 20):
        return f"added far more than the update ({inserted} words)"
    if not _numbers(old) - _numbers(new) <= set():
        return "dropped a number of the original paragraph"
    if not _numbers(update_text) <= _numbers(new):
        return "left out a number of the update"
    wanted = set(content_tokens(update_text))
    if wanted and len(wanted & set(content_tokens(new))) < 0.5 * len(wanted):
        return "the update is not in the new paragraph"
    return ""


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(_TOKEN.sub(" ", text))}


def _change_span(old: str, new: str) -> tuple[int, str]:
    """Where the citation goes in ``new`` (after the sentence that changed) and the added text."""
    a = [m.group(0) for m in _PIECE.finditer(old)]
    spans = [(m.start(), m.end()) for m in _PIECE.finditer(new)]
    b = [new[s:e] for s, e in spans]
    first, last = None, None
    for op, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op in ("insert", "replace") and j2 > j1:
            first = spans[j1][0] if first is None else first
            last = spans[j2 - 1][1]
    if first is None:  # only deletions: cite at the end
        return len(new.rstrip()), ""
    end = _SENTENCE_END.search(new, max(0, last - 1))
    at = end.end() if end else len(new.rstrip())
    return at, new[first:last]
