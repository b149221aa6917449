"""The local editor: short edits, the five figures, apply and evaluate, training, and the target sentinel.

All examples here are hand-written (``BRIDGE`` and ``LIBRARY`` in ``tests/editor_examples.py``). Model
predictions come from a scripted OpenAI-compatible server (through the real client) or from a tiny random
model built offline and run in-process (the ``tiny`` fixture, conftest.py).
"""
from __future__ import annotations

import json

import pytest
from agent_scene import CITE, PARA, PARA_WIKITEXT, UPDATE
from editor_examples import BRIDGE, LIBRARY, write_examples
from scripted_openai import ScriptedOpenAI

from winellbot import cli
from winellbot.editor.evaluate import figures, score_edit
from winellbot.editor.examples import EditorExample, Source, load_examples, load_tasks, split_by_article
from winellbot.editor.predict import ShortEditPredictor
from winellbot.editor.shortedit import ShortEdit, answer_of, apply_edit, numbered, parse_answer, sentence_ends
from winellbot.llm.client import ModelClient
from winellbot.llm.openai_backend import OpenAIBackend

def test_short_edit_round_trip_keeps_every_word():
    edit = answer_of(BRIDGE)
    assert edit == ShortEdit(1, "The bridge opened on 3 May 2024 and carried 3,000 vehicles in its first hour.")
    assert apply_edit(BRIDGE.original, edit)[0] == BRIDGE.target
    assert answer_of(LIBRARY).after == 2
    assert numbered(BRIDGE.original).splitlines()[1] == "[2] The bridge was built by Elwin Construction."
    assert parse_answer("After 0: It opened in May 2024.") == ShortEdit(0, "It opened in May 2024.")
    assert parse_answer("after sentence [3]: The bridge opened in May.\nmore text").after == 3
    assert parse_answer("The paragraph is fine as it is.") is None
    assert parse_answer("After 2: ok") is None  # too short to be a sentence
    assert apply_edit("One. Two.", ShortEdit(9, "Three is here."))[0] == "One. Two. Three is here."
    assert apply_edit("One. Two.", ShortEdit(0, "Zero is here."))[0] == "Zero is here. One. Two."


def test_sentences_keep_their_references():
    masked = "It opened in 2020.[R1] It cost 412 million.[R2][R3] Cyclists use it."
    ends = sentence_ends(masked)
    assert [masked[:e] for e in ends][:2] == ["It opened in 2020.[R1]",
                                              "It opened in 2020.[R1] It cost 412 million.[R2][R3]"]
    new, at = apply_edit(masked, ShortEdit(1, "It carried 3,000 vehicles."), suffix="<ref>x</ref>")
    assert new == ("It opened in 2020.[R1] It carried 3,000 vehicles.<ref>x</ref> It cost 412 million.[R2][R3] "
                   "Cyclists use it.")


def test_figures_by_hand():
    s = score_edit(BRIDGE, BRIDGE.target)
    assert (s.token_change, s.key_facts, s.commentary, s.preserved) == (15, 1.0, 0.0, 1.0)
    appended = BRIDGE.original + " " + BRIDGE.source.text
    s = score_edit(BRIDGE, appended)
    # commentary tokens: menu home sport harbour critics called ceremony costly spectacle subscribe
    assert s.commentary == 1.0 and s.key_facts == 1.0 and s.unsupported == 0.0
    s = score_edit(BRIDGE, "Work on the bridge began in 2020. It opened in May 2024 to great joy.")
    # O = {work, bridge, began, 2020, built, elwin, construction}: built, elwin, construction are lost
    assert s.preserved == pytest.approx(4 / 7)
    # new tokens {opened, may, 2024, great, joy}: great and joy are in neither paragraph nor source
    assert s.unsupported == pytest.approx(2 / 5)
    # K = {opened, 3, may, 2024, carried, 3000, vehicles, first, hour}: opened, may, 2024 are in the edit
    assert s.key_facts == pytest.approx(3 / 9)
    row = figures([BRIDGE, LIBRARY], {"hand-1": BRIDGE.target})
    assert row["missing"] == 1 and row["key_facts"] == pytest.approx(0.5)  # LIBRARY counted as no change


def scripted_client(server):
    return ModelClient(OpenAIBackend(server.base_url, "k", "editor"))


def test_apply_and_evaluate_with_a_scripted_editor(tmp_path, capsys):
    examples = write_examples(tmp_path / "ex.jsonl", [BRIDGE, LIBRARY])
    replies = ["After 1: The bridge opened on 3 May 2024 and carried 3,000 vehicles.",
               "I cannot help with that."]
    with ScriptedOpenAI(replies) as server:
        editor = ShortEditPredictor(scripted_client(server))
        edited = [editor.predict(t) for t in load_tasks(examples)]
    assert edited[0] == ("Work on the bridge began in 2020. The bridge opened on 3 May 2024 and carried 3,000 "
                         "vehicles. The bridge was built by Elwin Construction.")
    assert edited[1] == LIBRARY.original  # no edit in the reply: nothing changes
    assert editor.outcomes == {"edited": 1, "no edit in the reply": 1}
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text("".join(json.dumps({"id": i, "edited": e}) + "\n"
                                   for i, e in zip(["hand-1", "hand-2"], edited)))
    assert cli.main(["editor", "evaluate", examples, str(predictions), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows["human edit (target)"]["key_facts"] == 1.0 and rows["no change"]["key_facts"] == 0.0
    ours = rows[str(predictions)]
    assert ours["preserved"] == 1.0 and ours["commentary"] == 0.0
    assert ours["key_facts"] == pytest.approx((7 / 9 + 0) / 2) and ours["token_change"] == pytest.approx(11 / 2)


def test_apply_cli_offline_and_no_change(tmp_path, capsys):
    examples = write_examples(tmp_path / "ex.jsonl", [BRIDGE, LIBRARY])
    for kind in ("offline", "none"):
        out = tmp_path / f"{kind}.jsonl"
        assert cli.main(["editor", "apply", examples, "--output", str(out), "--editor", kind, "--no-progress"]) == 0
        lines = [json.loads(x) for x in out.read_text().splitlines()]
        assert [x["id"] for x in lines] == ["hand-1", "hand-2"]
    offline = [json.loads(x)["edited"] for x in (tmp_path / "offline.jsonl").read_text().splitlines()]
    assert offline[1].startswith(LIBRARY.original) and "4,000 letters" in offline[1]
    assert cli.main(["editor", "evaluate", examples, str(tmp_path / "offline.jsonl"),
                     str(tmp_path / "none.jsonl")]) == 0
    table = capsys.readouterr().out
    assert "| human edit (target) | 13.5 | 100.0% | 0.0% | 100.0% |" in table


def test_split_by_article_keeps_articles_whole():
    many = [EditorExample(f"x-{i}", f"T{i % 7}", (), "a", Source("", "", ""), "a b", {"article": f"T{i % 7}"})
            for i in range(70)]
    train, held = split_by_article(many, 0, 5)
    assert held and train and not {e.article for e in train} & {e.article for e in held}
    assert split_by_article(many, 0, 5) == (train, held)


def test_a_few_training_steps_lower_the_loss(tiny, tmp_path, capsys):
    from winellbot.editor.train import TrainConfig, train

    result = train([BRIDGE, LIBRARY], TrainConfig(base=str(tiny), output=str(tmp_path / "ad"), max_steps=8,
                                                  grad_accum=1, learning_rate=1e-2, layers=0, max_length=512,
                                                  progress=False, loss_sample=2))
    assert result.examples == 2 and result.steps == 8
    assert result.loss_after < result.loss_before - 0.05
    info = json.loads((tmp_path / "ad" / "editor.json").read_text())
    assert info["base"] == str(tiny) and info["prompt"] == "local-editor-1"
    # the CLI writes the model card beside the adapter
    data = write_examples(tmp_path / "ex.jsonl", [BRIDGE, LIBRARY])
    assert cli.main(["editor", "train", data, "--base", str(tiny), "--output", str(tmp_path / "cli"),
                     "--max-steps", "2", "--grad-accum", "1", "--layers", "0", "--no-progress", "--no-filter",
                     "--validation", data]) == 0
    card = (tmp_path / "cli" / "README.md").read_text()
    assert "2 training pair(s) from 2 article(s)" in card and "winellbot editor train" in card
    assert "| this editor |" in card


def test_the_loss_from_the_answer_logits_alone_is_the_whole_sequences_loss(tiny):
    """The collator computes logits only from the token before the answer on; the loss is unchanged."""
    import torch

    from winellbot.editor.train import _Collator, encode_examples
    from winellbot.llm.local_model import load_model, load_tokenizer

    tokenizer, model = load_tokenizer(tiny), load_model(tiny)
    rows, _ = encode_examples(tokenizer, [BRIDGE, LIBRARY], 512)
    batch = _Collator(tokenizer.pad_token_id)(rows)
    width = batch["input_ids"].shape[1]
    assert batch["labels"].shape[1] == batch["logits_to_keep"] < width / 2
    with torch.no_grad():
        tail = model(**batch).loss
        whole = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                      labels=torch.tensor([r["labels"] + [-100] * (width - len(r["labels"])) for r in rows])).loss
    assert float(tail) == pytest.approx(float(whole), rel=1e-5)


def test_the_predictor_never_sees_the_target(tiny, tmp_path):
    """Targets carrying a sentinel give the same predictions as no targets at all, and no prompt holds it."""
    from winellbot.editor.train import TrainConfig, train

    adapter = tmp_path / "adapter"
    train([BRIDGE, LIBRARY], TrainConfig(base=str(tiny), output=str(adapter), max_steps=1, grad_accum=1,
                                         layers=0, progress=False, loss_sample=1))
    sentinel = "SENTINEL-TARGET-7f3a never shown to an editor"
    with_target = write_examples(tmp_path / "a.jsonl", [BRIDGE, LIBRARY], target=sentinel)
    without = tmp_path / "b.jsonl"
    without.write_text("".join(json.dumps({k: v for k, v in e.to_json().items() if k != "target"}) + "\n"
                               for e in (BRIDGE, LIBRARY)))
    outputs = []
    for name, path in (("a", with_target), ("b", str(without))):
        out = tmp_path / f"{name}.pred.jsonl"
        assert cli.main(["editor", "apply", path, "--output", str(out), "--model", str(adapter),
                         "--no-progress"]) == 0
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1] and "SENTINEL" not in outputs[0]
    with ScriptedOpenAI(lambda received: "After 1: The bridge opened in May 2024.") as server:
        editor = ShortEditPredictor(scripted_client(server))
        for task in load_tasks(with_target):
            editor.predict(task)
        assert server.requests and not any("SENTINEL" in r.text for r in server.requests)
    assert all(e.target == sentinel for e in load_examples(with_target))  # the file did hold it


def test_copied_answers_take_the_sources_run_closest_to_the_human_sentence():
    from winellbot.editor.shortedit import shown_source, training_pair

    _, answer = training_pair(BRIDGE, copied=True)
    assert answer == "After 1: opened on 3 may 2024 and carried 3000 vehicles in its first hour"
    assert answer.split(": ", 1)[1] in shown_source(BRIDGE.task())  # word for word, page noise left out
    assert training_pair(BRIDGE)[1] == "After 1: " + answer_of(BRIDGE).sentence  # the written answer


def test_copy_decoding_writes_only_a_run_of_the_sources_words(tiny):
    """Whatever the weights (the tiny model's are random), the reply is "After N:" and source words."""
    import re

    from winellbot.llm.base import ChatRequest, Message
    from winellbot.llm.copying import MIN_WORDS
    from winellbot.llm.transformers_backend import TransformersBackend

    backend = TransformersBackend(tiny, max_new_tokens=96)
    source = " ".join(BRIDGE.source.text.split())
    for seed_text in ("Add the fact.", "Paragraph: the council approved the bridge."):
        reply = backend.chat(ChatRequest("editor", (Message("user", seed_text),), max_tokens=96, copy_from=source))
        m = re.fullmatch(r"After (\d+): (.+)", reply.text)
        assert m, reply.text
        copied = m.group(2).split()
        assert len(copied) >= MIN_WORDS and f" {' '.join(copied)} " in f" {source} ", reply.text
        assert reply.finish_reason == "stop"


def test_an_editor_trained_on_copied_answers_adds_only_source_words(tiny, tmp_path):
    from winellbot.editor.train import TrainConfig, train

    adapter = tmp_path / "copying"
    train([BRIDGE, LIBRARY], TrainConfig(base=str(tiny), output=str(adapter), max_steps=1, grad_accum=1,
                                         layers=0, progress=False, loss_sample=1))
    assert json.loads((adapter / "editor.json").read_text())["answer"] == "copied-span-1"
    examples = write_examples(tmp_path / "ex.jsonl", [BRIDGE, LIBRARY])
    out = tmp_path / "p.jsonl"
    assert cli.main(["editor", "apply", examples, "--output", str(out), "--model", str(adapter), "--no-progress"]) == 0
    edited = {x["id"]: x["edited"] for x in map(json.loads, out.read_text().splitlines())}
    for ex in (BRIDGE, LIBRARY):
        scores = score_edit(ex, edited[ex.id])
        assert scores.preserved == 1.0 and scores.unsupported == 0.0 and scores.token_change >= 4, edited[ex.id]


# -- the local editor inside the pipeline ([llm] editor_backend = "local") -------------------------

def local_edit_with(reply: str):
    from winellbot.pipeline.local_edit import LocalEditor

    with ScriptedOpenAI([reply]) as server:
        edit = LocalEditor(scripted_client(server), title="Ada Lovelace Racing").edit(PARA, UPDATE, CITE)
        prompt = server.requests[0].text
    return edit, prompt


def test_local_editor_inserts_the_sentence_and_cites_it():
    from winellbot.pipeline.agent_edit import cite_news

    edit, prompt = local_edit_with("After 1: Mara Quist won the Monaco sprint race on 24 May 2025.")
    assert "[1] The team was founded in 2015 by Ada Lovelace." in prompt and "cite web" not in prompt
    first, second = PARA_WIKITEXT.split(" It won ")
    assert edit.new_paragraph == (f"{first} Mara Quist won the Monaco sprint race on 24 May 2025.{cite_news(CITE)} "
                                  f"It won {second}")
    assert edit.added_text == "Mara Quist won the Monaco sprint race on 24 May 2025."
    assert "inserted after sentence 1" in edit.reason


@pytest.mark.parametrize("reply, reason", [
    ("After 2: Quist won [[Monaco]] on 24 May 2025.", "added markup"),
    ("After 2: The team hired a new chef for the paddock kitchen.", "left out a number"),
    ("Sure! Here is the paragraph.", "no edit in the local editor's reply"),
])
def test_local_editor_refuses_unfaithful_sentences(reply, reason):
    from winellbot.pipeline.agent_edit import cite_news

    edit, _ = local_edit_with(reply)
    assert reason in edit.reason
    assert edit.new_paragraph == f"{PARA_WIKITEXT} {UPDATE.text}{cite_news(CITE)}"


def test_config_local_editor_uses_the_adapter_in_both_pipelines(tiny, tmp_path):
    from winellbot import factory
    from winellbot.config import load_settings
    from winellbot.editor.predict import shipped_editor
    from winellbot.errors import ConfigError
    from winellbot.pipeline.local_edit import LocalEditor

    settings = load_settings(overrides={"llm": {"editor_backend": "local"}})
    if (shipped_editor() / "adapter_config.json").is_file():
        pipeline = factory.build_pipeline(settings)
        assert isinstance(pipeline.editor, LocalEditor)
        assert pipeline.editor.client.backend.model_dir == shipped_editor()
    else:  # nothing shipped: a clear error, never a silent append-only editor
        with pytest.raises(ConfigError, match="no editor is shipped"):
            factory.build_pipeline(settings)
    with pytest.raises(ConfigError, match="no model or adapter"):
        factory.build_pipeline(load_settings(overrides={"llm": {"editor_backend": "local",
                                                                "editor_model_dir": str(tmp_path)}}))
    settings = load_settings(overrides={"llm": {"editor_backend": "local", "editor_model_dir": str(tiny)},
                                        "pipeline": {"backend": "openai"}})
    with ScriptedOpenAI([]) as server:
        settings.llm.base_url = server.base_url
        pipeline = factory.build_pipeline(settings)
    assert isinstance(pipeline.editor, LocalEditor) and pipeline.editor.client.backend.model_dir == tiny


def test_evaluate_adds_the_papers_model_annotation(tmp_path, capsys):
    """Key and commentary words by the model, then its judgment, beside the lexical figures."""
    def reply(received):
        system, user = received.messages[0]["content"], received.messages[-1]["content"]
        if "commentary words" in system:
            return json.dumps({"key_words": ["3 May 2024", "3,000 vehicles"],
                               "commentary_words": ["costly spectacle"]})
        elements = [line.split(". ", 1)[1] for line in user.split("\n\nParagraph:")[0].splitlines()[1:]]
        paragraph = user.split("Paragraph:\n", 1)[1]
        return json.dumps({"judgments": [{"element": e, "thought": "", "mentioned": e in paragraph}
                                         for e in elements]})

    examples = write_examples(tmp_path / "ex.jsonl", [BRIDGE])
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(json.dumps({"id": "hand-1", "edited": BRIDGE.original + " It opened on 3 May 2024."}))
    with ScriptedOpenAI(reply) as server:
        config = tmp_path / "winellbot.toml"
        config.write_text(f'[llm]\nbase_url = "{server.base_url}"\nmodel = "judge"\n'
                          f'[state]\npath = "{tmp_path / "state.sqlite"}"\n')
        assert cli.main(["editor", "evaluate", examples, str(predictions), "--model-annotation",
                         "--config", str(config), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[str(predictions)]["model_key_facts"] == 0.5 and rows[str(predictions)]["model_commentary"] == 0.0
    assert rows["human edit (target)"]["model_key_facts"] == 1.0 and rows["no change"]["model_key_facts"] == 0.0


@pytest.mark.slow
def test_the_shipped_editor_works_after_the_readme_setup(tmp_path):
    """`winellbot editor apply` with no --model uses the adapter in winellbot/data/editor on the bundled base.

    Everything it needs is installed by ``bash scripts/setup.sh`` or shipped in the package: a missing
    piece fails the test (a skip would hide a packaging that dropped the editor)."""
    import gguf  # noqa: F401  (transformers reads the bundled GGUF with it: a dev dependency)
    import peft  # noqa: F401  (the adapter is a peft LoRA: a dependency of winellbot)

    from winellbot.bundled import smollm2_gguf
    from winellbot.editor.predict import shipped_editor

    smollm2_gguf()  # raises ModelMissing, with the command that installs it, when the base model is not there
    adapter = shipped_editor()
    for name in ("adapter_config.json", "adapter_model.safetensors", "editor.json", "README.md"):
        assert (adapter / name).is_file(), f"the shipped editor lacks {adapter / name}"
    assert (adapter / "adapter_model.safetensors").stat().st_size <= 20 * 2**20
    assert json.loads((adapter / "editor.json").read_text())["base"] == "smollm2"
    assert "dev examples" in (adapter / "README.md").read_text()
    examples = write_examples(tmp_path / "ex.jsonl", [BRIDGE])
    out = tmp_path / "pred.jsonl"
    assert cli.main(["editor", "apply", examples, "--output", str(out), "--no-progress"]) == 0
    edited = json.loads(out.read_text())["edited"]
    scores = score_edit(BRIDGE, edited)
    assert scores.preserved == 1.0  # a short edit never drops a word of the paragraph
    # the shipped editor copies: every word it adds is the source's
    assert json.loads((adapter / "editor.json").read_text())["answer"] == "copied-span-1" and scores.unsupported == 0.0
    # one sentence inserted at a sentence boundary, the paragraph itself untouched (where it goes is the
    # model's choice)
    assert BRIDGE.original in edited and len(edited.split()) >= len(BRIDGE.original.split()) + 3
