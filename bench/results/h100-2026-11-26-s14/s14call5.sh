#!/usr/bin/env bash
# session 14, call 5: scripts/gpu-check without the bench on main after the review (one writer of the record origin, the fast path arrays named once)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=560 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -30 $R/gpu-check.txt
grep -h "pointer_kind ranges" $R/gc/*.log | head -3
cd $R && tar czf gc.tar.gz gc && rm -rf gc
