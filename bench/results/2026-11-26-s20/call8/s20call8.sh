#!/usr/bin/env bash
# session 20, call 8: the elementwise kernels against CUB at 2^23-2^26 on device data (the done
# signal's registers: Add<double> 5 -> 4 blocks per SM), synchronous calls, interleaved
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
B=build-regret
OUT=/tmp/build-only STEPS="none" BUDGET_S=200 bench/run-regret-h100.sh > $R/build.txt 2>&1
echo "built at +$((SECONDS-start)) s"
for v in $(compgen -e | grep '^XPAR_'); do unset "$v"; done
timeout 300 $B/bench/xpar-bench regret --ops add,axpy,fill --dtypes int32,double --residencies device \
  --alts auto,cuda,cub --min-exp 23 --max-exp 26 --rounds 21 --contender-rounds 0 --confirm-rounds 0 \
  --time-limit 280 --no-plot --out-dir $R/rg > $R/regret-ew.txt 2>&1
echo "regret rc $? at +$((SECONDS-start)) s"
grep -E "^# (add|axpy|fill)|^2\^2" $R/regret-ew.txt | cut -c1-120
echo "done at +$((SECONDS-start)) s"
