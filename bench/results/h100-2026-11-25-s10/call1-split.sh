#!/usr/bin/env bash
# session 9, call 8: the elementwise OpenMP split (512 vs 4096 elements per part), CPU-only builds, A/B/A/B.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
for v in 512 4096; do
  cmake -S . -B /tmp/b$v -DCMAKE_BUILD_TYPE=Release -DXPAR_CUDA=OFF -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF \
    -DCMAKE_C_FLAGS="-DXPAR__CPU_EW_MIN_PER_PART=$v" > /dev/null && cmake --build /tmp/b$v -j8 --target xpar-bench > /dev/null &
done
wait
for r in 1 2; do for v in 512 4096; do
  echo "=== min $v, round $r" >> $R/split.txt
  timeout 60 /tmp/b$v/bench/xpar-bench regret --ops axpy,add,fill --residencies pageable --min-exp 12 --max-exp 18 \
    --alts auto,serial,openmp,plain-serial,plain-omp --time-limit 35 --no-plot --seed 7 --out-dir /tmp/rg$v$r >> $R/split.txt 2>/dev/null
done; done
grep -E "^===|^# (axpy|add|fill)|^2\^|^# overall" $R/split.txt | cut -c1-120
