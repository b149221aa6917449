#!/usr/bin/env bash
# The main job on the embedded defaults: installs what is needed, starts a private local
# MediaWiki, loads the bundled fictional sample articles, runs one cycle with the offline
# pipeline over the bundled sample news, posts the suggestions, and prints the pages' URLs.
# It installs only what the demo uses (setup.sh demo: no browser, database server or model server of the
# tests, nothing built from source); scripts/test.sh installs the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
exec .venv/bin/winellbot demo "$@"
