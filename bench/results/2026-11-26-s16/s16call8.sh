#!/usr/bin/env bash
# session 16, call 8: a GPU-tier call on a pinned input that stream-0 work writes (.exp/pinrace.cu)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
G=; command -v ninja >/dev/null && G="-G Ninja"
cmake -S . -B /tmp/bl $G -DCMAKE_BUILD_TYPE=Release -DXPAR_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_BUILD_TESTS=OFF \
  -DXPAR_BUILD_EXAMPLES=OFF -DXPAR_BUILD_BENCH=OFF -DXPAR_MPI=OFF > $R/build.txt 2>&1 && cmake --build /tmp/bl -j16 --target xpar >> $R/build.txt 2>&1 || { tail -20 $R/build.txt; exit 1; }
nvcc -O2 -arch=sm_90 -I api/include -o /tmp/pinrace .exp/pinrace.cu -L /tmp/bl -lxpar || exit 1
LD_LIBRARY_PATH=/tmp/bl /tmp/pinrace 2>&1 | tee $R/pinrace.txt
