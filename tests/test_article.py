"""Tests of the article model: parsing wikitext, editing paragraphs by offset, the outline."""
from __future__ import annotations

import difflib
import json
import random
from pathlib import Path

import pytest

from winellbot.article import insert_paragraph, outline, parse_article, plain_text, replace_paragraph
from winellbot.errors import ArticleParseError

SAMPLE = Path(__file__).resolve().parents[1] / "winellbot" / "data" / "sample"

FULL = """{{Short description|Fictional town}}
{{Use dmy dates|date=March 2026}}
{{Infobox settlement
| name = Lowmere

| population = 4,210
}}
'''Lowmere''' is a [[market town]] in [[Westvale|the Westvale district]].<ref>{{cite news |title=Town \
profile |url=https://example.org/lowmere-profile |work=Vale Gazette}}</ref> It lies on the river Brin.

The town council has nine members.<ref name="council">[https://example.org/council Council page]</ref>

== History ==
{{Main|History of Lowmere}}
Lowmere was founded in 1802.

=== Mills ===
Three mills operated until 1950.<ref name="council" />
[[File:Mill.jpg|thumb|The old mill]]

== Economy ==
{| class="wikitable"
|-
! Year !! Jobs
|-
| 2020 || 310
|}
Main employers:
* Brin Dairy
* Lowmere Tools

== See also ==
* [[Highmere]]

== References ==
{{Reflist}}

=== Notes ===
Note text that is not prose.

[[Category:Fictional towns]]
"""


@pytest.fixture
def full():
    return parse_article("Lowmere", FULL, revid=42, timestamp="2026-01-01T00:00:00Z")


def test_sections_and_paths(full):
    assert [s.path for s in full.sections] == [(), ("History",), ("History", "Mills"), ("Economy",)]
    assert [s.level for s in full.sections] == [0, 2, 3, 2]
    assert full.revid == 42 and full.timestamp == "2026-01-01T00:00:00Z"


def test_lead_skips_infobox_and_templates(full):
    lead = full.sections[0]
    assert len(lead.paragraphs) == 2
    assert lead.paragraphs[0].wikitext.startswith("'''Lowmere'''")
    assert lead.paragraphs[0].text == (
        "Lowmere is a market town in the Westvale district. It lies on the river Brin."
    )


@pytest.mark.parametrize(
    "path, index, urls",
    [
        ((), 0, ("https://example.org/lowmere-profile",)),
        ((), 1, ("https://example.org/council",)),
        (("History",), 0, ()),
        (("History", "Mills"), 0, ("https://example.org/council",)),  # named-ref reuse
    ],
)
def test_ref_urls(full, path, index, urls):
    assert full.section(path).paragraphs[index].ref_urls == urls


def test_offsets_match_wikitext(full):
    for section in full.sections:
        for para in section.paragraphs:
            assert FULL[para.start : para.end] == para.wikitext
            assert para.wikitext == para.wikitext.strip()


def test_tables_files_hatnotes_are_not_paragraphs(full):
    history = full.section(("History",))
    assert [p.text for p in history.paragraphs] == ["Lowmere was founded in 1802."]
    mills = full.section(("History", "Mills"))
    assert [p.text for p in mills.paragraphs] == ["Three mills operated until 1950."]
    economy = full.section(("Economy",))
    assert [p.text for p in economy.paragraphs] == ["Main employers:", "Brin Dairy\nLowmere Tools"]
    assert "Jobs" not in full.plain_text


@pytest.mark.parametrize("name", ["See also", "References", "Notes"])
def test_skipped_sections(full, name):
    assert full.section((name,)) is None
    assert "Highmere" not in full.plain_text
    assert "Note text" not in full.plain_text


@pytest.mark.parametrize(
    "wikitext, expected",
    [
        ("Only a lead.", [((), ["Only a lead."])]),
        ("First.\n\nSecond\ncontinues.", [((), ["First.", "Second continues."])]),
        (
            "Lead.\n== A ==\nA text.\n=== B ===\nB text.\n==== C ====\nC text.\n== D ==\nD text.",
            [((), ["Lead."]), (("A",), ["A text."]), (("A", "B"), ["B text."]),
             (("A", "B", "C"), ["C text."]), (("D",), ["D text."])],
        ),
        # the simple backtest format
        (
            "Intro line.\n\n== Career ==\n\nPlayed for X.\n\n* 2001 debut\n* 2004 transfer\n\n=== Later ===\nRetired.",
            [((), ["Intro line."]), (("Career",), ["Played for X.", "2001 debut\n2004 transfer"]),
             (("Career", "Later"), ["Retired."])],
        ),
        ("Text.\n# one\n# two\nAfter.", [((), ["Text.", "one\ntwo", "After."])]),
        ("Lead.\n== Empty ==\n== Full ==\nx.", [((), ["Lead."]), (("Empty",), []), (("Full",), ["x."])]),
        ("Lead.\n== ''Styled'' [[Link|heading]] ==\nx.", [((), ["Lead."]), (("Styled heading",), ["x."])]),
        ("Lead.\n== EXTERNAL LINKS ==\n* [http://a.example a]\n== After ==\ny.", [((), ["Lead."]), (("After",), ["y."])]),
        ("__NOTOC__\n<!-- hidden\n\nnote -->\nReal text.", [((), ["Real text."])]),
        ("{{Infobox x\n| a = b\n}}'''Glued''' to the box.", [((), ["Glued to the box."])]),
        ("Ref spans<ref>{{cite web\n\n|url=http://a.example/x}}</ref> lines.", [((), ["Ref spans lines."])]),
        ("Lead.\n{{Quote|\n== Not a heading ==\n}}\nText.", [((), ["Lead.", "Text."])]),
        ("= Top =\nA.\n== Under ==\nB.", [((), []), (("Top",), ["A."]), (("Top", "Under"), ["B."])]),
    ],
)
def test_structure(wikitext, expected):
    article = parse_article("T", wikitext)
    got = [(s.path, [p.text for p in s.paragraphs]) for s in article.sections]
    assert got == expected


@pytest.mark.parametrize(
    "wikitext, expected",
    [
        ("[[Paris]] and [[Lyon|the city of Lyon]].", "Paris and the city of Lyon."),
        ("'''Bold''' and ''italic'' and '''''both'''''.", "Bold and italic and both."),
        ("A [https://example.org label] and a bare https://example.org/x link.",
         "A label and a bare https://example.org/x link."),
        ("Text<ref>note</ref>, more<ref name=\"a\">[http://x.example y]</ref>.", "Text, more."),
        ("Spaces   and\ttabs\nand newline.", "Spaces and tabs and newline."),
        ("Name ({{IPA|ˈneɪm}}) is here.", "Name is here."),
        ("Caf&eacute; &amp; bar.", "Café & bar."),
        ("Zürich, 東京 and Kraków — “quoted”.", "Zürich, 東京 and Kraków — “quoted”."),
        ("A [[File:X.png|thumb|caption]] and [[Category:Y]] text.", "A and text."),
    ],
)
def test_plain_text(wikitext, expected):
    assert plain_text(wikitext) == expected
    assert parse_article("T", wikitext).sections[0].paragraphs[0].text == expected


@pytest.mark.parametrize(
    "wikitext, urls",
    [
        ("A.<ref>{{cite news|url=https://example.org/a|title=t}}</ref>", ("https://example.org/a",)),
        ("A.<ref>[https://example.org/b B]</ref>", ("https://example.org/b",)),
        ("A.<ref>See https://example.org/c for more.</ref>", ("https://example.org/c",)),
        ("A.<ref>{{cite web|title=t|url= https://example.org/d |archive-url=https://archive.example/d}}</ref>",
         ("https://example.org/d",)),
        ("A.<ref>{{cite book|title=No url}}</ref>", ()),
        ("A.<ref>x https://example.org/1</ref> B.<ref>{{cite news|url=https://example.org/2}}</ref>",
         ("https://example.org/1", "https://example.org/2")),
        ("A [https://example.org/notref link] outside refs.", ()),
        ("A.<ref name=z/> B.<ref name=z>https://example.org/z</ref>", ("https://example.org/z",)),
    ],
)
def test_ref_url_extraction(wikitext, urls):
    assert parse_article("T", wikitext).sections[0].paragraphs[0].ref_urls == urls


@pytest.mark.parametrize(
    "wikitext, expected_texts",
    [
        ("Start.<ref>unclosed ref and more text.", ["Start. unclosed ref and more text."]),
        ("Before.\n\n{{Infobox broken\n| a = b\n\nAfter the broken box.", ["Before.", "After the broken box."]),
        ("Stray braces }} in text.\n\nNext.", ["Stray braces in text.", "Next."]),
        ("'''Unbalanced bold text.\n\nOk.", ["Unbalanced bold text.", "Ok."]),
        ("[[Unclosed link text.", ["Unclosed link text."]),
        ("Para.\n}}\n|}\nMore.", ["Para.", "More."]),
        ("Text <ref name=x>ok</ref> then </ref> close.", ["Text then close."]),
    ],
)
def test_broken_markup_does_not_crash(wikitext, expected_texts):
    article = parse_article("Broken", wikitext)
    assert [p.text for p in article.sections[0].paragraphs] == expected_texts


@pytest.mark.parametrize(
    "wikitext",
    ["", "   \n\n", "#REDIRECT [[Elsewhere]]", "{{Infobox x\n| a = b\n}}\n[[Category:Y]]",
     "== References ==\n{{Reflist}}"],
)
def test_nothing_usable_raises(wikitext):
    with pytest.raises(ArticleParseError):
        parse_article("Nothing", wikitext)


def _changed_lines(old: str, new: str) -> list[str]:
    return [
        line for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


@pytest.mark.parametrize(
    "path, index",
    [((), 0), ((), 1), (("History",), 0), (("History", "Mills"), 0), (("Economy",), 1)],
)
def test_replace_touches_only_that_paragraph(full, path, index):
    para = full.section(path).paragraphs[index]
    new_text = "Replacement sentence.<ref>{{cite news|url=https://example.org/new}}</ref>"
    new = replace_paragraph(full, para, new_text)
    assert new == FULL[: para.start] + new_text + FULL[para.end :]
    removed = [line[1:] for line in _changed_lines(FULL, new) if line.startswith("-")]
    assert all(line in para.wikitext for line in removed)
    reparsed = parse_article("Lowmere", new)
    # a list replaced by prose may merge with the line above it, as MediaWiki would render it
    assert "Replacement sentence." in reparsed.section(path).text
    assert [s.path for s in reparsed.sections] == [s.path for s in full.sections]


def test_replace_round_trip_identity(full):
    for section in full.sections:
        for para in section.paragraphs:
            assert replace_paragraph(full, para, para.wikitext) == FULL


def test_replace_rejects_stale_paragraph(full):
    para = full.sections[0].paragraphs[0]
    other = parse_article("Lowmere", "Different text entirely, long enough to differ.")
    with pytest.raises(ValueError):
        replace_paragraph(other, para, "x")


@pytest.mark.parametrize(
    "path, before, after",
    [
        ((), "It lies on the river Brin.", "== History =="),
        (("History",), "founded in 1802.", "=== Mills ==="),
        (("Economy",), "* Lowmere Tools", "== See also =="),
    ],
)
def test_insert_paragraph(full, path, before, after):
    new = insert_paragraph(full, full.section(path), "Inserted fact.\n")
    assert sorted(_changed_lines(FULL, new)) == ["+", "+Inserted fact."]
    i = new.index("Inserted fact.")
    assert before in new[:i] and after in new[i:]
    assert new[:i].endswith("\n\n") and new.index(before) < i < new.index(after)
    texts = [p.text for p in parse_article("Lowmere", new).section(path).paragraphs]
    assert texts[-1] == "Inserted fact."


@pytest.mark.parametrize(
    "wikitext, path, expected",
    [
        ("Lead.\n== Empty ==\n== Next ==\nx.", ("Empty",), "Lead.\n== Empty ==\n\nNew.\n== Next ==\nx."),
        ("Lead.\n== Hat ==\n{{Main|Other}}\n\n== Next ==\nx.", ("Hat",),
         "Lead.\n== Hat ==\n{{Main|Other}}\n\nNew.\n\n== Next ==\nx."),
        ("{{Infobox a\n|b=c\n}}\n== S ==\nx.", (), "{{Infobox a\n|b=c\n}}\n\nNew.\n== S ==\nx."),
    ],
)
def test_insert_into_section_without_prose(wikitext, path, expected):
    article = parse_article("T", wikitext)
    assert insert_paragraph(article, article.section(path), "New.") == expected


def test_outline(full):
    text = outline(full)
    assert text.splitlines()[0] == "Title: Lowmere"
    markers = [line for line in text.splitlines() if line.startswith("[Section:")]
    assert markers == ["[Section: Lead]", "[Section: History]", "[Section: History > Mills]", "[Section: Economy]"]
    assert "Lowmere was founded in 1802." in text and "{{" not in text and "<ref" not in text


def test_outline_budget_and_numbers(full):
    text = outline(full, max_chars_per_section=20, numbered=True)
    lead_body = text.split("[Section: Lead]\n\n")[1].split("\n\n[Section:")[0]
    assert lead_body.startswith("(1) Lowmere") and lead_body.endswith(" …")
    assert len(lead_body) <= 22


def test_unicode_article():
    wikitext = "'''Škofja Vas''' ist ein Dorf.<ref>[https://example.org/ü Über]</ref>\n\n== Geschichte ==\n日本語の段落。"
    article = parse_article("Škofja Vas", wikitext)
    assert article.sections[0].paragraphs[0].text == "Škofja Vas ist ein Dorf."
    assert article.sections[0].paragraphs[0].ref_urls == ("https://example.org/ü",)
    para = article.section(("Geschichte",)).paragraphs[0]
    assert wikitext[para.start : para.end] == "日本語の段落。"


def _sample_articles() -> list[Path]:
    return sorted((SAMPLE / "articles").glob("*.wiki"))


@pytest.mark.parametrize("path", _sample_articles(), ids=lambda p: p.stem)
def test_sample_articles_parse(path):
    article = parse_article(path.stem, path.read_text(encoding="utf-8"))
    assert len(article.sections) >= 4
    assert article.sections[0].paragraphs
    assert any(p.ref_urls for s in article.sections for p in s.paragraphs)


def test_sample_manifest_and_news():
    assert (SAMPLE / "manifest.json").is_file(), f"the sample data is not shipped: no manifest in {SAMPLE}"
    manifest = json.loads((SAMPLE / "manifest.json").read_text(encoding="utf-8"))
    assert sum(1 for a in manifest["articles"] if a["opt_in"]) == 2
    assert {entry["file"] for entry in manifest["articles"]} == {p.name for p in _sample_articles()}
    for entry in manifest["articles"]:
        assert (SAMPLE / "articles" / entry["file"]).exists()
        assert ("{{Winellbot}}" in entry["talk"]) == entry["opt_in"]
    docs = [json.loads(line) for line in (SAMPLE / "news.jsonl").read_text(encoding="utf-8").splitlines() if line]
    assert 12 <= len(docs) <= 16
    assert len({d["id"] for d in docs}) == len(docs)
    for doc in docs:
        assert set(doc) == {"id", "url", "title", "text", "published", "publisher"}
        assert doc["published"].startswith("2026-")
        assert 300 <= len(doc["text"]) <= 1500
        assert doc["publisher"].endswith("(fictional)")
        assert any(name in doc["text"] for name in ("Quillhaven", "Ashgrove", "Norvane", "Lanternfall", "Dunmere"))
    assert sum("[[Category:Spam]]" in d["text"] for d in docs) == 1  # the hostile page the demo must escape


def test_mangled_markup_never_crashes_and_offsets_hold():
    """Seeded random damage to a full article: parse or raise ArticleParseError, never anything else."""
    rng = random.Random(7)
    debris = ["{{", "}}", "<ref>", "</ref>", "[[", "]]", "\n\n", "\n== X ==\n", "{|", "|}", "<!--", "'''", "\n* ", "|"]
    parsed = 0
    for _ in range(300):
        chars = list(FULL)
        for _ in range(rng.randint(1, 8)):
            k = rng.randrange(len(chars))
            if rng.random() < 0.5:
                del chars[k : k + rng.randint(1, 30)]
            else:
                chars.insert(k, rng.choice(debris))
        text = "".join(chars)
        try:
            article = parse_article("Mangled", text)
        except ArticleParseError:
            continue
        parsed += 1
        for section in article.sections:
            assert insert_paragraph(article, section, "Zq.").count("Zq.") == 1
            for para in section.paragraphs:
                assert replace_paragraph(article, para, para.wikitext) == text
    assert parsed > 250
