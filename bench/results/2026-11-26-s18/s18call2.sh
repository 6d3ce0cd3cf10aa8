#!/usr/bin/env bash
# session 18, call 2: GPU check of adaptive AUTO (dispatch/adaptive.c, test_adaptive)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=560 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -E "test_adaptive|FAIL|Failed" $R/gc/ctest.log 2>/dev/null | head -12
B=build-gpu
[ -x "$B/tests/test_adaptive" ] && XPAR_TEST_VERBOSE=1 "$B/tests/test_adaptive" > $R/adaptive.txt 2>&1; tail -5 $R/adaptive.txt 2>/dev/null
cd $R && tar czf gc.tar.gz gc && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
