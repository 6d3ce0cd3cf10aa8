#!/usr/bin/env bash
# session 16, call 2: AUTO against forced serial on device data, small fill / reduce (.exp/devfill.c)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
OUT=/tmp/build-only STEPS="none" BUDGET_S=250 bench/run-regret-h100.sh > $R/build.txt 2>&1
gcc -O2 -I api/include -I /usr/local/cuda/include -o /tmp/devfill .exp/devfill.c -L build-regret -lxpar -L /usr/local/cuda/lib64 -lcudart || exit 1
for i in 1 2; do LD_LIBRARY_PATH=build-regret /tmp/devfill; done 2>&1 | tee $R/devfill.txt
