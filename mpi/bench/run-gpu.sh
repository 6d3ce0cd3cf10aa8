#!/usr/bin/env bash
# The MPI component on a GPU machine, in calls of under 10 minutes each:
#
#   mpi/bench/run-gpu.sh build   configure + build (CUDA on, MPI on, tests on) into
#                                $BUILD (default build-mpi-gpu), -j16
#   mpi/bench/run-gpu.sh test    the MPI suite (ctest -L mpi: 1..4 ranks; device,
#                                managed, pinned and mapped slices, placement)
#   mpi/bench/run-gpu.sh bench   xpar-mpi-bench on device slices, one GPU per rank,
#                                with p = 2, 4, ... up to the GPU count (GPU_RANKS),
#                                and, when ranks outnumber GPUs (SHARED_RANKS,
#                                default "2 4" on a 1-GPU machine), p ranks sharing
#                                the GPUs; then host slices on 2 ranks
#   mpi/bench/run-gpu.sh all     (default) all three, under one deadline
#
# Every mpirun (ctest's included) goes through tests/mpi/mpirun-local.sh and
# gets -x NCCL_NVLS_ENABLE=0 (XPAR_MPIRUN_FLAGS).  Logs go to $OUT (default
# out/mpi-gpu), one file per step; a summary is printed last.  On a GPU machine, with
# cmocka in .deps/cmocka, in one call of under 10 minutes:
#   bash mpi/bench/run-gpu.sh all
# (the figures it gives: docs/performance.md, "The MPI component")
# Environment: BUILD, OUT, DEADLINE (s, default 570), GPU_RANKS, SHARED_RANKS, BENCH_ARGS
# (extra xpar-mpi-bench flags for the device runs, e.g. "--n 2^31 --dtypes int32,double"),
# HOST_BENCH_ARGS (the same for the host run: a 2^31-element host reduce takes 0.6 s).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
MODE=${1:-all}
BUILD=${BUILD:-build-mpi-gpu}
OUT=${OUT:-$PWD/out/mpi-gpu}
DEADLINE=${DEADLINE:-570}
mkdir -p "$OUT"
export XPAR_MPIRUN_FLAGS="${XPAR_MPIRUN_FLAGS:-} -x NCCL_NVLS_ENABLE=0"
export NCCL_NVLS_ENABLE=0
# The application's view: no XPAR_* overrides from the caller's environment.
for v in $(compgen -e | grep '^XPAR_' | grep -v '^XPAR_MPIRUN_FLAGS$'); do unset "$v"; done
MPIEXEC=${MPIEXEC:-$(command -v mpiexec || command -v mpirun)}
LAUNCH=(bash tests/mpi/mpirun-local.sh "$MPIEXEC")
JOBS=$(nproc)
[ "$JOBS" -gt 16 ] && JOBS=16
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "${NGPU:-0}" -ge 1 ] || NGPU=0

declare -a SUMMARY
# step NAME LIMIT CMD...: run with a time limit (capped by the deadline), log to $OUT/NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS left=$((DEADLINE - SECONDS - 5)) rc
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 10 ]; then
    SUMMARY+=("$(printf '%-26s %-28s %4ds' "$name" "skipped (no time left)" 0)")
    return 0
  fi
  echo "=== $name (limit ${limit}s): $*"
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  local verdict=ok
  [ $rc -ne 0 ] && verdict="FAILED (rc $rc)"
  [ $rc -eq 124 ] && verdict="TIMED OUT after ${limit}s"
  SUMMARY+=("$(printf '%-26s %-28s %4ds' "$name" "$verdict" $((SECONDS - t0)))")
  [ $rc -ne 0 ] && tail -n 30 "$OUT/$name.log"
  return $rc
}

do_build() {
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
    "$MPIEXEC" --version 2>&1 | head -n 1
    nvcc --version 2>&1 | tail -n 1
  } | tee "$OUT/machine.txt"
  local cmocka=()
  [ -d .deps/cmocka ] && cmocka=(-DCMOCKA_ROOT="$PWD/.deps/cmocka")
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  step build 420 bash -c "cmake -S . -B '$BUILD' ${gen[*]} -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_MPI=ON -DXPAR_BUILD_TESTS=ON ${cmocka[*]} \
    && cmake --build '$BUILD' -j$JOBS --target xpar xpar_mpi xpar-mpi-bench \
       test_mpi_ops test_mpi_api test_mpi_init"
}

do_test() {
  # -V: the programs' own lines, to show which settings ran and which skipped.
  step mpi-tests 300 ctest --test-dir "$BUILD" -L mpi -E test_install -V -j4 --timeout 240
  grep -E "tests passed|tests failed" "$OUT/mpi-tests.log" | tail -n 1
  echo "cmocka tests that ran (OK) or skipped (with a GPU on every rank, none of"
  echo "auto-pinned/mapped/device/managed may be skipped):"
  grep -oE "\[ +(OK|SKIPPED) +\] [a-z_]+/[a-z-]+" "$OUT/mpi-tests.log" | sort -u |
    sed -E 's/\[ +([A-Z]+) +\] /\1 /' | paste -sd ' ' | fold -s -w 100
}

do_bench() {
  local bench=$BUILD/mpi/bench/xpar-mpi-bench
  local args host_args
  read -r -a args <<<"${BENCH_ARGS:-}"
  read -r -a host_args <<<"${HOST_BENCH_ARGS:-}"
  if [ "$NGPU" -ge 1 ]; then
    # One GPU per rank: p = 2, 4, 8, ... up to the GPU count, and the count
    # itself (GPU_RANKS overrides), so that a 4- or 8-GPU machine gives the
    # scaling curve, not only its end.  Each run times one rank alone too.
    local gpu_ranks=${GPU_RANKS:-}
    if [ -z "$gpu_ranks" ]; then
      local p=2
      while [ "$p" -lt "$NGPU" ]; do gpu_ranks="$gpu_ranks $p"; p=$((p * 2)); done
      gpu_ranks="$gpu_ranks $NGPU"
    fi
    for p in $gpu_ranks; do
      step "bench-device-np$p" 200 "${LAUNCH[@]}" "$p" "$bench" --mem device "${args[@]}"
    done
    local shared=${SHARED_RANKS:-}
    [ -z "$shared" ] && [ "$NGPU" -eq 1 ] && shared="2 4"
    for p in $shared; do
      step "bench-device-np$p-shared" 200 "${LAUNCH[@]}" "$p" "$bench" --mem device "${args[@]}"
    done
  fi
  # Host slices: each rank's OpenMP team gets its share of the cores.
  local cores
  cores=$(nproc)
  OMP_NUM_THREADS=$((cores / 2 > 0 ? cores / 2 : 1)) \
    step bench-host-np2 120 "${LAUNCH[@]}" 2 -x OMP_NUM_THREADS "$bench" --mem host "${host_args[@]}"
}

case $MODE in
  build) do_build ;;
  test) do_test ;;
  bench) do_bench ;;
  all) do_build && { do_test; do_bench; } ;;
  *) echo "usage: $0 [build|test|bench|all]" >&2; exit 2 ;;
esac

echo
echo "================ mpi run-gpu summary ($MODE, logs in $OUT) ================"
printf '%s\n' "${SUMMARY[@]}"
for f in "$OUT"/bench-*.log; do
  [ -f "$f" ] || continue
  echo "--- $(basename "$f" .log)"
  sed -n '/^# targets/,$p' "$f"
done
FAILED=$(printf '%s\n' "${SUMMARY[@]}" | grep -c -E "FAILED|TIMED OUT")
exit $((FAILED > 0))
