#!/usr/bin/env bash
# session 16, call 7: the integer dot's line head (d05b090) against the tree before it (be5664b, .exp/old16):
# dot int32 x pinned / pageable / mapped x 2^11..2^16, AUTO / serial / openmp / plain-serial, alternated twice;
# then the GPU audit probes (.exp/gpuaudit/run.sh) if present.
set -u
R=${OUT:-/tmp/out}; mkdir -p $R
start=$SECONDS
build() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DXPAR_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF > /tmp/build-$3.txt 2>&1 && cmake --build $2 -j8 --target xpar-bench >> /tmp/build-$3.txt 2>&1; echo "build $3 rc $?"; }
build . /tmp/bnew new & build .exp/old16 /tmp/bold old & wait
echo "built at +$((SECONDS-start)) s"
for round in 1 2; do for v in new old; do
  timeout 40 /tmp/b$v/bench/xpar-bench regret --ops dot --dtypes int32 --residencies pinned,pageable,mapped \
    --min-exp 11 --max-exp 16 --alts auto,serial,openmp,plain-serial --rounds 21 --contender-rounds 41 --no-plot --out-dir $R/rd_${v}$round > $R/rd-$v$round.txt 2>&1
  echo "regret $v round $round exit $?"
done; done
for v in new old; do for round in 1 2; do echo "== $v $round"; grep -E "^(# dot|2\^)" $R/rd-$v$round.txt | cut -c1-125; done; done
echo "regret done at +$((SECONDS-start)) s"
if [ -x .exp/gpuaudit/run.sh ]; then timeout $((560 - (SECONDS-start))) bash .exp/gpuaudit/run.sh > $R/gpuaudit.txt 2>&1; echo "gpuaudit rc $?"; tail -40 $R/gpuaudit.txt; fi
echo "done at +$((SECONDS-start)) s"
