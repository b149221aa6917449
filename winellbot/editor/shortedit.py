"""The local editor's answer: a short edit ("After N: sentence") that code applies to the paragraph.

The model never rewrites the paragraph: it writes the new sentence and says after which of the
numbered sentences it goes. Applying that here keeps every word of the paragraph (``preserved``
is 100% by construction), keeps the change to the words of the new sentence, and costs a
fraction of the tokens of a whole paragraph. The same functions render the training prompts,
so training and prediction see identical text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from winellbot.editor.examples import EditorExample, EditTask
from winellbot.gates.textnorm import strip_markup
from winellbot.llm.base import Message
from winellbot.llm.copying import MAX_WORDS, MIN_WORDS
from winellbot.llm.prompts import load_prompt
from winellbot.text import content_tokens, split_sentences, words

PROMPT = "local_editor"
SOURCE_WORDS = 170
SENTENCE_WORDS = 30
_ANSWER = re.compile(r"^\s*after\s*(?:sentence\s*)?\[?(\d+)\]?\s*[:.)-]\s*(.+)", re.IGNORECASE | re.DOTALL)
# Tokens standing for masked markup ([R1], [T2], [C3]: see pipeline/agent_edit.mask): they stay
# with the sentence before them.
_MASK = re.compile(r"\[[RTC]\d+\]")
_TRAIL = re.compile(r"(?:\s*\[[RTC]\d+\])+")


@dataclass(frozen=True)
class ShortEdit:
    """Insert ``sentence`` after sentence number ``after`` (0: before the first)."""

    after: int
    sentence: str


def sentence_ends(text: str) -> list[int]:
    """Character offsets in ``text`` where each sentence ends (after any masked reference tokens)."""
    plain_chars: list[int] = []  # offset in text of each character of the unmasked text
    pos = 0
    for m in _MASK.finditer(text):
        plain_chars.extend(range(pos, m.start()))
        pos = m.end()
    plain_chars.extend(range(pos, len(text)))
    plain = "".join(text[i] for i in plain_chars)
    ends, cursor = [], 0
    for piece in split_sentences(plain):
        at = plain.find(piece, cursor)
        if at < 0:
            continue
        cursor = at + len(piece)
        end = plain_chars[cursor - 1] + 1
        trail = _TRAIL.match(text, end)
        ends.append(trail.end() if trail else end)
    return ends


def sentences_of(text: str) -> list[str]:
    """The paragraph's sentences as the model sees them: plain text, masked tokens left out."""
    out, start = [], 0
    for end in sentence_ends(text):
        out.append(strip_markup(_MASK.sub(" ", text[start:end])))
        start = end
    return [s for s in out if s]


def numbered(text: str) -> str:
    lines = []
    for i, s in enumerate(sentences_of(text), 1):
        ws = s.split()
        lines.append(f"[{i}] " + (" ".join(ws[:SENTENCE_WORDS]) + " ..." if len(ws) > SENTENCE_WORDS else s))
    return "\n".join(lines)


def shown_source(task: EditTask) -> str:
    """The source as the editor reads it: its first :data:`SOURCE_WORDS` words."""
    return " ".join(task.source.text.split()[:SOURCE_WORDS])


def prompt_messages(task: EditTask) -> tuple[Message, ...]:
    """The local editor's prompt for one task (the paragraph numbered, the source cut to length)."""
    return load_prompt(PROMPT).render(title=task.title, section=" > ".join(task.section_path) or "(lead)",
                                      paragraph=numbered(task.original), source_title=task.source.title,
                                      source=shown_source(task))


def ask_short_edit(client, task: EditTask, *, max_tokens: int, copied: bool = False, ranker=None) -> str:
    """The local editor's reply for ``task`` (the one request both the predictor and the bot's
    editor send); ``copied``: decoding held to the shown source (:mod:`winellbot.llm.copying`),
    with a ``ranker`` (:class:`winellbot.editor.spans.SpanRanker`) to one of its best runs."""
    source = shown_source(task) if copied else ""
    choices = tuple(ranker.best(task, source.split())) if source and ranker is not None else ()
    return client.ask_text("editor", prompt_messages(task), max_tokens=max_tokens,
                           version=load_prompt(PROMPT).version, copy_from=source, copy_choices=choices)


def format_answer(edit: ShortEdit) -> str:
    return f"After {edit.after}: {edit.sentence}"


def parse_answer(reply: str) -> ShortEdit | None:
    """The edit in a model's reply; None when the reply has no usable edit."""
    first = reply.strip().split("\n", 1)[0]
    m = _ANSWER.match(first)
    if not m:
        return None
    sentence = " ".join(m.group(2).split()).strip(" \"'")
    if len(words(sentence)) < 3:
        return None
    return ShortEdit(int(m.group(1)), finished(sentence))


def finished(sentence: str) -> str:
    """A copied run of words as a sentence: a capital first letter and a full stop at the end."""
    sentence = sentence.rstrip(" ,;:-")
    if not re.search(r"[.!?][\"')\]\u201d]*$", sentence):
        sentence += "."
    return sentence[:1].upper() + sentence[1:]


def apply_edit(paragraph: str, edit: ShortEdit, suffix: str = "") -> tuple[str, int]:
    """The paragraph with ``edit.sentence + suffix`` inserted; returns (new text, insertion offset).

    A number past the last sentence appends; every character of ``paragraph`` is kept.
    """
    ends = sentence_ends(paragraph)
    if edit.after <= 0 or not ends:
        at = 0 if edit.after <= 0 and ends else len(paragraph.rstrip())
    else:
        at = ends[min(edit.after, len(ends)) - 1]
    added = edit.sentence + suffix
    if at == 0:
        return f"{added} {paragraph.lstrip()}", 0
    before, after = paragraph[:at], paragraph[at:]
    return f"{before} {added}{after}", at + 1


def answer_of(example: EditorExample) -> ShortEdit | None:
    """The human edit of an example as a short edit; None unless it inserts whole sentences only.

    An inserted block that shares words with its neighbours can be aligned several ways; the
    alignment that starts at a sentence boundary and ends with a full stop is the one taken.
    """
    a, b = example.original.split(), example.target.split()
    size = len(b) - len(a)
    if size <= 0:
        return None
    prefix = 0
    while prefix < len(a) and a[prefix] == b[prefix]:
        prefix += 1
    boundaries = {0: 0}
    for n, end in enumerate(sentence_ends(example.original), 1):
        boundaries[len(example.original[:end].split())] = n
    for i in range(prefix, -1, -1):  # every insertion point that reproduces the target
        if b[i + size:] != a[i:] or i not in boundaries:
            continue
        inserted = " ".join(b[i:i + size])
        if re.search(r"[.!?][\"')\]\u201d]*$", inserted):
            return ShortEdit(boundaries[i], inserted)
    return None


def copied_answer(example: EditorExample, edit: ShortEdit) -> ShortEdit | None:
    """``edit`` with its sentence replaced by the run of the shown source's words closest to it.

    Closest: most of the content words the sentence takes from the source, fewest of the source's
    other new words (what an editor leaves out), shortest on a tie; the run is at most
    :data:`winellbot.llm.copying.MAX_WORDS` words. None when no run shares a word with the sentence.
    """

    ws = shown_source(example.task()).split()
    if len(ws) < MIN_WORDS:
        return None
    toks = [set(content_tokens(w)) for w in ws]
    source, known = set().union(*toks), set(content_tokens(example.original))
    key = (set(content_tokens(edit.sentence)) & source) - known
    noise = source - set(content_tokens(edit.sentence)) - known
    if not key:
        return None
    best = None
    for i in range(len(ws)):
        got: set[str] = set()
        for j in range(i, min(len(ws), i + MAX_WORDS)):
            got |= toks[j]
            if j - i + 1 < MIN_WORDS:
                continue
            value = (len(got & key) / len(key) - len(got & noise) / max(1, len(noise)), -(j - i))
            if best is None or value > best[0]:
                best = (value, i, j)
    if best is None or best[0][0] <= 0:
        return None
    return ShortEdit(edit.after, " ".join(ws[best[1]:best[2] + 1]))


def training_pair(example: EditorExample, *, copied: bool = False) -> tuple[tuple[Message, ...], str] | None:
    """(prompt messages, answer) of an example, or None when its edit is not a whole-sentence insertion.

    With ``copied``, the answer's sentence is the source's own run of words closest to the human
    sentence (:func:`copied_answer`): what an editor decoding under :mod:`winellbot.llm.copying` can write.
    """
    edit = answer_of(example)
    if edit is not None and copied:
        edit = copied_answer(example, edit)
    if edit is None:
        return None
    return prompt_messages(example.task()), format_answer(edit)
