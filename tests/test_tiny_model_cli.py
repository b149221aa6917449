"""The tiny model's command-line entry point builds a model the transformers editor can load."""
from winellbot.llm.base import ChatRequest, Message
from winellbot.llm.tiny_model import main


def test_tiny_model_entry_point_builds_a_loadable_model(tmp_path, capsys):
    from winellbot.llm.transformers_backend import TransformersBackend

    assert main([str(tmp_path / "editor"), "--seed", "1"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "editor")
    assert (tmp_path / "editor" / "config.json").exists()
    backend = TransformersBackend(tmp_path / "editor", max_new_tokens=4)
    reply = backend.chat(ChatRequest("editor", (Message("user", "Original paragraph. News."),), max_tokens=4))
    assert isinstance(reply.text, str) and reply.completion_tokens >= 1
