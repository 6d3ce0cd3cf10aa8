#!/usr/bin/env bash
# AUTO against every alternative on the lent H100 machine, in one call of at most ~9 minutes
# (docs/performance.md, "AUTO against every alternative"):
#
#   0. build Release, sm_90: xpar-bench, xpar-devbench and the GPU tests that guard dispatch
#      (test_embed_gpu: freed pinned memory reused as device memory; the
#      policy, dispatch, mapping and serial-exact tests), -j16    -> run.log
#   1. those tests (ctest -R)                                      -> checks.txt
#   2. what one pointer classification costs (runtime vs driver) -> checks.txt
#   3. the stall probe (xpar-devbench stalls): reduce without and with the CUDA
#      runtime's threads, with binding, with passive waiting; scan; the
#      bandwidth of the smaller teams at 2^26                   -> stalls.txt
#   4. xpar-devbench regret with the built-in thresholds, 2^7..2^MAX_EXP, every
#      residency; then a coarse large-N set (2^26, 2^28: AUTO, the OpenMP
#      tier, CUDA, the plain OpenMP loop and CUB; the one-thread alternatives
#      are 10x off there and would not fit the call)   -> regret-default.txt
#      and, for the record, a small set with the old method (--no-warm)
#   5. xpar-bench calibrate (every op, int32/float/double)      -> calibrate.txt
#   6. xpar-devbench regret with that profile                     -> regret-profile.txt
#   7. xpar-bench crossover with that profile                   -> crossover.txt
#   CSVs, summaries, the profile and the crossover data     -> regret-data.tar.gz
#   and the summaries, printed last.
# At most 8 files under $OUT (what the device call returns).
#
# Usage, from the repository root (cmocka in .deps/cmocka for the tests):
#   OUT=/some/dir bench/run-regret-h100.sh
#   BUDGET_S   the whole call's time (default 530); every step has its own limit
#   MAX_EXP    the regret bench's largest N of the full set (default 24)
#   BUILD_DIR  (default build-regret); an existing build there is reused
#   STEPS      which steps (default: all of them): tests pointer stalls stalls-after
#              default default-large old calibrate profile profile-large crossover
#   ROUNDS, POINT_BUDGET_MS   regret's rounds per point and time per point (15, 1500)
#   PROBE_CALLS  the stall probe's timed calls per variant and N (default 1000)
#   REGRET_ARGS  more options for the full sets (e.g. --residencies device,mapped)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-out/regret-h100}
BUDGET=${BUDGET_S:-530}
MAX_EXP=${MAX_EXP:-24}
BUILD=${BUILD_DIR:-build-regret}
STEPS=" ${STEPS:-tests pointer stalls stalls-after default default-large old calibrate profile profile-large crossover} "
has() { [[ $STEPS == *" $1 "* ]]; }
ROUNDS=${ROUNDS:-15}
PROBE_CALLS=${PROBE_CALLS:-1000}
POINT_BUDGET_MS=${POINT_BUDGET_MS:-1500}
WORK=$PWD/$BUILD/regret-work  # everything not returned: charts, CSVs (tarred), the profile
start=$SECONDS
left() { echo $((BUDGET - (SECONDS - start))); }
log() { echo "[regret-h100 +$((SECONDS - start))s] $*" | tee -a "$OUT/run.log" >&2; }
mkdir -p "$OUT" "$WORK" || exit 1
: >"$OUT/run.log"
for v in $(compgen -e | grep '^XPAR_'); do unset "$v"; done
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) x $(nproc)"
  echo "memory: $(grep MemTotal /proc/meminfo)"
  command -v nvidia-smi >/dev/null &&
    echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1)"
  env | grep -E '^(OMP_|GOMP_|CUDA_VISIBLE)' || echo "no OMP_/GOMP_ variables set"
  # what can unmap or move a process's pages under its calls (regret's fault column)
  echo "kernel: $(uname -r); numa nodes: $(ls -d /sys/devices/system/node/node* 2>/dev/null | wc -l)"
  echo "numa_balancing: $(cat /proc/sys/kernel/numa_balancing 2>/dev/null || echo n/a)"
  echo "thp: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo n/a)," \
       "defrag $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null || echo n/a)"
  echo "ksm: $(cat /sys/kernel/mm/ksm/run 2>/dev/null || echo n/a)"
} >>"$OUT/run.log" 2>&1

# ---- 0. build ------------------------------------------------------------------
log "build"
jobs=$(nproc); [ "$jobs" -gt 16 ] && jobs=16
TESTS=OFF CMOCKA=() TARGETS=(xpar-bench xpar-devbench)
if has tests && [ -d .deps/cmocka ]; then
  TESTS=ON CMOCKA=(-DCMOCKA_ROOT="$PWD/.deps/cmocka")
  TARGETS+=(test_embed_gpu test_policy test_dispatch test_mapping test_serial_exact)
fi
GEN=()
command -v ninja >/dev/null 2>&1 && [ ! -f "$BUILD/CMakeCache.txt" ] && GEN=(-G Ninja)
if ! { cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DXPAR_CUDA=${REGRET_CUDA:-ON} \
         -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_BUILD_TESTS=$TESTS "${CMOCKA[@]}" \
         -DXPAR_BUILD_EXAMPLES=OFF >>"$OUT/run.log" 2>&1 &&
       cmake --build "$BUILD" -j"$jobs" --target "${TARGETS[@]}" >>"$OUT/run.log" 2>&1; }; then
  log "BUILD FAILED"; tail -40 "$OUT/run.log"; exit 1
fi
BIN=$BUILD/bench/xpar-bench
DEVBIN=$BUILD/bench/xpar-devbench
log "built ($(left)s left)"

# ---- 1. the GPU tests that guard dispatch --------------------------------------
if [ "$TESTS" = ON ]; then
    log "tests"
    timeout 150 ctest --test-dir "$BUILD" --output-on-failure -j8 --timeout 120 \
      -R '^(test_embed_gpu|test_policy|test_dispatch|test_mapping|test_serial_exact)' \
      >"$OUT/checks.txt" 2>&1
    log "tests exit $?: $(grep -E 'tests passed|tests failed' "$OUT/checks.txt" | tail -1)"
fi
# ---- 2. pointer classification cost ---------------------------------------------
if has pointer; then
  log "pointer query cost"
  { nvcc -O2 -arch=sm_90 bench/cub/pointer_query_cost.cu -o "$WORK/pqc" && timeout 60 "$WORK/pqc"; } \
    >>"$OUT/checks.txt" 2>&1
fi
# ---- 3. the stall probe -----------------------------------------------------------
if has stalls; then
  probe() { # label, env assignments..., -- , args...
    local label=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    echo "## $label" >>"$OUT/stalls.txt"
    env "${envs[@]}" timeout 40 "$DEVBIN" stalls --time-limit 8 --csv "$WORK/stalls.csv" "$@" >>"$OUT/stalls.txt" 2>&1 ||
      echo "## ($label: exit $?)" >>"$OUT/stalls.txt"
  }
  log "stall probe"
  : >"$OUT/stalls.txt"
  rm -f "$WORK/stalls.csv"
  probe "reduce int32, no CUDA runtime" -- --exps 10,14,18,22 --calls "$PROBE_CALLS"
  probe "reduce int32, CUDA runtime initialised" -- --cuda --exps 10,14,18,22 --calls "$PROBE_CALLS"
  probe "reduce int32, CUDA, OMP_PROC_BIND=spread OMP_PLACES=cores" \
    OMP_PROC_BIND=spread OMP_PLACES=cores -- --cuda --exps 10,14,18,22 --calls "$PROBE_CALLS"
  probe "reduce int32, CUDA, OMP_WAIT_POLICY=passive" OMP_WAIT_POLICY=passive -- \
    --cuda --exps 10,14,18,22 --calls "$PROBE_CALLS"
  probe "scan int32, CUDA runtime initialised, + bandwidth at 2^26" -- --op scan --cuda \
    --exps 14,18,22 --calls "$((PROBE_CALLS * 3 / 5))" --bandwidth
  log "stall probe done ($(left)s left)"
fi
# The pattern after the constant team: xpar's default team and an application's
# plain 16-thread loop taking turns, nothing else resizing the pool.
if has stalls-after; then
  log "stall probe, interleaved pattern"
  for op in reduce scan; do
    echo "## $op int32, CUDA runtime initialised: xpar-default and plain-P taking turns" \
      >>"$OUT/stalls.txt"
    timeout 60 "$DEVBIN" stalls --op $op --cuda --exps 10,14,18,22 --calls "$((PROBE_CALLS * 2))" --time-limit 20 \
      --variants xpar-default,plain-P --csv "$WORK/stalls.csv" >>"$OUT/stalls.txt" 2>&1 ||
      echo "## (exit $?)" >>"$OUT/stalls.txt"
  done
fi

# ---- 4.-7. regret, calibrate, regret, crossover --------------------------------------
regret() { # label, limit, [extra args]
  local label=$1 lim=$2; shift 2
  log "regret ($label, limit ${lim}s)"
  timeout $((lim + 40)) "$DEVBIN" regret --rounds "$ROUNDS" --point-budget-ms "$POINT_BUDGET_MS" \
    --time-limit "$lim" \
    --out-dir "$WORK/regret-$label" "$@" >"$WORK/regret-$label.txt" 2>"$WORK/regret-$label.err"
  log "regret ($label) exit $?"
}
both() { # label, limit for the full set: the full set, then (if a step) the large-N set
  local label=$1 lim=$2
  if [ -n "${PROFILE_FOR_RUN:-}" ]; then export XPAR_PROFILE=$PROFILE_FOR_RUN; fi
  # shellcheck disable=SC2086  # REGRET_ARGS: several options
  has "$label" && regret "$label" "$lim" --max-exp "$MAX_EXP" ${REGRET_ARGS:-}
  has "$label-large" && regret "$label-large" 60 --min-exp 26 --max-exp 28 --exp-step 2 \
    --rounds 5 --alts auto,openmp,cuda,plain-omp,cub --point-budget-ms 4000
  unset XPAR_PROFILE
  cat "$WORK/regret-$label.txt" "$WORK/regret-$label-large.txt" >"$OUT/regret-$label.txt" 2>/dev/null
  [ -s "$OUT/regret-$label.txt" ] || rm -f "$OUT/regret-$label.txt"
}
PROFILE_FOR_RUN=${REGRET_PROFILE:-}
both default "${DEFAULT_LIMIT:-140}"
has old && regret old-method 30 --no-warm --ops reduce,scan --dtypes int32,float --max-exp 22
if has calibrate; then
  cal=$(( $(left) / 4 )); [ "$cal" -gt 90 ] && cal=90; [ "$cal" -lt 20 ] && cal=20
  log "calibrate (soft limit ${cal}s)"
  timeout $((cal + 60)) "$BIN" calibrate --dtypes int32,float,double \
    --gpu-range 10:26 --time-limit "$cal" --out "$WORK/profile.txt" \
    >"$OUT/calibrate.txt" 2>&1
  log "calibrate exit $?"
  if grep -q '^xpar-profile' "$WORK/profile.txt" 2>/dev/null; then
    { echo "## the profile written:"; cat "$WORK/profile.txt"; } >>"$OUT/calibrate.txt"
    r2=$(( ($(left) - 100) )); [ "$r2" -gt 170 ] && r2=170; [ "$r2" -lt 30 ] && r2=30
    PROFILE_FOR_RUN="$WORK/profile.txt" both profile "$r2"
    xo=$(( $(left) - 30 ))
    if has crossover && [ "$xo" -ge 30 ]; then
      log "crossover (limit ${xo}s)"
      XPAR_PROFILE="$WORK/profile.txt" timeout $((xo + 30)) "$BIN" crossover --ops reduce,scan \
        --dtypes int32,float --locations host,device --min-exp 7 --max-exp 28 \
        --out-dir "$WORK/crossover" --time-limit "$xo" >"$WORK/crossover.txt" 2>"$WORK/crossover.err"
      log "crossover exit $?"
    fi
  else
    log "NO PROFILE: the calibrated regret run is skipped"
  fi
fi

# ---- data, and the summaries last ----------------------------------------------------
{ cat "$WORK/regret-old-method.txt" 2>/dev/null; echo; cat "$WORK/crossover.txt" 2>/dev/null; \
  echo; cat "$WORK/crossover/summary.txt" 2>/dev/null; } >"$OUT/other.txt"
tar -czf "$OUT/regret-data.tar.gz" -C "$WORK" --exclude='*.png' --exclude='*.svg' \
  $(cd "$WORK" && ls -d regret-* crossover* profile.txt stalls.csv 2>/dev/null) 2>/dev/null
log "done"
for label in default profile; do
  [ -f "$OUT/regret-$label.txt" ] || continue
  echo "=== regret, $label thresholds ==="
  sed -n '/^# xpar-devbench regret summary/,$p' "$OUT/regret-$label.txt" | grep -v '^#   ' | head -60
done
echo "=== old method (rotation, no warm call) ==="
grep -E '^# overall|^# targets' "$WORK/regret-old-method.txt" 2>/dev/null
grep -E 'tests passed|tests failed' "$OUT/checks.txt" 2>/dev/null
tail -8 "$OUT/checks.txt" 2>/dev/null
