"""Fault isolation against the real local wiki: what the wiki does to one page stays with that page,
and a wiki that cannot be used stops the cycle with one line within a bounded wait."""
from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
import time

import pytest

from wikiscene import before_the_first_post, cli, configured_state, fact_suggestion, make_scene, recorded, run_cycle

from winellbot.config import dump_settings
from winellbot.errors import PageGone, PostingRefused
from winellbot.wiki.render import render_section
from winellbot.wiki.writer import WikiWriter


def said(err: str) -> list[str]:
    """stderr less Pywikibot's "Logging in to ..." notice."""
    return [line for line in err.splitlines() if line.strip() and not line.startswith("Logging in to ")]


def write_config(settings, folder, **wiki) -> str:
    for key, value in wiki.items():
        setattr(settings.wiki, key, value)
    path = folder / "winellbot.toml"
    path.write_text(dump_settings(settings), encoding="utf-8")
    return str(path)


def posted_here(site, title: str) -> bool:
    import pywikibot

    page = pywikibot.Page(site, title)
    return page.exists() and "winellbot-suggestion" in page.text


@pytest.fixture
def writer(site, make_page):
    return WikiWriter(site, bot_user=site.username(), shutoff_page=make_page("run", prefix="Shutoff"))


def _post(writer, article):
    s = fact_suggestion(article)
    return writer.post_talk_section(article, "Suggestions", render_section([s], bot_user=writer.bot_user), [s.id])


# -- one page's trouble stays with that page --------------------------------------------------------

def test_a_protected_talk_page_is_a_recorded_error_and_the_cycle_goes_on(scene, site, tmp_path):
    opted, listed = scene["opted"], scene["listed"]
    scene["wiki"].protect(f"Talk:{opted}")
    report, state, _ = run_cycle(scene["settings"], [opted, listed])
    assert not posted_here(site, f"Talk:{opted}")
    assert posted_here(site, f"{scene['settings'].wiki.queue}/{listed}"), "the next page was still treated"
    errors = [e for e in state.db["errors"].rows if e["page"] == opted]
    assert errors and "refused the save" in errors[0]["message"] and "protect" in errors[0]["message"]
    assert state.suggestions(page=opted, status="proposed"), "kept for a later run"
    run = state.db["runs"].get(report.run_id)
    assert run["errors"] == report.counter["recorded"] == state.count_errors(report.run_id) >= 1, \
        "a refused save counts in the run's summary (issue 30: it said 0 errors)"
    status = cli(write_config(scene["settings"], tmp_path), "status")
    assert "error: " in status.stdout and opted in status.stdout and "refused the save" in status.stdout


@contextlib.contextmanager
def spam_filter(wiki, fragment: str):
    """The wiki's own spam filter ($wgSpamRegex) refuses every save whose text holds ``fragment``, until the
    block ends (php -S reads LocalSettings.php on every request)."""
    settings = wiki.settings_path.read_text(encoding="utf-8")
    wiki.settings_path.write_text(f"{settings}\n$wgSpamRegex = ['/{re.escape(fragment)}/'];\n", encoding="utf-8")
    try:
        yield
    finally:
        wiki.settings_path.write_text(settings, encoding="utf-8")


def test_a_spam_filter_refusal_is_one_line_recorded_whole_and_shown_by_status(scene, site, tmp_path):
    opted, listed = scene["opted"], scene["listed"]
    with spam_filter(scene["wiki"], opted):  # every post about the opted town names it
        report, state, _ = run_cycle(scene["settings"], [opted, listed])
    assert not posted_here(site, f"Talk:{opted}")
    assert posted_here(site, f"{scene['settings'].wiki.queue}/{listed}"), "the next page was still treated"
    [error] = [e["message"] for e in state.db["errors"].rows if e["page"] == opted]
    line = (f"skipped: Talk:{opted}: the wiki's spam filter refused the save (spamprotectionmatch: The following "
            f"text is what triggered our spam filter: {opted})")
    assert error == line, error
    status = cli(write_config(scene["settings"], tmp_path), "status")
    [shown] = [x for x in status.stdout.splitlines() if x.startswith("error: ") and f" {opted} [post]" in x]
    assert shown.endswith(f"[post] {line}"), shown


@pytest.mark.parametrize("kind, says", [
    ("abuse filter", "posting to X: an abuse filter refused the save (abusefilter-disallowed: This action has been "
                     "automatically identified as harmful. Abuse filter: No links to example.org)"),
    ("spam blacklist", "posting to X: the wiki's spam blacklist refused the save (spamblacklist: blacklisted: "
                       "https://spam.example/a)"),
    ("spam filter", "posting to X: the wiki's spam filter refused the save (spamprotectiontext: The text you "
                    "wanted to save was blocked by the spam filter.)"),
])
def test_each_filter_refusal_reads_as_one_line_naming_the_filter(site, kind, says):
    """Pywikibot's own exceptions for each refusal (the local wiki has no AbuseFilter or SpamBlacklist)."""
    import pywikibot
    from pywikibot import exceptions as pwb

    from winellbot.wiki.boundary import translate

    page = pywikibot.Page(site, "Talk:X")
    exc = {"abuse filter": lambda: pwb.AbuseFilterDisallowedError(
               page, "<p>This action has been automatically identified as harmful.\n</p>Abuse filter: No links to "
                     "example.org"),
           "spam blacklist": lambda: pwb.SpamblacklistError(page, "https://spam.example/a"),
           "spam filter": lambda: pwb.OtherPageSaveError(page, pwb.APIError(
               "spamprotectiontext", "The text you wanted to save was blocked by the spam filter.",
               help="See api.php for API usage.\nSubscribe to the mailing list"))}[kind]()
    refused = translate(exc, "posting to X")
    assert isinstance(refused, PostingRefused) and str(refused) == says


def test_an_article_deleted_between_reading_and_posting_gets_no_post(scene, site, tmp_path, monkeypatch):
    """The article and its talk page are deleted after the bot read the article, before it posts."""
    opted = scene["opted"]
    config = write_config(scene["settings"], tmp_path)

    def delete() -> None:
        assert recorded(scene["settings"], page=opted), "the article was read and its suggestions recorded"
        scene["wiki"].delete(opted)
        scene["wiki"].delete(f"Talk:{opted}")

    came = before_the_first_post(monkeypatch, delete)
    done = cli(config, "once", f"-page:{opted}")
    assert came and done.returncode == 0, done
    import pywikibot

    assert not pywikibot.Page(site, f"Talk:{opted}").exists(), "the talk page was re-created"
    errors = [e["message"] for e in configured_state(scene["settings"]).db["errors"].rows if e["page"] == opted]
    assert any("does not exist" in m and "nothing posted" in m for m in errors), errors


def test_a_missing_article_gets_no_post_and_no_talk_page(writer, site, make_page):
    import pywikibot

    missing = make_page.title(prefix="Never written")
    with pytest.raises(PageGone, match="does not exist"):
        _post(writer, missing)
    assert not pywikibot.Page(site, f"Talk:{missing}").exists()


@pytest.mark.parametrize("shape", ["double", "broken"])
def test_a_talk_page_that_is_a_double_or_broken_redirect_gets_no_post(writer, site, make_page, local_wiki, shape):
    import pywikibot

    article = make_page("Article.", prefix="Redirecting")
    middle, end = make_page.title(prefix="Middle"), make_page.title(prefix="End")
    if shape == "double":
        local_wiki.edit(f"Talk:{middle}", f"#REDIRECT [[Talk:{end}]]")
        local_wiki.edit(f"Talk:{end}", "The real discussion.")
    local_wiki.edit(f"Talk:{article}", f"#REDIRECT [[Talk:{middle}]]")
    with pytest.raises(PostingRefused, match="double redirect" if shape == "double" else "does not exist"):
        _post(writer, article)
    for title in (f"Talk:{article}", f"Talk:{middle}", f"Talk:{end}"):
        assert not posted_here(site, title), title
    assert pywikibot.Page(site, f"Talk:{article}").isRedirectPage()


def test_a_talk_page_that_redirects_once_to_a_talk_page_is_followed(writer, site, make_page, local_wiki):
    article = make_page("Article.", prefix="Moved talk")
    target = make_page.title(prefix="Target")
    local_wiki.edit(f"Talk:{target}", "Discussion lives here.")
    local_wiki.edit(f"Talk:{article}", f"#REDIRECT [[Talk:{target}]]")
    assert _post(writer, article).target == f"Talk:{target}"


# -- a wiki that cannot be used: one line, bounded wait -------------------------------------------

def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _offline_config(tmp_path, api_url: str, max_wait: float) -> str:
    tmp_path.joinpath("c.toml").write_text(
        f'[wiki]\napi_url = "{api_url}"\nmax_wait = {max_wait}\n[state]\npath = "{tmp_path / "s.sqlite"}"\n')
    return str(tmp_path / "c.toml")


def test_a_wiki_that_refuses_connections_is_one_line_within_the_bound(tmp_path, monkeypatch):
    monkeypatch.setenv("WINELLBOT_BOT_PASSWORD", "x" * 32)
    config = _offline_config(tmp_path, f"http://127.0.0.1:{_closed_port()}/api.php", 2.0)
    began = time.monotonic()
    done = cli(config, "once")
    took = time.monotonic() - began
    assert done.returncode == 1 and took < 2.0 + 10, took  # the bound plus the command's own work
    [line] = said(done.stderr)
    assert line.startswith("winellbot: error: connecting to http://127.0.0.1:") and "does not answer" in line, line
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.slow
def test_a_wiki_that_never_answers_is_one_line_within_the_bound(tmp_path, monkeypatch):
    """A server that accepts connections and never says a word (a hung web server)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held = []
    threading.Thread(target=lambda: [held.append(server.accept()) for _ in range(16)], daemon=True).start()
    monkeypatch.setenv("WINELLBOT_BOT_PASSWORD", "x" * 32)
    config = _offline_config(tmp_path, f"http://127.0.0.1:{server.getsockname()[1]}/api.php", 3.0)
    began = time.monotonic()
    done = cli(config, "once")
    took = time.monotonic() - began
    server.close()
    assert done.returncode == 1 and took < 3.0 + 10, took
    [line] = said(done.stderr)
    assert "does not answer (timed out)" in line or "does not answer (no complete answer within 0.75 s" in line, line


def test_a_missing_bot_password_is_one_line(tmp_path, monkeypatch):
    config = _offline_config(tmp_path, "http://127.0.0.1:9/api.php", 4.0)
    monkeypatch.delenv("WINELLBOT_BOT_PASSWORD", raising=False)
    done = cli(config, "once")
    assert done.returncode == 1
    assert said(done.stderr) == ["winellbot: error: WINELLBOT_BOT_PASSWORD is not set: the BotPassword of "
                                 "WinellBot@winellbot is needed to log in to http://127.0.0.1:9/api.php"]


def _own_scene(wiki, tmp_path, monkeypatch, *, max_wait: float) -> tuple[dict, str]:
    """A scene on ``wiki`` and a config for it whose wiki is given up on after ``max_wait`` s."""
    from conftest import PageMaker

    monkeypatch.setenv("WINELLBOT_BOT_PASSWORD", wiki.credentials.bot_password)
    scene = make_scene(wiki, PageMaker(wiki, "own"), tmp_path)
    return scene, write_config(scene["settings"], tmp_path, max_wait=max_wait)


def test_the_wiki_stopped_mid_run_stops_the_cycle_with_one_line(own_wiki, tmp_path, monkeypatch):
    scene, config = _own_scene(own_wiki, tmp_path, monkeypatch, max_wait=6.0)
    stopped = []

    def stop() -> None:
        own_wiki.stop()
        stopped.append(time.monotonic())

    before_the_first_post(monkeypatch, stop)
    done = cli(config, "once", f"-page:{scene['opted']}", f"-page:{scene['listed']}")
    out, err = done.stdout, done.stderr
    assert stopped and done.returncode == 1 and time.monotonic() - stopped[0] < 6 + 10
    assert len(said(err)) == 1, err
    [line] = said(err)
    assert line.startswith("winellbot: error: run 1 stopped: ") and "does not answer" in line, line
    assert "Traceback" not in out + err
    state = configured_state(scene["settings"])
    (run,) = state.db["runs"].rows
    assert run["status"] == "failed"
    assert any("does not answer" in e["message"] for e in state.db["errors"].rows)
    assert state.suggestions(status="proposed"), "nothing lost: a later run posts them"


def test_a_wiki_that_trickles_its_answers_mid_run_stops_the_cycle_with_one_line(scene, site, local_wiki, tmp_path,
                                                                                 monkeypatch):
    """From the first post on, the wiki's API answers one byte every 0.25 s, less than each read's timeout
    (a quarter of max_wait, 1.5 s): only a deadline on the whole request stops the cycle within the bound."""
    from search_http import TricklingProxy

    monkeypatch.setenv("WINELLBOT_BOT_PASSWORD", local_wiki.credentials.bot_password)
    with TricklingProxy(("127.0.0.1", local_wiki.port), interval=0.25) as proxy:
        api_url = local_wiki.api_url.replace(f":{local_wiki.port}/", f":{proxy.port}/")
        config = write_config(scene["settings"], tmp_path, max_wait=6.0, api_url=api_url)
        trickling = []

        def trickle() -> None:
            proxy.trickling.set()
            trickling.append(time.monotonic())

        before_the_first_post(monkeypatch, trickle)
        done = cli(config, "once", f"-page:{scene['opted']}")
    out, err = done.stdout, done.stderr
    assert trickling and done.returncode == 1 and time.monotonic() - trickling[0] < 6 + 10, out + err
    [line] = said(err)
    assert line.startswith("winellbot: error: run 1 stopped: ") and "does not answer" in line, line
    assert "Traceback" not in out + err
    assert not posted_here(site, f"Talk:{scene['opted']}")
    assert recorded(scene["settings"], status="proposed"), "nothing lost: a later run posts them"


def test_a_lost_login_stops_the_cycle_with_one_line(own_wiki, tmp_path, monkeypatch):
    scene, config = _own_scene(own_wiki, tmp_path, monkeypatch, max_wait=6.0)
    before_the_first_post(monkeypatch, own_wiki.revoke_bot_login)
    done = cli(config, "once", f"-page:{scene['opted']}", f"-page:{scene['listed']}")
    out, err = done.stdout, done.stderr
    assert done.returncode == 1 and len(said(err)) == 1, out + err
    [line] = said(err)
    assert line.startswith("winellbot: error: run 1 stopped: ") and "not logged in" in line, line
    assert "Traceback" not in out + err


def test_a_bad_corpus_file_is_recorded_and_the_cycle_treats_every_page(scene, site):
    news = scene["settings"].search.corpus_dir
    with open(os.path.join(news, "news.jsonl"), "ab") as fh:
        fh.write(b'\n{"id": "bad", "text": "caf\xe9"}\n["not", "an", "object"]\n{"title": "no id"}\n')
    with open(os.path.join(news, "broken.json"), "w", encoding="utf-8") as fh:
        fh.write('{"id": ')
    report, state, _ = run_cycle(scene["settings"], [scene["opted"], scene["listed"]])
    assert len(report.pages) == 2 and report.counter["posted"] == 2
    corpus_errors = [e["message"] for e in state.db["errors"].rows if e["stage"] == "corpus"]
    assert len(corpus_errors) == 4, corpus_errors
