#!/usr/bin/env bash
# session 22, call 4: three library trees, bench/cub/experiments/elementwise_wave_ab.cu against each, in
# rotation, twice. before = main 141e5f1 (one wave at <= 0.75 x L2, but axpy's footprint counted as three
# arrays); fix = s22-fix (each distinct array once: axpy float 2^22 / double 2^21 now one wave); u2 = s22-u2
# (fix + two vectors per thread: 32 registers, 8 blocks per SM, one wave of 1,056 blocks).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OPTS="-DCMAKE_BUILD_TYPE=Release -DXPAR_MPI=OFF -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_BENCH=OFF -DXPAR_BUILD_EXAMPLES=OFF"
for t in before fix u2; do
  rm -rf /tmp/t_$t && mkdir -p /tmp/t_$t && tar -xf .exp/t_$t.tar -C /tmp/t_$t
  (cmake -S /tmp/t_$t -B /tmp/b_$t $OPTS > /tmp/b_$t.cfg 2>&1 && cmake --build /tmp/b_$t -j5 --target xpar > /tmp/b_$t.log 2>&1; echo "$t build rc $?") &
done
wait
echo "built at +$((SECONDS-start)) s"
E=bench/cub/experiments/elementwise_wave_ab.cu
for t in before fix u2; do
  nvcc -O3 -arch=sm_90 -std=c++17 -I /tmp/t_$t/api/include -o /tmp/ewab_$t $E -L /tmp/b_$t -lxpar -Xlinker -rpath=/tmp/b_$t || tail -20 /tmp/b_$t.log
done
echo "compiled at +$((SECONDS-start)) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 1 2; do
  for t in before fix u2; do
    timeout 100 /tmp/ewab_$t > $R/$t$i.txt 2>&1; echo "$t $i rc $? at +$((SECONDS-start)) s"; tail -1 $R/$t$i.txt
  done
done
echo "done at +$((SECONDS-start)) s"
