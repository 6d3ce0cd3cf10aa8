#!/usr/bin/env bash
# session 25, call 3: main f6a9889 (xpar_memory_query, the MPI component's device/mapped results):
# build + the whole ctest suite with the GPU (MPI tests included), then xpar-bench overhead
# (the new no-repeat AUTO variant).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
which mpirun && mpirun --version | head -1
OUT=$R/gc GPU_CHECK_SKIP="check sanitizers bench" GPU_CHECK_DEADLINE=480 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
grep -A12 "gpu-check summary" $R/gpu-check.txt | cut -c1-160
grep -E "tests passed|tests failed|Failed|\*\*\*|mpi" $R/gc/ctest.log | head -30
build-gpu/tests/test_mapping 2>&1 | grep -E "memory_query|PASSED|FAILED" | head
timeout 60 build-gpu/bench/xpar-bench overhead > $R/overhead.txt 2>&1; echo "overhead rc $?"; cat $R/overhead.txt
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
