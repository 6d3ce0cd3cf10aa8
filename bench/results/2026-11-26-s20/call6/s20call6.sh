#!/usr/bin/env bash
# session 20, call 6: GPU check of branch s20-capture, second form (CUDA graph capture: stateless nowait
# calls captured, the rest refused with the capture left valid), test_graph_capture_gpu first
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=520 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -E "FAIL|Failed|capture|cudaStreamIsCapturing|replay" $R/gc/ctest.log 2>/dev/null | head -30
B=build-gpu
[ -x $B/tests/test_graph_capture_gpu ] && $B/tests/test_graph_capture_gpu 2>&1 | tail -12
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
