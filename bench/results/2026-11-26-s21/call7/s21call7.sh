#!/usr/bin/env bash
# session 21, call 7: a synchronous xpar_launch of an application kernel on device data before
# (2df525f: the occupancy query remembered, the runtime's launch) and after (the branch's head:
# the driver's cuLaunchKernel with the kernel's handle), against xpar_axpy, the application's own
# launch + cudaStreamSynchronize and the occupancy query alone
# (bench/cub/experiments/launch_done_cost.cu), alternating before / after, twice; then the GPU
# check of the branch.
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
nvcc -O3 -arch=sm_90 -std=c++17 -I /tmp/before/api/include -o /tmp/ldc_b $E -L /tmp/bb -lxpar -Xlinker -rpath=/tmp/bb || tail -20 /tmp/bb.log
nvcc -O3 -arch=sm_90 -std=c++17 -DXPAR_KERNEL_FNS_HAVE_HANDLE -I api/include -o /tmp/ldc_a $E -L /tmp/ba -lxpar -Xlinker -rpath=/tmp/ba || tail -20 /tmp/ba.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 1 2; do
  /tmp/ldc_b > $R/before$i.txt 2>&1; echo "before $i rc $? at +$((SECONDS-start)) s"; cat $R/before$i.txt
  /tmp/ldc_a > $R/after$i.txt 2>&1; echo "after $i rc $? at +$((SECONDS-start)) s"; cat $R/after$i.txt
done
echo "bench done at +$((SECONDS-start)) s"
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=480 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -E "FAIL|Failed" $R/gc/ctest.log 2>/dev/null | head -20
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
