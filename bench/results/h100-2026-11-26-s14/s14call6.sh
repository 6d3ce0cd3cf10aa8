#!/usr/bin/env bash
# session 14, call 6: speed before (e114dcf, .exp/old14) and after (HEAD: one look-up per call for arrays of
# one pinned allocation, the fast path's arrays named once): xpar_add on 128 int32 from one pinned block / three /
# malloc (.exp/pool.c), and a regret subset on host data at 2^7..2^12, new / old / new / old on one machine.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
build() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DXPAR_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF > $R/build-$3.txt 2>&1 && cmake --build $2 -j8 --target xpar-bench >> $R/build-$3.txt 2>&1; echo "build $3 rc $?"; }
build . /tmp/bnew new & build .exp/old14 /tmp/bold old & wait
echo "built at +$((SECONDS-start)) s"
for v in new old; do nvcc -O2 .exp/pool.c -I api/include -L/tmp/b$v -lxpar -Xlinker -rpath,/tmp/b$v -o /tmp/pool_$v || echo "pool $v build failed"; done
for round in 1 2; do for v in new old; do echo "== pool $v (round $round)"; /tmp/pool_$v; done; done 2>&1 | tee $R/pool.txt
for round in 1 2; do for v in new old; do
  [ $((SECONDS-start)) -gt 500 ] && break
  timeout 80 /tmp/b$v/bench/xpar-bench regret --ops add,fill,axpy,reduce --dtypes int32,double --residencies pinned,pageable \
    --min-exp 7 --max-exp 12 --alts auto,serial,plain-serial --rounds 101 --contender-rounds 201 --no-plot --out-dir /tmp/rs_${v}$round > $R/regret-$v$round.txt 2>&1
  echo "regret $v round $round exit $? at +$((SECONDS-start)) s"
  cp /tmp/rs_${v}$round/regret.csv $R/regret-$v$round.csv 2>/dev/null
  grep -E "^# overall" $R/regret-$v$round.txt
done; done
echo "done at +$((SECONDS-start)) s"
