#!/usr/bin/env bash
# session 26, call 3: issue 11's table, main (A) against branch s26-bulk-evict (B: the bulk
# reduce's copies with an L2 evict-first policy, from 1 GiB), built side by side, A B A B
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
P=$PWD
rm -rf /tmp/B && mkdir /tmp/B && tar --exclude=./.git --exclude="./build*" -cf - . | tar -xf - -C /tmp/B && (cd /tmp/B && git apply "$P/.exp/s26-bulk-evict.patch") > $R/patch.txt 2>&1 || { echo "patch failed"; cat $R/patch.txt; exit 1; }
grep -n "reduce_bulk_min_bytes =" /tmp/B/backend_cuda/launch_shape.cuh; grep -c evict_first /tmp/B/backend_cuda/reduce_kernel.cuh
conf="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF"
(cmake -S . -B /tmp/bA $conf && cmake --build /tmp/bA -j8 --target xpar-gpu-bench) > $R/build-A.txt 2>&1 &
(cmake -S /tmp/B -B /tmp/bB $conf && cmake --build /tmp/bB -j8 --target xpar-gpu-bench) > $R/build-B.txt 2>&1 &
wait; echo "builds done at +$((SECONDS-start)) s"; ls -la /tmp/bA/bench/cub/xpar-gpu-bench /tmp/bB/bench/cub/xpar-gpu-bench || { tail -20 $R/build-A.txt $R/build-B.txt; exit 1; }
for i in 1 2; do
  for t in A B; do
    timeout 120 /tmp/b$t/bench/cub/xpar-gpu-bench --bench > $R/bench-$t$i.txt 2>&1; echo "bench $t$i rc $? at +$((SECONDS-start)) s"
  done
done
/tmp/bB/bench/cub/xpar-gpu-bench --check --quick > $R/check-B.txt 2>&1; echo "check B rc $?: $(tail -1 $R/check-B.txt)"
for f in $R/bench-*.txt; do echo "== $f"; grep -E "^SUMMARY reduce|^TABLE reduce|d2d" $f | cut -c1-200; done
echo "done at +$((SECONDS-start)) s"
