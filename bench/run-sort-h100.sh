#!/usr/bin/env bash
# The sort's figures on the lent H100 machine, in one call of at most ~9 minutes:
#
#   1. xpar-gpu-bench --sort-bench: keys, pairs and argsort against CUB's
#      DeviceRadixSort, 2^16 .. 2^30, with the bandwidth bound  -> $OUT/sort-gpu.txt
#   2. xpar-cpu-sort-bench --threads 16: the one-thread and OpenMP tiers against
#      qsort, std::sort, __gnu_parallel::sort and the copy bound -> $OUT/sort-cpu.txt
#   3. xpar-bench calibrate --ops sort                          -> $OUT/profile.txt
#   4. xpar-devbench regret --ops sort with that profile: AUTO against every
#      tier, 2^4 .. 2^24, host and device data                  -> $OUT/regret/
#
# The figures it gives: docs/sort.md.  Usage, from the repository root:
#   OUT=/some/dir bench/run-sort-h100.sh          ($OUT defaults to out/sort-h100)
# It builds the four programs into $XPAR_BUILD (default build-gpu: Release, sm_90,
# no test suite) unless they are there.  BUDGET_S (default 500) is the whole run's
# time; each step has its own limit and leaves what it measured when it runs out.
# SORT_SKIP="gpu cpu calibrate regret" leaves steps out.
set -u
cd "$(dirname "$0")/.."
B=${XPAR_BUILD:-build-gpu}
OUT=${OUT:-out/sort-h100}
BUDGET=${BUDGET_S:-500}
start=$SECONDS
left() { echo $((BUDGET - (SECONDS - start))); }
mkdir -p "$OUT" || exit 1
for v in $(compgen -e | grep '^XPAR_'); do unset "$v"; done
# step NAME LIMIT CMD...: at most LIMIT seconds (less when the budget is short)
step() {
  local name=$1 limit=$2
  shift 2
  [ "$(left)" -lt "$limit" ] && limit=$(left)
  if [ "$limit" -lt 10 ]; then echo "[sort-h100] $name: skipped (no time left)"; return; fi
  echo "[sort-h100 +$((SECONDS - start))s] $name (limit ${limit}s)"
  timeout "$limit" "$@" >"$OUT/$name.txt" 2>&1
  echo "[sort-h100] $name: rc $?"
}
SKIP=" ${SORT_SKIP:-} "
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
lscpu | grep -E "Model name|^CPU\(s\)"
if [ ! -x "$B/bench/xpar-cpu-sort-bench" ] || [ ! -x "$B/bench/cub/xpar-gpu-bench" ]; then
  echo "[sort-h100] building into $B"
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DXPAR_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DXPAR_BUILD_TESTS=OFF >"$OUT/build.txt" 2>&1 &&
    cmake --build "$B" -j"$(nproc)" --target xpar-gpu-bench xpar-cpu-sort-bench xpar-bench \
      xpar-devbench >>"$OUT/build.txt" 2>&1 || { tail -n 30 "$OUT/build.txt"; exit 1; }
  echo "[sort-h100 +$((SECONDS - start))s] built"
fi
[[ $SKIP == *" gpu "* ]] || step sort-gpu 150 "$B/bench/cub/xpar-gpu-bench" --sort-bench
[[ $SKIP == *" cpu "* ]] || step sort-cpu 75 "$B/bench/xpar-cpu-sort-bench" --threads 16 \
  --min 4 --max 28 --serial-max 20 --reps 3 --no-qsort --types int32,int64,float
[[ $SKIP == *" calibrate "* ]] || step calibrate 40 "$B/bench/xpar-bench" calibrate --ops sort \
  --dtypes int32,float,double --out "$OUT/profile.txt" --time-limit 25
[[ $SKIP == *" regret "* ]] || XPAR_PROFILE="$OUT/profile.txt" step regret 75 \
  "$B/bench/xpar-devbench" regret --ops sort --dtypes int32,double \
  --residencies device,pageable --min-exp 4 --max-exp 24 --exp-step 2 --rounds 7 \
  --contender-rounds 9 --confirm-rounds 9 --time-limit 65 --out-dir "$OUT/regret" --no-plot
echo "==== summary"
grep -E "^(SORTROW|SORTSMALL sync|d2d)" "$OUT/sort-gpu.txt" | cut -c1-200
tail -n 45 "$OUT/sort-cpu.txt"
grep -E "^sort" "$OUT/profile.txt" | head -n 20
grep -E "^(sort|# overall|# targets)" "$OUT/regret/summary.txt" 2>/dev/null
