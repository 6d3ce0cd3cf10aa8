#!/usr/bin/env bash
# session 26, call 9: main 6745ee5 after the last read's tidy (dispatch/shadow.c, api/launch.c, the MPI
# component's fixes after call 4's GPU check; backend_cuda unchanged since call 4): build and
# the whole suite with the GPU, MPI tests at 1-4 ranks included (scripts/gpu-check, the
# --check / sanitizer / bench steps skipped: call 4 ran them on the same backend).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$R/gc GPU_CHECK_SKIP="check sanitizers bench" GPU_CHECK_DEADLINE=560 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
grep -A6 "gpu-check summary" $R/gpu-check.txt | cut -c1-160
grep -E "tests passed|FAIL|Failed|\*\*\*" $R/gc/ctest.log 2>/dev/null | head -20
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
