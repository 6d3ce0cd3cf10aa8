#!/usr/bin/env bash
# session 24, call 1: the GPU check of 25ae2be (operators' one-block scans as the built-in's,
# the no-pool capture test, scan_launch's handle test), and the operators' small scans
# against main's header (7468f59) built on the same machine: xpar-operator-bench --us 5 14,
# alternated new, main, new, main.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rm -rf /tmp/mainsrc && mkdir -p /tmp/mainsrc && cp -a . /tmp/mainsrc/ 2>/dev/null
rm -rf /tmp/mainsrc/build* && cp .exp/main_src/xpar_operator.cuh /tmp/mainsrc/api/include/xpar/
cfg="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_MPI=OFF -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF"
(cmake -S /tmp/mainsrc -B /tmp/mainsrc/build-ab $cfg > $R/cfg-main.log 2>&1 && nice -n 19 cmake --build /tmp/mainsrc/build-ab -j4 --target xpar-operator-bench > $R/build-main.log 2>&1; echo "main build rc $? at +$((SECONDS-start)) s") &
OUT=$R/gc GPU_CHECK_DEADLINE=520 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
grep -A12 "gpu-check summary" $R/gpu-check.txt | cut -c1-160
grep -E "^TABLE|^SMALLN (scan|reduce)" $R/gpu-check.txt | cut -c1-200
grep -E "FAIL|Failed|capture_no_pools|test_operator" $R/gc/ctest.log 2>/dev/null | head -20
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
wait
for i in 1 2; do
  for t in new main; do
    [ $((SECONDS-start)) -gt 585 ] && break
    if [ $t = main ]; then B=/tmp/mainsrc/build-ab/bench/operators/xpar-operator-bench; else B=build-gpu/bench/operators/xpar-operator-bench; fi
    timeout 20 $B --us 5 14 > $R/opus-$t-$i.txt 2>&1; echo "$t run $i rc $? at +$((SECONDS-start)) s"
    cat $R/opus-$t-$i.txt
  done
done
echo "done at +$((SECONDS-start)) s"
