#!/usr/bin/env bash
# session 16, call 6: scripts/gpu-check without the bench on cbe46c8 (audit fixes: shadow overflow, kernel thread cap; the int dot's line head)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=560 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -a -E "Failed|\*\*\*Failed|tests passed" $R/gc/ctest.log | head -5
cd $R && tar czf gc.tar.gz gc && rm -rf gc
