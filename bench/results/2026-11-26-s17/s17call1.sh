#!/usr/bin/env bash
# session 17, call 1: the small device-data probe (.exp/devd2h.c), then the full regret run
# (AUTO judged against each alternative over shared rounds, confirmation rounds), built-in thresholds
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
OUT=/tmp/build-only STEPS="none" BUDGET_S=250 bench/run-regret-h100.sh > $R/build.txt 2>&1
gcc -O2 -I api/include -I /usr/local/cuda/include -o /tmp/devd2h .exp/devd2h.c -L build-regret -lxpar -L /usr/local/cuda/lib64 -lcudart || exit 1
for i in 1 2; do LD_LIBRARY_PATH=build-regret /tmp/devd2h; done 2>&1 | tee $R/devd2h.txt
OUT=$R STEPS="default" BUDGET_S=470 DEFAULT_LIMIT=400 bench/run-regret-h100.sh > $R/summary.txt 2>&1
grep -E "^\[regret" $R/summary.txt | tail -3
sed -n '/^# xpar-bench regret summary/,/^# paired/p' $R/regret-default.txt | cut -c1-110
grep -E "WRONG|failed" $R/regret-default.txt | head
