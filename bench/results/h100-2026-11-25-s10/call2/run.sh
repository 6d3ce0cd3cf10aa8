#!/usr/bin/env bash
# session 10, call 2: five calibrations on one H100 machine after the elementwise split change.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
cmake -S . -B /tmp/bc -DCMAKE_BUILD_TYPE=Release -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF -DXPAR_MPI=OFF > $R/build.log 2>&1
cmake --build /tmp/bc -j16 --target xpar-bench >> $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
echo "built at +$((SECONDS-start)) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 1 2 3 4 5; do
  timeout 110 /tmp/bc/bench/xpar-bench calibrate --dtypes int32,float,double --out /tmp/prof$i.txt > $R/calibrate$i.txt 2>&1
  echo "calibrate $i exit $? at +$((SECONDS-start)) s"
done
grep -h "openmp " $R/calibrate*.txt | grep -E "^(axpy|add|fill)" | sort | awk '{print $1,$2,$3,$4}' | uniq -c
