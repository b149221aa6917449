"""The wheel works: built from the tracked files, installed in a fresh venv outside the checkout.

The fresh venv sees this environment's installed dependencies through a .pth file (as
``--system-site-packages`` would show the system's), so nothing is downloaded: torch and the
models are not fetched again. winellbot itself comes from the wheel, and the test checks that
the copy in use is the installed one, not the checkout.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from wikiscene import ARTICLE, settings_for, write_news
from winellbot.config import dump_settings

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _installed_env(**extra: str) -> dict[str, str]:
    """This environment without PYTHONPATH: the installed winellbot, never the checkout's, is what runs."""
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, **extra}


def _tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, check=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: the package and its metadata
        return ["setup.cfg", "pyproject.toml", "README.md",
                *(str(p.relative_to(ROOT)) for p in (ROOT / "winellbot").rglob("*") if p.is_file()
                  and "__pycache__" not in p.parts)]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> tuple[Path, str, Path]:
    """Build the wheel from a copy of the checkout's files (tracked, or new and not ignored); returns
    (wheel, build output, the copied source)."""
    src = tmp_path_factory.mktemp("src")
    for rel in _tracked_files():
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    dist = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v",
                           "-w", str(dist), str(src)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return next(dist.glob("winellbot-*.whl")), done.stdout + done.stderr, src


@pytest.fixture(scope="module")
def fresh_venv(wheel, tmp_path_factory) -> Path:
    """A new venv outside the checkout, built by the Toolforge build script; returns its bin folder.

    The script runs as on Toolforge, except that pip may not use an index (PIP_NO_INDEX): what
    it would download it finds already installed through the .pth file.
    """
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib, "_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    env = _installed_env(WINELLBOT_VENV=str(venv), WINELLBOT_SRC=str(wheel[2]), PIP_NO_INDEX="1",
                         PYTHON=sys.executable)
    done = subprocess.run(["bash", str(ROOT / "scripts" / "toolforge" / "build.sh")], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "build: ready" in done.stdout and "torch" in done.stdout
    # what scripts/setup.sh does beside the venv (issue 30): mpnet unpacked, the word vectors in place
    assert (venv / "share" / "winellbot" / "all-mpnet-base-v2" / "model.safetensors").is_file()
    assert "build: mpnet at" in done.stdout and ("word vectors already at" in done.stdout
                                                  or "words written to" in done.stdout), done.stdout
    return venv / "bin"


def test_the_wheel_carries_prompts_data_and_templates_without_setuptools_warnings(wheel):
    path, log, _ = wheel
    assert "absent from the `packages` configuration" not in log
    assert "Package would be ignored" not in log
    names = set(zipfile.ZipFile(path).namelist())
    for folder in ("prompts", "data", "data/templates", "data/sample", "data/sample/articles", "data/editor"):
        tracked = {p.relative_to(ROOT).as_posix() for p in (ROOT / "winellbot" / folder).glob("*")
                   if p.is_file() and p.suffix != ".pyc"}
        assert tracked and tracked <= names, f"winellbot/{folder} missing from the wheel: {sorted(tracked - names)}"


def test_the_installed_command_runs_outside_the_checkout(fresh_venv, tmp_path):
    where = subprocess.run([str(fresh_venv / "python"), "-c", "import winellbot; print(winellbot.__file__)"],
                           cwd=tmp_path, env=_installed_env(), capture_output=True, text=True, check=True).stdout
    assert str(fresh_venv.parent) in where and str(ROOT) not in where
    done = subprocess.run([str(fresh_venv / "winellbot"), "--help"], cwd=tmp_path, env=_installed_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for command in ("run", "once", "article", "status", "demo", "backtest"):
        assert command in done.stdout


def test_one_page_offline_cycle_from_the_installed_wheel(fresh_venv, local_wiki, make_page, tmp_path):
    title = make_page.title("Wheeltown")
    local_wiki.edit(title, ARTICLE.format(name=title))
    bot = local_wiki.credentials.bot_user
    shutoff = f"User:{bot}/Shutoff-{make_page.title('s').replace(' ', '')}"
    local_wiki.edit(shutoff, "run")
    write_news(tmp_path / "news", title)
    config = tmp_path / "winellbot.toml"
    settings = settings_for(local_wiki, tmp_path, "", shutoff)
    config.write_text(dump_settings(settings), encoding="utf-8")
    env = _installed_env(WINELLBOT_BOT_PASSWORD=local_wiki.credentials.bot_password)
    done = subprocess.run([str(fresh_venv / "winellbot"), "once", "--config", str(config), f"-page:{title}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 page(s)" in done.stdout and "0 error(s)" in done.stdout, done.stdout
    # the job closed its state before its process ended (which skips the last garbage collection): no WAL is left
    state = Path(settings.state.path)
    assert state.is_file() and not Path(f"{state}-wal").exists(), sorted(p.name for p in state.parent.iterdir())
    queue = local_wiki.admin()._get(action="query", prop="revisions", titles=f"User:{bot}/Queue/{title}",
                                    rvprop="content", rvslots="main", formatversion="2")
    text = queue["query"]["pages"][0]["revisions"][0]["slots"]["main"]["content"]
    assert "<!-- winellbot-suggestion:" in text
