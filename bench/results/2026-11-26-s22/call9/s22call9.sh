#!/usr/bin/env bash
# session 22, call 9: the GPU check of branch s22-wave4 (the one wave at most 4 blocks per SM;
# the rest as in call 3)
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=585 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -E "FAIL|Failed" $R/gc/ctest.log 2>/dev/null | head -20
cd $R && tar czf gc.tar.gz gc 2>/dev/null && rm -rf gc && cd - > /dev/null
if [ $((SECONDS-start)) -lt 530 ] && [ -f build-gpu/libxpar.so ]; then
  nvcc -O3 -arch=sm_90 -std=c++17 -DXPAR_KERNEL_FNS_HAVE_HANDLE -I api/include -o /tmp/ewab bench/cub/experiments/elementwise_wave_ab.cu -L build-gpu -lxpar -Xlinker -rpath=$PWD/build-gpu && timeout 40 /tmp/ewab 0 23 > $R/ewab.txt 2>&1; echo "ewab rc $? at +$((SECONDS-start)) s"; cat $R/ewab.txt
fi
echo "done at +$((SECONDS-start)) s"
