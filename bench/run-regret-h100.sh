#!/usr/bin/env bash
# Issue 12's run on the lent H100 machine, in one call of at most ~9 minutes:
#
#   0. build Release, sm_90, xpar-bench only (-j16)            -> run.log
#   1. the stall probe (xpar-bench stalls): reduce without and with the CUDA
#      runtime's threads, with binding, with passive waiting; scan; the
#      bandwidth of the smaller teams at 2^26                   -> stalls.txt, stalls.csv
#   2. xpar-bench regret with the built-in thresholds            -> regret-default.txt
#   3. xpar-bench calibrate (reduce, scan x int32, float, double) -> calibrate.txt (+ profile)
#   4. xpar-bench regret with that profile                       -> regret-profile.txt
#   5. CSVs, summaries and charts of both regret runs            -> regret-data.tar.gz
#   and the two summaries, printed last.
# At most 8 files under $OUT (what the device call returns).
#
# Usage, from the repository root:  OUT=/some/dir bench/run-regret-h100.sh
#   BUDGET_S   the whole call's time (default 540); every step has its own limit
#   MAX_EXP    the regret bench's largest N = 2^MAX_EXP (default 24: two runs of
#              4 residencies x 2 ops x 3 dtypes must fit the call)
#   BUILD_DIR  (default build-regret); an existing xpar-bench there is rebuilt
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-out/regret-h100}
BUDGET=${BUDGET_S:-540}
MAX_EXP=${MAX_EXP:-24}
BUILD=${BUILD_DIR:-build-regret}
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
} >>"$OUT/run.log" 2>&1

# ---- 0. build ------------------------------------------------------------------
log "build"
jobs=$(nproc); [ "$jobs" -gt 16 ] && jobs=16
if ! { cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DXPAR_CUDA=${REGRET_CUDA:-ON} \
         -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF \
         >>"$OUT/run.log" 2>&1 &&
       cmake --build "$BUILD" -j"$jobs" --target xpar-bench >>"$OUT/run.log" 2>&1; }; then
  log "BUILD FAILED"; tail -40 "$OUT/run.log"; exit 1
fi
BIN=$BUILD/bench/xpar-bench
log "built ($(left)s left)"

# ---- 1. the stall probe -----------------------------------------------------------
probe() { # label, env assignments..., -- , args...
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "## $label" >>"$OUT/stalls.txt"
  env "${envs[@]}" timeout 40 "$BIN" stalls --time-limit 8 --csv "$OUT/stalls.csv" "$@" >>"$OUT/stalls.txt" 2>&1 ||
    echo "## ($label: exit $?)" >>"$OUT/stalls.txt"
}
log "stall probe"
: >"$OUT/stalls.txt"
rm -f "$OUT/stalls.csv"
probe "reduce int32, no CUDA runtime" -- --exps 10,14,18,22 --calls 1000
probe "reduce int32, CUDA runtime initialised" -- --cuda --exps 10,14,18,22 --calls 1000
probe "reduce int32, CUDA, OMP_PROC_BIND=spread OMP_PLACES=cores" \
  OMP_PROC_BIND=spread OMP_PLACES=cores -- --cuda --exps 10,14,18,22 --calls 1000
probe "reduce int32, CUDA, OMP_WAIT_POLICY=passive" OMP_WAIT_POLICY=passive -- \
  --cuda --exps 10,14,18,22 --calls 1000
probe "scan int32, CUDA runtime initialised, + bandwidth at 2^26" -- --op scan --cuda \
  --exps 14,18,22 --calls 600 --bandwidth
probe "reduce float, bandwidth at 2^26" -- --dtype float --exps 22 --calls 200 --bandwidth
log "stall probe done ($(left)s left)"

# ---- 2.-4. regret, calibrate, regret ---------------------------------------------
regret() { # label, limit
  local label=$1 lim=$2
  log "regret ($label, limit ${lim}s)"
  timeout $((lim + 40)) "$BIN" regret --max-exp "$MAX_EXP" --rounds 11 --point-budget-ms 1200 \
    --time-limit "$lim" --out-dir "$WORK/regret-$label" >"$OUT/regret-$label.txt" \
    2>"$WORK/regret-$label.err"
  log "regret ($label) exit $?"
}
r1=$(( ($(left) - 110) / 2 )); [ "$r1" -gt 170 ] && r1=170; [ "$r1" -lt 40 ] && r1=40
regret default "$r1"

cal=$(( $(left) / 4 )); [ "$cal" -gt 60 ] && cal=60; [ "$cal" -lt 15 ] && cal=15
log "calibrate (soft limit ${cal}s)"
timeout $((cal + 60)) "$BIN" calibrate --ops reduce,scan --dtypes int32,float,double \
  --gpu-range 10:26 --time-limit "$cal" --out "$WORK/profile.txt" \
  >"$OUT/calibrate.txt" 2>&1
log "calibrate exit $?"
if grep -q '^xpar-profile' "$WORK/profile.txt" 2>/dev/null; then
  { echo "## the profile written:"; cat "$WORK/profile.txt"; } >>"$OUT/calibrate.txt"
  r2=$(( $(left) - 25 )); [ "$r2" -lt 30 ] && r2=30
  XPAR_PROFILE="$WORK/profile.txt" regret profile "$r2"
else
  log "NO PROFILE: the calibrated regret run is skipped"
fi

# ---- 5. data, and the summaries last ----------------------------------------------
tar -czf "$OUT/regret-data.tar.gz" -C "$WORK" regret-default regret-profile \
  regret-default.err regret-profile.err profile.txt 2>/dev/null
log "done"
for label in default profile; do
  echo "=== regret, $label thresholds ==="
  sed -n '/^# stall episodes/,$p' "$OUT/regret-$label.txt" 2>/dev/null | grep -v '^#   ' | head -40
done
echo "=== stalls (p50/p99 per call) ==="
grep -E '^(##|2\^(14|22) +(xpar-P|xpar-default|plain-P) |# 2\^26)' "$OUT/stalls.txt" | head -60
