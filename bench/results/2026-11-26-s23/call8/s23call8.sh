#!/usr/bin/env bash
# session 23, call 8: branch s23-small-scan-2 (the small tile up to 1,024 threads, the generic
# one-block tile up to max_block) against main (1d3796e's shapes), one machine: both built,
# xpar-gpu-bench --small-scan-sweep alternated main, branch, main, branch.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rm -rf /tmp/mainsrc && mkdir -p /tmp/mainsrc && cp -a . /tmp/mainsrc/ 2>/dev/null
rm -rf /tmp/mainsrc/build* && cp .exp/main_src/scan_kernel.cuh .exp/main_src/launch_shape.cuh /tmp/mainsrc/backend_cuda/
cfg="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_MPI=OFF -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF"
(cmake -S . -B build-ab $cfg > $R/cfg-branch.log 2>&1 && cmake --build build-ab -j8 --target xpar-gpu-bench > $R/build-branch.log 2>&1; echo "branch build rc $? at +$((SECONDS-start)) s") &
(cmake -S /tmp/mainsrc -B /tmp/mainsrc/build-ab $cfg > $R/cfg-main.log 2>&1 && cmake --build /tmp/mainsrc/build-ab -j8 --target xpar-gpu-bench > $R/build-main.log 2>&1; echo "main build rc $? at +$((SECONDS-start)) s") &
wait
for i in 1 2; do
  for t in main branch; do
    if [ $t = main ]; then B=/tmp/mainsrc/build-ab/bench/cub/xpar-gpu-bench; else B=build-ab/bench/cub/xpar-gpu-bench; fi
    timeout 30 $B --small-scan-sweep > $R/sweep-$t-$i.txt 2>&1; echo "$t run $i rc $? at +$((SECONDS-start)) s"
    grep -E "^SMALLSWEEP" $R/sweep-$t-$i.txt
  done
done
echo "done at +$((SECONDS-start)) s"
