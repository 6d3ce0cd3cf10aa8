#!/usr/bin/env bash
# session 25, call 2 (same warm machine as call 1, build-gpu reused): the per-call overhead
# (xpar-bench overhead) and the regret bench with the built-in thresholds (2^7..2^24, every
# residency), i.e. the cost of session 24's result check in the regret table.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake --build build-gpu -j16 --target xpar-bench > $R/build.txt 2>&1 || { tail -30 $R/build.txt; exit 1; }
timeout 60 build-gpu/bench/xpar-bench overhead > $R/overhead.txt 2>&1; echo "overhead rc $?"
cat $R/overhead.txt | tail -30
OUT=$R/regret BUILD_DIR=build-gpu BUDGET_S=$((560 - (SECONDS-start))) STEPS="default" bash bench/run-regret-h100.sh > $R/regret-run.txt 2>&1
echo "regret rc $? at +$((SECONDS-start)) s"
tail -60 $R/regret-run.txt
echo "done at +$((SECONDS-start)) s"
