#!/usr/bin/env bash
# Health check of each continuous job of jobs-toolsdb.yaml (several jobs on one ToolsDB database).
# Toolforge runs it in the job's own container, so it judges the job on this host only
# (`winellbot health --here`): exit 0 unless its cycle runs longer than the interval or its cycles
# stopped coming. How many jobs are live is the watch job's question (`health --jobs N`): a check
# that failed here for another job's sake would restart every job.
exec "$(dirname "$0")/run.sh" health --here "$@"
