#!/usr/bin/env bash
# session 23, call 10: --check and the sanitizers with the sizes at the one-block tiles' edges
# (main: the small tile up to 512 threads, the generic one-block tile in one tile).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$R/gc GPU_CHECK_SKIP="tests bench" GPU_CHECK_DEADLINE=500 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
grep -A10 "gpu-check summary" $R/gpu-check.txt | cut -c1-160
grep -E "^CHECK|FAIL" $R/gc/check.log | head
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
