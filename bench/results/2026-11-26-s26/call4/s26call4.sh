#!/usr/bin/env bash
# session 26, call 4: the GPU check of main 4c4fc38 (the evict-first bulk reduce from 1 GiB, the outside review's fixes in dispatch and api)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$R/gc GPU_CHECK_DEADLINE=585 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
grep -A12 "gpu-check summary" $R/gpu-check.txt | cut -c1-160
grep -E "^TABLE|^SMALLN (scan|reduce)" $R/gpu-check.txt | cut -c1-200
grep -E "FAIL|Failed|\*\*\*" $R/gc/ctest.log 2>/dev/null | head -30
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
