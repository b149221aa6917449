"""winellbot.toml.sample lists every setting of the typed defaults, with the same default value.

Whoever adds a setting to winellbot/config.py adds it, commented, to winellbot.toml.sample too:
this test fails until they do (and when the sample keeps a setting that no longer exists, or
shows another value than the default).
"""
import dataclasses
import re
import tomllib
from pathlib import Path

from winellbot.config import Settings, load_settings

SAMPLE = Path(__file__).resolve().parents[1] / "winellbot.toml.sample"


def _defaults() -> dict[str, dict]:
    settings = Settings()
    return {f.name: dataclasses.asdict(getattr(settings, f.name)) for f in dataclasses.fields(settings)}


def test_the_sample_has_every_key_of_the_typed_defaults_with_its_default_value():
    sample = tomllib.loads(SAMPLE.read_text(encoding="utf-8"))
    defaults = _defaults()
    assert sorted(sample) == sorted(defaults), "sections differ"
    for section, values in defaults.items():
        missing = sorted(set(values) - set(sample[section]))
        extra = sorted(set(sample[section]) - set(values))
        assert not missing, f"[{section}] lacks {missing} in winellbot.toml.sample"
        assert not extra, f"[{section}] has {extra}, which config.py does not know"
        for key, value in values.items():
            assert sample[section][key] == value, f"[{section}] {key}: sample {sample[section][key]!r}, default {value!r}"
            assert type(sample[section][key]) is type(value), f"[{section}] {key}: write {value!r} as the default's type"


def test_the_sample_loads_as_a_config_file_and_gives_the_defaults():
    assert load_settings(SAMPLE) == Settings()


def test_every_key_in_the_sample_is_explained_by_a_comment():
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if not re.match(r"^[a-z_]+ = ", line):
            continue
        block = lines[:i]
        # the comment may sit right above the key or above the group of keys it explains
        above = [ln for ln in reversed(block) if not re.match(r"^[a-z_]+ = ", ln)]
        assert above and above[0].startswith("#"), f"no comment above {line!r}"
