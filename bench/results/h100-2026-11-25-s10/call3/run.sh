#!/usr/bin/env bash
# session 10, call 3: the full regret run (every op, built-in thresholds) after the split change, then the stream probe.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
OUT=$R STEPS="default" BUDGET_S=560 DEFAULT_LIMIT=440 bench/run-regret-h100.sh > $R/summary.txt 2>&1
rm -f $R/other.txt
nvcc -O3 -arch=sm_90 -std=c++17 -I api/include -o /tmp/skc bench/cub/experiments/stream_kind_cost.cu \
  -L build-regret -lxpar -Xlinker -rpath=$PWD/build-regret > $R/skc.txt 2>&1 && timeout 30 /tmp/skc 1000 >> $R/skc.txt 2>&1
echo "skc exit $?" >> $R/skc.txt
grep -E "^\[regret" $R/summary.txt | tail -3
sed -n '/^# xpar-bench regret summary/,/^# paired/p' $R/regret-default.txt | cut -c1-110
grep -E "WRONG|failed" $R/regret-default.txt | head
cat $R/skc.txt
