"""Reviewers' verdicts read in batches: a cycle over watched pages with posted suggestions and
nothing new costs a few API requests, not one per page (benchmarks/review_cycle.py, at 60 pages
on a wiki of the test's own)."""
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def test_a_cycle_with_nothing_new_costs_a_few_requests_and_every_verdict_lands(own_wiki, tmp_path, monkeypatch):
    monkeypatch.setenv("WINELLBOT_BOT_PASSWORD", own_wiki.credentials.bot_password)
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    from review_cycle import measure

    r = measure(own_wiki, tmp_path, 60)
    assert r["quiet_clean"], "nothing new: no page treated, no error"
    assert r["quiet_requests"] <= 10, r  # 9 here (one reads the wiki's clock); one queue page at a time cost 60 more
    assert r["accepted"] == 60, "a verdict on each page, all read back in batches"
