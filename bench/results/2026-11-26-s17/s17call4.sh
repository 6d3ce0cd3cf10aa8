#!/usr/bin/env bash
# session 17, call 4: GPU check of the tree with the six regret-chosen thresholds (dispatch/thresholds.c)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=540 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
cd $R && tar czf gc.tar.gz gc && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
