#!/usr/bin/env bash
# session 26, call 6: main 5bb0e4e (the integer scan's OpenMP threshold 2^16): build with the
# tests, the dispatch / policy / scan / embed tests with the GPU, then the regret subset that
# checks the move: scan int32 and float, 2^12..2^18, every residency, built-in thresholds.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_BUILD_TESTS=ON -DCMOCKA_ROOT=$PWD/.deps/cmocka > $R/build.txt 2>&1 && cmake --build build-gpu -j16 >> $R/build.txt 2>&1; echo "build rc $? at +$((SECONDS-start)) s"
(cd build-gpu && timeout 200 ctest -j8 -R "policy|dispatch|scan|embed|bad_input|shadow|profile|kernel_api|operator" > $R/ctest.txt 2>&1); echo "ctest rc $? at +$((SECONDS-start)) s"
grep -E "tests passed|Failed|FAILED|Not Run" $R/ctest.txt | head -20
timeout 240 build-gpu/bench/xpar-bench regret --ops scan --dtypes int32,float --min-exp 12 --max-exp 18 --out-dir $R/regret --no-plot > $R/regret.txt 2>&1; echo "regret rc $? at +$((SECONDS-start)) s"
grep -E "^# (scan|overall|targets|paired|without)|^2\^1[4-7] " $R/regret.txt | cut -c1-200
echo "done at +$((SECONDS-start)) s"
