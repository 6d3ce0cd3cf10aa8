#!/usr/bin/env bash
# One device call: build xpar-gpu-bench for sm_90, run the occupancy-scan sweep
# (--scan-sweep) and profile CUB's and xpar's int32 scan at 2^28 with Nsight Compute.
#   run(command="bash bench/cub/scan-sweep.sh", timeout_s=600)
# Logs in $OUT: sweep.log, ncu-cub.txt, ncu-xpar.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/out/scan-sweep}
mkdir -p "$OUT"
BUILD=build-gpu
JOBS=$(nproc); [ "$JOBS" -gt 16 ] && JOBS=16
cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON \
  -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_BENCH=ON >"$OUT/build.log" 2>&1 &&
  cmake --build $BUILD --target xpar-gpu-bench -j"$JOBS" >>"$OUT/build.log" 2>&1 ||
  { tail -n 40 "$OUT/build.log"; exit 1; }
BENCH=$BUILD/bench/cub/xpar-gpu-bench
timeout 200 "$BENCH" --scan-sweep >"$OUT/sweep.log" 2>&1; echo "sweep rc $?"
grep -E "^SWEEP" "$OUT/sweep.log"
SECTIONS=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
          --section SchedulerStats)
if [ "${SKIP_NCU:-0}" != 1 ] && command -v ncu >/dev/null; then
  timeout 120 ncu "${SECTIONS[@]}" -k regex:DeviceScanKernel -s 1 -c 1 "$BENCH" --profile-scan \
    >"$OUT/ncu-cub.txt" 2>&1; echo "ncu cub rc $?"
  timeout 120 ncu "${SECTIONS[@]}" -k regex:scan_kernel -s 1 -c 1 "$BENCH" --profile-scan \
    >"$OUT/ncu-xpar.txt" 2>&1; echo "ncu xpar rc $?"
fi
