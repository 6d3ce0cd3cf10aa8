#!/usr/bin/env bash
# session 20, call 7: branch s20-capture after call 6 (the test's AUTO case corrected):
# build, test_graph_capture_gpu (twice), the dispatch / embedding GPU tests, memcheck and
# synccheck over test_graph_capture_gpu
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
B=build-gpu
GEN=(); command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
cmake -S . -B $B ${GEN[@]} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON \
  -DXPAR_BUILD_TESTS=ON -DCMOCKA_ROOT=$PWD/.deps/cmocka > $R/build.txt 2>&1 && cmake --build $B -j16 >> $R/build.txt 2>&1
echo "build rc $? at +$((SECONDS-start)) s"; tail -3 $R/build.txt
for i in 1 2; do $B/tests/test_graph_capture_gpu 2>&1 | tail -9; done
ctest --test-dir $B -R "test_graph_capture_gpu|test_embed_gpu|test_kernel_gpu|test_policy|test_dispatch|test_mapping|test_mpi_ops" -j4 --timeout 300 > $R/ctest.txt 2>&1
echo "ctest rc $? at +$((SECONDS-start)) s"; grep -E "tests passed|Failed|\*\*\*" $R/ctest.txt | head
for tool in memcheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/test_graph_capture_gpu > $R/san-$tool.txt 2>&1
  echo "$tool rc $? at +$((SECONDS-start)) s"; tail -3 $R/san-$tool.txt
done
echo "done at +$((SECONDS-start)) s"
