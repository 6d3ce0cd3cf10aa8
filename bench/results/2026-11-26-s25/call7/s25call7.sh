#!/usr/bin/env bash
# session 25, call 7: main with the device-scalar refusal (api/ops.c, dispatch/residency.c,
# the repeat's scalar pointer): the tests that cover dispatch and the new GPU case.
set -u
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T="test_policy test_mapping test_embed_gpu test_dispatch test_bad_input test_shadow test_graph_capture_gpu test_serial_exact test_elementwise test_scan test_mpi_api test_mpi_ops"
GEN=(); command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
{ cmake -S . -B build-gpu "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DXPAR_CUDA=ON -DXPAR_BUILD_TESTS=ON -DCMOCKA_ROOT=$PWD/.deps/cmocka &&
  cmake --build build-gpu -j16 --target $T; } > /tmp/build.txt 2>&1
echo "build rc $? at +$((SECONDS-start)) s"; tail -3 /tmp/build.txt
timeout 200 ctest --test-dir build-gpu --output-on-failure -j8 --timeout 180 \
  -R '^(test_policy|test_mapping|test_embed_gpu|test_dispatch|test_bad_input|test_shadow|test_graph_capture_gpu|test_serial_exact|test_elementwise.*|test_scan.*|test_mpi_api.np2|test_mpi_ops.np2)$' \
  > /tmp/ctest.txt 2>&1
echo "ctest rc $? at +$((SECONDS-start)) s"
grep -E "Test +#|tests passed|tests failed|\*\*\*|FAILED" /tmp/ctest.txt | head -40
build-gpu/tests/test_embed_gpu 2>&1 | grep -E "device scalars|device results|passed|FAILED" | head
echo "done at +$((SECONDS-start)) s"
