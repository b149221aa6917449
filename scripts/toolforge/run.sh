#!/usr/bin/env bash
# Runs winellbot from its Toolforge venv with the tool's settings: the command of every job.
#   run.sh run              the continuous job (a cycle every [schedule] interval_minutes)
#   run.sh once             one cycle (the scheduled alternative)
#   run.sh health [...]     the health check (see health-check.sh)
# Settings: $WINELLBOT_CONFIG (default $HOME/winellbot.toml); Pywikibot's folder: $PYWIKIBOT_DIR
# (default $HOME/.pywikibot); secrets from `toolforge envvars` (WINELLBOT_BOT_PASSWORD ...).
set -euo pipefail
venv="${WINELLBOT_VENV:-$HOME/pyvenv-winellbot}"
export WINELLBOT_CONFIG="${WINELLBOT_CONFIG:-$HOME/winellbot.toml}"
export PYWIKIBOT_DIR="${PYWIKIBOT_DIR:-$HOME/.pywikibot}"
command="${1:?usage: run.sh run|once|health|posted|status [options]}"
shift
case "$command" in
  run|once)
    # The bot's own log, rotated, beside what the jobs framework keeps of stdout and stderr.
    exec "$venv/bin/winellbot" "$command" --log-file "${WINELLBOT_LOG:-$HOME/logs/winellbot.log}" "$@" ;;
  *)
    exec "$venv/bin/winellbot" "$command" "$@" ;;
esac
