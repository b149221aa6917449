#!/usr/bin/env bash
# Installs everything needed, then runs the whole test suite offline, in two processes (pytest-xdist):
# each test module goes whole to one worker, the modules of the wiki and slow tests first (tests/conftest.py).
# Extra arguments go to pytest (e.g. `-n 0` for one process, or a test file).
#
# `bash scripts/test.sh --fast`: the fast lane for the edit-test loop. Only the tests that start no server
# (no local wiki, browser, MariaDB or model server) and are not marked slow; no set-up (it needs the .venv
# that a first `bash scripts/test.sh` made). The markers are set in tests/conftest.py and setup.cfg.
set -euo pipefail
cd "$(dirname "$0")/.."
# Bytecode is written, even where PYTHONDONTWRITEBYTECODE is set: otherwise each of the suite's processes (the
# two workers, some sixty bot and helper processes) compiles the checkout's modules again, and each worker
# rewrites the tests' asserts again. It goes to __pycache__ folders, which git ignores and the wheel leaves out.
unset PYTHONDONTWRITEBYTECODE
fast_lane="not wiki and not browser and not mariadb and not model_server and not slow"
if [ "${1:-}" = "--fast" ]; then
  shift
  if [ ! -x .venv/bin/python ]; then
    echo "test.sh --fast: no .venv here; run bash scripts/test.sh once (it sets up everything)" >&2
    exit 2
  fi
  export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
  exec .venv/bin/python -m pytest -q -n 2 --dist loadfile -m "$fast_lane" "$@"
fi
bash scripts/setup.sh dev
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder "$@"
