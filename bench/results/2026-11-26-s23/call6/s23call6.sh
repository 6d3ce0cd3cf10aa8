#!/usr/bin/env bash
# session 23, call 6: the one-block scan's tile at small n (xpar-gpu-bench --small-scan-sweep), twice.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B /tmp/bb -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_MPI=OFF -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF > $R/cfg.log 2>&1 && cmake --build /tmp/bb -j16 --target xpar-gpu-bench > $R/build.log 2>&1; echo "build rc $? at +$((SECONDS-start)) s"
for i in 1 2; do
  timeout 150 /tmp/bb/bench/cub/xpar-gpu-bench --small-scan-sweep > $R/sweep-$i.txt 2>&1; echo "sweep $i rc $? at +$((SECONDS-start)) s"
  cat $R/sweep-$i.txt
done
echo "done at +$((SECONDS-start)) s"
