#!/usr/bin/env bash
# session 10, call 5: the MPI tests on the GPU build (call 4's ctest step ran out of its 240 s while test_mpi_ops.np4 ran).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DCMOCKA_ROOT=$PWD/.deps/cmocka > $R/build.log 2>&1
cmake --build build-gpu -j16 --target test_mpi_ops test_mpi_api >> $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
echo "built at +$((SECONDS-start)) s"
ctest --test-dir build-gpu -R "test_mpi_(ops|api)" --output-on-failure -j8 --timeout 200 > $R/ctest-mpi.log 2>&1
echo "ctest exit $? at +$((SECONDS-start)) s"
tail -15 $R/ctest-mpi.log
