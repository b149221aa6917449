"""The docs agree with the code: every setting is documented (and no other), README.md stays short,
and every relative link in README.md and docs/*.md leads to a file and heading that exist.

docs/configuration.md documents a section ``[name]`` under a heading ``## [name]``, and each of its
keys as a table row whose first cell is the key in backticks and whose second is its default, as
``dump_settings`` writes it. Any other heading ends the section.
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from winellbot.config import Settings, dump_settings

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CONFIGURATION = DOCS / "configuration.md"
README_MAX_LINES = 200

# Docs that another change is writing at the same time and that a link may name before they land
# (docs/outcomes.md: `winellbot outcomes`, issue 31). Once such a file exists it is checked like any other.
PENDING = {DOCS / "outcomes.md"}

SECTION_HEADING = re.compile(r"^## \[(\w+)\]\s*$")
KEY_ROW = re.compile(r"^\|\s*`(\w+)`\s*\|\s*`(.*?)`\s*\|")
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def settings_defaults() -> dict[tuple[str, str], str]:
    """(section, key) -> the default as TOML text, for every field of every settings dataclass."""
    settings = Settings()
    keys = {(section.name, f.name) for section in dataclasses.fields(settings)
            for f in dataclasses.fields(getattr(settings, section.name))}
    defaults, section = {}, ""
    for line in dump_settings(settings).splitlines():
        if m := re.fullmatch(r"\[(\w+)\]", line):
            section = m.group(1)
        elif " = " in line:
            key, value = line.split(" = ", 1)
            defaults[(section, key)] = value
    assert set(defaults) == keys
    return defaults


def documented_settings() -> dict[tuple[str, str], str]:
    """(section, key) -> the default as docs/configuration.md gives it."""
    documented, section = {}, None
    for number, line in enumerate(CONFIGURATION.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("#"):
            m = SECTION_HEADING.match(line)
            section = m.group(1) if m else None
        elif section and (m := KEY_ROW.match(line)):
            where = (section, m.group(1))
            assert where not in documented, f"docs/configuration.md:{number}: {'.'.join(where)} documented twice"
            documented[where] = m.group(2).replace("\\|", "|")
    return documented


def test_every_setting_is_documented():
    missing = sorted(set(settings_defaults()) - set(documented_settings()))
    assert not missing, ("settings missing from docs/configuration.md: "
                         + ", ".join(f"{s}.{k}" for s, k in missing))


def test_no_documented_setting_is_unknown():
    unknown = sorted(set(documented_settings()) - set(settings_defaults()))
    assert not unknown, ("docs/configuration.md documents settings that do not exist: "
                         + ", ".join(f"{s}.{k}" for s, k in unknown))


def test_documented_defaults_are_the_defaults():
    defaults, documented = settings_defaults(), documented_settings()
    wrong = [f"{s}.{k}: documented {documented[(s, k)]}, default {defaults[(s, k)]}"
             for s, k in sorted(set(defaults) & set(documented)) if documented[(s, k)] != defaults[(s, k)]]
    assert not wrong, "docs/configuration.md gives wrong defaults: " + "; ".join(wrong)


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; at most {README_MAX_LINES}"


def prose(text: str) -> str:
    """The text without fenced code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M)}


DOC_FILES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc):
    broken = []
    for target in LINK.findall(prose(doc.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        resolved = (doc.parent / path).resolve() if path else doc
        if not resolved.exists():
            if resolved not in PENDING:
                broken.append(f"{target}: no such file")
            continue
        if anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no such heading in {resolved.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_check_finds_links():
    """The link pattern reads this repository's link style (so the check above is not vacuous)."""
    links = LINK.findall(prose((ROOT / "README.md").read_text(encoding="utf-8")))
    assert "docs/configuration.md" in links and "docs/results.md" in links
    assert slug("What is posted: blind editor verdicts") == "what-is-posted-blind-editor-verdicts"
    assert slug("[wiki]") == "wiki" and slug("The bot's user page") == "the-bots-user-page"
