"""The reviewer's own hand on a suggestion: revise its wording (with a preview of the post), undo their
last decision, and bring back what they skipped.

Routes (every one needs a logged-in reviewer; every POST the session's CSRF token; a decision reads
the reviewer's standing on the wiki first)::

    POST /s/<id>/preview      the revise form again, with the post as it would be written (the bot's
                              rendering, and the wiki's own parse of it), or the sentence picked from
                              the source's passage as the starting text; nothing is recorded
    POST /undo                take back the reviewer's latest decision (its id in the form)
    GET  /skipped             what this reviewer skipped        POST /skipped/<review_id>/back

A revision itself is a decision (``verdict=revise`` on ``/s/<id>/decide``): :func:`revision_from` reads
and checks its fields; a refused one is shown again with the reasons in words, and nothing is written.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from flask import Flask, abort, flash, redirect, render_template, request, session, url_for

from winellbot import clock
from winellbot.errors import WinellbotError
from winellbot.review.checks import check_revision
from winellbot.review.inputs import section_problem
from winellbot.review.outbox import reworded
from winellbot.state.reviews import MAX_NOTE, Decision, ReviewStore
from winellbot.wiki import render


@dataclass(frozen=True)
class RevisionForm:
    """What the revise form holds: the wording, the section chosen (an outline path), the note, where
    the wording started, and the problems the page's checks found (empty: it may be approved)."""

    text: str
    section: str
    note: str
    started_from: str = "bot"
    problems: tuple[str, ...] = ()


def revision_from(form, shown, language: str) -> RevisionForm:
    """The revise form's fields, checked as the page checks a reviewer's text (:mod:`winellbot.review.checks`)."""
    text = (form.get("text") or "").strip()
    section = (form.get("to_section") or shown.section_path).strip()
    note = " ".join((form.get("note") or "").split())
    started = "passage" if form.get("started_from") == "passage" else "bot"
    pick = form.get("pick")
    if pick is not None:  # a sentence of the passage as the starting text
        try:
            text, started = shown.sentences[int(pick)], "passage"
        except (ValueError, IndexError):
            abort(400, "no such sentence in the source's passage")
    problems = [p.message for p in check_revision(text, language=language)]
    if len(note) > MAX_NOTE:
        problems.append(f"the note is {len(note)} characters long: at most {MAX_NOTE}")
    if shown.outline or section != shown.section_path:  # the bot's own section stands while none can be read
        why = section_problem(shown.outline, section)
        if why:
            problems.append(why)
    return RevisionForm(text, section, note, started, tuple(problems))


def decision_of(form: RevisionForm, suggestion_id: str, reviewer: str, shown) -> Decision:
    """The ``revise`` decision of a checked form (the section given only when the reviewer changed it)."""
    path = tuple(p for p in form.section.split(" > ") if p)
    section = path if form.section != shown.section_path else None
    return Decision(suggestion_id, reviewer, "revise", section=section, text=form.text, note=form.note,
                    started_from=form.started_from)


def preview_of(form: RevisionForm, suggestion, shown, *, reviewer: str, bot_user: str, style: str,
               queued: bool) -> str:
    """The wikitext the bot would post for this revision, by the bot's own rendering."""
    s = reworded(suggestion, form.text)
    path = tuple(p for p in form.section.split(" > ") if p)
    moved = form.section != shown.section_path
    if moved:
        s = dataclasses.replace(s, section_path=path)
    notes = render.Notes(fact=form.text, reviewer=reviewer, worded=True, note=form.note, section_chosen=moved,
                         checked_on=clock.today().isoformat())
    if queued:
        return render.render_queue_entry(s, bot_user=bot_user, style=style, notes=notes)
    return render.render_suggestion(s, bot_user=bot_user, style=style, notes=notes)


def warm() -> None:
    """Load what the checks of a reviewer's text load on first use (the language model), so the first
    reviewer's submit does not wait for it: called by the servers as they start."""
    check_revision("The town opened a new library in the spring of 2026.")


def unstyled(html: str) -> str:
    """The wiki's rendering without what the page's CSP would refuse and log (inline styles; scripts,
    which MediaWiki never emits for wikitext, removed all the same)."""
    import lxml.html  # lazy: only a preview parses HTML

    root = lxml.html.fragment_fromstring(html, create_parent="div")
    for el in root.iter():
        if isinstance(el.tag, str):
            for name in [a for a in el.attrib if a == "style" or a.startswith("on")]:
                del el.attrib[name]
    for bad in root.xpath("//script|//style|//link|//iframe|//object|//embed"):
        bad.drop_tree()
    return lxml.html.tostring(root, encoding="unicode")


def register(app: Flask, *, state, shown_for, item_page, may_decide, login_required) -> None:
    """The routes of this module on ``app``; ``state()`` gives the request's state, ``shown_for(id)``
    (row, suggestion, shown), ``item_page(shown, **extra)`` renders the item page, ``may_decide()``
    aborts unless the reviewer may decide now."""

    @app.post("/s/<suggestion_id>/preview")
    @login_required
    def preview(suggestion_id: str):
        row, suggestion, shown = shown_for(suggestion_id)
        form = revision_from(request.form, shown, app.extensions["winellbot"]["settings"].wiki.language)
        settings = app.extensions["winellbot"]["settings"]
        wikitext = preview_of(form, suggestion, shown, reviewer=session["user"], bot_user=settings.wiki.username,
                              style=shown.style, queued=not shown.opted_in) if form.text else ""
        html, why = "", ""
        if wikitext and not form.problems:
            try:
                html = unstyled(app.extensions["winellbot"]["wiki"].parse_preview(wikitext, shown.destination))
            except WinellbotError as exc:
                why = str(exc)
        return item_page(shown, revision=form, preview_wikitext=wikitext, preview_html=html, preview_error=why)

    @app.post("/undo")
    @login_required
    def undo():
        may_decide()
        try:
            review_id = int(request.form.get("review_id", ""))
        except ValueError:
            abort(400, "which decision to undo is missing")
        store = ReviewStore(state())
        last = store.last_decision(session["user"])
        done = store.undo(session["user"], review_id)
        if not done.taken:
            flash(f"Not undone: {done.why}.")
            return redirect(url_for("queue"), code=303)
        what = ("its post will be withdrawn by the bot at its next poll, naming you" if done.status == "withdrawing"
                else "it is back in the queue")
        flash(f"Undone: your {last['verdict']} of suggestion {last['suggestion_id'][:10]}; {what}.")
        return redirect(url_for("item", suggestion_id=last["suggestion_id"]), code=303)

    @app.get("/skipped")
    @login_required
    def skipped():
        rows = ReviewStore(state()).skipped(session["user"])
        return render_template("skipped.html", rows=rows)

    @app.post("/skipped/<int:review_id>/back")
    @login_required
    def unskip(review_id: int):
        store = ReviewStore(state())
        flash("Brought back into your queue." if store.unskip(session["user"], review_id)
              else "That skip was not yours, or it was brought back already.")
        return redirect(url_for("skipped"), code=303)
