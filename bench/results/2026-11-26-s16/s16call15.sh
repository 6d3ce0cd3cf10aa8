#!/usr/bin/env bash
# session 16, call 15: GPU check of the uncounted pinned-copy launch, then pinrace
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=470 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
cd $R && tar czf gc.tar.gz gc && rm -rf gc && cd - > /dev/null
nvcc -O2 -arch=sm_90 -I api/include -o /tmp/pinrace .exp/pinrace.cu -L build-gpu -lxpar && LD_LIBRARY_PATH=build-gpu /tmp/pinrace 2>&1 | grep -v trial | tee $R/pinrace.txt
echo "done at +$((SECONDS-start)) s"
