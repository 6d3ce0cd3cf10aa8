#!/usr/bin/env bash
# session 11, call 4: the full regret run (every op, built-in thresholds) on this session's tree,
# then: do small host calls run slower inside the regret bench because of the other alternatives?
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
OUT=$R STEPS="default" BUDGET_S=470 DEFAULT_LIMIT=380 bench/run-regret-h100.sh > $R/summary.txt 2>&1
B=build-regret/bench/xpar-bench
for alts in "auto,serial,openmp,cuda,plain-serial,plain-omp,cub" "auto,serial,plain-serial" "auto,serial,openmp,cuda,plain-serial,plain-omp,cub"; do
  echo "=== alts $alts ===" >> $R/alone.txt
  timeout 40 $B regret --ops fill,add --dtypes int32 --residencies pageable --min-exp 7 --max-exp 10 --alts $alts \
    --rounds 15 --contender-rounds 15 --no-plot --out-dir /tmp/alone >> $R/alone.txt 2>&1
  awk -F, 'NR>1 && ($6=="auto" || $6=="plain-serial" || $6=="serial") {printf "%s %s 2^%s %-13s %8.4f us\n",$1,$3,$5,$6,$8}' /tmp/alone/regret.csv >> $R/alone.txt
done
grep -E "^\[regret" $R/summary.txt | tail -3
sed -n '/^# xpar-bench regret summary/,/^# paired/p' $R/regret-default.txt | cut -c1-110
grep -E "WRONG|failed" $R/regret-default.txt | head
grep -E "===|2\^7 " $R/alone.txt
