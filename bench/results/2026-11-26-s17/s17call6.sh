#!/usr/bin/env bash
# session 17, call 6: GPU check of xpar__cuda_begin's context check (cuCtxGetCurrent before
# cudaSetDevice) and test_embed_gpu's thread-context cases; the device-data probe on it;
# the same test against a planted bug (the check skipping cudaSetDevice whenever ANY
# context is current) -- it must fail
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=430 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
grep -E "thread contexts|test_embed_gpu:" $R/gc/*embed* $R/gc/*ctest* 2>/dev/null | head -5
cd $R && tar czf gc.tar.gz gc && rm -rf gc && cd - > /dev/null
gcc -O2 -I api/include -I /usr/local/cuda/include -o /tmp/devd2h2 .exp/devd2h2.c -L build-gpu -lxpar -L /usr/local/cuda/lib64 -lcudart -lcuda && LD_LIBRARY_PATH=build-gpu /tmp/devd2h2 2>&1 | tee $R/devd2h2.txt
echo "probe done at +$((SECONDS-start)) s"
rm -rf /tmp/planted && mkdir /tmp/planted && tar --exclude="./build*" --exclude=./.git --exclude=./.exp -cf - . | tar -xf - -C /tmp/planted
sed -i 's/if (st->primary_context \&\& current_driver_context() == st->primary_context) return XPAR_OK;/if (st->primary_context \&\& current_driver_context() != NULL) return XPAR_OK;/' /tmp/planted/backend_cuda/cuda_state.cu
grep -c "current_driver_context() != NULL" /tmp/planted/backend_cuda/cuda_state.cu
cmake -S /tmp/planted -B /tmp/planted/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPAR_CUDA=ON -DXPAR_BUILD_TESTS=ON -DCMOCKA_ROOT=$PWD/.deps/cmocka > $R/planted-cmake.txt 2>&1
timeout $((580 - (SECONDS-start))) cmake --build /tmp/planted/b -j16 --target test_embed_gpu > $R/planted-build.txt 2>&1; echo "planted build rc $? at +$((SECONDS-start)) s"
timeout 120 /tmp/planted/b/tests/test_embed_gpu > $R/planted.txt 2>&1; echo "planted test rc $? (must be nonzero)"
grep -E "FAIL|thread contexts|test_embed_gpu:" $R/planted.txt | head -8
echo "done at +$((SECONDS-start)) s"
