#!/usr/bin/env bash
# session 17, call 7: GPU check of xpar__cuda_begin's context check with test_embed_gpu's
# thread-context cases (the int32 result fixed in the test)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=560 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -E "thread contexts|test_embed_gpu:|FAIL" $R/gc/ctest.log 2>/dev/null | head -8
cd $R && tar czf gc.tar.gz gc && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
