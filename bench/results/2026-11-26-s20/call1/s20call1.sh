#!/usr/bin/env bash
# session 20, call 1: GPU check of branch s19-review (flag waits gated on concurrent managed
# access, done signal tolerant of a missing pinned slot, stronger test_embed_gpu), then a
# regret subset of float / double reduce and dot on host data at 2^12-2^17 (the rotated lanes)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=430 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -E "done.signal|managed|FAIL|Failed" $R/gc/ctest.log 2>/dev/null | head -12
for v in $(compgen -e | grep '^XPAR_'); do unset "$v"; done
B=build-gpu
if [ -x $B/bench/xpar-bench ]; then
  lim=$((565-(SECONDS-start)))
  timeout $((lim+20)) $B/bench/xpar-bench regret --ops reduce,dot --dtypes float,double --residencies pageable,pinned,mapped \
    --alts auto,one-thread,openmp,plain-serial,plain-omp --min-exp 12 --max-exp 17 --rounds 11 \
    --time-limit $lim --no-plot --out-dir $R/rg > $R/regret-sub.txt 2>&1
  echo "regret subset rc $? at +$((SECONDS-start)) s"
  grep -vE "^#" $R/regret-sub.txt | head -80 | cut -c1-170
fi
cd $R && tar czf gc.tar.gz gc rg 2>/dev/null && rm -rf gc rg && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
