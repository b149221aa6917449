"""One job at a time on a state: the lock, taking over a killed job's lock, the journal mode."""
import os
import signal
import subprocess
import sys
import time

import pytest

from winellbot.state.db import State, journal_mode_for
from winellbot.state.lock import JobLock, StateLocked

HOLD = """
import sys, time
from winellbot.state.lock import JobLock
lock = JobLock(sys.argv[1]).acquire()
print("held", flush=True)
time.sleep(60)
"""


def _holder(path):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_job_is_refused_with_the_holders_pid(tmp_path):
    path = tmp_path / "state.sqlite"
    proc = _holder(path)
    try:
        with pytest.raises(StateLocked, match=rf"pid {proc.pid} on .*refusing to start a second one"):
            JobLock(path).acquire()
    finally:
        proc.kill()
        proc.wait()


def test_the_lock_of_a_killed_job_is_taken_over(tmp_path):
    path = tmp_path / "state.sqlite"
    proc = _holder(path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with JobLock(path) as lock:
        assert lock.taken_over["pid"] == proc.pid
    with JobLock(path) as lock:  # released cleanly: nothing to take over
        assert lock.taken_over is None


def test_runs_a_killed_job_left_running_are_marked_killed(tmp_path):
    state = State(tmp_path / "s.sqlite")
    first = state.start_run("offline")
    state.finish_run(state.start_run("offline"))
    assert state.mark_interrupted() == [first]
    assert [r["status"] for r in state.db["runs"].rows] == ["killed", "done"]


def test_journal_mode_is_wal_on_a_local_disk_and_delete_on_nfs(tmp_path):
    mounts = ("/dev/sda1 / ext4 rw 0 0\n"
              "nfs-tools.svc:/srv/tools/home /data/project nfs4 rw,vers=4.2 0 0\n"
              "tmpfs /tmp tmpfs rw 0 0\n")
    assert journal_mode_for("/data/project/winellbot/state.sqlite", mounts) == "delete"
    assert journal_mode_for("/srv/winellbot/state.sqlite", mounts) == "wal"
    assert journal_mode_for("/tmp/x/state.sqlite", mounts) == "wal"
    assert journal_mode_for("/mnt/share/s.sqlite", "//server/share /mnt/share cifs rw 0 0\n") == "delete"
    state = State(tmp_path / "s.sqlite")
    assert state.db.execute("PRAGMA journal_mode").fetchone()[0] == journal_mode_for(tmp_path / "s.sqlite")
    forced = State(tmp_path / "d.sqlite", journal_mode="delete")
    assert forced.db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
