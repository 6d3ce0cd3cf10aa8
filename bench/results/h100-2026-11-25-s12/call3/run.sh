#!/usr/bin/env bash
# session 12, call 3: scripts/gpu-check (no bench: backend_cuda unchanged) on the tree with the new thresholds
# and the trimmed fast path; meanwhile the previous commit's library (.exp/oldtree = d0cbdae) builds at low
# priority; then host_call_cost.cu against old and new objects, alternately (A/B of the fast-path trim).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
( nice -n 19 cmake -S .exp/oldtree -B /tmp/bold -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_BUILD_TESTS=OFF \
  -DXPAR_BUILD_BENCH=OFF -DXPAR_BUILD_EXAMPLES=OFF -DXPAR_MPI=OFF > $R/old-build.txt 2>&1 && nice -n 19 cmake --build /tmp/bold -j4 --target xpar >> $R/old-build.txt 2>&1; echo "old build rc $?" >> $R/old-build.txt ) &
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=470 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
wait
tail -1 $R/old-build.txt
tail -25 $R/gpu-check.txt
for t in old new; do
  if [ $t = old ]; then objs=$(find /tmp/bold/CMakeFiles/xpar.dir -name '*.o'); else objs=$(find build-gpu/CMakeFiles/xpar.dir -name '*.o'); fi
  nvcc -O3 -arch=sm_90 -std=c++17 -I api/include -I dispatch -I . -DXPAR_STATIC_DEFINE=1 -o /tmp/hcc-$t \
    bench/cub/experiments/host_call_cost.cu $objs -Xcompiler -fopenmp -ldl -L/usr/local/cuda/lib64/stubs -lcuda >> $R/probe-build.txt 2>&1 || { tail -30 $R/probe-build.txt; }
done
echo "probes built at +$((SECONDS-start)) s"
for i in 1 2 3; do for t in old new; do
  [ $((SECONDS-start)) -gt 560 ] && break 2
  echo "=== host_call_cost, $t tree, run $i ===" >> $R/hcc-ab.txt
  timeout 25 /tmp/hcc-$t 21 >> $R/hcc-ab.txt 2>&1; echo "exit $?" >> $R/hcc-ab.txt
done; done
grep -E "===|AUTO|pinned|plain" $R/hcc-ab.txt | head -60
cd $R && tar czf gc.tar.gz gc && rm -rf gc
echo "done at +$((SECONDS-start)) s"
