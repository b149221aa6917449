"""`winellbot demo`: the main job on the embedded defaults.

Starts (or reuses) a private local MediaWiki, loads the bundled fictional sample
articles, runs one cycle of the offline pipeline over the bundled sample news,
posts, and prints the URLs of the pages it wrote. The wiki is left running.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from winellbot.config import Settings, dump_settings
from winellbot.factory import sample_dir


def load_manifest(folder: Path) -> list[dict]:
    """The sample articles: title, wikitext, whether the talk page opts in, and the talk text."""
    data = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    folder = folder / "articles"
    entries = data["articles"] if isinstance(data, dict) else data
    out = []
    for e in entries:
        text = (folder / e["file"]).read_text(encoding="utf-8") if "file" in e else e["wikitext"]
        opted = bool(e.get("opt_in", e.get("opted_in", False)))
        out.append({"title": e["title"], "wikitext": text, "opt_in": opted, "talk": e.get("talk", "")})
    return out


def demo_settings(wiki, directory: Path, watchlist: str, shutoff: str) -> Settings:
    s = Settings()
    creds = wiki.credentials
    s.wiki.api_url = wiki.api_url
    s.wiki.username = creds.bot_user
    s.wiki.bot_password_app = creds.bot_app
    s.wiki.watchlist_page = watchlist
    s.wiki.shutoff_page = shutoff
    s.wiki.put_throttle = 0.0  # a private wiki: no need to be gentle
    s.search.window_days = 36500  # the sample news is not dated relative to today
    s.state.path = str(directory / "state.sqlite")
    return s


def demo_main(args) -> int:
    from winellbot.wiki.localwiki import LocalWiki

    directory = Path(args.dir).resolve()
    wiki = LocalWiki(directory / "wiki", port=args.port)
    if args.stop:
        wiki.stop()
        print(f"stopped the demo wiki in {directory / 'wiki'}")
        return 0
    if not wiki.exists():
        print(f"creating a local MediaWiki in {directory / 'wiki'} ...")
        wiki.create()
    if not wiki.is_running():
        wiki.start()
    wiki.install_templates()
    settings = _load_samples(wiki, directory)
    os.environ["WINELLBOT_BOT_PASSWORD"] = wiki.credentials.bot_password
    (directory / "winellbot.toml").write_text(dump_settings(settings), encoding="utf-8")

    from winellbot import commands

    state = commands.open_state(settings)
    bot = commands.build_bot(settings, state)
    report = bot.run(force=True)
    commands.print_report(report)
    _print_pages(wiki, settings, report, directory)
    return 0 if not report.counter["errors"] and not report.stopped else 1


def _load_samples(wiki, directory: Path) -> Settings:
    bot = wiki.credentials.bot_user
    watchlist, shutoff = f"User:{bot}/Watchlist", f"User:{bot}/Shutoff"
    articles = load_manifest(sample_dir())
    pages = {shutoff: "run"}
    for a in articles:
        pages[a["title"]] = a["wikitext"]
        talk = a["talk"] or ""
        if a["opt_in"] and "{{winellbot" not in talk.lower():
            talk = "{{Winellbot}}\n" + talk
        if talk:
            pages[f"Talk:{a['title']}"] = talk
    pages[watchlist] = "Pages watched by the bot (fictional demo data):\n" + "\n".join(
        f"* [[{a['title']}]]" for a in articles if not a["opt_in"])
    wiki.import_pages(pages, summary="winellbot demo: fictional sample data")
    return demo_settings(wiki, directory, watchlist, shutoff)


def _print_pages(wiki, settings: Settings, report, directory: Path) -> None:
    print()
    print("Pages the bot wrote (open them in a browser):")
    for title in report.written or []:
        print(f"  {wiki.page_url(title)}")
    if not report.written:
        print("  (none: nothing new was found, or everything was posted in an earlier run)")
    print(f"The bot's queue:   {wiki.page_url(settings.wiki.queue)}")
    print(f"Shutoff page:      {wiki.page_url(settings.wiki.shutoff)}")
    print(f"State database:    {settings.state.path}  (winellbot status --config "
          f"{Path(settings.state.path).parent / 'winellbot.toml'})")
    stop = "winellbot demo --stop" + ("" if directory == Path("var/demo").resolve() else f" --dir {directory}")
    print(f"The wiki keeps running at {wiki.base_url}; stop it with: {stop}")
