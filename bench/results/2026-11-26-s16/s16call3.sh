#!/usr/bin/env bash
# session 16, call 3: small regret subsets on device data (fill / reduce, 2^10..2^13), all alternatives and auto+serial only
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
OUT=/tmp/build-only STEPS="none" BUDGET_S=250 bench/run-regret-h100.sh > $R/build.txt 2>&1
B=build-regret/bench/xpar-bench
for rep in 1 2; do
for alts in auto,serial,openmp,cuda,plain-serial,plain-omp,cub auto,serial; do
  timeout 60 $B regret --ops fill,reduce --dtypes int32,float --residencies device --min-exp 10 --max-exp 13 --alts $alts \
    --rounds 15 --no-plot --out-dir /tmp/rgx > /tmp/rgx.txt 2>&1
  echo "== alts $alts"; grep -E "^(# fill|# reduce|2\^)" /tmp/rgx.txt | cut -c1-150
done; done | tee $R/devsubset.txt
