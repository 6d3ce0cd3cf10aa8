#!/usr/bin/env bash
# session 16, call 12: every GPU audit probe on the final tree (after the pinned kernel copy)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
timeout 560 bash .exp/gpuaudit/run.sh > $R/gpuaudit.txt 2>&1; echo "gpuaudit rc $? at +$((SECONDS-start)) s"
grep -E "^PROBE" $R/gpuaudit.txt
grep -E "^FAIL" $R/gpuaudit.txt | grep -v "tier cpu-" | head -20
echo "FAIL lines on a CPU tier (the documented host-memory case): $(grep -E '^FAIL' $R/gpuaudit.txt | grep -c 'tier cpu-')"
