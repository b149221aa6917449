#!/usr/bin/env bash
# Installs everything needed, then runs the whole test suite offline, in two processes (pytest-xdist):
# each test module goes whole to one worker, the modules of the wiki and slow tests first (tests/conftest.py).
# Extra arguments go to pytest (e.g. `-n 0` for one process, or a test file).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder "$@"
