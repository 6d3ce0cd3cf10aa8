#!/usr/bin/env bash
# session 10, call 6: which layer of a synchronous CUDA xpar call holds its time over a bare kernel (call_path_cost.cu).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
cmake -S . -B /tmp/bcpc -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_BUILD_TESTS=OFF \
  -DXPAR_BUILD_BENCH=OFF -DXPAR_BUILD_EXAMPLES=OFF -DXPAR_MPI=OFF > $R/cpc.txt 2>&1
cmake --build /tmp/bcpc -j16 --target xpar >> $R/cpc.txt 2>&1 || { tail -30 $R/cpc.txt; exit 1; }
objs=$(find /tmp/bcpc/CMakeFiles/xpar.dir -name '*.o')
nvcc -O3 -arch=sm_90 -std=c++17 -I api/include -I dispatch -I . -DXPAR_STATIC_DEFINE=1 -o /tmp/cpc \
  bench/cub/experiments/call_path_cost.cu $objs -Xcompiler -fopenmp -ldl >> $R/cpc.txt 2>&1 || { tail -30 $R/cpc.txt; exit 1; }
echo "built at +$((SECONDS-start)) s" | tee -a $R/cpc.txt
timeout 60 /tmp/cpc 2000 > $R/cpc-result.txt 2>&1; echo "cpc exit $?" >> $R/cpc-result.txt
cat $R/cpc-result.txt
