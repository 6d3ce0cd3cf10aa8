#!/usr/bin/env bash
# session 22, call 1: the branch s21-handle-in-tu (+ the memory-pool refusal moved into GraphScratch::take):
# launch_done_cost before (main f78fd74: the handle in xpar's table) / after (the branch: the handle in the
# kernel's TU), alternated twice; the synchronous elementwise shape experiment; then the GPU check.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
rm -rf /tmp/before && mkdir -p /tmp/before && tar -xf .exp/before.tar -C /tmp/before
OPTS="-DCMAKE_BUILD_TYPE=Release -DXPAR_MPI=OFF -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_BENCH=OFF -DXPAR_BUILD_EXAMPLES=OFF"
(cmake -S /tmp/before -B /tmp/bb $OPTS > /tmp/bb.cfg 2>&1 && cmake --build /tmp/bb -j8 --target xpar > /tmp/bb.log 2>&1; echo "before build rc $?") &
(cmake -S . -B /tmp/ba $OPTS > /tmp/ba.cfg 2>&1 && cmake --build /tmp/ba -j8 --target xpar > /tmp/ba.log 2>&1; echo "after build rc $?") &
wait
echo "built at +$((SECONDS-start)) s"
E=bench/cub/experiments/launch_done_cost.cu
nvcc -O3 -arch=sm_90 -std=c++17 -DXPAR_KERNEL_FNS_HAVE_HANDLE -I /tmp/before/api/include -o /tmp/ldc_b $E -L /tmp/bb -lxpar -Xlinker -rpath=/tmp/bb || tail -20 /tmp/bb.log
nvcc -O3 -arch=sm_90 -std=c++17 -DXPAR_KERNEL_FNS_HAVE_HANDLE -I api/include -o /tmp/ldc_a $E -L /tmp/ba -lxpar -Xlinker -rpath=/tmp/ba || tail -20 /tmp/ba.log
nvcc -O3 -arch=sm_90 -std=c++17 -Xptxas -v -I api/include -o /tmp/ess bench/cub/experiments/elementwise_sync_shape.cu -L /tmp/ba -lxpar -Xlinker -rpath=/tmp/ba > $R/ess-ptxas.txt 2>&1 || tail -20 $R/ess-ptxas.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 1 2; do
  /tmp/ldc_b > $R/before$i.txt 2>&1; echo "before $i rc $? at +$((SECONDS-start)) s"; cat $R/before$i.txt
  /tmp/ldc_a > $R/after$i.txt 2>&1; echo "after $i rc $? at +$((SECONDS-start)) s"; cat $R/after$i.txt
done
timeout 100 /tmp/ess > $R/ess.txt 2>&1; echo "ess rc $? at +$((SECONDS-start)) s"; cat $R/ess.txt
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=$((585 - (SECONDS-start))) bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -E "FAIL|Failed" $R/gc/ctest.log 2>/dev/null | head -20
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
