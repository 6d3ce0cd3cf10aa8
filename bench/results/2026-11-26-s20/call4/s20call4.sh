#!/usr/bin/env bash
# session 20, call 4: the dispatch GPU tests of main with the two moved thresholds (dot float
# OpenMP 2^16, axpy float mapped 2^20), then a regret check of those two rows
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R STEPS="tests" BUDGET_S=300 bench/run-regret-h100.sh > $R/tests.txt 2>&1
echo "tests rc $? at +$((SECONDS-start)) s"
tail -5 $R/tests.txt; grep -E "tests passed|Failed|FAIL" $R/checks.txt 2>/dev/null | head
for v in $(compgen -e | grep '^XPAR_'); do unset "$v"; done
B=build-regret/bench/xpar-bench
if [ -x $B ]; then
  timeout 120 $B regret --ops axpy --dtypes float --residencies mapped --min-exp 17 --max-exp 21 \
    --rounds 15 --time-limit 100 --no-plot --out-dir $R/rg1 > $R/regret-axpy.txt 2>&1
  echo "axpy rc $? at +$((SECONDS-start)) s"
  timeout 120 $B regret --ops dot --dtypes float --residencies pinned,pageable,mapped --min-exp 14 --max-exp 17 \
    --rounds 15 --time-limit 100 --no-plot --out-dir $R/rg2 > $R/regret-dot.txt 2>&1
  echo "dot rc $? at +$((SECONDS-start)) s"
  grep -vE "^#|^\[" $R/regret-axpy.txt $R/regret-dot.txt | grep -E "\^|MISS" | cut -c1-190 | head -40
fi
echo "done at +$((SECONDS-start)) s"
