"""Several jobs on one state on MariaDB: pages claimed with leases (winellbot/state/leases.py)."""
from __future__ import annotations

import threading
import time

from mariadb import mariadb, mariadb_url  # noqa: F401 - the fixtures

from winellbot.models import Citation, Document, Edit, PipelineResult, Suggestion, Update
from winellbot.state.db import State
from winellbot.state.leases import BATCH_PAGES, Leases
from winellbot.state.posts import PostClaims


def suggestion(text: str) -> Suggestion:
    d = Document("d1", "https://news.example/town", "Town news", text)
    e = Edit("Old paragraph.", "Old paragraph. " + text, text, Citation(d.url, d.title))
    return Suggestion("Town", 7, ("History",), 0, e, Update(text, ("History",), text, d))


def _job(url: str, name: str, seconds: float = 600) -> Leases:
    return Leases(State(url=url), holder=name, seconds=seconds)


def test_jobs_claim_disjoint_batches_and_a_page_treated_since_it_was_seen_is_not_taken_again(mariadb_url):
    titles = [f"Town {i}" for i in range(12)]
    a, b = _job(mariadb_url, "a"), _job(mariadb_url, "b")
    seen_a, seen_b = a.last_runs(titles), b.last_runs(titles)
    got_a, tried = a.claim(titles, seen_a)
    assert got_a == titles[:BATCH_PAGES] and tried == BATCH_PAGES
    got_b, tried = b.claim(titles, seen_b)
    assert got_b == titles[BATCH_PAGES:2 * BATCH_PAGES] and tried == 2 * BATCH_PAGES
    # a treats its first page (the bot's reschedule writes last_run), then lets it go
    a.state.touch_page(titles[0], last_run="2026-11-25T10:00:00+00:00", next_due="2026-12-02T10:00:00+00:00")
    a.release([titles[0]])
    assert b.claim([titles[0]], seen_b) == ([], 1), "b saw the page before a treated it: not again"
    a.release([titles[1]])  # released untreated (an error): b may take it
    assert b.claim([titles[1]], seen_b) == ([titles[1]], 1)
    assert a.holds(titles[2]) and not b.holds(titles[2]) and not a.holds(titles[1])
    assert a.claim(titles[2:4], seen_a)[0] == titles[2:4], "a job may claim its own pages again"
    fresh = _job(mariadb_url, "c")
    assert fresh.claim([titles[0]], fresh.last_runs([titles[0]]))[0] == [titles[0]], "a later look sees it anew"


def test_a_lease_runs_out_unless_renewed_and_the_keeper_renews_it_and_releases_at_the_end(mariadb_url):
    a, b = _job(mariadb_url, "a", seconds=1.0), _job(mariadb_url, "b", seconds=1.0)
    a.claim(["Town"], a.last_runs(["Town"]))
    assert b.claim(["Town"], b.last_runs(["Town"]))[0] == []
    time.sleep(1.3)  # a died: nothing renews its lease
    assert not a.holds("Town")
    assert b.claim(["Town"], b.last_runs(["Town"]))[0] == ["Town"]

    kept = _job(mariadb_url, "kept", seconds=1.0)
    run = kept.state.start_run("offline")
    kept.claim(["Village"], kept.last_runs(["Village"]))
    with kept.start(run):
        time.sleep(2.0)  # twice the lease: only the renewing thread keeps it
        assert kept.holds("Village") and b.claim(["Village"], b.last_runs(["Village"]))[0] == []
        assert kept.state.db["runs"].get(run)["job"] == "kept"
    assert kept.state.page("Village")["lease_holder"] is None, "released when the job ends"
    assert kept.state.mark_interrupted() == [], "the run gave its heartbeat"


def test_many_jobs_claiming_at_once_treat_every_page_once(mariadb_url):
    """Six jobs, each on its own connections, work through the same 60 due pages as the bot does:
    claim a batch, treat each page (its last run written), release it."""
    titles = [f"Page {i}" for i in range(60)]
    State(url=mariadb_url)  # migrated once, before the jobs start
    treated: dict[str, list[str]] = {}
    start = threading.Barrier(6)

    def job(name: str) -> None:
        leases = _job(mariadb_url, name)
        seen = leases.last_runs(titles)
        start.wait()
        done = treated.setdefault(name, [])
        for batch in leases.batches(titles, seen):
            for title in batch:
                done.append(title)
                leases.state.touch_page(title, last_run=f"2026-11-25T10:00:00+00:00 {name}")
                leases.release([title])

    threads = [threading.Thread(target=job, args=(f"job{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything = [t for done in treated.values() for t in done]
    assert sorted(everything) == sorted(titles), "every page once, none twice"
    assert sum(1 for done in treated.values() if done) >= 2, "the work was shared"


# -- posts claimed before the wiki write (winellbot/state/posts.py) -----------------------------------
def test_jobs_claiming_posts_at_once_never_exceed_the_daily_cap_together(mariadb_url):
    State(url=mariadb_url)
    granted: list[str] = []
    rounds, jobs = 3, 5
    for r in range(rounds):
        start = threading.Barrier(jobs)

        def job(i: int, r: int = r) -> None:
            claims = PostClaims(State(url=mariadb_url), holder=f"job{i}")
            start.wait()
            granted.extend(claims.claim(f"Page {r}-{i}", [f"s{r}-{i}"], per_page_week=2, per_wiki_day=3 * (r + 1)))

        threads = [threading.Thread(target=job, args=(i,)) for i in range(jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(granted) == 3 * (r + 1), f"round {r}: {granted}"  # each round's cap is 3 more


def test_posts_and_open_claims_count_closed_claims_do_not_twice_and_a_claim_is_taken_over(mariadb_url):
    state = State(url=mariadb_url)
    s1, s2, s3 = (suggestion(f"Fact {c} happened in 2026.") for c in "abc")
    state.record_result(state.start_run("offline"), "Town", PipelineResult((s1, s2, s3)))
    a, b = PostClaims(state, "a"), PostClaims(state, "b")
    assert a.claim("Town", [s1.id], per_page_week=2, per_wiki_day=10) == [s1.id]
    state.record_post([s1.id], "Talk:Town", 1, "S")  # the claim closes: the post counts, once
    assert state.db["post_claims"].get(s1.id)["done"] == 1
    assert a.claim("Town", [s2.id, s3.id], per_page_week=2, per_wiki_day=10) == [s2.id], "2 a week per article"
    # a died after claiming s2; b, which holds the page now, takes the claim over (it is not counted twice)
    assert b.claim("Town", [s2.id], per_page_week=2, per_wiki_day=10) == [s2.id]
    assert state.db["post_claims"].get(s2.id)["job"] == "b"
    assert b.claim("Village", ["other"], per_page_week=2, per_wiki_day=2) == [], "s1's post and s2's claim: 2 today"
    b.release([s2.id])  # b's write did not happen
    assert b.claim("Village", ["other"], per_page_week=2, per_wiki_day=2) == ["other"]
