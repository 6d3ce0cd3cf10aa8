#!/usr/bin/env bash
# session 26, call 8: the forced OpenMP context's long medians of call 5 (add float / axpy
# double on pageable data at 2^21-2^23): the same points with every alternative, then without
# the GPU alternatives (cuda, cub) in the rounds, then every alternative again.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF > $R/build.txt 2>&1 && cmake --build build-gpu -j16 --target xpar-bench >> $R/build.txt 2>&1; echo "build rc $? at +$((SECONDS-start)) s"
B=build-gpu/bench/xpar-bench
common="--ops add,axpy --dtypes float,double --residencies pageable --min-exp 21 --max-exp 23 --no-plot"
timeout 150 $B regret $common --out-dir $R/all1 > $R/all1.txt 2>&1; echo "all1 rc $? at +$((SECONDS-start)) s"
timeout 150 $B regret $common --alts auto,serial,one-thread,openmp,plain-serial,plain-omp --out-dir $R/cpu > $R/cpu.txt 2>&1; echo "cpu rc $? at +$((SECONDS-start)) s"
timeout 150 $B regret $common --out-dir $R/all2 > $R/all2.txt 2>&1; echo "all2 rc $? at +$((SECONDS-start)) s"
for f in all1 cpu all2; do echo "== $f"; grep -E "^# (add|axpy)|^2\^2[123] |^# overall" $R/$f.txt | cut -c1-175; done
echo "done at +$((SECONDS-start)) s"
