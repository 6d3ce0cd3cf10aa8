#!/usr/bin/env bash
# session 13, call 6: the integer reduce / dot vector loops started at a 32-byte boundary (c4f556e) on the H100 host:
# offset 0 vs 16 microbench, pinned vs pageable regret subset, then five calibrations of reduce and dot int32.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=/tmp/build-only STEPS="none" BUDGET_S=200 bench/run-regret-h100.sh > $R/build.txt 2>&1
echo "built at +$((SECONDS-start)) s"
B=build-regret/bench/xpar-bench
gcc -O2 -I api/include .exp/align.c -L build-regret -lxpar -Wl,-rpath,$PWD/build-regret -o /tmp/align && \
  for n in 4096 16384 65536; do /tmp/align $n; done | tee $R/align.txt
timeout 120 $B regret --ops reduce,dot --dtypes int32 --residencies pageable,pinned --min-exp 12 --max-exp 18 \
  --alts auto,serial,openmp,plain-serial,plain-omp --no-plot --out-dir /tmp/rsub > $R/regret-sub.txt 2>&1
echo "regret subset exit $? at +$((SECONDS-start)) s"
grep -E "^# (reduce|dot)|^2\^1[2-8] " $R/regret-sub.txt
for i in 1 2 3 4 5; do
  [ $((SECONDS-start)) -gt 400 ] && break
  timeout 60 $B calibrate --ops reduce,dot --dtypes int32 --out $R/prof$i.txt > $R/cal$i.txt 2>&1
  echo "calibrate $i exit $? at +$((SECONDS-start)) s"
done
grep -h -E "^(reduce|dot) +int32 +" $R/cal*.txt | awk '{print $1,$2,$3,$4}' | sort | uniq -c
grep -h -E "^(reduce|dot) +int32 +openmp" $R/cal*.txt
cp /tmp/rsub/regret.csv $R/regret-sub.csv 2>/dev/null
echo "done at +$((SECONDS-start)) s"
