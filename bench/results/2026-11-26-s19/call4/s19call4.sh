#!/usr/bin/env bash
# session 19, call 4: GPU check of the final backend (done signal, reduce flag to 2^22, WRITTEN
# copies) and thresholds, then the regret check of the six moved thresholds (device + mapped)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=440 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -E "FAIL|Failed" $R/gc/ctest.log 2>/dev/null | head -12
for v in $(compgen -e | grep '^XPAR_'); do unset "$v"; done
B=build-gpu
if [ -x $B/bench/xpar-bench ]; then
  lim=$((560-(SECONDS-start)))
  timeout $((lim+25)) $B/bench/xpar-bench regret --rounds 15 --point-budget-ms 1500 --max-exp 22 \
    --residencies mapped,device --time-limit $lim --no-plot --out-dir $R/rg > $R/regret-check.txt 2>&1
  echo "regret check rc $? at +$((SECONDS-start)) s"
  sed -n '/^# overall/,/^# paired/p' $R/regret-check.txt | cut -c1-200
  grep -E "# without" $R/regret-check.txt | head -3
fi
cd $R && tar czf gc.tar.gz gc rg 2>/dev/null && rm -rf gc rg && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
