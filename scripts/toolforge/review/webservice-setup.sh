#!/usr/bin/env bash
# Prepares the review page as the tool's webservice (Toolforge's Python webservice: uWSGI serving
# $HOME/www/python/src/app.py with the venv $HOME/www/python/venv). Run once on the bastion, after
# build.sh has built the venv (in the python3.11 image):
#   ~/winellbot/scripts/toolforge/review/webservice-setup.sh
#   webservice python3.11 start
# It links the page's entry point and the bot's venv into ~/www/python; nothing is copied, so
# update.sh's new venv and checkout are what the next `webservice restart` serves. See docs/review.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${WINELLBOT_VENV:-$HOME/pyvenv-winellbot}"
www="$HOME/www/python"
[ -x "$venv/bin/python" ] || { echo "no venv at $venv: run build.sh first (docs/operating.md)" >&2; exit 1; }
mkdir -p "$www/src"
ln -sfn "$here/app.py" "$www/src/app.py"
ln -sfn "$venv" "$www/venv"
echo "webservice files ready in $www; start it with: webservice python3.11 start"
echo "secrets it needs (toolforge envvars create NAME): WINELLBOT_OAUTH_KEY WINELLBOT_OAUTH_SECRET WINELLBOT_REVIEW_SECRET_KEY"
