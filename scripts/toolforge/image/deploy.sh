#!/usr/bin/env bash
# Deploys winellbot from Toolforge's Build Service: builds the tool's image from one commit of the
# repository, and only when that build succeeded loads the job file (with the image named after the tool)
# and restarts the continuous jobs and the webservice, which then pull the new image. Each deployed
# commit is appended to ~/winellbot-deploys.log. Run it as the tool on the bastion:
#   ~/winellbot/scripts/toolforge/image/deploy.sh [--ref REF] [jobs.yaml|jobs-scheduled.yaml|jobs-toolsdb.yaml]
#   ~/winellbot/scripts/toolforge/image/deploy.sh --rollback [JOBFILE]   # the commit deployed before the last
# REF: a branch, tag or commit of the repository (default: the checkout's HEAD after a pull). The
# repository is $WINELLBOT_REPO (default: the checkout's origin); the tool, $WINELLBOT_TOOL (default:
# the account's name without "tools."). If the build fails, nothing is restarted: the running jobs keep
# the image they started with (but a job restarted later by Toolforge would pull the latest image; a
# failed build leaves "latest" where it was).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
checkout="$(cd "$here/../../.." && pwd)"
deploys="$HOME/winellbot-deploys.log"
ref="" rollback=0 jobs=jobs.yaml
while [ $# -gt 0 ]; do
  case "$1" in
    --ref) ref="${2:?--ref needs a branch, tag or commit}"; shift 2 ;;
    --rollback) rollback=1; shift ;;
    *.yaml) jobs="$1"; shift ;;
    *) echo "usage: deploy.sh [--ref REF | --rollback] [JOBFILE]" >&2; exit 2 ;;
  esac
done
tool="${WINELLBOT_TOOL:-$(id -un | sed 's/^tools\.//')}"
repo="${WINELLBOT_REPO:-$(git -C "$checkout" remote get-url origin)}"
if [ "$rollback" = 1 ]; then
  ref="$(tail -n 2 "$deploys" 2>/dev/null | head -n 1 | cut -f 2)"
  [ "$(wc -l < "$deploys" 2>/dev/null || echo 0)" -ge 2 ] || { echo "deploy: nothing to roll back to in $deploys" >&2; exit 1; }
elif [ -z "$ref" ]; then
  git -C "$checkout" pull --ff-only -q
  ref="$(git -C "$checkout" rev-parse HEAD)"
fi

echo "deploy: building $repo at $ref"
toolforge build start --ref "$ref" "$repo"
while status="$(toolforge build show | sed -n 's/^ *Status: *//p' | head -n 1)"; [ "$status" = running ] || [ "$status" = pending ]; do
  sleep 20
done
if [ "$status" != ok ]; then
  echo "deploy: the build ended '$status' (toolforge build logs); nothing was restarted" >&2
  exit 1
fi
printf '%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$ref" >> "$deploys"

# The job file names the image of a tool called winellbot; load it with this tool's image. load replaces
# the jobs whose definition changed; restart makes the others pull the new image.
sed "s|tool-winellbot/tool-winellbot:|tool-$tool/tool-$tool:|" "$here/$jobs" | toolforge jobs load /dev/stdin
for job in $(awk '/^- name:/ {name = $3} /^  continuous: true/ {print name}' "$here/$jobs"); do
  toolforge jobs restart "$job"
done
if toolforge webservice status 2>/dev/null | grep -q "is running"; then
  toolforge webservice restart
fi
toolforge jobs list
