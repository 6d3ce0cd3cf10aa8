#!/usr/bin/env bash
# session 24, call 6: the GPU check of main 1663043 (every stage of scripts/gpu-check), then
# compute-sanitizer over test_operator's cuda cases with the test's own pass count shown.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$R/gc GPU_CHECK_DEADLINE=555 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
grep -A12 "gpu-check summary" $R/gpu-check.txt | cut -c1-160
grep -E "^TABLE|^SMALLN (scan|reduce)" $R/gpu-check.txt | cut -c1-200
grep -E "FAIL|Failed|\*\*\*" $R/gc/ctest.log 2>/dev/null | head -30
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
T=build-gpu/tests/test_operator
for spec in "memcheck */cuda" "racecheck */cuda" "synccheck */cuda"; do
  set -- $spec
  [ $((SECONDS-start)) -gt 575 ] && { echo "sanitizer $1: no time left"; continue; }
  timeout $((590 - (SECONDS-start))) compute-sanitizer --tool $1 --error-exitcode 9 $T "$2" > $R/san-$1.txt 2>&1; rc=$?
  echo "sanitizer $1 '$2' rc $rc at +$((SECONDS-start)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $R/san-$1.txt | tr '\n' ' ')"
done
echo "done at +$((SECONDS-start)) s"
