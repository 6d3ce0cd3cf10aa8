#!/usr/bin/env bash
# session 26, call 2: xpar-bench overhead with the add / axpy rows (the host-scalar check's
# cost), and read_ceiling.cu with the L2 evict-first bulk copies and 2^31
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/rc bench/cub/experiments/read_ceiling.cu > $R/rc-build.txt 2>&1 &
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_BUILD_TESTS=OFF > $R/build.txt 2>&1 && cmake --build build-gpu -j16 --target xpar-bench >> $R/build.txt 2>&1; echo "build rc $? at +$((SECONDS-start)) s"
wait; echo "rc build done at +$((SECONDS-start)) s"
for i in 1 2; do
  timeout 120 build-gpu/bench/xpar-bench overhead > $R/overhead-$i.txt 2>&1; echo "overhead $i rc $? at +$((SECONDS-start)) s"
done
timeout 240 /tmp/rc 15 31 > $R/read-ceiling.txt 2>&1; echo "read_ceiling rc $? at +$((SECONDS-start)) s"
cat $R/overhead-1.txt $R/overhead-2.txt | cut -c1-160
cat $R/read-ceiling.txt
echo "done at +$((SECONDS-start)) s"
