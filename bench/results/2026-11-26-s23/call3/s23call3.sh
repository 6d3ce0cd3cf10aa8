#!/usr/bin/env bash
# session 23, call 3: the one-block scan kernel (branch s23-scan-one-block) against main, on one
# machine: both trees built (the bench target), then xpar-gpu-bench --bench alternated
# A B A B; the SMALLN lines (device time of scans of 64 / 1024 / 4096, synchronous scan of 1024)
# and the scan rows compared.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rm -rf /tmp/mainsrc && mkdir -p /tmp/mainsrc && cp -a . /tmp/mainsrc/ 2>/dev/null
rm -rf /tmp/mainsrc/build* && cp .exp/main_src/scan_kernel.cuh /tmp/mainsrc/backend_cuda/ && cp .exp/main_src/device_scan.cu /tmp/mainsrc/backend_cuda/
cfg="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_MPI=OFF -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF"
(cmake -S . -B build-ab $cfg > $R/cfg-branch.log 2>&1 && cmake --build build-ab -j8 --target xpar-gpu-bench > $R/build-branch.log 2>&1; echo "branch build rc $? at +$((SECONDS-start)) s") &
(cmake -S /tmp/mainsrc -B /tmp/mainsrc/build-ab $cfg > $R/cfg-main.log 2>&1 && cmake --build /tmp/mainsrc/build-ab -j8 --target xpar-gpu-bench > $R/build-main.log 2>&1; echo "main build rc $? at +$((SECONDS-start)) s") &
wait
for i in 1 2; do
  for t in main branch; do
    [ $((SECONDS-start)) -gt 520 ] && break 2
    if [ $t = main ]; then B=/tmp/mainsrc/build-ab/bench/cub/xpar-gpu-bench; else B=build-ab/bench/cub/xpar-gpu-bench; fi
    timeout 60 $B --bench > $R/bench-$t-$i.log 2>&1; echo "$t run $i rc $? at +$((SECONDS-start)) s"
    grep -E "^SMALLN (components|scan)" $R/bench-$t-$i.log | cut -c1-400
    grep -E "^SUMMARY scan-incl-sum +int32" $R/bench-$t-$i.log | head -2
  done
done
echo "done at +$((SECONDS-start)) s"
