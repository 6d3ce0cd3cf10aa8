#!/usr/bin/env bash
# session 14, call 1: pointer-query costs (.exp/ptrq), then scripts/gpu-check without the bench on branch brief-provenance
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvcc -O2 -arch=sm_90 .exp/ptrq/ptrq.cu -o /tmp/ptrq -lcuda && /tmp/ptrq > $R/ptrq.txt 2>&1; cat $R/ptrq.txt
echo "ptrq at +$((SECONDS-start)) s"
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=540 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -30 $R/gpu-check.txt
cd $R && tar czf gc.tar.gz gc && rm -rf gc
