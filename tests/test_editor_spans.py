"""The ranking of source runs that the copying editor chooses from (winellbot.editor.spans)."""
import json

import pytest
from editor_examples import BRIDGE, LIBRARY

from winellbot.editor.examples import EditorExample, Source
from winellbot.editor.shortedit import shown_source
from winellbot.editor.spans import SpanRanker, fit, labelled_runs, runs

# The paragraph lacks the opening's date and traffic; the page around it is menus, other stories and opinion.
NEWS = EditorExample(
    "hand-3", "Harbour Bridge", ("History",),
    "Work on the bridge began in 2020. The bridge was built by Elwin Construction for the port authority.",
    Source("https://news.example/b", "Harbour Bridge opens to traffic",
           "home news sport weather sign in subscribe to our newsletter today most read stories this week "
           "the harbour bridge opened to traffic on 3 may 2024 and carried 3000 vehicles in its first hour "
           "according to the port authority critics called the ceremony a costly and tasteless spectacle "
           "that nobody asked for share this story on social media follow us for more local news and views"),
    "Work on the bridge began in 2020. The bridge opened to traffic on 3 May 2024 and carried 3,000 vehicles "
    "in its first hour. The bridge was built by Elwin Construction for the port authority.",
    {"article": "Harbour Bridge"})


def test_every_run_of_each_length_is_a_candidate():
    assert runs(NEWS, []) == []
    words = shown_source(NEWS).split()
    found = runs(NEWS, words)
    assert {(r.start, r.length) for r in found} == {(i, n) for n in (10, 15, 20, 25, 30)
                                                     for i in range(len(words) - n + 1)}
    assert len({len(r.features) for r in found}) == 1


def test_the_json_trees_score_as_scikit_learn_does():
    from sklearn.ensemble import GradientBoostingRegressor

    examples = [NEWS, BRIDGE, LIBRARY]
    fitted = fit(examples, lambda e: shown_source(e).split(), trees=20, depth=3)
    json.dumps(fitted)  # plain JSON
    rows = [row for e in examples for row in labelled_runs(e, shown_source(e).split())]
    model = GradientBoostingRegressor(n_estimators=20, max_depth=3, learning_rate=0.05, random_state=0)
    model.fit([r[0] for r in rows], [r[1] for r in rows])
    ranker = SpanRanker(fitted)
    expected = model.predict([r[0] for r in rows])
    assert [ranker.score(r[0]) for r in rows] == pytest.approx(list(expected), abs=1e-9)


def test_the_shipped_ranker_offers_the_run_with_the_missing_facts():
    from winellbot.editor.predict import shipped_editor

    path = shipped_editor() / "spans.json"
    assert path.is_file(), f"the run ranker is not shipped beside the editor: {path} is missing"
    choices = SpanRanker.load(path).best(NEWS.task(), shown_source(NEWS).split())
    assert len(choices) == 3 and len(set(choices)) == 3
    assert any("3 may 2024" in c and "3000 vehicles" in c for c in choices), choices
    assert not any(c.startswith("home news sport") for c in choices), choices  # the page's menu is no choice


def test_choosing_copy_replies_with_one_of_the_choices(tiny):
    """Whatever the weights (the tiny model's are random), the reply is "After N:" and one whole choice."""
    import re

    from winellbot.llm.base import ChatRequest, Message
    from winellbot.llm.transformers_backend import TransformersBackend

    backend = TransformersBackend(tiny, max_new_tokens=96)
    choices = ("opened to traffic on 3 may 2024", "carried 3000 vehicles in its first hour",
               "critics called the ceremony a costly spectacle")
    for text in ("Add the fact.", "Paragraph: the council approved the bridge."):
        reply = backend.chat(ChatRequest("editor", (Message("user", text),), max_tokens=96,
                                         copy_from=" ".join(choices), copy_choices=choices))
        m = re.fullmatch(r"After (\d+): (.+)", reply.text)
        assert m and m.group(2) in choices, reply.text
