#!/usr/bin/env bash
# session 13, call 1: five calibrations (every op, int32/float/double) on one H100 machine with the
# regrouped float/double scans and the mapped fast path (merged, uncommitted); the build lands in build-regret so that call 2 (regret) reuses it.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R/cal
start=$SECONDS
OUT=$R/cal STEPS="none" BUDGET_S=200 bench/run-regret-h100.sh > $R/build.txt 2>&1
echo "built at +$((SECONDS-start)) s"; tail -3 $R/build.txt
B=build-regret/bench/xpar-bench
timeout 30 $B regret --quick --no-plot --out-dir /tmp/q 2>&1 | grep "host speed" | head -1
for i in 1 2 3 4 5; do
  [ $((SECONDS-start)) -gt 480 ] && break
  timeout 100 $B calibrate --dtypes int32,float,double --out $R/cal/prof$i.txt > $R/cal/calibrate$i.txt 2>&1
  echo "calibrate $i exit $? at +$((SECONDS-start)) s"
done
timeout 30 $B regret --quick --no-plot --out-dir /tmp/q 2>&1 | grep "host speed" | tail -1
grep -h -E "^(reduce|scan|axpy|add|fill|dot) " $R/cal/calibrate*.txt | awk '{print $1,$2,$3,$4}' | sort | uniq -c | sort -k2,2 -k3,3 -k4,4 -k1,1nr
cd $R && tar czf cal.tar.gz cal && rm -rf cal
