#!/usr/bin/env bash
# After an update: pull, rebuild the venv in a one-off job, then restart the bot's job (a SIGTERM:
# the cycle in progress finishes its current page first). Run it as the tool on the bastion:
#   become <tool>; ~/winellbot/scripts/toolforge/update.sh [jobs.yaml|jobs-scheduled.yaml]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jobs="${1:-jobs.yaml}"
git -C "$here/../.." pull --ff-only
toolforge jobs run build --image python3.11 --wait 1800 --command "$here/build.sh"
toolforge jobs delete build >/dev/null 2>&1 || true
# load replaces only the jobs whose definition changed; restart picks up the new code in the others.
toolforge jobs load "$here/$jobs"
if [ "$jobs" = jobs.yaml ]; then
  toolforge jobs restart winellbot
fi
toolforge jobs list
