#!/usr/bin/env bash
# session 16, call 11: GPU check of the stream-order fix (small pinned sources copied by kernel, NULL alpha/value at n = 0
# on the GPU), then pinrace on that build, then the gpuaudit stream / errors / nowait probes
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=450 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -a -E "pinned inputs after|stream order:|test_embed_gpu: " $R/gc/ctest.log | head -5
grep -a -E "\*\*\*Failed|Failed  " $R/gc/ctest.log | head -5
cd $R && tar czf gc.tar.gz gc && rm -rf gc && cd - > /dev/null
nvcc -O2 -arch=sm_90 -I api/include -o /tmp/pinrace .exp/pinrace.cu -L build-gpu -lxpar && LD_LIBRARY_PATH=build-gpu /tmp/pinrace 2>&1 | grep -v trial | tee $R/pinrace.txt
echo "pinrace at +$((SECONDS-start)) s"
PROBES="stream errors nowait" timeout $((585 - (SECONDS-start))) bash .exp/gpuaudit/run.sh > $R/gpuaudit.txt 2>&1; echo "gpuaudit rc $?"
grep -E "^(FAIL|PROBE)" $R/gpuaudit.txt | head -30
echo "done at +$((SECONDS-start)) s"
