#!/usr/bin/env bash
# Proves that test_embed_gpu can fail: builds a copy of the tree with the old
# defect planted back (the context's stream created cudaStreamNonBlocking, so
# xpar's work is not ordered after the application's stream-0 work) and runs
# the test against it; the stream-order cases must report failures.  GPU
# machine only; prints the test's summary lines.  Exit 0 when the planted
# defect was caught.
set -uo pipefail
cd "$(dirname "$0")/.."
work=${TMPDIR:-/tmp}/xpar-planted
rm -rf "$work" && mkdir -p "$work"
cp -r api dispatch backend_cpu backend_cuda tests bench examples cmake CMakeLists.txt "$work"/
sed -i 's/cudaStreamCreateWithFlags(&st->own_stream, cudaStreamDefault)/cudaStreamCreateWithFlags(\&st->own_stream, cudaStreamNonBlocking)/' \
  "$work/backend_cuda/cuda_state.cu"
grep -q 'cudaStreamNonBlocking);' "$work/backend_cuda/cuda_state.cu" || { echo "could not plant the defect"; exit 2; }
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
cmake -S "$work" -B "$work/build" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DXPAR_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_BUILD_BENCH=OFF -DXPAR_BUILD_EXAMPLES=OFF -DXPAR_MPI=OFF \
  ${CMOCKA_ROOT:+-DCMOCKA_ROOT=$CMOCKA_ROOT} >/dev/null && \
  cmake --build "$work/build" -j"$(nproc)" --target test_embed_gpu >/dev/null || { echo "build failed"; exit 2; }
"$work/build/tests/test_embed_gpu" > "$work/log" 2>&1
rc=$?
grep -E "^(stream order|page reuse|launch extremes|release memory|test_embed_gpu)" "$work/log"
echo "first failures:"; grep '^FAIL' "$work/log" | head -5
echo "failures reported: $(grep -c '^FAIL' "$work/log") (the test prints at most 40)"
[ $rc -eq 1 ] && grep -q 'stream order: FAILED' "$work/log" && { echo "planted defect caught"; exit 0; }
echo "planted defect NOT caught (rc $rc)"; exit 1
