#!/usr/bin/env bash
# session 22, call 6: application kernels' grid from DRAM. before = main 7f80f59 (one wave of resident
# blocks at every size); after = s22-kgrid (one wave only where the arrays fit 0.75 x L2, else one block per
# 256 indices). launch_done_cost.cu (2^10..2^26) against each, alternated twice.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OPTS="-DCMAKE_BUILD_TYPE=Release -DXPAR_MPI=OFF -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_BENCH=OFF -DXPAR_BUILD_EXAMPLES=OFF"
for t in before after; do
  rm -rf /tmp/t_$t && mkdir -p /tmp/t_$t && tar -xf .exp/t_$t.tar -C /tmp/t_$t
  (cmake -S /tmp/t_$t -B /tmp/b_$t $OPTS > /tmp/b_$t.cfg 2>&1 && cmake --build /tmp/b_$t -j8 --target xpar > /tmp/b_$t.log 2>&1; echo "$t build rc $?") &
done
wait
echo "built at +$((SECONDS-start)) s"
E=bench/cub/experiments/launch_done_cost.cu
for t in before after; do
  nvcc -O3 -arch=sm_90 -std=c++17 -DXPAR_KERNEL_FNS_HAVE_HANDLE -I /tmp/t_$t/api/include -o /tmp/ldc_$t $E -L /tmp/b_$t -lxpar -Xlinker -rpath=/tmp/b_$t || tail -20 /tmp/b_$t.log
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 1 2; do
  for t in before after; do
    timeout 120 /tmp/ldc_$t 15 > $R/$t$i.txt 2>&1; echo "$t $i rc $? at +$((SECONDS-start)) s"; cat $R/$t$i.txt
  done
done
echo "done at +$((SECONDS-start)) s"
