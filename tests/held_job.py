"""A bot job in a process of its own, held at a test pause until the test lets it go (the counterpart of
wikiscene.held_at for a job that must be a process: two jobs side by side on one database).

``python tests/held_job.py FOLDER VARIABLE ARGS...`` runs ``winellbot ARGS`` (``winellbot.cli.main``) and exits
with its code. At its first pause ``VARIABLE`` (``bot._pause_for_tests``) the job writes ``FOLDER/arrived-<pid>``
and waits until ``FOLDER/go`` exists (at most 120 s, then it goes on); its other pauses are as usual.
wikiscene.release_when_arrived is the test's side.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def hold(folder: Path, variable: str) -> None:
    import pytest
    from wikiscene import at_first_pause

    def arrive_and_wait() -> None:
        (folder / f"arrived-{os.getpid()}").touch()
        deadline = time.monotonic() + 120
        while not (folder / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    at_first_pause(pytest.MonkeyPatch(), variable, arrive_and_wait)  # for the process's life: never undone


if __name__ == "__main__":
    hold(Path(sys.argv[1]), sys.argv[2])
    from winellbot.cli import main

    sys.exit(main(sys.argv[3:]))
