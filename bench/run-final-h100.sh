#!/usr/bin/env bash
# Issue 12's last device call on the lent H100 machine (one call, ~9 minutes):
# the GPU suite on this tree (scripts/gpu-check: build, ctest, --check, the
# sticky-error test; its bench and sanitizer steps skipped), then the regret
# bench with the built-in thresholds (2^7..2^24, every residency), then the
# stall probe in the interleaved pattern (xpar's default team and a plain
# 16-thread loop taking turns).  At most 8 files under $OUT; summaries last.
#   OUT=/some/dir bench/run-final-h100.sh     (cmocka in .deps/cmocka)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-out/final-h100}
mkdir -p "$OUT"
export OUT
GPU_CHECK_SKIP="bench sanitizers" GPU_CHECK_DEADLINE=${CHECK_DEADLINE:-380} \
  bash scripts/gpu-check >"$OUT/gpu-check.txt" 2>&1
B=build-gpu/bench/xpar-bench
W=build-gpu/regret-work
mkdir -p "$W"
for v in $(compgen -e | grep '^XPAR_'); do unset "$v"; done
timeout 130 "$B" regret --max-exp 24 --rounds 15 --point-budget-ms 1500 --time-limit 90 \
  --out-dir "$W/regret-final" >"$OUT/regret-final.txt" 2>"$W/regret-final.err"
echo "regret exit $?" >>"$OUT/gpu-check.txt"
for op in reduce scan; do
  echo "## $op int32, CUDA runtime initialised: xpar-default and plain-P taking turns"
  timeout 40 "$B" stalls --op $op --cuda --exps 10,14,18,22 --calls 2000 --time-limit 14 \
    --variants xpar-default,plain-P
done >"$OUT/stalls-after.txt" 2>&1
tar -czf "$OUT/regret-final-data.tar.gz" -C "$W" --exclude='*.svg' --exclude='*.png' \
  regret-final regret-final.err 2>/dev/null
tail -n 12 "$OUT/gpu-check.txt"
sed -n '/^# xpar-bench regret summary/,$p' "$OUT/regret-final.txt" | head -34
grep -E '^(##|2\^)' "$OUT/stalls-after.txt"
