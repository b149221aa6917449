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
    from winellbot.pipeline.offline.editor import OfflineEditor

    monkeypatch.setenv("WINELLBOT_OPENAI_API_KEY", "k")
    s = load_settings(overrides={"pipeline": {"backend": "openai"}, "llm": {"editor_backend": "offline"}})
    assert isinstance(factory.build_pipeline(s).editor, OfflineEditor)
    s.llm.editor_backend = "telepathy"
    with pytest.raises(ConfigError, match="editor_backend"):
        factory.build_pipeline(s)


@pytest.mark.parametrize("text, message", [
    ('[wiki]\nqueue_mode = "multi"\n', "wiki.queue_mode must be one of \"per-article\", \"single\"; got \"multi\""),
    ('[llm]\neditor_backend = "transfomers"\n', "llm.editor_backend must be one of \"llm\", \"transformers\""),
    ('[pipeline]\nbackend = "magic"\n', "pipeline.backend must be one of \"offline\", \"openai\""),
    ('[search]\nbackend = "bing"\n', "search.backend must be one of \"corpus\", \"gdelt\", \"brave\", \"searxng\""),
    ("[schedule]\ninterval_minutes = -5\n", "schedule.interval_minutes must be greater than 0; got -5"),
    ("[schedule]\ninterval_minutes = 0\n", "schedule.interval_minutes must be greater than 0"),
    ("[wiki]\nmaxlag = -5\n", "wiki.maxlag must be greater than 0; got -5"),
    ("[wiki]\nput_throttle = -1\n", "wiki.put_throttle must be at least 0"),
    ("[wiki]\nmax_wait = 0\n", "wiki.max_wait must be greater than 0"),
    ("[pipeline]\nmax_suggestions = true\n", "pipeline.max_suggestions should be int, got true (a boolean is not a number)"),
    ("[pipeline]\nmax_suggestions = 0\n", "pipeline.max_suggestions must be at least 1"),
    ("[wiki]\nput_throttle = false\n", "a boolean is not a number"),
    ("[wiki]\nsimulate = 1\n", "wiki.simulate should be bool, got 1"),
    ('[search]\ncorpus_dir = "/no/such/folder"\n', "search.corpus_dir: no such folder: /no/such/folder"),
    ('[llm]\neditor_model_dir = "/no/such/model"\n', "llm.editor_model_dir: no such folder"),
    ('[llm]\nstage_models = { critera = "x" }\n', "llm.stage_models: unknown key(s) critera; allowed: criteria"),
    ("[wiki]\ncontent_namespaces = [0, -1]\n", "wiki.content_namespaces must be at least 0; got -1"),
    ('[state]\njournal_mode = "wall"\n', "state.journal_mode must be one of \"auto\", \"wal\""),
])
def test_values_outside_their_domain_are_refused_naming_the_allowed_values(tmp_path, text, message):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_settings(path)
    assert message in str(exc.value)


def test_every_default_is_inside_its_domain_and_a_new_setting_joins_with_one_line(tmp_path):
    import dataclasses

    from winellbot.config import Settings, setting, validate_settings

    validate_settings(Settings())

    @dataclasses.dataclass
    class Caps:  # how another module's setting declares its domain: one line
        per_day: int = setting(20, at_least=1)

    (f,) = dataclasses.fields(Caps)
    with pytest.raises(ConfigError, match="caps.per_day must be at least 1; got 0"):
        f.metadata["domain"].check("caps.per_day", 0)


def test_search_backend_choices_match_the_search_package():
    from winellbot import config
    from winellbot.search import backends

    assert config.SEARCH_BACKENDS == backends.BACKENDS


def test_overrides_are_validated_too():
    with pytest.raises(ConfigError, match="schedule.recheck_days must be at least 0"):
        load_settings(overrides={"schedule": {"recheck_days": -1}})


@pytest.mark.parametrize("section, key, value, says", [
    ("schedule", "interval_minutes", 99999999999999999, "at most 525600"),
    ("wiki", "max_wait", float("inf"), "finite"),
    ("wiki", "max_wait", 1e12, "at most 3600"),
    ("wiki", "put_throttle", float("inf"), "finite"),
    ("wiki", "put_throttle", float("nan"), "finite"),
    ("wiki", "content_namespaces", [True], "a boolean is not a number"),
    ("posting", "max_per_wiki_per_day", 10**9, "at most 10000"),
])
def test_extreme_settings_are_refused_with_the_setting_named(section, key, value, says):
    """Issue 30's probes: each crashed later (an OverflowError in run, minute-long sleeps)."""
    from winellbot.config import load_settings

    with pytest.raises(ConfigError, match=f"{section}.{key}.*{says}"):
        load_settings(None, overrides={section: {key: value}})


@pytest.mark.parametrize("wiki, says", [
    ({"queue_prefix": "User:WinellBot/Shutoff"}, "the shutoff page (wiki.shutoff_page), User:WinellBot/Shutoff"),
    ({"queue_prefix": "User:WinellBot"}, "the bot's user page, User:WinellBot"),
    ({"queue_prefix": "user:winellBot", "queue_mode": "single"}, "the bot's user page, User:WinellBot"),
    ({"queue_prefix": "User:WinellBot/Watchlist", "watchlist_page": "User:WinellBot/Watchlist"},
     "the watchlist page (wiki.watchlist_page), User:WinellBot/Watchlist"),
    ({"queue_prefix": "User:WinellBot/Outcomes"}, "the outcomes report, User:WinellBot/Outcomes"),
    ({"queue_prefix": "User:WinellBot/Stop here", "shutoff_page": "user:WinellBot/Stop_here"},
     "the shutoff page (wiki.shutoff_page), user:WinellBot/Stop_here"),
    # a control page under the queue: the queue page of the article of that name
    ({"queue_prefix": "User:WinellBot/Queue", "watchlist_page": "User:WinellBot/Queue/Watched"},
     'User:WinellBot/Queue/Watched as the queue page of an article named "Watched"'),
])
def test_a_queue_on_one_of_the_bots_control_pages_is_refused(wiki, says):
    with pytest.raises(ConfigError) as exc:
        load_settings(overrides={"wiki": wiki})
    message = str(exc.value)
    assert message.startswith(f'wiki.queue_prefix "{wiki["queue_prefix"]}" would make the review queue write ')
    assert says in message and "\n" not in message


@pytest.mark.parametrize("wiki", [
    {}, {"queue_prefix": "User:WinellBot/Review queue"}, {"queue_prefix": "User:WinellBot/Shutoff/Queue"},
    {"queue_prefix": "User:WinellBot/Queue", "watchlist_page": "User:WinellBot/Watchlist"},
])
def test_a_queue_of_its_own_is_accepted(wiki):
    assert load_settings(overrides={"wiki": wiki}).wiki.queue
