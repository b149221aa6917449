"""`winellbot run`'s scheduler: cycles on schedule, and SIGTERM lets the current page finish."""
import signal
import subprocess
import sys
import textwrap
import time

SCRIPT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from winellbot.scheduler import CycleScheduler

    log = Path(sys.argv[1])

    def cycle(stop):
        for page in range(1000):
            if stop.is_set():
                log.write_text(log.read_text() + "stopped-between-pages\\n")
                return
            log.write_text(log.read_text() + f"start {page}\\n")
            time.sleep(0.3)
            log.write_text(log.read_text() + f"done {page}\\n")

    log.write_text("")
    CycleScheduler(cycle, interval_minutes=60).serve()
    log.write_text(log.read_text() + "exited\\n")
""")


def test_sigterm_finishes_the_current_page_then_exits_cleanly(tmp_path):
    log = tmp_path / "log.txt"
    script = tmp_path / "sched.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(log)])
    deadline = time.time() + 30
    while time.time() < deadline and "done 1" not in (log.read_text() if log.exists() else ""):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    text = log.read_text()
    assert text.rstrip().endswith("exited")
    assert "stopped-between-pages" in text
    starts = [l for l in text.splitlines() if l.startswith("start")]
    dones = [l for l in text.splitlines() if l.startswith("done")]
    assert len(starts) == len(dones) >= 2, "a page was cut off in the middle"


def test_a_failing_cycle_does_not_end_the_scheduler():
    from winellbot.scheduler import CycleScheduler

    calls = []

    def cycle(stop):
        calls.append(1)
        raise RuntimeError("boom")

    sched = CycleScheduler(cycle, interval_minutes=60)
    sched._job()  # the job wrapper is what APScheduler calls
    sched._job()
    assert len(calls) == 2
    sched.stop_event.set()
    sched._job()
    assert len(calls) == 2, "no new cycle after a stop was requested"
