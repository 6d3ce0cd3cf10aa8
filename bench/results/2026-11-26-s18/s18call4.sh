#!/usr/bin/env bash
# session 18, call 4: adaptive AUTO measuring in runs (4 + 4) instead of turns: the dispatch
# GPU tests (test_adaptive among them), then the full regret run with XPAR_ADAPTIVE=1
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=/tmp/build-only STEPS="tests" BUDGET_S=200 bench/run-regret-h100.sh > $R/build.txt 2>&1
cp /tmp/build-only/checks.txt $R/checks.txt 2>/dev/null
grep -E "tests passed|tests failed|Failed|FAIL" $R/checks.txt | head -8
echo "tests done at +$((SECONDS-start)) s"
OUT=$R STEPS="default" REGRET_ADAPTIVE=1 BUDGET_S=330 DEFAULT_LIMIT=290 bench/run-regret-h100.sh > $R/summary.txt 2>&1
grep -E "^\[regret" $R/summary.txt | tail -3
grep -E "^# thresholds" $R/regret-default.txt
sed -n '/^# overall/,/^# paired/p' $R/regret-default.txt | cut -c1-200
grep -E "MISS|\+c" $R/regret-default.txt | head -40
grep -E "WRONG|failed" $R/regret-default.txt | head
echo "done at +$((SECONDS-start)) s"
