#!/usr/bin/env bash
# The main job on the embedded defaults: installs what is needed, starts a private local
# MediaWiki, loads the bundled fictional sample articles, runs one cycle with the offline
# pipeline over the bundled sample news, posts the suggestions, and prints the pages' URLs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
exec .venv/bin/winellbot demo "$@"
