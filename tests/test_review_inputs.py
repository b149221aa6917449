"""What a request may ask of the review page (winellbot/review/inputs.py, security.py), against the real
local wiki: only the configured wiki's suggestions, filters from the query string only and bounded, a
clamped offset, a moved approval only into a section the article has, limits on a request's size,
an OAuth login that is not configured said so, and invisible characters shown.
"""
from __future__ import annotations

import secrets

import lxml.html
import pytest
from werkzeug.exceptions import HTTPException

from review_client import client_of, page_settings, token
from review_scene import queue_suggestions, suggestion
from winellbot.review.app import create_app
from winellbot.review.inputs import section_problem, target_section, wiki_name
from winellbot.state.db import State
from winellbot.state.reviews import ReviewStore

PASSWORD = "Inp-" + secrets.token_urlsafe(16)
NAME = "Inputs Reviewer"
ARTICLE = "Pellworth"
WIKITEXT = "Pellworth is a port.\n\n== History ==\nOld.\n\n== Economy ==\nFish.\n\n=== Harbour ===\nBoats.\n"
TRICK = "The port\u202e4202 ni\u202c opened a pier\u200b in 2026."


@pytest.fixture(scope="module")
def reviewer(local_wiki):
    local_wiki.create_user(NAME, PASSWORD)
    local_wiki.edit(ARTICLE, WIKITEXT)
    return NAME


@pytest.fixture
def setup(local_wiki, reviewer, tmp_path):
    settings = page_settings(local_wiki, tmp_path)
    state = State(settings.state.path)
    made = queue_suggestions(state, [ARTICLE, "Marrowby"], per_page=3, wiki=wiki_name(local_wiki.api_url),
                             extra=[suggestion(ARTICLE, TRICK, quote=TRICK, title="Port news\u200b")])
    unnamed = queue_suggestions(state, ["Tarnwick"], per_page=1, wiki="", seed=5)
    elsewhere = queue_suggestions(state, ["Quillhaven"], per_page=2, wiki="de.wikipedia.org", seed=3)
    app = create_app(settings, secret_key="i-" + secrets.token_hex(8))
    c = client_of(app)
    r = c.post("/login/local", data={"csrf": token(c.get("/login").data), "username": NAME, "password": PASSWORD})
    assert r.status_code == 303
    return {"state": state, "app": app, "c": c, "made": made, "elsewhere": elsewhere + unnamed}


def listed(c, query: str = "") -> list[str]:
    page = lxml.html.fromstring(c.get(f"/queue{query}").data)
    return [href.split("/s/")[1].split("?")[0] for href in page.xpath('//table[@id="queue"]//a/@href') if "/s/" in href]


@pytest.mark.parametrize("which", [0, -1], ids=["another wiki", "no wiki recorded"])
def test_another_wikis_suggestion_is_neither_listed_nor_shown_nor_decided(setup, which):
    c, other = setup["c"], setup["elsewhere"][which].id
    assert listed(c) and other not in listed(c) and not listed(c, "?wiki=de.wikipedia.org&page=Quillhaven")
    assert c.get(f"/s/{other}").status_code == 404
    r = c.post(f"/s/{other}/decide", data={"csrf": token(c.get("/queue").data), "verdict": "approve"})
    assert r.status_code == 404
    assert setup["state"].suggestion(other)["status"] == "proposed" and not ReviewStore(setup["state"]).decisions(other)


def test_a_huge_offset_shows_the_last_page(setup):
    r = setup["c"].get("/queue?offset=" + "9" * 40)
    assert r.status_code == 200 and listed(setup["c"], "?offset=" + "9" * 40)


def test_the_move_forms_field_does_not_filter_the_queue(setup):
    c = setup["c"]
    sid = next(s.id for s in setup["made"] if s.article_title == ARTICLE and s.section_path == ("History",))
    r = c.post(f"/s/{sid}/decide", data={"csrf": token(c.get(f"/s/{sid}").data), "verdict": "move",
                                         "to_section": "Economy > Harbour"})
    assert r.status_code == 303 and "section" not in r.headers["Location"]
    assert setup["state"].suggestion(sid)["section"] == "Economy > Harbour"
    nxt = c.get(r.headers["Location"])
    assert nxt.status_code == 302 and "/s/" in nxt.headers["Location"]  # the queue did not narrow to Harbour


def test_a_filter_is_cut_short_and_no_redirect_grows_with_it(setup):
    c = setup["c"]
    r = c.get("/next?page=" + "P" * 100_000)
    assert r.status_code == 302 and len(r.headers["Location"]) < 1000


def test_a_forged_section_is_refused_and_a_wiki_that_cannot_be_read_refuses_the_move(setup):
    c = setup["c"]
    sid = next(s.id for s in setup["made"] if s.article_title == ARTICLE)
    r = c.post(f"/s/{sid}/decide", data={"csrf": token(c.get(f"/s/{sid}").data), "verdict": "move",
                                         "to_section": "Scandal <b>"})
    assert r.status_code == 400 and b"has no section" in r.data
    assert setup["state"].suggestion(sid)["status"] == "proposed"
    # a wiki that cannot be read leaves no sections to check against: the move is refused, nothing recorded
    assert "could not be read" in section_problem([], "History")
    with pytest.raises(HTTPException) as refused:
        target_section([], "History")
    assert refused.value.code == 400 and "not recorded" in refused.value.description


def test_a_request_over_the_size_limit_is_refused_before_its_form_is_read(setup):
    c, sid = setup["c"], setup["made"][0].id
    big = c.post(f"/s/{sid}/decide", data={"csrf": "x", "verdict": "approve", "pad": "p" * 2_000_000})
    assert big.status_code == 413 and "Set-Cookie" not in big.headers  # not 400: the token was never read
    field = c.post(f"/s/{sid}/decide", data={"csrf": "x", "verdict": "move", "to_section": "s" * 200_000},
                   content_type="multipart/form-data")  # one field over the limit of a field, the whole under 1 MB
    assert field.status_code == 413
    assert setup["state"].suggestion(sid)["status"] == "proposed"


def test_oauth_start_without_a_consumer_says_so(setup):
    c = client_of(setup["app"])
    r = c.post("/oauth/start", data={"csrf": token(c.get("/login").data)}, follow_redirects=True)
    assert r.status_code == 200 and b"OAuth is not configured" in r.data


def test_bidi_controls_and_zero_width_characters_are_shown(setup):
    sid = next(s.id for s in setup["made"] if s.update.text == TRICK)
    page = lxml.html.fromstring(setup["c"].get(f"/s/{sid}").data)
    for where in ('//*[@id="fact"]', '//*[@id="quote"]', '//*[@id="passage"]', '//*[@id="source"]'):
        text = page.xpath(f"string({where})")
        assert "\u202e" not in text and "\u200b" not in text, where
    assert "\u27e8U+202E\u27e9" in page.xpath('string(//*[@id="fact"])')
    assert "\u27e8U+200B\u27e9" in page.xpath('string(//*[@id="source"])')
    queue = setup["c"].get(f"/queue?page={ARTICLE}").data.decode()
    assert "\u202e" not in queue and "\u27e8U+202E\u27e9" in queue
