#!/usr/bin/env bash
# Runs winellbot with the tool's settings: the command of every job, from the container image (the
# Procfile's processes) or from the venv that build.sh made.
#   run.sh run              the continuous job (a cycle every [schedule] interval_minutes)
#   run.sh once             one cycle (the scheduled alternative)
#   run.sh health [...]     the health check (see health-check.sh)
# Settings: $WINELLBOT_CONFIG (default $HOME/winellbot.toml); Pywikibot's folder: $PYWIKIBOT_DIR
# (default $HOME/.pywikibot); secrets from `toolforge envvars` (WINELLBOT_BOT_PASSWORD ...).
# WINELLBOT_VENV=image (the Procfile sets it) runs the image's own winellbot, and its log is what
# `toolforge jobs logs` shows (plus $WINELLBOT_LOG if set); otherwise the venv's (default
# $HOME/pyvenv-winellbot) with its rotated log file $WINELLBOT_LOG (default $HOME/logs/winellbot.log).
set -euo pipefail
venv="${WINELLBOT_VENV:-$HOME/pyvenv-winellbot}"
if [ "$venv" = image ]; then
  winellbot=winellbot
  log="${WINELLBOT_LOG:-}"
else
  winellbot="$venv/bin/winellbot"
  log="${WINELLBOT_LOG:-$HOME/logs/winellbot.log}"
fi
export WINELLBOT_CONFIG="${WINELLBOT_CONFIG:-$HOME/winellbot.toml}"
export PYWIKIBOT_DIR="${PYWIKIBOT_DIR:-$HOME/.pywikibot}"
command="${1:?usage: run.sh run|once|health|posted|status [options]}"
shift
case "$command" in
  run|once)
    # The bot's own log, rotated, beside what the jobs framework keeps of stdout and stderr.
    exec "$winellbot" "$command" ${log:+--log-file "$log"} "$@" ;;
  *)
    exec "$winellbot" "$command" "$@" ;;
esac
