#!/usr/bin/env bash
# session 15, call 1: scripts/gpu-check without the bench on the tree with repeats (dispatch.c, repeat_of),
# then a regret subset of small host calls, new (this tree) / old (e7ef0e3), interleaved.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
OUT=$R/gc GPU_CHECK_SKIP="bench" GPU_CHECK_DEADLINE=420 bash scripts/gpu-check > $R/gpu-check.txt 2>&1; echo "gpu-check rc $? at +$((SECONDS-start)) s"
tail -9 $R/gpu-check.txt
cd $R && tar czf gc.tar.gz gc && rm -rf gc && cd - > /dev/null
build() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DXPAR_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF > /tmp/build-$3.txt 2>&1 && cmake --build $2 -j8 --target xpar-bench >> /tmp/build-$3.txt 2>&1; echo "build $3 rc $?"; }
build . /tmp/bnew new & build .exp/old15 /tmp/bold old & wait
echo "built at +$((SECONDS-start)) s"
left=$((585 - (SECONDS-start)))
per=$(( left / 4 - 3 )); [ $per -gt 40 ] && per=40
for round in 1 2; do for v in new old; do
  timeout $per /tmp/b$v/bench/xpar-bench regret --ops add,fill,reduce,scan --dtypes int32 --residencies pinned,pageable,mapped \
    --min-exp 7 --max-exp 10 --alts auto,serial,plain-serial --rounds 41 --contender-rounds 81 --no-plot --out-dir $R/rs_${v}$round > $R/rs-$v$round.txt 2>&1
  echo "regret $v round $round exit $?: $(grep -E '^# overall' $R/rs-$v$round.txt | cut -c1-110)"
done; done | tee $R/regret.txt
echo "done at +$((SECONDS-start)) s"
