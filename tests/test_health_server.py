"""`winellbot health` with the state on MariaDB, where several jobs share the database and none holds a
lock: the jobs, their heartbeats and their leases are read from the database (winellbot/state/jobs.py).
Also the other read commands (`withdraw` before a post, `outcomes`) on MariaDB, and the Toolforge
health check as the jobs framework runs it, with the credentials in an option file.
"""
from __future__ import annotations

import datetime as dt
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mariadb import PASSWORD, USER, mariadb, mariadb_url  # noqa: F401 - the fixtures

from winellbot.cli import main
from winellbot.config import Settings, dump_settings
from winellbot.models import Citation, Document, Edit, PipelineResult, Suggestion, Update
from winellbot.state.db import State
from winellbot.state.jobs import JobBeat
from winellbot.state.leases import Leases

ROOT = Path(__file__).resolve().parents[1]
HERE = f"{socket.gethostname()}:{os.getpid()}"  # this process, as a job's name gives it


def _config(tmp_path: Path, url: str, interval: int = 60) -> str:
    s = Settings()
    s.state.url, s.schedule.interval_minutes = url, interval
    path = tmp_path / "winellbot.toml"
    path.write_text(dump_settings(s), encoding="utf-8")
    return str(path)


def _health(capsys, config: str, *args: str) -> tuple[int, str]:
    code = main(["health", "--config", config, *args])
    out = capsys.readouterr()
    assert PASSWORD not in out.out + out.err
    return code, out.out


def state_at(minutes_ago: float) -> str:
    """A run's start time (the job's clock, as the state keeps it) that many minutes ago."""
    return (dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=minutes_ago)).replace(microsecond=0).isoformat()


def test_no_job_is_unhealthy_and_the_password_is_never_printed(mariadb_url, tmp_path, capsys):
    config = _config(tmp_path, mariadb_url)
    code, out = _health(capsys, config)
    assert code == 1 and "no state in the database" in out, out
    State(url=mariadb_url)  # the tables, as the first job makes them; no job runs
    code, out = _health(capsys, config)
    assert code == 1 and out.startswith("unhealthy: 0 live winellbot job(s) on the state mysql+pymysql://"), out
    assert f"{USER}:***@" in out
    wrong = _config(tmp_path, mariadb_url.replace(PASSWORD, "not-the-password"))
    code, out = _health(capsys, wrong)
    assert code == 1 and "Access denied" in out and "not-the-password" not in out, out


def test_a_live_job_makes_it_healthy_and_its_leases_are_listed(mariadb_url, tmp_path, capsys):
    config = _config(tmp_path, mariadb_url)
    state = State(url=mariadb_url)
    run = state.start_run("offline")
    job = Leases(state)  # this process, named as the bot names it
    titles = [f"Town {i}" for i in range(3)]
    assert job.claim(titles, job.last_runs(titles))[0] == titles
    with job.start(run):
        code, out = _health(capsys, config)
        wanting, more = _health(capsys, config, "--jobs", "2")
    assert code == 0 and out.startswith(f"healthy: cycle {run} started ") and "; 1 live job(s)" in out, out
    line = next(line for line in out.splitlines() if line.startswith(f"  job {HERE}: "))
    assert f"in cycle {run} since" in line and "heartbeat 0 s ago" in line, line
    assert "lease on 3 page(s) held until " in line and line.endswith("Town 0, Town 1, Town 2"), line
    assert wanting == 1 and "1 live winellbot job(s) on the state " in more and ", 2 wanted" in more, more
    code, out = _health(capsys, config)  # the job ended: its leases released, its cycle still running
    assert "no page under lease" in out


def test_a_job_whose_heartbeat_stopped_is_reported_and_is_not_a_live_job(mariadb_url, tmp_path, capsys):
    config = _config(tmp_path, mariadb_url)
    state = State(url=mariadb_url)
    dead_run = state.start_run("offline")
    dead = Leases(state, holder="elsewhere:42:abcdef")
    dead.run_id = dead_run
    dead.claim(["Village"], dead.last_runs(["Village"]))
    dead.renew()  # its heartbeat and lease, then it was killed an hour ago
    state.db.execute("update runs set heartbeat = heartbeat - 3600 where id = ?", [dead_run])
    state.db.execute("update pages set lease_expires = lease_expires - 3000 where lease_holder = ?", [dead.holder])
    code, out = _health(capsys, config)
    assert code == 1 and "0 live winellbot job(s)" in out, out
    line = next(line for line in out.splitlines() if "elsewhere:42" in line)
    assert line.startswith(f"  job elsewhere:42: heartbeat STOPPED in cycle {dead_run} ") and "3600 s ago" in line
    assert "lease on 1 page(s) ran out at " in line and line.endswith("Village"), line
    alive = state.start_run("offline")
    with Leases(state).start(alive):
        code, out = _health(capsys, config)
    assert code == 0 and "; 1 live job(s)" in out and "heartbeat STOPPED" in out, out


def test_a_continuous_job_stays_live_between_its_cycles_and_is_gone_once_it_ends(mariadb_url, tmp_path, capsys):
    config = _config(tmp_path, mariadb_url)
    state = State(url=mariadb_url)
    before = state.start_run("offline")  # an earlier process with the same host and pid (a pid is reused)
    state.finish_run(before)
    state.db.execute("update runs set job = ?, heartbeat = 1000 where id = ?", [f"{HERE}:000000", before])
    with JobBeat(state, seconds=0.1):
        run = state.start_run("offline")
        with Leases(state).start(run):
            pass  # the cycle
        state.finish_run(run)
        state.db.execute("update runs set heartbeat = heartbeat - 3600 where id = ?", [run])  # hours later
        deadline = time.monotonic() + 10
        while state.db["runs"].get(run)["heartbeat"] < time.time() - 60 and time.monotonic() < deadline:
            time.sleep(0.05)
        code, out = _health(capsys, config)
    assert code == 0 and f"healthy: cycle {run} started " in out, out
    assert f"  job {HERE}: between cycles (its latest, cycle {run}, done at " in out, out
    assert state.db["runs"].get(before)["heartbeat"] == 1000, "not this job's run"
    assert state.db["runs"].get(run)["heartbeat"] is None, "an ended job clears its heartbeat"
    code, out = _health(capsys, config)
    assert code == 1 and "0 live winellbot job(s)" in out and f"job {HERE}" not in out, out


def test_a_job_on_the_server_gives_its_heartbeat_for_its_life_and_clears_it_when_it_ends(mariadb_url):
    """The wiring: every job on a server (run, once, article --post) opens its state through job_state."""
    from winellbot.commands import job_state

    settings = Settings()
    settings.state.url = mariadb_url
    with job_state(settings) as state:
        run = state.start_run("offline")
        with Leases(state).start(run):
            pass  # the cycle
        state.finish_run(run)
        assert state.db["runs"].get(run)["heartbeat"] is not None
    assert State(url=mariadb_url).db["runs"].get(run)["heartbeat"] is None


def test_here_judges_only_this_hosts_jobs_and_a_stuck_cycle_fails(mariadb_url, tmp_path, capsys):
    config = _config(tmp_path, mariadb_url, interval=60)
    state = State(url=mariadb_url)
    stuck = state.start_run("offline")
    state.db["runs"].update(stuck, {"started": state_at(90)})
    with Leases(state, holder="elsewhere:7:abcdef").start(stuck):
        code, out = _health(capsys, config)
        assert code == 1 and f"cycle {stuck} of elsewhere:7 started " in out, out
        assert "has run for 90 minutes, longer than the interval" in out
        code, out = _health(capsys, config, "--here")
        assert code == 0 and out.startswith("healthy: no cycle yet; 0 live job(s) on "), out
        code, out = _health(capsys, config, "--here", "--jobs", "1")
        assert code == 1 and f"0 live winellbot job(s) on {socket.gethostname()} " in out, out
        mine = state.start_run("offline")
        state.db["runs"].update(mine, {"started": state_at(75)})
        with Leases(state).start(mine):
            code, out = _health(capsys, config, "--here")
    assert code == 1 and f"cycle {mine} of {HERE} started " in out and f"cycle {stuck} " not in out.split("\n")[0]


def test_the_scheduled_check_wants_cycles_that_keep_coming(mariadb_url, tmp_path, capsys):
    config = _config(tmp_path, mariadb_url, interval=60)
    state = State(url=mariadb_url)
    code, out = _health(capsys, config, "--job", "scheduled")
    assert code == 1 and "no cycle has run yet" in out, out
    run = state.start_run("offline")
    state.finish_run(run)
    code, out = _health(capsys, config, "--job", "scheduled")
    assert code == 0 and out.startswith(f"healthy: cycle {run} started ") and "0 live job(s)" in out, out
    state.db["runs"].update(run, {"started": state_at(3 * 24 * 60)})
    code, out = _health(capsys, config, "--job", "scheduled")
    assert code == 1 and "no cycle started for 4320 minutes" in out, out


@pytest.mark.sqlite_state  # health on a SQLite file refuses --jobs above 1
def test_jobs_on_sqlite_is_refused_with_the_reason(tmp_path, capsys):
    s = Settings()
    s.state.path = str(tmp_path / "state.sqlite")
    (tmp_path / "w.toml").write_text(dump_settings(s), encoding="utf-8")
    assert main(["health", "--config", str(tmp_path / "w.toml"), "--jobs", "3"]) == 1
    assert "several jobs share a state on a database server only" in capsys.readouterr().err


def test_the_toolforge_health_check_reads_the_database_with_the_credentials_of_an_option_file(
        mariadb, mariadb_url, tmp_path):
    """As the jobs framework runs it in the job's container: jobs-toolsdb.yaml's health-check-here.sh."""
    cnf = tmp_path / "replica.my.cnf"
    cnf.write_text(f"[client]\nuser = '{USER}'\npassword = '{PASSWORD}'\n", encoding="utf-8")
    database = mariadb_url.rsplit("/", 1)[1]
    _config(tmp_path, f"mysql+pymysql://127.0.0.1:{mariadb.port}/{database}?read_default_file=~/replica.my.cnf")
    state = State(url=mariadb_url)
    env = dict(os.environ, HOME=str(tmp_path), WINELLBOT_VENV=str(Path(sys.executable).parent.parent))
    script = ROOT / "scripts" / "toolforge" / "health-check-here.sh"
    run = state.start_run("offline")
    with Leases(state).start(run):  # this host's job, in its cycle
        done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith(f"healthy: cycle {run} started "), done.stdout + done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    state.db["runs"].update(run, {"started": state_at(24 * 60)})
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "has run for 1440 minutes, longer than the interval" in done.stdout, done.stdout
    state.db.execute("update runs set heartbeat = heartbeat - 3600 where id = ?", [run])  # then the job died
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "has run for" not in done.stdout, "a dead cycle is not a stuck one"
    assert "no cycle started for 1440 minutes" in done.stdout and "heartbeat STOPPED" in done.stdout, done.stdout


def _suggestion(text: str) -> Suggestion:
    d = Document("d1", "https://news.example/town", "Town news", text)
    e = Edit("Old paragraph.", "Old paragraph. " + text, text, Citation(d.url, d.title))
    return Suggestion("Town", 7, ("History",), 0, e, Update(text, ("History",), text, d))


def test_withdraw_before_a_post_and_outcomes_read_the_state_on_mariadb(mariadb_url, tmp_path, capsys):
    config = _config(tmp_path, mariadb_url)
    state = State(url=mariadb_url)
    s = _suggestion("The harbour bridge opened in 2026.")
    state.record_result(state.start_run("offline"), "Town", PipelineResult((s,)))
    assert main(["withdraw", s.id[:8], "--config", config, "--reason", "a test"]) == 0
    assert "was never posted; marked withdrawn in state" in capsys.readouterr().out
    assert state.suggestion(s.id)["status"] == "withdrawn"
    assert main(["outcomes", "--config", config, "--json"]) == 0
    out = capsys.readouterr()
    assert PASSWORD not in out.out + out.err and out.out.lstrip().startswith("{"), out.out
