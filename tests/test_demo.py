"""The README's main job: `winellbot demo` on the embedded defaults, against its own fresh local wiki."""
import json
import subprocess
import sys

import pytest
import requests

from winellbot.demo import load_manifest
from winellbot.factory import sample_dir
from winellbot.wiki.localwiki import mediawiki_available

pytestmark = [pytest.mark.wiki, pytest.mark.skipif(not mediawiki_available(), reason="MediaWiki not installed")]


def raw(base: str, title: str) -> str:
    r = requests.get(f"{base}/index.php", params={"title": title, "action": "raw"}, timeout=30)
    return r.text if r.status_code == 200 else ""


def test_demo_posts_to_opted_in_talk_pages_and_the_queue_and_never_edits_articles(tmp_path):
    cmd = [sys.executable, "-m", "winellbot.cli", "demo", "--dir", str(tmp_path), "--port", "0"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        creds = json.loads((tmp_path / "wiki" / "credentials.json").read_text())
        base = f"http://127.0.0.1:{creds['port']}"
        articles = load_manifest(sample_dir())
        for a in articles:
            talk, queue = raw(base, f"Talk:{a['title']}"), raw(base, f"User:WinellBot/Queue/{a['title']}")
            if a["opt_in"]:
                assert "<!-- winellbot-suggestion:" in talk and not queue
            else:
                assert "<!-- winellbot-suggestion:" in queue and "winellbot-suggestion" not in talk
            revs = requests.get(f"{base}/api.php", params={
                "action": "query", "prop": "revisions", "titles": a["title"], "rvprop": "user",
                "rvlimit": "max", "format": "json", "formatversion": "2"}, timeout=30).json()
            users = {r["user"] for r in revs["query"]["pages"][0]["revisions"]}
            assert "WinellBot" not in users
        assert "index.php?title=Talk%3AQuillhaven" in done.stdout  # the URLs a person opens
    finally:
        subprocess.run([sys.executable, "-m", "winellbot.cli", "demo", "--dir", str(tmp_path), "--stop"],
                       capture_output=True, timeout=60)
