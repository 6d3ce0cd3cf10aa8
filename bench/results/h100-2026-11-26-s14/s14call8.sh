#!/usr/bin/env bash
# session 14, call 8: scripts/gpu-check without the bench on the final tree (the pinned range taken out again),
# then call 6's pool and regret subset, new (HEAD) / old (e114dcf).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=440 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
cd $R && tar czf gc.tar.gz gc && rm -rf gc && cd - > /dev/null
build() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DXPAR_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF > /tmp/build-$3.txt 2>&1 && cmake --build $2 -j8 --target xpar-bench >> /tmp/build-$3.txt 2>&1; echo "build $3 rc $?"; }
build . /tmp/bnew new & build .exp/old14 /tmp/bold old & wait
echo "built at +$((SECONDS-start)) s"
for v in new old; do nvcc -O2 .exp/pool.c -I api/include -L/tmp/b$v -lxpar -Xlinker -rpath,/tmp/b$v -o /tmp/pool_$v || echo "pool $v build failed"; done
for round in 1 2 3; do for v in new old; do echo "== pool $v (round $round)"; /tmp/pool_$v; done; done 2>&1 | grep -E "==|block|malloc" | tee $R/pool.txt
for round in 1 2; do for v in new old; do
  timeout 60 /tmp/b$v/bench/xpar-bench regret --ops add,fill,axpy,reduce --dtypes int32,double --residencies pinned,pageable \
    --min-exp 7 --max-exp 12 --alts auto,serial,plain-serial --rounds 101 --contender-rounds 201 --no-plot --out-dir /tmp/rs_${v}$round > /tmp/rs-$v$round.txt 2>&1
  echo "regret $v round $round exit $?: $(grep -E '^# overall' /tmp/rs-$v$round.txt | cut -c1-110)"
done; done | tee $R/regret.txt
echo "done at +$((SECONDS-start)) s"
