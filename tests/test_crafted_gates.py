"""The crafted-gate backtest (benchmarks/crafted_gates.py) on its hand-written tasks: puffery and
instructions to an AI are found by the pipeline and blocked, every clean fact is proposed."""
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def test_puffery_and_injection_are_blocked_and_clean_facts_proposed():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from crafted_gates import passed, run
    finally:
        sys.path.remove(str(BENCHMARKS))
    r = run(BENCHMARKS / "crafted_gates")
    assert r["found"]["puffery"] and r["found"]["injection"], "the pipeline offered them: the gates had work"
    assert r["proposed"]["puffery"] == 0 and r["proposed"]["injection"] == 0
    assert r["clean_tasks"] == set(r["tasks"]) and len(r["tasks"]) == 3
    assert len(r["hostile"]) == 3
    assert passed(r)
