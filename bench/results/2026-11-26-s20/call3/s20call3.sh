#!/usr/bin/env bash
# session 20, call 3: issue 12 item 2 second half on main (1a24157) -- a freshly calibrated profile, then the full regret run with it
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=/tmp/build-only STEPS="none" BUDGET_S=200 bench/run-regret-h100.sh > $R/build.txt 2>&1
echo "built at +$((SECONDS-start)) s"
B=build-regret/bench/xpar-bench
timeout 100 $B calibrate --dtypes int32,float,double --out $R/profile.txt > $R/calibrate.txt 2>&1
echo "calibrate exit $? at +$((SECONDS-start)) s"
OUT=$R/rp REGRET_PROFILE=$R/profile.txt STEPS="default" BUDGET_S=$((560 - (SECONDS-start) - 20)) DEFAULT_LIMIT=360 \
  bench/run-regret-h100.sh > $R/summary.txt 2>&1
echo "regret (profile) done at +$((SECONDS-start)) s"
grep -E "^\[regret" $R/summary.txt | tail -3
sed -n '/^# xpar-bench regret summary/,/^# paired/p' $R/rp/regret-default.txt | grep -E "^# (overall|targets|paired|\(same)" | cut -c1-160
echo "done at +$((SECONDS-start)) s"
grep -E "MISS|\+c" $R/rp/regret-default.txt | head -30
