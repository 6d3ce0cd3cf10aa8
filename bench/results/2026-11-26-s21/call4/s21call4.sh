#!/usr/bin/env bash
# session 21, call 4: GPU check of branch s21-kernel-done (application kernels on the done signal, XPAR_KERNEL_ABI 4;
# the capture test corrected), then memcheck over test_graph_capture_gpu without the provoked API errors
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=470 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -E "FAIL|Failed" $R/gc/ctest.log 2>/dev/null | head -20
B=build-gpu
[ -x $B/tests/test_graph_capture_gpu ] && $B/tests/test_graph_capture_gpu 2>&1 | tail -20
timeout 60 $B/tests/test_embed_gpu 2>&1 | tail -14
echo "embed at +$((SECONDS-start)) s"
timeout 90 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $B/tests/test_graph_capture_gpu > $R/san-memcheck.txt 2>&1
echo "memcheck rc $? at +$((SECONDS-start)) s"; tail -3 $R/san-memcheck.txt
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
