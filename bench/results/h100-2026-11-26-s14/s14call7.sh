#!/usr/bin/env bash
# session 14, call 7: the pinned range asked with three attributes (type, start, size) instead of four: pointer
# queries (ptrq, + the four-attribute form), then call 6's pool and regret subset, new (working tree) / old (e114dcf).
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
nvcc -O2 -arch=sm_90 .exp/ptrq/ptrq.cu -o /tmp/ptrq -lcuda && /tmp/ptrq > $R/ptrq.txt 2>&1; cat $R/ptrq.txt
build() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DXPAR_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF > $R/build-$3.txt 2>&1 && cmake --build $2 -j8 --target xpar-bench >> $R/build-$3.txt 2>&1; echo "build $3 rc $?"; }
build . /tmp/bnew new & build .exp/old14 /tmp/bold old & wait
echo "built at +$((SECONDS-start)) s"
for v in new old; do nvcc -O2 .exp/pool.c -I api/include -L/tmp/b$v -lxpar -Xlinker -rpath,/tmp/b$v -o /tmp/pool_$v || echo "pool $v build failed"; done
for round in 1 2 3; do for v in new old; do echo "== pool $v (round $round)"; /tmp/pool_$v; done; done 2>&1 | tee $R/pool.txt
for round in 1 2; do for v in new old; do
  timeout 80 /tmp/b$v/bench/xpar-bench regret --ops add,fill,axpy,reduce --dtypes int32,double --residencies pinned,pageable \
    --min-exp 7 --max-exp 12 --alts auto,serial,plain-serial --rounds 101 --contender-rounds 201 --no-plot --out-dir /tmp/rs_${v}$round > /tmp/rs-$v$round.txt 2>&1
  echo "regret $v round $round exit $?: $(grep -E '^# overall' /tmp/rs-$v$round.txt | cut -c1-120)"
  cp /tmp/rs_${v}$round/regret.csv /tmp/rs-$v$round.csv 2>/dev/null
done; done | tee $R/regret.txt
cd /tmp && tar czf $R/regret-sub.tar.gz rs-*.txt rs-*.csv
echo "done at +$((SECONDS-start)) s"
