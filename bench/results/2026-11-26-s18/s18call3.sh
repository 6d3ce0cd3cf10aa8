#!/usr/bin/env bash
# session 18, call 3: the dispatch GPU tests (test_adaptive among them) and test_mpi_ops with
# adaptive mode off (the default), then the full regret run with XPAR_ADAPTIVE=1
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=/tmp/build-only STEPS="tests" BUDGET_S=250 bench/run-regret-h100.sh > $R/build.txt 2>&1
cp /tmp/build-only/checks.txt $R/checks.txt 2>/dev/null
grep -E "tests passed|tests failed|Failed|FAIL" $R/checks.txt | head -8
cmake --build build-regret -j16 --target test_mpi_ops >> $R/build.txt 2>&1
timeout 150 ctest --test-dir build-regret -R '^test_mpi_ops' --output-on-failure -j4 --timeout 120 > $R/mpi.txt 2>&1
grep -E "tests passed|tests failed|FAILED \[" $R/mpi.txt | head -8
echo "tests done at +$((SECONDS-start)) s"
OUT=$R STEPS="default" REGRET_ADAPTIVE=1 BUDGET_S=470 DEFAULT_LIMIT=380 bench/run-regret-h100.sh > $R/summary.txt 2>&1
grep -E "^\[regret" $R/summary.txt | tail -3
grep -E "^# thresholds" $R/regret-default.txt
sed -n '/^# overall/,/^# paired/p' $R/regret-default.txt | cut -c1-200
grep -E "MISS|\+c" $R/regret-default.txt | head -40
grep -E "WRONG|failed" $R/regret-default.txt | head
echo "done at +$((SECONDS-start)) s"
