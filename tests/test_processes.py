"""Servers and jobs started by a benchmark or a test fixture are stopped on every way out
(winellbot/processes.py): the end, an error, Ctrl-C, SIGTERM (issue 45: `timeout 60
benchmarks/several_jobs.py ...` left its MariaDB server, the wiki's PHP workers and a bot job running).

Every process a run started is found afterwards by a mark in its environment (each child inherits it),
whichever process group or parent it ended up with.
"""
from __future__ import annotations

import os
import secrets
import signal
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from mariadb import mariadb_available

from winellbot.localwiki import mediawiki_available
from winellbot.processes import Children, members, stop_group

ROOT = Path(__file__).resolve().parents[1]
MARK = "WINELLBOT_PROCESS_MARK"


def marked(mark: str) -> dict[int, str]:
    """``{pid: command line}`` of the running processes whose environment holds ``MARK=mark``."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = (entry / "environ").read_bytes().split(b"\0")
            if f"{MARK}={mark}".encode() in env and (entry / "stat").read_text().split(") ")[1][0] != "Z":
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:160]
        except (OSError, IndexError):
            continue
    return found


def wait_for(mark: str, *words: str, timeout: float = 240) -> dict[int, str]:
    """Until processes marked ``mark`` run whose command lines hold each of ``words``; returns them all."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = marked(mark)
        if all(any(w in cmd for cmd in now.values()) for w in words):
            return now
        time.sleep(0.5)
    raise AssertionError(f"{words} did not all start within {timeout} s: {marked(mark)}")


def gone(mark: str, timeout: float = 60) -> dict[int, str]:
    """What is still running of ``mark`` after up to ``timeout`` seconds ({} once everything ended)."""
    deadline = time.monotonic() + timeout
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.5)
    return marked(mark)


def kill_left(mark: str) -> None:
    """Kill what a failed test left running of ``mark`` (its own processes only), group by group."""
    for pid in marked(mark):
        try:
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def like_the_terminal(process: subprocess.Popen, sig: int) -> None:
    """``sig`` as ``timeout`` sends it (to the process, then to its group) or Ctrl-C (to the group)."""
    if sig == signal.SIGTERM:
        process.send_signal(sig)
    os.killpg(process.pid, sig)


# -- the helpers ------------------------------------------------------------------------------------

STUBBORN = "trap '' TERM; sleep 300 & sleep 300 & wait"  # ignores SIGTERM; forks two that do not


def test_a_group_is_stopped_whole_and_what_ignores_sigterm_is_killed(tmp_path):
    mark = secrets.token_hex(4)
    with Children(timeout=2.0) as children:
        shell = children.start(["sh", "-c", STUBBORN], env={**os.environ, MARK: mark})
        deadline = time.monotonic() + 20
        while len(members(shell.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(members(shell.pid)) == 3 and set(members(shell.pid)) == set(marked(mark))
    assert marked(mark) == {} and shell.returncode == -signal.SIGKILL
    assert not stop_group(shell.pid, process=shell), "a group that ended is not signalled again"


def test_children_are_stopped_when_an_exception_leaves_the_block():
    mark = secrets.token_hex(4)
    with pytest.raises(RuntimeError), Children() as children:
        children.start(["sleep", "300"], env={**os.environ, MARK: mark})
        wait_for(mark, "sleep", timeout=20)
        raise RuntimeError("boom")
    assert marked(mark) == {}


SCRIPT = textwrap.dedent("""
    import sys, time
    from winellbot.processes import Children, stopping_on_signals
    with stopping_on_signals(), Children() as children:
        children.start(["sleep", "300"])
        print("started", flush=True)
        time.sleep(300)
""")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_script_stopped_by_a_signal_stops_its_children_and_exits_as_killed_by_it(sig):
    mark = secrets.token_hex(4)
    script = subprocess.Popen([sys.executable, "-c", SCRIPT], env={**os.environ, MARK: mark}, stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    assert script.stdout.readline() == "started\n"
    like_the_terminal(script, sig)
    assert script.wait(timeout=30) == 128 + sig
    assert gone(mark, timeout=10) == {}


# -- the benchmark operators run, and the tests' own fixtures --------------------------------------------

_servers_installed = pytest.mark.skipif(not (mediawiki_available() and mariadb_available()),
                                        reason="needs Debian's mediawiki and mariadb-server (scripts/setup.sh dev)")


def needs_servers(test):
    """Skipped without the wiki's and MariaDB's Debian packages; marked as starting both (not in the fast lane)."""
    return pytest.mark.wiki(pytest.mark.mariadb(_servers_installed(test)))


@needs_servers
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["timeout", "ctrl-c"])
def test_the_several_jobs_benchmark_stopped_mid_run_leaves_nothing_running(short_tmp, sig):
    """A small `benchmarks/several_jobs.py`, stopped while a bot job runs, as `timeout` or Ctrl-C stops it."""
    mark = secrets.token_hex(4)
    env = {**os.environ, MARK: mark, "TMPDIR": str(short_tmp), "PYTHONPATH": str(ROOT)}
    bench = subprocess.Popen([sys.executable, "benchmarks/several_jobs.py", "--jobs", "2", "--pages", "6",
                              "--solo-pages", "6", "--throttle", "1", "--web-latency", "100"],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        try:
            running = wait_for(mark, "winellbot.cli once", "mariadbd", "php")
        except AssertionError:
            if bench.poll() is not None:  # it ended before its jobs ran: say why
                pytest.fail(f"the benchmark ended ({bench.returncode}) before its jobs ran: {bench.stderr.read()[-3000:]}")
            raise
        assert sum("php" in cmd for cmd in running.values()) >= 2, running  # php -S and its workers
        like_the_terminal(bench, sig)
        bench.wait(timeout=120)
        assert gone(mark, timeout=5) == {}, "left running"
        assert bench.returncode == 128 + sig, bench.stderr.read()[-2000:]
        assert not list(short_tmp.glob("winellbot-jobs-*")), "its scratch folder was removed"
    finally:
        kill_left(mark)


FIXTURE_TEST = textwrap.dedent("""
    import time

    from mariadb import mariadb  # noqa: F401

    def test_holding_servers(local_wiki, mariadb):
        print("servers up", flush=True)
        time.sleep(600)
""")


@pytest.fixture
def short_tmp():
    """A scratch folder with a short path: the benchmark's MariaDB server puts its socket in it, and a
    Unix socket's path holds at most 107 bytes (pytest's own folders under xdist are longer)."""
    folder = Path(tempfile.mkdtemp(prefix="wsj-", dir="/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@needs_servers
def test_a_test_session_stopped_by_sigterm_stops_its_wiki_and_database(tmp_path):
    """pytest under `timeout`: its fixtures' servers (the local wiki, MariaDB) stop with it."""
    mark = secrets.token_hex(4)
    (tmp_path / "test_hold.py").write_text(FIXTURE_TEST, encoding="utf-8")
    env = {**os.environ, MARK: mark, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    session = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-s", "-n", "0", "-p", "conftest",
                                "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path / "test_hold.py")],
                               cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        wait_for(mark, "mariadbd", "php")
        like_the_terminal(session, signal.SIGTERM)
        out, _ = session.communicate(timeout=120)
        assert gone(mark, timeout=5) == {}, out[-2000:]
    finally:
        kill_left(mark)
