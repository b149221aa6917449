"""Pywikibot set-up: configuration folder, runtime registration, BotPassword login, simulate, throttle."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from winellbot.errors import ConfigError, WikiError
from winellbot.wiki.site import PASSWORD_FILE, connect, family_name_for, prepare_pywikibot, register_wiki

ROOT = Path(__file__).resolve().parents[1]


def test_prepare_before_import_makes_pywikibot_use_the_folder(tmp_path):
    folder = tmp_path / "pwb"
    script = (
        "import sys\n"
        "from winellbot.wiki.site import prepare_pywikibot\n"
        f"print(prepare_pywikibot({str(folder)!r}, user_config='put_throttle = 3\\n'))\n"
        "import pywikibot\n"
        "print(pywikibot.config.base_dir)\n"
        "print(pywikibot.config.put_throttle)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYWIKIBOT_DIR"}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120, check=True)
    assert result.stdout.split() == [str(folder), str(folder), "3"]
    assert stat.S_IMODE(os.stat(folder / "user-config.py").st_mode) == 0o600


def test_prepare_after_import_warns_and_keeps_active_folder(tmp_path):
    import pywikibot

    with pytest.warns(RuntimeWarning, match="imported before prepare_pywikibot"):
        active = prepare_pywikibot(tmp_path / "late")
    assert active == Path(pywikibot.config.base_dir).resolve()
    assert active == Path(os.environ["PYWIKIBOT_DIR"]).resolve()
    assert stat.S_IMODE(os.stat(tmp_path / "late" / "user-config.py").st_mode) == 0o600


def test_family_names_are_plain_and_stable():
    assert family_name_for("http://127.0.0.1:8080/api.php") == "w1270018080"
    assert family_name_for("https://en.wikipedia.org/w/api.php") == "wenwikipediaorg"


def test_register_wiki_rejects_non_api_urls():
    with pytest.raises(ConfigError):
        register_wiki("http://127.0.0.1:8080/index.php")


def test_connect_logs_in_and_keeps_password_file_private(local_wiki, site):
    import pywikibot

    path = Path(pywikibot.config.base_dir) / PASSWORD_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    creds = local_wiki.credentials
    again = connect(local_wiki.api_url, creds.bot_login, creds.bot_password, throttle=0)  # User@app form
    assert again.user() == creds.bot_user
    lines = [line for line in path.read_text().splitlines()
             if creds.bot_user in line and repr(site.family.name) in line]  # other tests' wikis have lines too
    assert len(lines) == 1  # upserted, not appended
    assert site.throttle.writedelay == 0


def test_wrong_password_is_a_wiki_error(local_wiki, monkeypatch):
    from pywikibot import config

    monkeypatch.setattr(config, "password_file", config.password_file)
    monkeypatch.setattr(config, "max_retries", 1)
    # The admin, since the bot's session cookie would log the bot in without a password.
    admin = local_wiki.credentials.admin_user
    with pytest.raises(WikiError):
        connect(local_wiki.api_url, admin, "x" * 32, app="nosuchapp", family_name="wrongpassword", throttle=0)


def test_simulate_blocks_writes_at_the_request_layer(local_wiki, site, make_page, monkeypatch):
    import pywikibot
    from pywikibot import config

    title = make_page("original", namespace="User")
    monkeypatch.setattr(config, "simulate", config.simulate)  # restored after the test
    creds = local_wiki.credentials
    dry = connect(local_wiki.api_url, creds.bot_user, creds.bot_password, app=creds.bot_app,
                  throttle=0, simulate=True)
    page = pywikibot.Page(dry, title)
    page.text = "changed"
    page.save(summary="should not happen")
    assert local_wiki.admin()._get(action="parse", page=title, prop="wikitext",
                                   formatversion="2")["parse"]["wikitext"] == "original"


def test_the_password_file_is_replaced_whole_and_left_alone_when_unchanged(tmp_path, monkeypatch):
    """Two jobs started together on one Pywikibot folder: one logging in reads the file while the other
    stores its line. The reader must never find the file emptied (Pywikibot then asks for a password)."""
    from pywikibot import config

    from winellbot.wiki.site import _store_password

    monkeypatch.setattr(config, "base_dir", str(tmp_path))
    monkeypatch.setattr(config, "password_file", config.password_file)
    path = tmp_path / PASSWORD_FILE
    _store_password("wikia", "WinellBot", "first-secret", "winellbot")
    first = path.read_text()
    inode = os.stat(path).st_ino
    _store_password("wikia", "WinellBot", "first-secret", "winellbot")  # the same line: not written again
    assert os.stat(path).st_ino == inode and path.read_text() == first
    with open(path, encoding="utf-8") as reading:  # a job in the middle of its login
        _store_password("wikib", "WinellBot", "second-secret", None)
        assert reading.read() == first  # the whole old file, not a truncated one
    now = path.read_text()
    assert "first-secret" in now and "second-secret" in now and now.count("'wikia'") == 2  # family, code
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(f".{PASSWORD_FILE}.")]  # no temporary left


def test_jobs_preparing_one_new_folder_together_all_start_and_find_it_whole(tmp_path):
    folder = tmp_path / "shared-pwb"
    script = ("from winellbot.wiki.site import prepare_pywikibot\n"
              f"prepare_pywikibot({str(folder)!r}, user_config='put_throttle = 7\\n')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYWIKIBOT_DIR"}
    jobs = [subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
            for _ in range(4)]
    errors = [job.communicate(timeout=120)[1] for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0, 0, 0], errors
    assert (folder / "user-config.py").read_text() == "put_throttle = 7\n"
    assert sorted(p.name for p in folder.iterdir()) == ["user-config.py"]  # no temporary file left
