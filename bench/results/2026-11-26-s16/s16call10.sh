#!/usr/bin/env bash
# session 16, call 10: the errors probe alone, each case named on stderr before it runs
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
PROBES="errors" bash .exp/gpuaudit/run.sh > $R/run.txt 2>&1; echo "run.sh rc $?"
tail -5 build-audit/gpuaudit/run_errors.err; grep -c trying build-audit/gpuaudit/run_errors.err
grep -E "^(FAIL|PROBE)" build-audit/gpuaudit/*errors*.log | head -20
