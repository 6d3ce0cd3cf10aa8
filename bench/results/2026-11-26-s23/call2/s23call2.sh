#!/usr/bin/env bash
# session 23, call 2: issue 11's table on this card (scripts/gpu-check, bench only), then the one
# wave's size: 528 blocks (main: 4 per SM) against 264 (2 per SM) through the launch-shape
# override, in rotation twice, sizes up to 2^23.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$R/gc GPU_CHECK_SKIP="tests check sanitizers" GPU_CHECK_DEADLINE=420 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
grep -A40 "gpu-check summary" $R/gpu-check.txt | cut -c1-200
if [ -f build-gpu/libxpar.so ]; then
  nvcc -O3 -arch=sm_90 -std=c++17 -I api/include -o /tmp/ewab bench/cub/experiments/elementwise_wave_ab.cu -L build-gpu -lxpar -Xlinker -rpath=$PWD/build-gpu; echo "ewab build rc $? at +$((SECONDS-start)) s"
  for i in 1 2; do
    for g in 0 264; do
      [ $((SECONDS-start)) -gt 540 ] && break 2
      timeout 50 /tmp/ewab $g 23 > $R/grid$g-$i.txt 2>&1; echo "grid $g run $i rc $? at +$((SECONDS-start)) s"
    done
  done
fi
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
echo "done at +$((SECONDS-start)) s"
