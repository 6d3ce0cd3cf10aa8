#!/usr/bin/env bash
# session 15, call 8: scripts/gpu-check without the bench after the review (pinned bits recorded at classification)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=540 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -a "release: a forced-cuda add held\|test_embed_gpu" $R/gc/ctest.log | head -5
cd $R && tar czf gc.tar.gz gc && rm -rf gc
