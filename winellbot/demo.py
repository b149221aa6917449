"""`winellbot demo`: the main job on the embedded defaults.

Starts (or reuses) a private local MediaWiki, loads the bundled fictional sample articles (with
stand-ins of the English Wikipedia templates they use, and the pages they link to), creates the
bot's user page and talk page and a reviewer's account, runs one cycle of the offline pipeline over
the bundled sample news (in the reviewed mode its suggestions wait in the review queue), approves
the best suggestion of each article as the demo's reviewer so that no page is empty, posts what was
approved, and prints the URLs of the pages it wrote. The wiki is left running, and so are the review
page (``winellbot review serve``) and a job that posts what is approved there
(``winellbot run --approved-only``); ``winellbot demo --stop`` stops all three.
"""
from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from winellbot.config import Settings, dump_settings
from winellbot.bundled import sample_dir
from winellbot.processes import stop_group

# lazy imports: the demo builds the whole bot, and only when it runs.

DEFAULT_DIR = "var/demo"
REVIEWER = "Demo reviewer"  # the account a person logs in with on the review page
AUTO_REVIEWER = "Demo auto-approver"  # the name the demo's own automatic decisions carry, never a person's
REVIEW_PORT = 8766
BACKGROUND = ("review-page", "approved-poster")  # the demo's processes left running, by pid file


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


def load_extra_pages(folder: Path) -> dict[str, str]:
    """Pages the sample articles and talk pages link to (a shire, categories, fictional editors)."""
    data = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return dict(data.get("pages", {})) if isinstance(data, dict) else {}


def demo_settings(wiki, directory: Path, watchlist: str, shutoff: str, style: str = "fact") -> Settings:
    s = Settings()
    creds = wiki.credentials
    s.wiki.api_url = wiki.api_url
    s.wiki.username = creds.bot_user
    s.wiki.bot_password_app = creds.bot_app
    # The private wiki's BotPassword in a file only the user can read, so that every command of the
    # docs/operating.md (withdraw, once ...) works with the demo's config without setting the environment.
    secret = directory / "bot-password"
    fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(creds.bot_password + "\n")
    s.wiki.bot_password_file = str(secret)
    s.wiki.watchlist_page = watchlist
    s.wiki.shutoff_page = shutoff
    s.wiki.put_throttle = 0.0  # a private wiki: no need to be gentle
    s.search.window_days = 36500  # the sample news is not dated relative to today
    s.state.path = str(directory / "state.sqlite")
    # The demo stands for English Wikipedia, whose guidance the fact style follows; --style edit
    # shows the paragraph edit instead.
    s.posting.style = style
    s.review.poll_seconds = 5.0  # an approval on the review page reaches its page within seconds
    return s


def demo_main(args) -> int:
    from winellbot.localwiki import LocalWiki

    directory = Path(args.dir).resolve()
    wiki = LocalWiki(directory / "wiki", port=args.port)
    if args.stop:
        _stop_background(directory)
        return _stop(wiki)
    _stop_background(directory, quiet=True)  # a previous demo's poster holds the state's job lock
    if not wiki.exists():
        print(f"creating a local MediaWiki in {directory / 'wiki'} ...")
        wiki.create()
    if not wiki.is_running():
        wiki.start()
    wiki.install_templates()
    settings = _load_samples(wiki, directory, getattr(args, "style", "fact"))
    os.environ["WINELLBOT_BOT_PASSWORD"] = wiki.credentials.bot_password
    (directory / "winellbot.toml").write_text(dump_settings(settings), encoding="utf-8")

    from winellbot import commands

    password = _reviewer(wiki, directory)
    with commands.job_state(settings) as state:  # one job at a time on the demo's state too
        bot = commands.build_bot(settings, state)
        report = bot.run(force=True)
        approved = approve_best(state, AUTO_REVIEWER)
        posts = commands.build_bot(settings, state).run(approved_only=True)
    report.written += posts.written
    report.counter["posted"] += posts.counter["posted"]
    # A wiki's job runner re-renders the pages that link to pages the bot created (the queue);
    # the demo's wiki has none, so its pages would show those links red until enough views ran the jobs.
    wiki.run_jobs()
    commands.print_report(report)
    print(f"The demo's script ({AUTO_REVIEWER}) approved {approved} suggestion(s), the best of each article, one of "
          "them reworded as a reviewer would; the rest wait in the review queue for you.")
    _print_outcomes(settings)
    review_url = _start_background(directory, getattr(args, "review_port", REVIEW_PORT))
    _print_pages(wiki, settings, report, stop_command(args.dir))
    print(f"The review page:     {review_url}  (log in as {REVIEWER!r}, password {password}, also in "
          f"{directory / 'reviewer-password'}; what you approve there is posted within "
          f"{settings.review.poll_seconds:g} s by a job left running)")
    failed = report.counter["errors"] or report.stopped or posts.counter["errors"] or posts.stopped
    return 1 if failed else 0


# How the demo's script rewords a line of the bundled sample news, as a reviewer would on the review page
# (the start of the bot's line -> the reviewer's own words for the same fact).
REWORDINGS = {
    "The 2025 Lanternfall Festival in Quillhaven was attended by about 41,000":
        "About 41,000 people attended the 2025 festival, a record according to its organisers.",
    "Brecken, who stood for the Quay and Country group, won 54 percent":
        "Brecken won the election of 5 March 2026 with 54 percent of the vote; Marrow had 39 percent.",
}
DEMO_NOTE = "Reworded by the demo's script, as a reviewer would on the review page."


def approve_best(state, reviewer: str) -> int:
    """Approve, as ``reviewer``, the open suggestion with the best estimate of each article; of the opted-in
    articles, one whose line the demo knows how to reword (:data:`REWORDINGS`) is approved as a revision
    instead (its post names ``reviewer`` as the author of the wording). Lines marked for rewording are left
    to people. Returns how many."""
    from winellbot.gates.base import needs_rewording
    from winellbot.state.reviews import Decision, QueueFilter, ReviewStore

    store = ReviewStore(state)
    best, reworded = {}, None
    opted = {r[0] for r in state.db.execute("select title from pages where opted_in = 1").fetchall()}
    for row in store.queue(QueueFilter(), depth=10_000, limit=10_000):
        text = rewording(row["update_text"])
        if reworded is None and row["page"] in opted and text:
            reworded = (row["page"], row["id"], text)
        elif row["page"] not in best and not needs_rewording(state.load_suggestion(state.suggestion(row["id"]))):
            best[row["page"]] = row["id"]
    decisions = [Decision(sid, reviewer, "approve") for page, sid in best.items()
                 if reworded is None or page != reworded[0]]
    if reworded is not None:
        decisions.append(Decision(reworded[1], reviewer, "revise", text=reworded[2], note=DEMO_NOTE))
    return sum(store.decide(d).taken for d in decisions)


def rewording(line: str) -> str | None:
    """The demo's rewording of a bot's line of the sample news, or None."""
    return next((words for start, words in REWORDINGS.items() if line.strip().startswith(start)), None)


def _reviewer(wiki, directory: Path) -> str:
    """The demo reviewer's account on the local wiki; its password, kept in a file only the user reads."""
    secret = directory / "reviewer-password"
    if secret.is_file():
        return secret.read_text("utf-8").strip()
    password = "Review-" + secrets.token_urlsafe(12)
    wiki.create_user(REVIEWER, password)
    wiki.edit(f"User:{REVIEWER}", "A reviewer of this local demo wiki: approves or rejects the bot's suggestions "
                                  "on its review page (fictional).\n")
    wiki.edit(f"User:{AUTO_REVIEWER}", "Not a person: the name of this local demo's own script, which approves "
                                      "and rewords a few suggestions so that its pages are not empty.\n")
    fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(password + "\n")
    return password


def _start_background(directory: Path, port: int) -> str:
    """Start the review page and the poster of approvals, each in its own session, with a pid file and
    a log in ``directory``; returns the review page's URL once it answers."""
    import requests

    from winellbot.localwiki import free_port

    port = port or free_port()
    config = str(directory / "winellbot.toml")
    program = [sys.executable, "-m", "winellbot.cli"]
    commands = {"review-page": [*program, "review", "serve", "--config", config, "--port", str(port)],
                "approved-poster": [*program, "run", "--approved-only", "--config", config]}
    for name, argv in commands.items():
        with open(directory / f"{name}.log", "ab") as log:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env=os.environ.copy())
        (directory / f"{name}.pid").write_text(str(proc.pid), encoding="ascii")
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            requests.get(url + "login", timeout=2)
            return url
        except requests.RequestException:
            time.sleep(0.3)
    raise RuntimeError(f"the review page did not start: see {directory / 'review-page.log'}")


def _stop_background(directory: Path, *, quiet: bool = False) -> None:
    """Stop the demo's review page and poster (their process groups), if running."""
    for name in BACKGROUND:
        pid_file = directory / f"{name}.pid"
        if not pid_file.is_file():
            continue
        pid = int(pid_file.read_text(encoding="ascii").strip() or 0)
        pid_file.unlink()
        # up to 10 s to finish what it does (a post in flight), then SIGKILL
        if stop_group(pid or None, timeout=10.0) and not quiet:
            print(f"stopped the demo's {name.replace('-', ' ')}")


def _print_outcomes(settings: Settings) -> None:
    """The outcome table after the cycle (``winellbot outcomes``): what became of what was posted."""
    from winellbot.commands import open_state
    from winellbot.outcomes.report import OutcomeReport, as_text
    from winellbot.state.outcomes import OutcomeStore

    print()
    print("Outcomes of the posted suggestions (winellbot outcomes; adopted and reviewed ones appear as "
          "editors act on them, read by later cycles):")
    print(as_text(OutcomeReport().build(OutcomeStore(open_state(settings, readonly=True)).history())))


def _stop(wiki) -> int:
    where = wiki.directory
    if not wiki.exists():
        print(f"no demo wiki in {where}")
        return 0
    if wiki.stop():
        print(f"stopped the demo wiki in {where}")
    else:
        print(f"the demo wiki in {where} was not running")
    return 0


def _load_samples(wiki, directory: Path, style: str) -> Settings:
    from winellbot.wiki.userpage import render_user_page

    bot = wiki.credentials.bot_user
    watchlist, shutoff = f"User:{bot}/Watchlist", f"User:{bot}/Shutoff"
    settings = demo_settings(wiki, directory, watchlist, shutoff, style)
    articles = load_manifest(sample_dir())
    pages = {shutoff: "run", **load_extra_pages(sample_dir())}
    for a in articles:
        pages[a["title"]] = a["wikitext"]
        talk = a["talk"] or ""
        if a["opt_in"] and "{{winellbot" not in talk.lower():
            talk = "{{Winellbot}}\n" + talk
        if talk:
            pages[f"Talk:{a['title']}"] = talk
    pages[watchlist] = "Pages watched by the bot (fictional demo data):\n" + "\n".join(
        f"* [[{a['title']}]]" for a in articles if not a["opt_in"])
    pages[f"User:{bot}"] = render_user_page(settings, operator=wiki.credentials.admin_user)
    pages[f"User talk:{bot}"] = (f"Questions about [[User:{bot}|{bot}]] and its suggestions go here. To stop the "
                                 f"bot at once, edit [[{shutoff}]].\n")
    admin = wiki.credentials.admin_user
    pages.setdefault(f"User:{admin}", "The administrator of this local demo wiki, and the bot's operator.\n")
    wiki.import_pages(pages, summary="winellbot demo: fictional sample data")
    # Imported pages were parsed before the templates and the pages they link to existed.
    wiki.purge(sorted(pages))
    return settings


def program_words() -> list[str]:
    """The winellbot command as it can be typed in the current directory."""
    here = Path.cwd()
    script = Path(sys.executable).with_name("winellbot")
    if shutil.which("winellbot") and Path(shutil.which("winellbot")).resolve() == script.resolve():
        return ["winellbot"]
    if script.is_file():
        return [str(script.relative_to(here)) if script.is_relative_to(here) else str(script)]
    return [sys.executable, "-m", "winellbot.cli"]


def stop_command(directory: str) -> str:
    """The command that stops this demo's wiki, as it can be typed in the current directory."""
    here = Path.cwd()
    program = program_words()
    where = Path(directory)
    extra = [] if where.resolve() == (here / DEFAULT_DIR).resolve() else ["--dir", str(where)]
    return shlex.join([*program, "demo", "--stop", *extra])


def _print_pages(wiki, settings: Settings, report, stop: str) -> None:
    bot = settings.wiki.username
    print()
    print("Pages the bot wrote (open them in a browser):")
    for title in report.written or []:
        print(f"  {wiki.page_url(title)}")
    if not report.written:
        print("  (none: nothing new was found, or everything was posted in an earlier run)")
    print(f"The bot's user page: {wiki.page_url(f'User:{bot}')}")
    print(f"The review queue:    {wiki.page_url(settings.wiki.queue)}")
    print(f"Shutoff page:        {wiki.page_url(settings.wiki.shutoff)}")
    config = Path(settings.state.path).parent / "winellbot.toml"
    program = shlex.join(program_words())  # as it can be typed here: .venv/bin/winellbot from a checkout
    print(f"State database:      {settings.state.path}  ({program} status --config {config}; "
          f"{program} posted --config {config}; {program} withdraw ID --config {config})")
    print(f"The wiki keeps running at {wiki.base_url}; stop it with: {stop}")
