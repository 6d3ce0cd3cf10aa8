#!/usr/bin/env bash
# session 17, call 8: A/B of xpar__cuda_begin's context check on one machine: the library
# with cudaSetDevice every call (HEAD's cuda_state.cu) and with the check (the tree),
# the device-data probe (.exp/devd2h2.c) against each, alternated twice
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
rm -rf /tmp/old && mkdir /tmp/old && tar --exclude="./build*" --exclude=./.git --exclude=./.exp -cf - . | tar -xf - -C /tmp/old
cp .exp/old_cuda_state.cu /tmp/old/backend_cuda/cuda_state.cu && cp .exp/old_cuda_state.cuh /tmp/old/backend_cuda/cuda_state.cuh
cmake -S /tmp/old -B /tmp/old/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_BUILD_TESTS=OFF > $R/old-cmake.txt 2>&1
cmake --build /tmp/old/b -j16 --target xpar > $R/old-build.txt 2>&1; echo "old build rc $? at +$((SECONDS-start)) s"
[ -f build-gpu/libxpar.so ] || cmake --build build-gpu -j16 --target xpar > /dev/null 2>&1
gcc -O2 -I api/include -I /usr/local/cuda/include -o /tmp/devd2h2 .exp/devd2h2.c -L build-gpu -lxpar -L /usr/local/cuda/lib64 -lcudart -lcuda || exit 1
for i in 1 2; do
  echo "=== old (cudaSetDevice every call), round $i"; LD_LIBRARY_PATH=/tmp/old/b /tmp/devd2h2
  echo "=== new (context check), round $i"; LD_LIBRARY_PATH=build-gpu /tmp/devd2h2
done 2>&1 | tee $R/ab.txt | grep -E "===|xpar serial \(device\)|xpar auto|async D2H|^reduce"
echo "done at +$((SECONDS-start)) s"
