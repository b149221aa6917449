"""The bot's user page: what the bot is, which models it uses, how to opt out and how to stop it.

Written from the settings, so that it says what this installation really does. The demo saves it
on its local wiki; on a real wiki the operator saves it by hand (``winellbot userpage`` prints it),
since bot policy wants the operator, not the bot, to speak for the account.
"""
from __future__ import annotations

from winellbot.config import Settings
from winellbot.escape import escape_text
from winellbot.posting import resolve_style

_SEARCH = {
    "corpus": "a local collection of documents",
    "gdelt": "the GDELT news index",
    "brave": "the Brave news search API",
    "searxng": "a SearXNG search instance",
}


def render_user_page(settings: Settings, *, hostname: str = "", operator: str = "") -> str:
    """Wikitext of ``User:<username>`` for these settings (``hostname``: the wiki's, for the style)."""
    w, p = settings.wiki, settings.posting
    bot = w.username
    style = resolve_style(p.style, hostname)
    run_by = f"run by [[User:{operator}|{operator}]]" if operator else "run by its operator"
    lines = [
        f"'''{bot}''' is a bot account {run_by}. It runs winellbot, a program that keeps articles current "
        "without editing them: it reads the articles it watches, looks for recent reliable sources about "
        "their subjects, picks out facts that are new, and posts them as suggestions for editors to review. "
        "'''It never edits an article.''' It writes only on talk pages and on pages under its own user page.",
        "",
        "== Where its suggestions go ==",
        f"* Articles whose talk page carries the opt-in notice (<code><nowiki>{{{{{w.optin_template}}}}}"
        f"</nowiki></code>, [[Template:{w.optin_template}|the notice]]) get a section on their talk page.",
        f"* Other articles it watches{_watchlist(w.watchlist_page)} get them in its "
        f"[[{w.queue}|review queue]].",
        f"* {_style_line(style)}",
        f"* At most {p.max_per_page_per_week} suggestions per article in a week, at most "
        f"{p.max_per_wiki_per_day} a day on the whole wiki, and at most one new talk-page section per page "
        f"every {w.new_section_interval_days} days; the same fact reported by several sources is posted once.",
        "* Reviewers record their decision in each suggestion's box (<code>status=accepted</code> or "
        "<code>status=rejected</code>); a rejected suggestion is never proposed again.",
        "",
        "== Models and sources ==",
        *(f"* {line}" for line in model_lines(settings)),
        "",
        "== Opting out ==",
        "* To stop suggestions on one article's talk page, remove the opt-in notice, or add "
        f"<code><nowiki>{{{{bots|deny={bot}}}}}</nowiki></code> (or <code><nowiki>{{{{nobots}}}}</nowiki>"
        "</code>) to the talk page; the bot honours both.",
        "* To stop it watching an article, remove the article from its watchlist page"
        + (f", [[{w.watchlist_page}]]." if w.watchlist_page else "."),
        "",
        "== Stopping the bot ==",
        f"Any editor can stop the bot at once: edit [[{w.shutoff}]] and replace its text (<code>run</code>) "
        "with anything else, for example <code>stop: wrong dates</code>. The bot reads that page before every "
        "edit and stops while it says anything but <code>run</code>. Please also say why on "
        f"[[User talk:{bot}|its talk page]].",
    ]
    return "\n".join(lines) + "\n"


def _watchlist(page: str) -> str:
    return f" (listed on [[{page}|its watchlist]])" if page else ""


def _style_line(style: str) -> str:
    if style == "fact":
        return ("Each suggestion gives the new fact in one line, the source's own words, the section it may "
                "belong in and a ready citation. It proposes no article text: an editor who adds the fact "
                "writes it in their own words.")
    return ("Each suggestion shows the paragraph as it would read with the new fact and a citation, with the "
            "changed words marked, next to the source's own words, for an editor to check and adapt.")


# The models the offline backend uses, by what each decides (docs/models.md, "The bundled models").
OFFLINE_MODELS = (
    "the sentence embedding models all-MiniLM-L6-v2 and all-mpnet-base-v2 (sentence-transformers): "
    "whether the article already says a fact, and which section it belongs in, with word statistics "
    "(and GloVe word vectors when installed);",
    "spaCy's small English pipeline (en_core_web_sm): whether a sentence is a whole sentence;",
    "a punctuation restorer (all-MiniLM-L6-v2 with a small adapter trained for winellbot): full stops, "
    "commas and capitals for pages that lost them;",
    "py3langid: whether a sentence is in the wiki's language;",
    "an acceptability score (a logistic model fitted on editors' verdicts on earlier suggestions): "
    "which suggestions are posted and which are held.",
)


def model_lines(settings: Settings) -> list[str]:
    """Which models and sources this installation uses, one line each (for the user page)."""
    s = settings
    search = _SEARCH.get(s.search.backend, s.search.backend)
    if s.search.backend == "corpus" and not s.search.corpus_dir:
        search = "the fictional sample news bundled with winellbot (a demonstration)"
    lines = [f"Sources are found with {escape_text(search)}; every suggestion cites the page it comes from."]
    if s.pipeline.backend == "offline":
        lines.append("No language model writes anything: every fact shown is a sentence of its source, as the "
                     "source has it. Small models run on the bot's own machine to choose and check it:")
        lines += [f"** {line}" for line in OFFLINE_MODELS]
    else:
        stages = ", ".join(f"{escape_text(k)}: {escape_text(v)}" for k, v in sorted(s.llm.stage_models.items()))
        lines.append(f"Language model: {escape_text(s.llm.model)}" + (f" (by stage: {stages})" if stages else "")
                     + ", through an OpenAI-compatible API; it finds and places facts, and every suggestion "
                     "passes automated checks against its source before it is posted.")
        if s.llm.editor_backend in ("transformers", "local"):
            where = escape_text(s.llm.editor_model_dir) if s.llm.editor_model_dir else "the bundled SmolLM2-135M-Instruct"
            lines.append(f"Paragraph edits are written by a small editor model run on the bot's own machine ({where}).")
    return lines
