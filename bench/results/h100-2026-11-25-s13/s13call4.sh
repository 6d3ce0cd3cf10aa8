#!/usr/bin/env bash
# session 13, call 4: scripts/gpu-check with the suite and the bench against CUB (no --check / sanitizers: they
# ran green in call 2 on the launch door) on the tree with the refused-call record.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="check sanitizers" GPU_CHECK_DEADLINE=575 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -12 $R/gpu-check.txt
grep -E "^TABLE" $R/gc/bench.log 2>/dev/null | head -20
cd $R && tar czf gc.tar.gz gc && rm -rf gc
