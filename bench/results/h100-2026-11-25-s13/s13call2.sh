#!/usr/bin/env bash
# session 13, call 2: scripts/gpu-check without the bench on the tree with the mapped fast path merged,
# the one launch door (xpar__cuda_launch), call_facts in place and the session-13 thresholds.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=560 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -30 $R/gpu-check.txt
cd $R && tar czf gc.tar.gz gc && rm -rf gc
