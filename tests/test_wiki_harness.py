"""The local MediaWiki harness: install, serve, fixtures, templates, dumps, and the bot's login."""

import json
import os
import stat

import mwxml
import pytest
import requests

from winellbot.errors import ConfigError
from winellbot.localwiki import LocalWiki, _export_xml, free_port


def _api(wiki: LocalWiki, **params: str) -> dict:
    reply = requests.get(wiki.api_url, params={**params, "format": "json", "formatversion": "2"}, timeout=30)
    reply.raise_for_status()
    return reply.json()


def test_credentials_are_private_and_botpassword_has_32_chars(local_wiki):
    mode = stat.S_IMODE(os.stat(local_wiki.credentials_path).st_mode)
    assert mode == 0o600
    creds = local_wiki.credentials
    assert len(creds.bot_password) == 32
    assert creds.bot_login == f"{creds.bot_user}@{creds.bot_app}"
    assert json.loads(local_wiki.credentials_path.read_text())["port"] == local_wiki.port


def test_server_answers_and_urls_point_at_it(local_wiki):
    assert local_wiki.is_running()
    info = _api(local_wiki, action="query", meta="siteinfo")["query"]["general"]
    assert info["server"] == local_wiki.base_url
    assert local_wiki.page_url("Main Page").startswith(local_wiki.base_url + "/index.php?title=Main_Page")


def test_bot_account_is_in_bot_group(local_wiki):
    users = _api(local_wiki, action="query", list="users", ususers=local_wiki.credentials.bot_user,
                 usprop="groups")["query"]["users"]
    assert "bot" in users[0]["groups"]


def test_edit_as_admin_renders_templates_and_refs(local_wiki, make_page):
    text = ("Rain fell.<ref>{{Cite news |url=http://example.org/a |title=Storm |work=Daily |date=2024-01-02}}"
            "</ref>\n== References ==\n{{Reflist}}")
    title = make_page(text)
    html = _api(local_wiki, action="parse", page=title, prop="text")["parse"]["text"]
    assert 'href="http://example.org/a"' in html
    assert "<i>Daily</i>" in html
    assert 'class="references"' in html
    embedded = _api(local_wiki, action="query", list="embeddedin", eititle="Template:Reflist",
                    eilimit="max")["query"]["embeddedin"]
    assert title in {page["title"] for page in embedded}


def test_installed_templates_match_files(local_wiki, tmp_path):
    (tmp_path / "Shiny_box.wiki").write_text("box: {{{1|}}}")
    (tmp_path / "notes.txt").write_text("ignored")
    assert local_wiki.install_templates(tmp_path) == ["Template:Shiny box"]
    page = _api(local_wiki, action="query", prop="revisions", titles="Template:Shiny box",
                rvprop="content", rvslots="main")["query"]["pages"][0]
    assert page["revisions"][0]["slots"]["main"]["content"] == "box: {{{1|}}}"


def test_import_pages_and_dump_round_trip(local_wiki, make_page, tmp_path):
    first, second = make_page.title(), make_page.title()
    pages = {first: "Alpha & <b>beta</b> {{Reflist}}", f"Talk:{second}": "Talk text"}
    assert local_wiki.import_pages(pages) == 2
    found = _api(local_wiki, action="query", prop="info", titles=f"{first}|Talk:{second}")["query"]["pages"]
    assert all("missing" not in page for page in found)
    dump_path = local_wiki.dump(tmp_path / "dump.xml")
    texts = {}
    for page in mwxml.Dump.from_file(open(dump_path, encoding="utf-8")):
        for revision in page:
            texts[(page.namespace, page.title)] = revision.text
    assert texts[(0, first)] == "Alpha & <b>beta</b> {{Reflist}}"
    assert {text for (ns, _), text in texts.items() if ns == 1} >= {"Talk text"}


def test_export_xml_escapes_markup():
    xml = _export_xml({"A <b>": "x < y & z"}, "Admin", "s")
    assert "<title>A &lt;b&gt;</title>" in xml
    assert "x &lt; y &amp; z" in xml


def test_run_jobs_completes(local_wiki):
    local_wiki.run_jobs()
    stats = _api(local_wiki, action="query", meta="siteinfo", siprop="statistics")["query"]["statistics"]
    assert stats["jobs"] == 0


def test_bot_site_is_logged_in_and_can_save(site, make_page):
    import pywikibot

    assert site.logged_in()
    assert site.user() == "WinellBot"
    assert site.has_right("apihighlimits")
    title = make_page.title()
    page = pywikibot.Page(site, f"User:WinellBot/{title}")
    page.text = "queue entry"
    page.save(summary="test save")
    assert pywikibot.Page(site, f"User:WinellBot/{title}").get(force=True) == "queue entry"


def test_port_is_not_known_before_create(tmp_path):
    wiki = LocalWiki(tmp_path / "nothing")
    with pytest.raises(ConfigError):
        _ = wiki.api_url
    assert not wiki.exists()
    assert not wiki.is_running()


def _load_cli():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "localwiki.py"
    spec = importlib.util.spec_from_file_location("localwiki_cli", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.wiki
def test_second_instance_through_cli_and_api(tmp_path, capsys):
    """A second wiki beside the session's: CLI create/start/status/url/stop, restart keeps data."""
    cli = _load_cli()
    directory = str(tmp_path / "cli")
    port = free_port()
    assert cli.main(["create", "--dir", directory, "--port", str(port)]) == 0
    out = capsys.readouterr().out
    assert "Template:Reflist" in out and f"http://127.0.0.1:{port}" in out
    assert cli.main(["create", "--dir", directory, "--no-templates"]) == 0  # idempotent
    assert "kept existing" in capsys.readouterr().out
    assert cli.main(["status", "--dir", directory]) == cli.STOPPED
    assert capsys.readouterr().out.strip() == "stopped"
    try:
        assert cli.main(["start", "--dir", directory]) == 0
        # a second, independent handle (as a later CLI call would have) sees it running
        assert cli.main(["status", "--dir", directory]) == 0
        assert cli.main(["url", "--dir", directory, "--api"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[-1] == f"http://127.0.0.1:{port}/api.php"
    finally:
        assert cli.main(["stop", "--dir", directory]) == 0
    assert cli.main(["status", "--dir", directory]) == cli.STOPPED

    again = LocalWiki(directory)  # port read back from its credentials
    again.start()
    try:
        assert again.port == port
        again.edit("Kept", "kept text")
        assert _api(again, action="query", prop="info", titles="Template:Reflist")["query"]["pages"][0].get(
            "missing") is None
    finally:
        again.stop()
    assert not again.is_running()
    assert not (tmp_path / "cli" / "server.pid").exists()


def test_cli_reports_missing_wiki_cleanly(tmp_path, capsys):
    cli = _load_cli()
    assert cli.main(["url", "--dir", str(tmp_path / "none")]) == 2
    assert "create() first" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["frobnicate", "--dir", "x"])


@pytest.mark.wiki
def test_family_file_reaches_the_local_wiki(local_wiki, monkeypatch):
    from pathlib import Path

    import pywikibot
    from pywikibot import config

    family_file = Path(__file__).resolve().parents[1] / "families" / "localwiki_family.py"
    monkeypatch.setenv("WINELLBOT_LOCALWIKI_PORT", str(local_wiki.port))
    monkeypatch.setitem(config.family_files, "localwiki", str(family_file))
    site = pywikibot.Site("localwiki", "localwiki")
    assert site.family.protocol("localwiki") == "http"
    assert site.siteinfo["server"] == local_wiki.base_url
    assert pywikibot.Page(site, "Template:Reflist").exists()


@pytest.mark.wiki
def test_a_wiki_whose_port_another_wiki_serves_refuses_to_start(local_wiki, tmp_path):
    # Another checkout's demo wiki still serving the port: starting this one must not end up
    # talking to that wiki (whose accounts and pages are not this one's).
    import shutil

    from winellbot.errors import WikiError

    other = tmp_path / "other"
    other.mkdir()
    for path in (local_wiki.settings_path, local_wiki.credentials_path):
        shutil.copy(path, other / path.name)
    twin = LocalWiki(other)
    assert twin.exists() and twin.port == local_wiki.port and not twin.is_running()
    with pytest.raises(WikiError, match="already served"):
        twin.start()
    assert not (other / "server.pid").exists()
