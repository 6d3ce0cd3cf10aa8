#!/usr/bin/env bash
# The crossover run for the lent H100 machine, in one call of at most ~9 minutes:
#
#   1. xpar-bench calibrate            -> $OUT/profile.txt (+ calibrate.txt)
#   2. xpar-devbench overhead            -> $OUT/overhead.txt
#   3. xpar-bench crossover with XPAR_PROFILE=$OUT/profile.txt:
#      reduce, scan x int32, float x host, device data, N = 2^7 .. 2^30
#                                      -> $OUT/crossover/ (CSV, charts, summary)
#   4. the compact summary, printed last -> $OUT/summary.txt
#
# The figures it gives: docs/performance.md, "Crossovers and thresholds"; the crossover
# figure is bench/plot-crossover.gp over $OUT/crossover/crossover.csv.
#
# Usage, from the repository root, after
#   cmake --preset gpu && cmake --build --preset gpu -j16
#   OUT=/some/dir bench/run-h100.sh          ($OUT defaults to out/h100)
# BUDGET_S (default 530) is the whole run's time; lower it when the build
# shares the same call.  Every step writes into $OUT as it goes and has its
# own time limit: a step that fails or runs out of time leaves what it
# measured, and the script goes on to the next one.
set -u
cd "$(dirname "$0")/.."
BIN=${XPAR_BENCH:-build-gpu/bench/xpar-bench}
DEVBIN=${XPAR_DEVBENCH:-build-gpu/bench/xpar-devbench}
OUT=${OUT:-out/h100}
BUDGET=${BUDGET_S:-530}
start=$SECONDS
left() { echo $((BUDGET - (SECONDS - start))); }
log() { echo "[run-h100 +$((SECONDS - start))s] $*" >&2; }

mkdir -p "$OUT" || exit 1
if [ ! -x "$BIN" ]; then
  echo "run-h100: $BIN not found: build first (cmake --preset gpu && cmake --build --preset gpu -j16)" >&2
  exit 1
fi
# The application's view: no XPAR_* overrides from the caller's environment
# (an XPAR_*_THRESHOLD would override the profile being tested).
for v in $(compgen -e | grep '^XPAR_'); do unset "$v"; done

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: $(git rev-parse --short HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | wc -l) changed files"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) x $(nproc)"
  echo "memory: $(grep MemTotal /proc/meminfo)"
  if command -v nvidia-smi >/dev/null; then
    echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1)"
  else
    echo "gpu: none (no nvidia-smi)"
  fi
  env | grep -E '^(OMP_|GOMP_|CUDA_VISIBLE)' || true
  command -v gnuplot >/dev/null && echo "charts: PNG (gnuplot)" || echo "charts: SVG (no gnuplot)"
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt" >&2

# ---- 1. calibrate ------------------------------------------------------------
# Soft limit: no new op x dtype pair after it (reduce/scan int32/float come
# first); the hard timeout only guards against a hang.
cal_soft=$(( $(left) * 2 / 5 )); [ "$cal_soft" -gt 220 ] && cal_soft=220
log "calibrate (soft limit ${cal_soft}s)"
timeout $((cal_soft + 90)) "$BIN" calibrate --out "$OUT/profile.txt" --time-limit "$cal_soft" \
  >"$OUT/calibrate.txt" 2>"$OUT/calibrate.log"
cal_rc=$?
cat "$OUT/calibrate.txt" >&2
if [ -s "$OUT/profile.txt" ] && grep -q '^xpar-profile' "$OUT/profile.txt"; then
  case "$OUT" in /*) export XPAR_PROFILE="$OUT/profile.txt" ;; *) export XPAR_PROFILE="$PWD/$OUT/profile.txt" ;; esac
  profile_note="profile $XPAR_PROFILE (calibrate exit $cal_rc)"
else
  profile_note="NO PROFILE (calibrate exit $cal_rc): AUTO used the built-in defaults"
fi
log "$profile_note"

# ---- 2. per-call overhead ----------------------------------------------------
log "overhead"
timeout 60 "$DEVBIN" overhead >"$OUT/overhead.txt" 2>&1
cat "$OUT/overhead.txt" >&2

# ---- 3. crossover ------------------------------------------------------------
xo_soft=$(( $(left) - 45 )); [ "$xo_soft" -lt 30 ] && xo_soft=30
log "crossover (soft limit ${xo_soft}s)"
timeout $((xo_soft + 35)) "$BIN" crossover --ops reduce,scan --dtypes int32,float \
  --locations host,device --min-exp 7 --max-exp 30 --out-dir "$OUT/crossover" \
  --time-limit "$xo_soft" >"$OUT/crossover.txt" 2>"$OUT/crossover.log"
xo_rc=$?
log "crossover exit $xo_rc"

# ---- 4. summary, last --------------------------------------------------------
{
  echo "================ xpar on the H100 machine: summary ================"
  echo "# $(grep -m1 '^cpu:' "$OUT/machine.txt"); $(grep -m1 '^gpu:' "$OUT/machine.txt")"
  echo "# $profile_note"
  echo "# calibrated thresholds for reduce/scan x int32/float (elements; n >= value takes the GPU / OpenMP side):"
  grep -E '^(reduce|scan) +(int32|float) ' "$OUT/calibrate.txt" | sed 's/^/#   /'
  grep -E '^check:' "$OUT/calibrate.txt" | sed 's/^/# /'
  grep -E '^xpar AUTO:' "$OUT/overhead.txt" | sed 's/^/# overhead: /'
  if [ -s "$OUT/crossover/summary.txt" ]; then
    cat "$OUT/crossover/summary.txt"
  else
    echo "# crossover did not finish (exit $xo_rc): per-N lines are in $OUT/crossover.log"
  fi
  echo "# files: $OUT/{profile.txt,calibrate.txt,overhead.txt,crossover.txt}, $OUT/crossover/ (crossover.csv, charts, summary)"
  echo "# total $((SECONDS - start)) s"
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"
