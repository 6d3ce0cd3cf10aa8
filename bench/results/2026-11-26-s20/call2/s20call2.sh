#!/usr/bin/env bash
# session 20, call 2: the full regret run of main (s19-review merged, rotated lanes, dot float OpenMP 2^16) (built-in thresholds)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
OUT=/tmp/build-only STEPS="none" BUDGET_S=250 bench/run-regret-h100.sh > $R/build.txt 2>&1
OUT=$R STEPS="default" BUDGET_S=480 DEFAULT_LIMIT=400 bench/run-regret-h100.sh > $R/summary.txt 2>&1
grep -E "^\[regret" $R/summary.txt | tail -3
sed -n '/^# overall/,/^# paired/p' $R/regret-default.txt | cut -c1-200
grep -E "# without" $R/regret-default.txt | head -3
grep -E "MISS|\+c" $R/regret-default.txt | head -40
grep -E "WRONG|failed" $R/regret-default.txt | head
