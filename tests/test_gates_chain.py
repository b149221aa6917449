"""GateChain: findings attached to each suggestion, failures held, counts per gate."""
from __future__ import annotations

import subprocess
import sys

import pytest

from winellbot.gates import Gate, GateChain, stopped, summary, summary_table
from winellbot.gates.registry import default_gates
from winellbot.models import Article, Citation, Document, Edit, GateFinding, Paragraph, Section, Suggestion, Update
from winellbot.state.db import State

OLD = "The Harbour Museum opened in 1921 on the old quay."
ARTICLE = Article("Harbour Museum", OLD, (Section("", 0, (), (Paragraph(OLD, OLD, 0, len(OLD)),)),))
SOURCE = ("Museum news. The Harbour Museum will close its east wing for eighteen months from January 2025 while "
          "engineers replace the roof, the director said on Friday. Exhibits will travel to partner museums.")


def make(added: str, url: str = "https://news.example.org/museum", quoted: bool = True) -> Suggestion:
    doc = Document("d1", url, "Museum wing to close", SOURCE)
    return Suggestion(
        article_title=ARTICLE.title, revid=1, section_path=(), paragraph_index=0,
        edit=Edit(OLD, OLD + " " + added, added, Citation(url, doc.title), quoted=quoted),
        update=Update(added, (), EXTRACTIVE, doc),
    )


EXTRACTIVE = ("The Harbour Museum will close its east wing for eighteen months from January 2025 while "
              "engineers replace the roof, the director said on Friday.")


def test_clean_extractive_suggestion_is_not_stopped():
    (checked,) = default_gates(state=State(), acceptability_threshold=0.0).check(ARTICLE, [make(EXTRACTIVE)])
    assert not checked.blocked
    # the paraphrase reminder, and the acceptability score's estimate (its bar is tested on its own)
    assert {(f.gate, f.severity) for f in checked.findings} == {("copying", "flag"), ("acceptability", "info")}


@pytest.mark.parametrize("added, url, gate, quoted", [
    (EXTRACTIVE.replace("eighteen", "six"), "https://news.example.org/m", "support", True),  # made-up number
    (EXTRACTIVE, "https://www.dailymail.co.uk/m", "sources", True),
    (EXTRACTIVE, "https://en.wikipedia.org/wiki/Harbour_Museum", "sources", True),
    (EXTRACTIVE, "https://news.example.org/m", "copying", False),  # the same words offered as prose
    ("We will close the east wing of the Harbour Museum for eighteen months.", "https://news.example.org/m",
     "style", True),
    ("The Harbour Museum opened in 1921 on the old quay.", "https://news.example.org/m", "duplicates", True),
])
def test_each_gate_stops_its_case(added, url, gate, quoted):
    (checked,) = default_gates().check(ARTICLE, [make(added, url, quoted)])
    assert checked.blocked
    assert gate in {f.gate for f in checked.findings if f.severity in ("hold", "block")}


class Broken(Gate):
    name = "broken"

    def check(self, article, suggestion):
        raise RuntimeError("boom")


class Flagger(Gate):
    name = "flagger"

    def check(self, article, suggestion):
        return [self.finding("flag", "look"), self.finding("flag", "look again")]


def test_failing_gate_holds_and_others_still_run():
    earlier = GateFinding("upstream", "info", "kept")
    s = Suggestion(**{**make(EXTRACTIVE).__dict__, "findings": (earlier,)})
    (checked,) = GateChain([Broken(), Flagger()]).check(ARTICLE, [s])
    assert checked.findings[0] == earlier
    assert [(f.gate, f.severity) for f in checked.findings[1:]] == [("broken", "hold"), ("flagger", "flag"),
                                                                     ("flagger", "flag")]
    assert checked.blocked and "boom" in checked.findings[1].message
    assert s.findings == (earlier,)  # the input is not mutated


def test_summary_counts_suggestions_per_gate_and_severity():
    chain = GateChain([Flagger(), Broken()])
    checked = chain.check(ARTICLE, [make(EXTRACTIVE), make(EXTRACTIVE + " More.")])
    counts = summary(checked)
    assert counts["flagger"] == {"info": 0, "flag": 2, "hold": 0, "block": 0}  # two findings each, counted once
    assert counts["broken"]["hold"] == 2
    assert stopped(checked) == {"flagger": 0, "broken": 2}
    assert summary([]) == {}
    table = summary_table(counts).splitlines()
    assert table[0] == "| gate | info | flag | hold | block | stopped |"
    assert table[2:] == ["| broken | 0 | 0 | 2 | 0 | 2 |", "| flagger | 0 | 2 | 0 | 0 | 0 |"]


def test_default_chain_order_and_no_heavy_imports():
    assert default_gates().names == ("sources", "hostile", "language", "clarity", "furniture", "tone", "primary",
                                     "novelty", "subject", "support", "copying", "style", "duplicates",
                                     "acceptability")
    code = ("import sys; from winellbot.gates.registry import default_gates; c = default_gates(); "
            "assert 'torch' not in sys.modules and 'transformers' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
