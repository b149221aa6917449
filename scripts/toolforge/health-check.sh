#!/usr/bin/env bash
# Health check of the continuous job (jobs.yaml: health-check-script). Exit 0 when a winellbot job
# holds the state and its cycles keep coming; otherwise Toolforge restarts the job. With
# "--job scheduled" (jobs-scheduled.yaml), it checks that the scheduled cycles keep coming.
exec "$(dirname "$0")/run.sh" health "$@"
