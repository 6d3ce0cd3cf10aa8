#!/usr/bin/env bash
# session 23, call 5: where a one-block scan's extra device time goes -- ncu on queued scans of
# 64 / 1024 and the one-block reduce of 1024 (bench/cub/experiments/small_scan_profile.cu).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B /tmp/bl -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_MPI=OFF -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_BENCH=OFF -DXPAR_BUILD_EXAMPLES=OFF > $R/cfg.log 2>&1 && cmake --build /tmp/bl -j16 --target xpar > $R/build.log 2>&1; echo "build rc $? at +$((SECONDS-start)) s"
nvcc -O3 -arch=sm_90 -std=c++17 -I api/include -o /tmp/ssp bench/cub/experiments/small_scan_profile.cu -L /tmp/bl -lxpar -Xlinker -rpath=/tmp/bl; echo "ssp build rc $?"
/tmp/ssp | tee $R/events.txt
/tmp/ssp | tee -a $R/events.txt
M=gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__cycles_active.max,smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,launch__shared_mem_per_block_static,launch__shared_mem_config_size,l1tex__t_bytes.sum,lts__t_bytes.sum,dram__bytes.sum
timeout 120 ncu --clock-control none --cache-control none --metrics $M /tmp/ssp 10 > $R/ncu-metrics.txt 2>&1; echo "ncu metrics rc $? at +$((SECONDS-start)) s"
grep -E "^  [a-z_]+.*\(|gpu__time_duration|smsp__inst_executed|sm__cycles_elapsed|launch__grid|launch__block|launch__reg|shared_mem_config" $R/ncu-metrics.txt | tail -60
timeout 150 ncu --clock-control none --cache-control none --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section SourceCounters -c 8 /tmp/ssp 2 > $R/ncu-sections.txt 2>&1; echo "ncu sections rc $? at +$((SECONDS-start)) s"
echo "done at +$((SECONDS-start)) s"
