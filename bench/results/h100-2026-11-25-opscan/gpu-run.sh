#!/bin/bash
# opscan helper's one device run: build, tests, bench, A/B (fixed block), sanitizers.
# The A/B step (XPAR_EXP_FIXED: a trial __builtin_assume of the tuned block in the operator
# scan kernel, never committed) did not run: the build took 140 s, past its 150 s guard.
cd "$(dirname "$0")"
ln -sfn ../../.deps .deps
T0=$SECONDS
t() { echo "[t=$((SECONDS-T0))s] $*" | tee -a $OUT/summary.log; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.memory --format=csv; nvcc --version; } > $OUT/versions.log 2>&1
cmake -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMOCKA_ROOT=$PWD/.deps/cmocka -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > $OUT/build.log 2>&1 || { t configure failed; tail -30 $OUT/build.log; exit 1; }
cmake --build build-gpu -j16 --target test_operator test_kernel test_kernel_api test_kernel_gpu xpar-operator-bench >> $OUT/build.log 2>&1 || { t build failed; grep -B2 -A10 -i "error" $OUT/build.log | head -60; exit 1; }
t build ok
(cd build-gpu && ctest -R 'kernel|operator' -j8 --output-on-failure) > $OUT/ctest.log 2>&1; t ctest rc=$?; grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.log | head -12 | tee -a $OUT/summary.log
BENCH=$(find build-gpu -type f -name xpar-operator-bench | head -1)
$BENCH 24 30 > $OUT/operator-bench.log 2>&1; t bench rc=$?
cat $OUT/operator-bench.log
if [ $((SECONDS-T0)) -lt 150 ]; then
  # A/B: the same bench with the tuned operator scan told its block (no spills).
  OBJ_CMD=$(python3 - <<'PY'
import json
for e in json.load(open('build-gpu/compile_commands.json')):
    if 'xpar-operator-bench' in e['file'] and e['file'].endswith('.xk.c.cu'):
        print('cd %s && %s' % (e['directory'], e['command'].replace('nvcc ', 'nvcc -DXPAR_EXP_FIXED ', 1))); break
PY
)
  bash -c "$OBJ_CMD" > $OUT/exp-build.log 2>&1 && cmake --build build-gpu --target xpar-operator-bench >> $OUT/exp-build.log 2>&1 && { $BENCH 24 27 > $OUT/exp-fixed-bench.log 2>&1; t exp bench rc=$?; cat $OUT/exp-fixed-bench.log; } || t exp build failed
fi
TO=$(find build-gpu -type f -name test_operator | head -1)
for tool in memcheck racecheck; do
  XPAR_TEST_MAX_N=65537 timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $TO '*/cuda' > $OUT/$tool.log 2>&1; t $tool rc=$?
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $OUT/$tool.log | tee -a $OUT/summary.log
done
t done
