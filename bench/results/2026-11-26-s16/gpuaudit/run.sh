#!/usr/bin/env bash
# gpuaudit: build libxpar (CUDA, Release) into build-audit, build the probes
# against it, run each (timeout 60 s, several at once), print every FAIL /
# NOTE / SETUP-ERROR line and each probe's PROBE summary line.
#
# Run from the repository root:   bash .exp/gpuaudit/run.sh
# Environment:
#   PROBES="memkinds stream ..."   run only these (default: all)
#   JOBS=16                        build parallelism
#   PAR=5                          probes run at the same time (sticky and nodev
#                                  always run on their own at the end)
#   BUILD_DIR=build-audit          library build folder (reused if present)
set -u
ROOT=$(pwd)
HERE=$ROOT/.exp/gpuaudit
BUILD=${BUILD_DIR:-build-audit}
JOBS=${JOBS:-16}
PAR=${PAR:-5}
case $BUILD in /*) BDIR=$BUILD ;; *) BDIR=$ROOT/$BUILD ;; esac
OUT=$BDIR/gpuaudit
mkdir -p "$OUT"
T0=$(date +%s)
stamp() { echo "# [$(( $(date +%s) - T0 )) s] $*"; }

[ -f "$ROOT/api/include/xpar/xpar.h" ] || { echo "run.sh: run me from the xpar repository root"; exit 2; }
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
GEN=""
command -v ninja >/dev/null && GEN="-G Ninja"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/# GPU: /'

ALL="memkinds stream nowait errors mapping threads decision reprod kernels ptds"
SEL=${PROBES:-$ALL sticky nodev}

# ---- probe objects, compiled while the library builds ----------------------
NVCC="nvcc -std=c++17 -arch=sm_90 -O2 -Xcompiler -ffp-contract=off -I$ROOT/api/include"
declare -A EXTRA=([ptds]="--default-stream per-thread" [threads]="-Xcompiler -pthread" [ptds_link]="-Xcompiler -pthread")
compile_obj() { # name
  local n=$1
  $NVCC ${EXTRA[$n]:-} -c "$HERE/probe_$n.cu" -o "$OUT/probe_$n.o" >"$OUT/compile_$n.log" 2>&1 || echo "COMPILE-ERROR probe_$n (see $OUT/compile_$n.log)"
}
stamp "compiling probes and the kernel file in the background"
(
  for n in $ALL sticky nodev; do compile_obj "$n" & done
  gcc -std=c11 -O2 -fopenmp -fPIC -DXPAR_KERNEL_WITH_CUDA=1 -I"$ROOT/api/include" -c -x c \
      "$HERE/probe_kernels.xk.c" -o "$OUT/k_c.o" >"$OUT/compile_kc.log" 2>&1 || echo "COMPILE-ERROR probe_kernels.xk.c (C side)"
  $NVCC -Xcompiler -fPIC -x cu -c "$HERE/probe_kernels.xk.c" -o "$OUT/k_cu.o" >"$OUT/compile_kcu.log" 2>&1 || echo "COMPILE-ERROR probe_kernels.xk.c (nvcc side)"
  wait
) > "$OUT/compile_all.log" 2>&1 &
CPID=$!

# ---- the library -------------------------------------------------------------
stamp "configuring and building libxpar in $BUILD"
cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DXPAR_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DXPAR_BUILD_TESTS=OFF -DXPAR_BUILD_EXAMPLES=OFF -DXPAR_BUILD_BENCH=OFF -DXPAR_MPI=OFF >"$OUT/cmake.log" 2>&1 \
  || { echo "CMAKE-CONFIGURE-ERROR"; tail -30 "$OUT/cmake.log"; exit 2; }
cmake --build "$BUILD" -j"$JOBS" >"$OUT/build.log" 2>&1 || { echo "LIBRARY-BUILD-ERROR"; tail -40 "$OUT/build.log"; exit 2; }
stamp "library built"
wait $CPID
cat "$OUT/compile_all.log"

# ---- link ------------------------------------------------------------------------
LINK="-L$BDIR -lxpar -Xlinker -rpath,$BDIR"
for n in $ALL sticky nodev; do
  [ -f "$OUT/probe_$n.o" ] || continue
  objs="$OUT/probe_$n.o"
  extra=""
  case $n in
    kernels|sticky) objs="$objs $OUT/k_c.o $OUT/k_cu.o"; extra="-Xcompiler -fopenmp -lgomp" ;;
    threads|ptds) extra="-Xcompiler -pthread" ;;
  esac
  ( nvcc -arch=sm_90 $objs -o "$OUT/probe_$n" $LINK $extra >"$OUT/link_$n.log" 2>&1 || echo "LINK-ERROR probe_$n: $(head -5 "$OUT/link_$n.log")" ) &
done
wait
stamp "probes built"

# ---- run ----------------------------------------------------------------------------
run_one() { # name [args] [env]
  local n=$1 arg=${2:-} tag=${3:-$1}
  local log="$OUT/run_$tag.log"
  if [ ! -x "$OUT/probe_$n" ]; then echo "PROBE $tag: NOT BUILT" >"$log"; return; fi
  local t=$(date +%s)
  timeout 60 "$OUT/probe_$n" $arg >"$log" 2>"$OUT/run_$tag.err"
  local rc=$?
  echo "# $tag: exit $rc after $(( $(date +%s) - t )) s" >>"$log"
  if ! grep -q "^PROBE " "$log"; then
    if [ $rc -eq 124 ]; then echo "PROBE $tag: TIMEOUT (60 s) -- checks so far above" >>"$log"
    else echo "PROBE $tag: CRASHED (exit $rc) -- last stderr: $(tail -3 "$OUT/run_$tag.err" | tr '\n' ' ')" >>"$log"; fi
  fi
}
running=0
for n in $ALL; do
  case " $SEL " in *" $n "*) ;; *) continue ;; esac
  run_one "$n" &
  running=$((running + 1))
  if [ $running -ge "$PAR" ]; then wait -n; running=$((running - 1)); fi
done
wait
case " $SEL " in *" sticky "*) run_one sticky nowait sticky-nowait & run_one sticky sync sticky-sync & ;; esac
case " $SEL " in *" nodev "*) CUDA_VISIBLE_DEVICES="" run_one nodev & ;; esac
wait
stamp "probes ran"

# ---- report ---------------------------------------------------------------------------
echo "==================== gpuaudit report ===================="
for f in "$OUT"/run_*.log; do
  grep -E "^(FAIL|NOTE|SETUP-ERROR|# )" "$f" | grep -v "^# .*: seed" | head -80
done
echo "-------------------- summaries --------------------"
for f in "$OUT"/run_*.log; do grep -E "^PROBE " "$f"; done
stamp "done (logs in $OUT)"
