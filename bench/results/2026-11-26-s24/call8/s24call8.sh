#!/usr/bin/env bash
# session 24, call 8: build and the whole ctest suite on the GPU for main with the review
# fixes (a misaligned device result refused, a pinned result's repeats, n = 0 into a mapped
# result); the last device time of the session allows no --check, sanitizers or bench
# (no kernel changed since call 7's full check).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$R/gc GPU_CHECK_SKIP="check sanitizers bench" GPU_CHECK_DEADLINE=480 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
grep -A6 "gpu-check summary" $R/gpu-check.txt | cut -c1-160
grep -E "FAIL|Failed|\*\*\*|tests passed" $R/gc/ctest.log 2>/dev/null | head -30
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
