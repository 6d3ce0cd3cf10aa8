#!/usr/bin/env bash
# session 25, call 5: main 64f33ae (xpar__classify's modes: the memory query stores no page;
# the MPI component's result fallback). 427 s of device time left: not the whole gpu-check,
# the tests that cover dispatch's classification and the MPI results, with the GPU.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T="test_policy test_mapping test_embed_gpu test_dispatch test_bad_input test_shadow test_graph_capture_gpu test_capture_no_pools_gpu test_serial_exact test_mpi_api test_mpi_ops"
GEN=(); command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
{ cmake -S . -B build-gpu "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DXPAR_CUDA=ON -DXPAR_BUILD_TESTS=ON -DCMOCKA_ROOT=$PWD/.deps/cmocka &&
  cmake --build build-gpu -j16 --target $T; } > $R/build.txt 2>&1
echo "build rc $? at +$((SECONDS-start)) s"; tail -3 $R/build.txt
timeout 250 ctest --test-dir build-gpu --output-on-failure -j8 --timeout 200 \
  -R '^(test_policy|test_mapping|test_embed_gpu|test_dispatch|test_bad_input|test_shadow|test_graph_capture_gpu|test_capture_no_pools_gpu|test_serial_exact|test_mpi_api.np[12]|test_mpi_ops.np[12])$' \
  > $R/ctest.txt 2>&1
echo "ctest rc $? at +$((SECONDS-start)) s"
grep -E "Test +#|tests passed|tests failed|\*\*\*|FAILED" $R/ctest.txt | head -40
build-gpu/tests/test_mapping 2>&1 | grep -E "memory_query|PASSED|FAILED" | head
echo "done at +$((SECONDS-start)) s"
