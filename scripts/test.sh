#!/usr/bin/env bash
# Installs everything needed, then runs the whole test suite offline, in two processes (pytest-xdist):
# each test module goes whole to one worker, the modules of the wiki and slow tests first (tests/conftest.py).
# Extra arguments go to pytest (e.g. `-n 0` for one process, or a test file).
#
# `bash scripts/test.sh --fast`: the fast lane for the edit-test loop. Only the tests that start no server
# (no local wiki, browser, MariaDB or model server) and are not marked slow; no set-up (it needs the .venv
# that a first `bash scripts/test.sh` made). The markers are set in tests/conftest.py and setup.cfg.
#
# Scratch in memory: a whole run writes some gigabytes of scratch (the image test's venv alone is about 2 GB)
# and syncs many small databases (the wikis', the states', MariaDB's); where the disk stalls, that waiting cost
# a minute of a six-minute run. Where /dev/shm is a tmpfs with room (8 GB free there and 12 GB of memory
# available) that may hold programs (not mounted noexec), the run's temporary folders (pytest's --basetemp, and
# TMPDIR) are in a folder of its own there: removed when the run passes, kept and named when it does not.
# WINELLBOT_TEST_SCRATCH=disk keeps them on disk.
#
# Files kept warm: beside the run, tests/keep_warm.py reads the files that the suite's processes read most
# (the dependencies' compiled modules and libraries, the models, the browser) in large reads, then keeps them in
# memory until the run ends; where the disk serves small reads slowly and idle file pages are paged out after a
# minute, each process would otherwise fault them in again a few kilobytes at a time.
# WINELLBOT_TEST_KEEP_WARM=0 leaves the page cache alone.
set -euo pipefail
cd "$(dirname "$0")/.."
# Bytecode is written, even where PYTHONDONTWRITEBYTECODE is set: otherwise each of the suite's processes (the
# two workers, some sixty bot and helper processes) compiles the checkout's modules again, and each worker
# rewrites the tests' asserts again. It goes to __pycache__ folders, which git ignores and the wheel leaves out.
unset PYTHONDONTWRITEBYTECODE
fast_lane="not wiki and not browser and not mariadb and not model_server and not slow"

# A folder in memory for this run's scratch, or nothing (see above).
memory_scratch() {
  [ "${WINELLBOT_TEST_SCRATCH:-memory}" = memory ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || return 0
  # the tests run programs from their scratch (the venvs of the image and wheel tests)
  awk '$2 == "/dev/shm" {print $4}' /proc/mounts | grep -qw noexec && return 0
  local free_kb available_kb
  free_kb="$(df -Pk /dev/shm | awk 'NR == 2 {print $4}')"
  available_kb="$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)"
  if [ "${free_kb:-0}" -ge $((8 << 20)) ] && [ "${available_kb:-0}" -ge $((12 << 20)) ]; then
    mktemp -d /dev/shm/winellbot-tests.XXXXXX
  fi
}

# tests/keep_warm.py in the background until this script ends (see above).
keep_warm() {
  [ "${WINELLBOT_TEST_KEEP_WARM:-1}" != 0 ] && [ -x .venv/bin/python ] || return 0
  .venv/bin/python tests/keep_warm.py --parent $$ >/dev/null 2>&1 &
  trap "kill $! 2>/dev/null || true" EXIT
  export WINELLBOT_TEST_KEEP_WARM=0  # the test.sh that tests run, in this one's processes, holds nothing more
}

# pytest, its scratch in memory where there is room; its exit status is the script's.
run_pytest() {
  local status=0 scratch
  scratch="$(memory_scratch)" || scratch=""
  if [ -z "$scratch" ]; then
    .venv/bin/python -m pytest "$@" || status=$?
    return "$status"
  fi
  mkdir "$scratch/tmp"
  TMPDIR="$scratch/tmp" .venv/bin/python -m pytest --basetemp "$scratch/pytest" "$@" || status=$?
  if [ "$status" = 0 ]; then
    rm -rf "$scratch"
  else
    echo "test.sh: this run's temporary folders are kept, in memory, in $scratch ($(du -sh "$scratch" | cut -f1)):" \
         "remove them when done" >&2
  fi
  return "$status"
}

if [ "${1:-}" = "--fast" ]; then
  shift
  if [ ! -x .venv/bin/python ]; then
    echo "test.sh --fast: no .venv here; run bash scripts/test.sh once (it sets up everything)" >&2
    exit 2
  fi
  export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
  keep_warm
  run_pytest -q -n 2 --dist loadfile -m "$fast_lane" "$@"
  exit
fi
keep_warm  # from the .venv of an earlier run, while set-up checks it
bash scripts/setup.sh dev
keep_warm  # from a .venv set-up has just made (a no-op where one runs: keep_warm turns itself off once started)
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
run_pytest -q -n 2 --dist loadfile --no-loadscope-reorder "$@"
