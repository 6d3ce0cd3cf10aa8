#!/usr/bin/env bash
# Reproducible and shadow mode on the lent GPU machine, in one call (< 8 min):
#   build (sm_90, Release) -> test_repro + test_shadow -> xpar-repro-bench gpu
#   (2^28, 2^30; also checks GPU == CPU bits) -> xpar-repro-bench cpu (16
#   threads) -> compute-sanitizer memcheck and racecheck over the GPU cases
#   (XPAR_TEST_REPRO_QUICK=1).  Logs in $OUT; a summary last.
#   REPRO_GPU_SKIP="tests sanitizers" skips those steps.
#   The figures it gives: docs/performance.md, "Reproducible mode's cost".
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out/repro-gpu}
mkdir -p "$OUT"
B=build-gpu
T0=$SECONDS
declare -a SUMMARY
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((460 - (SECONDS - T0)))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 10 ]; then SUMMARY+=("$name: skipped (no time left)"); return 0; fi
  local t=$SECONDS
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  SUMMARY+=("$name: rc $rc, $((SECONDS - t)) s")
  [ $rc -ne 0 ] && tail -n 20 "$OUT/$name.log"
  return 0
}
CMOCKA=()
[ -d .deps/cmocka ] && CMOCKA=(-DCMOCKA_ROOT="$PWD/.deps/cmocka")
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
step build 240 bash -c "cmake -S . -B $B ${GEN[*]} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DXPAR_CUDA=ON -DXPAR_MPI=OFF -DXPAR_BUILD_EXAMPLES=OFF ${CMOCKA[*]} && \
  cmake --build $B -j16 --target test_repro test_shadow xpar-repro-bench"
export XPAR_TEST_SEED=${XPAR_TEST_SEED:-$(date +%s)}
[[ " ${REPRO_GPU_SKIP:-} " == *" tests "* ]] || step tests 120 bash -c "$B/tests/test_repro && $B/tests/test_shadow"
step bench-gpu 100 $B/bench/xpar-repro-bench gpu 28 30
step bench-cpu 60 $B/bench/xpar-repro-bench cpu 16 26 28
export XPAR_TEST_REPRO_QUICK=1
[[ " ${REPRO_GPU_SKIP:-} " == *" sanitizers "* ]] && DEADLINE_SKIP=1 || DEADLINE_SKIP=0
[ "$DEADLINE_SKIP" = 1 ] || step memcheck 50 compute-sanitizer --tool memcheck --error-exitcode 1 $B/tests/test_repro gpu_tiers
[ "$DEADLINE_SKIP" = 1 ] || step racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/tests/test_repro gpu_tiers
echo "seed $XPAR_TEST_SEED"
printf '%s\n' "${SUMMARY[@]}"
grep -hE "ratio|^2\^|bits|MISMATCH|PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT"/*.log | head -80
