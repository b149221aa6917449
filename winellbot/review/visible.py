"""Characters a reader cannot see, made visible on the review page, as a diff tool shows them.

Right-to-left and left-to-right overrides and embeddings, isolates, zero-width spaces and joiners,
the byte order mark, soft hyphens and other format characters (Unicode category Cf), and control
characters (Cc) but tab and newline, can make a text read otherwise than it is, or hide words: each
is shown as a marker naming its code point (``⟨U+202E⟩``). Applied (the Jinja filter ``visible``) to
every text from a source, a model, the wiki or a reviewer that the page shows; the marker is plain
text, escaped by the templates like the rest.
"""
from __future__ import annotations

import re
import unicodedata

_HIDDEN = re.compile("[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180e"
                     "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\ufff9-\ufffb\uffa0]")


def visible(text) -> str:
    """``text`` with each invisible or direction-changing character replaced by ``⟨U+XXXX⟩``."""
    if text is None:
        return ""
    out = _HIDDEN.sub(lambda m: _marker(m.group()), str(text))
    if out.isascii():  # the usual case: nothing but what the pattern found
        return out
    return "".join(_marker(ch) if unicodedata.category(ch) == "Cf" else ch for ch in out)


def _marker(ch: str) -> str:
    return f"\u27e8U+{ord(ch):04X}\u27e9"


def without_hidden(text) -> str:
    """``text`` without the characters :func:`visible` marks: the starting text of a field the reviewer edits."""
    if text is None:
        return ""
    return "".join(ch for ch in _HIDDEN.sub("", str(text)) if unicodedata.category(ch) != "Cf")
