#!/usr/bin/env bash
# session 16, call 13: the full regret run of the final tree, built-in thresholds
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
OUT=$R STEPS="default" BUDGET_S=470 DEFAULT_LIMIT=380 bench/run-regret-h100.sh > $R/summary.txt 2>&1

grep -E "^\[regret" $R/summary.txt | tail -3
sed -n '/^# xpar-bench regret summary/,/^# paired/p' $R/regret-default.txt | cut -c1-110
grep -E "WRONG|failed" $R/regret-default.txt | head
