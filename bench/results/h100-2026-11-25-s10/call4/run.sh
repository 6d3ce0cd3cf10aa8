#!/usr/bin/env bash
# session 10, call 4: the GPU check (ctest with the GPU, --check, sticky) on the final tree, then the stream/call-cost probe.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
OUT=$R GPU_CHECK_SKIP="sanitizers bench" GPU_CHECK_DEADLINE=470 bash scripts/gpu-check > $R/gpucheck-summary.txt 2>&1
echo "gpu-check exit $?" >> $R/gpucheck-summary.txt
nvcc -O3 -arch=sm_90 -std=c++17 -I api/include -o /tmp/skc bench/cub/experiments/stream_kind_cost.cu \
  -L build-gpu -lxpar -Xlinker -rpath=$PWD/build-gpu > $R/skc.txt 2>&1 && timeout 45 /tmp/skc 1000 >> $R/skc.txt 2>&1
echo "skc exit $?" >> $R/skc.txt
tail -30 $R/gpucheck-summary.txt
cat $R/skc.txt
