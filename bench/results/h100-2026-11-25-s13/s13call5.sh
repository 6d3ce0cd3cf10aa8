#!/usr/bin/env bash
# session 13, call 5: issue 12 item 2's second half -- a freshly calibrated profile, then the full regret run with it
# (same tree as call 3 plus the refused-call record); then fill int32/float on device data at 2^11..2^13 in isolation
# (call 3's one unexplained miss: AUTO's own tier 1.16x slower at fill int32 2^12 in all three runs of sessions 12-13).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=/tmp/build-only STEPS="none" BUDGET_S=200 bench/run-regret-h100.sh > $R/build.txt 2>&1
echo "built at +$((SECONDS-start)) s"
B=build-regret/bench/xpar-bench
timeout 100 $B calibrate --dtypes int32,float,double --out $R/profile.txt > $R/calibrate.txt 2>&1
echo "calibrate exit $? at +$((SECONDS-start)) s"
OUT=$R/rp REGRET_PROFILE=$R/profile.txt STEPS="default" BUDGET_S=$((560 - (SECONDS-start) - 40)) DEFAULT_LIMIT=360 \
  bench/run-regret-h100.sh > $R/summary.txt 2>&1
echo "regret (profile) done at +$((SECONDS-start)) s"
grep -E "^\[regret" $R/summary.txt | tail -3
sed -n '/^# xpar-bench regret summary/,/^# paired/p' $R/rp/regret-default.txt | grep -E "^# (overall|targets|paired|\(same)" | cut -c1-160
for i in 1 2; do
  [ $((SECONDS-start)) -gt 540 ] && break
  timeout 25 $B regret --ops fill --dtypes int32,float --residencies device --min-exp 11 --max-exp 13 --no-plot \
    --out-dir /tmp/iso$i > $R/iso$i.txt 2>&1
  grep -E "^2\^1[123] |^# fill" $R/iso$i.txt | head -8
done
echo "done at +$((SECONDS-start)) s"
