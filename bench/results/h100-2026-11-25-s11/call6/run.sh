#!/usr/bin/env bash
# session 11, call 1: host call cost pieces and pointer-query costs (host_call_cost.cu).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
cmake -S . -B /tmp/bhcc -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_BUILD_TESTS=OFF \
  -DXPAR_BUILD_BENCH=OFF -DXPAR_BUILD_EXAMPLES=OFF -DXPAR_MPI=OFF > $R/hcc.txt 2>&1
cmake --build /tmp/bhcc -j16 --target xpar >> $R/hcc.txt 2>&1 || { tail -30 $R/hcc.txt; exit 1; }
objs=$(find /tmp/bhcc/CMakeFiles/xpar.dir -name '*.o')
nvcc -O3 -arch=sm_90 -std=c++17 -I api/include -I dispatch -I . -DXPAR_STATIC_DEFINE=1 -o /tmp/hcc \
  bench/cub/experiments/host_call_cost.cu $objs -Xcompiler -fopenmp -ldl -L/usr/local/cuda/lib64/stubs -lcuda >> $R/hcc.txt 2>&1 || { tail -30 $R/hcc.txt; exit 1; }
echo "built at +$((SECONDS-start)) s" | tee -a $R/hcc.txt
nproc; lscpu | grep -i "model name\|mhz" | head -3
for i in 1 2; do timeout 60 /tmp/hcc 41 > $R/hcc-result-$i.txt 2>&1; echo "hcc exit $?" >> $R/hcc-result-$i.txt; cat $R/hcc-result-$i.txt; done
