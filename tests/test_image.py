"""The container image as Toolforge's Build Service makes it, stood in for by a virtualenv: a fresh venv
with ``pip install -r requirements.txt`` (nothing else: no setup.sh, no checkout on the path), then each
Procfile process started from it as the buildpack's launcher does (``bash -c`` in the app's folder with
the environment's ``bin`` first on PATH), against the local wiki.

The venv is built once per session (minutes: torch, transformers, spaCy, the models). A developer can
reuse one: ``WINELLBOT_IMAGE_VENV=/path/to/venv`` (built the same way; reinstall winellbot into it with
``pip install --no-deps --force-reinstall .`` after changing the code).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from wikiscene import configured_state

from winellbot.config import dump_settings
from winellbot.state.lock import JobLock

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def procfile() -> dict[str, str]:
    """The Procfile's processes: type -> command."""
    lines = (ROOT / "Procfile").read_text(encoding="utf-8").splitlines()
    pairs = (line.split(":", 1) for line in lines if line.strip())
    return {kind.strip(): command.strip() for kind, command in pairs}


@pytest.fixture(scope="session")
def image_venv(tmp_path_factory) -> Path:
    """A venv made from requirements.txt alone, as the buildpack makes the image's."""
    given = os.environ.get("WINELLBOT_IMAGE_VENV")
    if given:
        return Path(given)
    venv = tmp_path_factory.mktemp("image") / "venv"
    # PIP_RETRIES=0: where PyTorch's page of CPU builds cannot be reached (a machine that reaches only the
    # registries), pip asks it once per package; each failure then costs a moment, not five retries.
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile",
                           "-r", "requirements.txt"], cwd=ROOT, capture_output=True, text=True, timeout=3600,
                          env=dict(_without_checkout(os.environ), PIP_RETRIES="0"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return venv


def _without_checkout(env) -> dict[str, str]:
    """The environment without the developer's PYTHONPATH (the image imports only what it installed) and
    without the hubs' offline switches (the image must need no hub, not be kept from one)."""
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    return {k: v for k, v in env.items() if k not in dropped}


def image_env(venv: Path, home: Path, **extra: str) -> dict[str, str]:
    """What a process of the image sees: its environment's bin first on PATH, the tool's HOME, and its
    modules' bytecode kept once compiled. The image's pip compiles every module at build; the test's venv is
    built with ``--no-compile``, so a module is compiled when a process first imports it, and kept (in the
    venv's ``pycache`` folder, whatever the developer's PYTHONDONTWRITEBYTECODE) for the processes after."""
    env = {k: v for k, v in _without_checkout(os.environ).items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PATH=f"{venv / 'bin'}:{env['PATH']}", HOME=str(home), PYTHONPYCACHEPREFIX=str(venv / "pycache"),
               **extra)
    return env


def start(kind: str, env: dict[str, str]) -> subprocess.Popen:
    """The Procfile's process ``kind``, started as the launcher starts it."""
    return subprocess.Popen(["bash", "-c", procfile()[kind]], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def run(kind: str, env: dict[str, str], timeout: float = 600) -> tuple[int, str, float]:
    """Runs the process ``kind`` to its end: (exit status, output, wall seconds)."""
    began = time.monotonic()
    proc = start(kind, env)
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out, time.monotonic() - began


@pytest.fixture
def tool(scene, tmp_path):
    """The tool's home: the scene's settings in ~/winellbot.toml (at most its two towns per cycle)."""
    settings = scene["settings"]
    settings.schedule.max_pages_per_cycle = 2
    home = tmp_path / "home"
    home.mkdir()
    (home / "winellbot.toml").write_text(dump_settings(settings), encoding="utf-8")
    return settings, home


def test_the_image_holds_the_cpu_torch_and_every_bundled_model_and_no_local_model_server(image_venv, tmp_path):
    """Nothing is fetched or unpacked at start: mpnet and the word vectors are in the environment's share
    folder (a new HOME, where setup.sh would have put them, is empty)."""
    probe = ("import importlib.util, sys, torch\n"
             "from winellbot import bundled\n"
             "from winellbot.pipeline import vectors\n"
             "print(torch.__version__)\n"
             "print(bundled.mpnet_dir()); print(bundled.minilm_dir()); print(bundled.spacy_model_dir())\n"
             "print(vectors.DEFAULT_PATH); print(vectors.default_vectors() is not None)\n"
             "print(importlib.util.find_spec('llama_cpp') is None, sys.prefix)\n")
    home = tmp_path / "empty-home"
    home.mkdir()
    done = subprocess.run([str(image_venv / "bin" / "python"), "-c", probe], env=image_env(image_venv, home),
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    torch, mpnet, minilm, spacy, glove, loaded, no_server = done.stdout.split("\n")[:7]
    prefix = no_server.split(" ", 1)[1]
    assert torch.endswith("+cpu")
    assert Path(mpnet) == Path(prefix) / "share" / "winellbot" / "all-mpnet-base-v2"
    assert minilm.startswith(prefix) and spacy.startswith(prefix)
    assert Path(glove) == Path(prefix) / "share" / "winellbot" / "glove100.npz" and loaded == "True"
    assert no_server.startswith("True") and not any(home.iterdir()), list(home.iterdir())
    nvidia = [p.name for p in (Path(prefix) / "lib").glob("python3*/site-packages/nvidia*")]
    assert not nvidia, f"CUDA packages in the image: {nvidia}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_web_process_serves_the_review_page(image_venv, tool):
    """The Procfile's web process (gunicorn on $PORT, as the Build Service's webservice starts it)."""
    settings, home = tool
    port = _free_port()
    env = image_env(image_venv, home, PORT=str(port), WINELLBOT_REVIEW_SECRET_KEY="k" * 64)
    proc = start("web", env)
    try:
        deadline, status = time.monotonic() + 120, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as reply:
                    status, body = reply.status, reply.read().decode()
                break
            except urllib.error.HTTPError as e:
                status, body = e.code, e.read().decode()
                break
            except OSError:
                time.sleep(0.5)
        assert status == 200 and "<html" in body.lower(), (status, proc.poll())
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=60)
    assert "Listening at: http://0.0.0.0:" in out, out[-2000:]


@pytest.mark.sqlite_state  # health on SQLite: the job holding the file's lock
def test_a_dry_run_cycle_then_status_and_health_run_from_the_image_on_the_local_wiki(image_venv, tool):
    settings, home = tool
    env = image_env(image_venv, home)
    code, out, seconds = run("dry-run", env)
    assert code == 0, out[-3000:]
    runs = configured_state(settings).db["runs"].rows_where(order_by="id")
    assert [r["status"] for r in runs] == ["dry-run"], out[-3000:]
    print(f"\ncold start: `once --dry-run` from the image venv took {seconds:.1f} s")

    code, out, _ = run("status", env)
    assert code == 0 and f"state: {configured_state(settings).path}" in out, out[-2000:]
    code, out, _ = run("health", env)
    assert code == 1 and "no winellbot job holds the state" in out, out[-2000:]
    with JobLock(settings.state.path):
        code, out, _ = run("health", env)
    assert code == 0 and out.startswith("healthy:"), out[-2000:]
