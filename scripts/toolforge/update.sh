#!/usr/bin/env bash
# After an update: pull, build a new venv beside the one the bot runs from (a one-off job), switch
# the link ~/pyvenv-winellbot to it only when the build is complete, then restart the bot's job (a
# SIGTERM: the cycle in progress finishes its current page first). The running job keeps importing
# from its own, untouched venv until then; the previous venv is kept for a rollback
# (`ln -sfn <old> ~/pyvenv-winellbot`). Run it as the tool on the bastion:
#   become <tool>; ~/winellbot/scripts/toolforge/update.sh [jobs.yaml|jobs-scheduled.yaml|jobs-toolsdb.yaml]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jobs="${1:-jobs.yaml}"
link="$HOME/pyvenv-winellbot"
git -C "$here/../.." pull --ff-only
new="$HOME/pyvenv-winellbot-$(git -C "$here/../.." rev-parse --short HEAD)-$(date +%Y%m%d%H%M%S)"
toolforge jobs run build --image python3.11 --wait 1800 --command "env WINELLBOT_VENV=$new $here/build.sh"
toolforge jobs delete build >/dev/null 2>&1 || true
if ! "$new/bin/winellbot" --help >/dev/null 2>&1; then
  echo "update: the new venv $new is not complete (see ~/logs/winellbot-build.log); the bot still runs the old one" >&2
  exit 1
fi
old="$(readlink -f "$link" 2>/dev/null || true)"
if [ -d "$link" ] && [ ! -L "$link" ]; then  # a venv built before links were used: keep it for a rollback
  mv "$link" "$link-before-links"
  old="$link-before-links"
fi
ln -sfn "$new" "$link"
# load replaces only the jobs whose definition changed; restart picks up the new venv in the others.
toolforge jobs load "$here/$jobs"
continuous_jobs() {  # the names of a job file's continuous jobs (jobs.yaml: winellbot; jobs-toolsdb.yaml: three)
  awk '/^- name:/ {name = $3} /^  continuous: true/ {print name}' "$1"
}
for job in $(continuous_jobs "$here/$jobs"); do
  toolforge jobs restart "$job"
done
# Venvs older than the previous one go.
for venv in "$HOME"/pyvenv-winellbot-*; do
  case "$venv" in "$new"|"$old") ;; *) [ -d "$venv" ] && rm -rf "$venv" ;; esac
done
toolforge jobs list
