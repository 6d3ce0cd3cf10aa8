#!/usr/bin/env bash
# session 26, call 5 (warm after call 4, build-gpu reused): the full regret run with the built-in
# thresholds (2^7..2^24, every residency; DEFAULT_LIMIT 470 s), issue 12's table for this tree.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/regret BUILD_DIR=build-gpu BUDGET_S=560 DEFAULT_LIMIT=470 STEPS="default" bash bench/run-regret-h100.sh > $R/regret-run.txt 2>&1
echo "regret rc $? at +$((SECONDS-start)) s"
tail -70 $R/regret-run.txt
echo "done at +$((SECONDS-start)) s"
