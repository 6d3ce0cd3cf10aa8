#!/usr/bin/env bash
# session 11, call 2: build (gpu-check's build step), then A/B of the elementwise driver launch
# (call_path_cost.cu against the old tree's objects and the new), and host_call_cost.cu.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
( cmake -S .exp/oldtree -B /tmp/bold -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_BUILD_TESTS=OFF \
  -DXPAR_BUILD_BENCH=OFF -DXPAR_BUILD_EXAMPLES=OFF -DXPAR_MPI=OFF > $R/old-build.txt 2>&1 && cmake --build /tmp/bold -j6 --target xpar >> $R/old-build.txt 2>&1; echo "old build rc $?" >> $R/old-build.txt ) &
GPU_CHECK_SKIP="tests check sanitizers bench" bash scripts/gpu-check > $R/gpu-check-build.txt 2>&1; echo "gpu-check build rc $?"
wait
tail -1 $R/old-build.txt
echo "builds done at +$((SECONDS-start)) s"
for t in old new; do
  if [ $t = old ]; then objs=$(find /tmp/bold/CMakeFiles/xpar.dir -name '*.o'); else objs=$(find build-gpu/CMakeFiles/xpar.dir -name '*.o'); fi
  nvcc -O3 -arch=sm_90 -std=c++17 -I api/include -I dispatch -I . -DXPAR_STATIC_DEFINE=1 -o /tmp/cpc-$t \
    bench/cub/experiments/call_path_cost.cu $objs -Xcompiler -fopenmp -ldl >> $R/probe-build.txt 2>&1 || { tail -30 $R/probe-build.txt; exit 1; }
done
objs=$(find build-gpu/CMakeFiles/xpar.dir -name '*.o')
nvcc -O3 -arch=sm_90 -std=c++17 -I api/include -I dispatch -I . -DXPAR_STATIC_DEFINE=1 -o /tmp/hcc \
  bench/cub/experiments/host_call_cost.cu $objs -Xcompiler -fopenmp -ldl -L/usr/local/cuda/lib64/stubs -lcuda >> $R/probe-build.txt 2>&1 || { tail -30 $R/probe-build.txt; exit 1; }
echo "probes built at +$((SECONDS-start)) s"
for i in 1 2; do for t in old new; do
  echo "=== call_path_cost, $t tree, run $i ===" | tee -a $R/cpc-ab.txt
  timeout 60 /tmp/cpc-$t 2000 >> $R/cpc-ab.txt 2>&1; echo "exit $?" >> $R/cpc-ab.txt
done; done
grep -E "===|kernel \+ sync|backend \(|public API|fill int32" $R/cpc-ab.txt
timeout 60 /tmp/hcc 41 > $R/hcc-result.txt 2>&1; echo "hcc exit $?" >> $R/hcc-result.txt; cat $R/hcc-result.txt
echo "done at +$((SECONDS-start)) s"
