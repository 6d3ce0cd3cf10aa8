#!/usr/bin/env bash
# session 24, call 3: where test_capture_no_pools_gpu crashes (calls 1-2: SIGSEGV in a libc
# memcpy under the library, before its set-up ends): a RelWithDebInfo build of the test alone,
# the backtrace through addr2line, gdb's where it exists.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
cmake -S . -B build-dbg -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_MPI=OFF -DXPAR_BUILD_TESTS=ON -DCMOCKA_ROOT=$PWD/.deps/cmocka > $R/cfg.log 2>&1
cmake --build build-dbg -j16 --target test_capture_no_pools_gpu test_graph_capture_gpu > $R/build.log 2>&1; echo "build rc $? at +$((SECONDS-start)) s"; tail -3 $R/build.log
T=build-dbg/tests/test_capture_no_pools_gpu
$T > $R/run.txt 2>&1; echo "run rc $?"; cat $R/run.txt
grep -o '(+0x[0-9a-f]*)' $R/run.txt | tr -d '(+)' | xargs addr2line -f -i -C -e $T 2>&1 | head -60
if command -v gdb >/dev/null; then gdb -batch -ex run -ex bt $T 2>&1 | tail -30; else echo "no gdb"; fi
echo "--- test_graph_capture_gpu (shared library) for comparison"; timeout 60 build-dbg/tests/test_graph_capture_gpu 2>&1 | tail -3
echo "done at +$((SECONDS-start)) s"
