#!/usr/bin/env bash
# session 22, call 8: the one wave's size with two vectors per thread (main: 1,056 blocks = 8 per SM) against
# 528 (4 per SM, what four vectors had) and 792 (6 per SM), through xpar_context_set_launch_shape, in rotation
# twice; sizes up to 2^23 (only the rows whose default grid is the one wave count: arrays <= 37.5 MB).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
cmake -S . -B /tmp/bm -DCMAKE_BUILD_TYPE=Release -DXPAR_MPI=OFF -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_BENCH=OFF -DXPAR_BUILD_EXAMPLES=OFF > /tmp/bm.cfg 2>&1 && cmake --build /tmp/bm -j16 --target xpar > /tmp/bm.log 2>&1; echo "build rc $? at +$((SECONDS-start)) s"
nvcc -O3 -arch=sm_90 -std=c++17 -I api/include -o /tmp/ewab bench/cub/experiments/elementwise_wave_ab.cu -L /tmp/bm -lxpar -Xlinker -rpath=/tmp/bm || tail -20 /tmp/bm.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 1 2; do
  for g in 0 528 792; do
    timeout 100 /tmp/ewab $g 23 > $R/grid$g-$i.txt 2>&1; echo "grid $g run $i rc $? at +$((SECONDS-start)) s"; tail -1 $R/grid$g-$i.txt
  done
done
echo "done at +$((SECONDS-start)) s"
