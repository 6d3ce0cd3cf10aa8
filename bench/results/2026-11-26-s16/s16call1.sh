#!/usr/bin/env bash
# session 16, call 1 (run with calibrate-touched.patch applied to bench/bench_calibrate.c): calibrate with the CPU side timed back to back and after the application's pass
# (geometric mean), twice; then the mapped regret subset 2^16..2^22 with the first new profile and with
# the built-in thresholds, alternately.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=/tmp/build-only STEPS="none" BUDGET_S=250 bench/run-regret-h100.sh > $R/build.txt 2>&1
echo "built at +$((SECONDS-start)) s"
B=build-regret/bench/xpar-bench
for i in 1 2; do
  timeout 140 $B calibrate --dtypes int32,float,double --out $R/profile$i.txt > $R/calibrate$i.txt 2>&1
  echo "calibrate $i exit $? at +$((SECONDS-start)) s"
done
left=$((585 - (SECONDS-start)))
per=$(( left / 2 - 5 )); [ $per -gt 70 ] && per=70
for lab in p1 default; do
  if [ $lab = p1 ]; then export XPAR_PROFILE=$R/profile1.txt; else unset XPAR_PROFILE; fi
  timeout $((per + 10)) $B regret --residencies mapped --min-exp 16 --max-exp 22 --rounds 15 --point-budget-ms 1500 \
    --time-limit $per --no-plot --out-dir /tmp/rg-$lab > $R/regret-$lab.txt 2>&1
  echo "regret $lab exit $? at +$((SECONDS-start)) s: $(grep -E '^# overall' $R/regret-$lab.txt | cut -c1-150)"
done
grep -h -E " gpu  " $R/calibrate1.txt $R/calibrate2.txt | sort | cut -c1-150
echo "done at +$((SECONDS-start)) s"
