#!/usr/bin/env bash
# session 24, call 5: the operators' small reduces (one row per thread in one block) against
# main 5866153 built on the same machine (xpar-operator-bench --us 5 14, alternated new, main,
# new, main), test_operator on every tier, and compute-sanitizer over test_operator's cuda
# cases (the operators' kernels are not in --check).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rm -rf /tmp/mainsrc && mkdir -p /tmp/mainsrc && tar xzf .exp/main.tar.gz -C /tmp/mainsrc
cfg="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_MPI=OFF -DXPAR_BUILD_EXAMPLES=OFF"
(cmake -S /tmp/mainsrc -B /tmp/mainsrc/build-ab $cfg -DXPAR_BUILD_TESTS=OFF > $R/cfg-main.log 2>&1 && cmake --build /tmp/mainsrc/build-ab -j6 --target xpar-operator-bench > $R/build-main.log 2>&1; echo "main build rc $? at +$((SECONDS-start)) s") &
(cmake -S . -B build-ab $cfg -DXPAR_BUILD_TESTS=ON -DCMOCKA_ROOT=$PWD/.deps/cmocka > $R/cfg-new.log 2>&1 && cmake --build build-ab -j10 --target xpar-operator-bench test_operator > $R/build-new.log 2>&1; echo "new build rc $? at +$((SECONDS-start)) s"; tail -2 $R/build-new.log) &
wait
T=build-ab/tests/test_operator
timeout 120 $T > $R/test_operator.txt 2>&1; echo "test_operator rc $? at +$((SECONDS-start)) s"; grep -E "PASSED|FAILED|SKIPPED|\[  FAILED" $R/test_operator.txt | head -12
for i in 1 2; do
  for t in new main; do
    if [ $t = main ]; then B=/tmp/mainsrc/build-ab/bench/operators/xpar-operator-bench; else B=build-ab/bench/operators/xpar-operator-bench; fi
    timeout 20 $B --us 5 14 > $R/opus-$t-$i.txt 2>&1; echo "$t run $i rc $? at +$((SECONDS-start)) s"
    cat $R/opus-$t-$i.txt
  done
done
for spec in "memcheck */cuda" "racecheck sum_u32/cuda" "racecheck argmin/cuda" "racecheck recurrence/cuda" "synccheck */cuda"; do
  set -- $spec
  [ $((SECONDS-start)) -gt 540 ] && { echo "sanitizer $1 $2: no time left"; continue; }
  timeout 90 compute-sanitizer --tool $1 --error-exitcode 9 $T "$2" > $R/san-$1.txt 2>&1; rc=$?
  echo "sanitizer $1 '$2' rc $rc at +$((SECONDS-start)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$1.txt | tr '\n' ' ')"
done
echo "done at +$((SECONDS-start)) s"
