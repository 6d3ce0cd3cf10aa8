#!/usr/bin/env bash
# session 23, call 9: the GPU check of branch s23-small-scan-2 (the small tile up to 512 threads, the generic one-block tile up to max_block;
# every stage, then --small-scan-sweep twice.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$R/gc GPU_CHECK_DEADLINE=555 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
grep -A12 "gpu-check summary" $R/gpu-check.txt | cut -c1-160
grep -E "^TABLE|^SMALLN (scan|reduce)" $R/gpu-check.txt | cut -c1-200
grep -E "FAIL|Failed" $R/gc/ctest.log 2>/dev/null | head -20
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
for i in 1 2; do
  [ $((SECONDS-start)) -gt 580 ] && break
  timeout 15 build-gpu/bench/cub/xpar-gpu-bench --small-scan-sweep > $R/sweep-$i.txt 2>&1; echo "sweep $i rc $? at +$((SECONDS-start)) s"
  grep -E "int32  n +(64|1024|2048|8192)|double n +(64|256|512|1024)|every|FAIL|MISMATCH" $R/sweep-$i.txt
done
echo "done at +$((SECONDS-start)) s"
