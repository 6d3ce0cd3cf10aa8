#!/usr/bin/env bash
# session 19, call 2: GPU check of the done signal (elementwise + scan), then the CUDA tier
# against CUB + sync on device data (library level, same run)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=470 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -E "done signal|stream order|FAIL|Failed" $R/gc/ctest.log 2>/dev/null | head -12
B=build-gpu
if [ -x $B/bench/xpar-bench ]; then
  timeout $((580-(SECONDS-start))) $B/bench/xpar-bench regret --ops add,fill,scan --dtypes int32,double --residencies device,mapped \
    --alts auto,cuda,openmp,cub --min-exp 10 --max-exp 22 --exp-step 2 --rounds 9 --contender-rounds 0 --confirm-rounds 0 \
    --time-limit $((575-(SECONDS-start))) --no-plot --out-dir $R/rg > $R/regret-sub.txt 2>&1
  echo "regret subset rc $? at +$((SECONDS-start)) s"
  grep -vE "^#" $R/regret-sub.txt | head -80 | cut -c1-160
fi
cd $R && tar czf gc.tar.gz gc rg 2>/dev/null && rm -rf gc rg && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
