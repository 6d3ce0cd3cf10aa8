#!/usr/bin/env bash
# session 22, call 2: the one-wave elementwise grid through the library. before = main (3ac4239: one block
# per tile at every size, occupancy asked per call); wide = this tree with the one-wave bound raised from
# 1.5 to 8 x L2 (so every size up to 400 MB runs one wave: the 1.5 bound's choice is read off the table);
# bench/cub/experiments/elementwise_wave_ab.cu against each, alternated twice; then
# elementwise_sync_shape.cu again with its check fixed (call 1's WRONG rows: a pageable copy racing the
# non-blocking stream).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
rm -rf /tmp/before /tmp/wide && mkdir -p /tmp/before /tmp/wide && tar -xf .exp/before.tar -C /tmp/before
tar --exclude=./.exp --exclude=./.deps --exclude="./build*" --exclude=./.git -cf - . | tar -x -C /tmp/wide
sed -i 's/constexpr double elementwise_one_wave_max_l2 = 1.5;/constexpr double elementwise_one_wave_max_l2 = 8;/' /tmp/wide/backend_cuda/launch_shape.cuh
grep -n "elementwise_one_wave_max_l2 =" /tmp/wide/backend_cuda/launch_shape.cuh
OPTS="-DCMAKE_BUILD_TYPE=Release -DXPAR_MPI=OFF -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_BENCH=OFF -DXPAR_BUILD_EXAMPLES=OFF"
(cmake -S /tmp/before -B /tmp/bb $OPTS > /tmp/bb.cfg 2>&1 && cmake --build /tmp/bb -j8 --target xpar > /tmp/bb.log 2>&1; echo "before build rc $?") &
(cmake -S /tmp/wide -B /tmp/bw $OPTS > /tmp/bw.cfg 2>&1 && cmake --build /tmp/bw -j8 --target xpar > /tmp/bw.log 2>&1; echo "wide build rc $?") &
E=bench/cub/experiments/elementwise_wave_ab.cu
wait
echo "built at +$((SECONDS-start)) s"
nvcc -O3 -arch=sm_90 -std=c++17 -I /tmp/before/api/include -o /tmp/ewab_b $E -L /tmp/bb -lxpar -Xlinker -rpath=/tmp/bb || tail -20 /tmp/bb.log
nvcc -O3 -arch=sm_90 -std=c++17 -I /tmp/wide/api/include -o /tmp/ewab_w $E -L /tmp/bw -lxpar -Xlinker -rpath=/tmp/bw || tail -20 /tmp/bw.log
nvcc -O3 -arch=sm_90 -std=c++17 -I api/include -o /tmp/ess bench/cub/experiments/elementwise_sync_shape.cu -L /tmp/bw -lxpar -Xlinker -rpath=/tmp/bw
echo "compiled at +$((SECONDS-start)) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 1 2; do
  timeout 100 /tmp/ewab_b > $R/before$i.txt 2>&1; echo "before $i rc $? at +$((SECONDS-start)) s"; cat $R/before$i.txt
  timeout 100 /tmp/ewab_w > $R/wide$i.txt 2>&1; echo "wide $i rc $? at +$((SECONDS-start)) s"; cat $R/wide$i.txt
done
timeout 120 /tmp/ess > $R/ess.txt 2>&1; echo "ess rc $? at +$((SECONDS-start)) s"; grep -E "WRONG|##|elementwise_sync" $R/ess.txt | head -40
echo "done at +$((SECONDS-start)) s"
