#!/usr/bin/env bash
# session 17, call 2: the device-data steps probe (.exp/devd2h2.c), then the full regret run
# with the six thresholds from the six runs (out of sample), built-in thresholds
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
OUT=/tmp/build-only STEPS="none" BUDGET_S=250 bench/run-regret-h100.sh > $R/build.txt 2>&1
gcc -O2 -I api/include -I /usr/local/cuda/include -o /tmp/devd2h2 .exp/devd2h2.c -L build-regret -lxpar -L /usr/local/cuda/lib64 -lcudart -lcuda || exit 1
LD_LIBRARY_PATH=build-regret /tmp/devd2h2 2>&1 | tee $R/devd2h2.txt
OUT=$R STEPS="default" BUDGET_S=470 DEFAULT_LIMIT=400 bench/run-regret-h100.sh > $R/summary.txt 2>&1
grep -E "^\[regret" $R/summary.txt | tail -3
sed -n '/^# overall/,/^# paired/p' $R/regret-default.txt | cut -c1-200
grep -E "MISS|\+c" $R/regret-default.txt | head -30
grep -E "WRONG|failed" $R/regret-default.txt | head
