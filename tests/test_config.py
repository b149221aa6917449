import pytest

from winellbot.config import dump_settings, load_settings
from winellbot.errors import ConfigError


def test_defaults_without_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WINELLBOT_CONFIG", raising=False)
    s = load_settings()
    assert s.pipeline.backend == "offline"
    assert s.wiki.shutoff == "User:WinellBot/Shutoff"


def test_file_overrides_defaults_and_round_trips(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[wiki]\nusername = "ExampleBot"\nput_throttle = 2\n[llm]\nstage_models = { criteria = "big" }\n')
    s = load_settings(path)
    assert s.wiki.username == "ExampleBot" and s.wiki.put_throttle == 2.0
    assert s.wiki.queue == "User:ExampleBot/Queue"
    again = tmp_path / "d.toml"
    again.write_text(dump_settings(s))
    assert load_settings(again) == s


@pytest.mark.parametrize("text, message", [
    ("[wiki]\nusernme = 'x'\n", "unknown setting wiki.usernme"),
    ("[wikki]\nusername = 'x'\n", "unknown config section"),
    ("[wiki]\nmaxlag = 'five'\n", "wiki.maxlag should be int"),
    ("[wiki\n", "not valid TOML"),
])
def test_bad_config_gives_clear_errors(tmp_path, text, message):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_settings(path)


def test_secrets_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("WINELLBOT_BOT_PASSWORD", "s3cret")
    monkeypatch.setenv("WINELLBOT_OPENAI_API_KEY", "k")
    s = load_settings(overrides={})
    assert s.bot_password == "s3cret" and s.llm.api_key == "k"


def test_agent_with_the_offline_editor_and_a_bad_editor_backend(monkeypatch):
    from winellbot import factory
    from winellbot.errors import ConfigError
    from winellbot.pipeline.offline import OfflineEditor

    monkeypatch.setenv("WINELLBOT_OPENAI_API_KEY", "k")
    s = load_settings(overrides={"pipeline": {"backend": "openai"}, "llm": {"editor_backend": "offline"}})
    assert isinstance(factory.build_pipeline(s).editor, OfflineEditor)
    s.llm.editor_backend = "telepathy"
    with pytest.raises(ConfigError, match="editor_backend"):
        factory.build_pipeline(s)
