#!/usr/bin/env bash
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
[ -d /tmp/bcpc/CMakeFiles/xpar.dir ] || { echo "no warm build"; exit 1; }
objs=$(find /tmp/bcpc/CMakeFiles/xpar.dir -name '*.o')
nvcc -O3 -arch=sm_90 -std=c++17 -I api/include -I dispatch -I . -DXPAR_STATIC_DEFINE=1 -o /tmp/cpc2 \
  bench/cub/experiments/call_path_cost.cu $objs -Xcompiler -fopenmp -ldl > $R/cpc2.txt 2>&1 || { tail -20 $R/cpc2.txt; exit 1; }
timeout 40 /tmp/cpc2 2000 > $R/cpc2-result.txt 2>&1; echo "cpc exit $?" >> $R/cpc2-result.txt
cat $R/cpc2-result.txt
