#!/usr/bin/env bash
# session 16, call 9: the errors probe alone (it crashed in call 7), with its log and a backtrace; pinrace at several sizes
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
PROBES="errors" bash .exp/gpuaudit/run.sh > $R/run.txt 2>&1; echo "run.sh rc $?"
L=build-audit/gpuaudit
ls $L | head -30
tail -30 $L/run_errors*.log 2>/dev/null || tail -30 $L/*errors*.log
if command -v gdb >/dev/null; then
  LD_LIBRARY_PATH=build-audit timeout 120 gdb -batch -ex run -ex bt $L/probe_errors 2>&1 | tail -40 > $R/gdb.txt; tail -40 $R/gdb.txt
else echo "no gdb"; fi
nvcc -O2 -arch=sm_90 -I api/include -o /tmp/pinrace .exp/pinrace.cu -L build-audit -lxpar && LD_LIBRARY_PATH=build-audit /tmp/pinrace 2>&1 | grep -v "trial" | tee $R/pinrace.txt
