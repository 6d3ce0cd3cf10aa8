# CI smoke test of `xpar-devbench regret --quick`: CPU-only, small
# (pageable data, every op of bench_ops.c -- each must appear in the summary -- x
# int32/float/double, 2^7..2^14, 5 rounds; a few seconds on 2 cores), with 9 rounds for the contenders (AUTO and those near
# the fastest) after the 5 of everyone, and up to 3 confirmation rounds where AUTO
# then misses.  It must print its table with the geometric mean, the first-look
# count, the paired ratio and the host-speed line, AUTO's 9 rounds at 2^7, and exit 0 (0
# also means every alternative's answer matched the reference).
# Speed is judged on the H100 host, never here.
#   cmake -DBENCH=path/to/xpar-bench -DWORK_DIR=dir -P regret_smoke.cmake
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(
  COMMAND ${BENCH} regret --quick --residencies pageable --contender-rounds 9 --confirm-rounds 3
          --alts auto,serial,one-thread,openmp,plain-serial,plain-omp --out-dir ${WORK_DIR}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xpar-devbench regret --quick exited ${rc}: ${err}")
endif()
foreach(want "# overall: [0-9]+ points, geometric mean [0-9]+\\.[0-9]+"
             "# first look: [0-9]+ points missed before their confirmation rounds"
             "# paired \\(median over rounds" "\n2\\^7 [^\n]* (9|1[0-2])\n"
             "\n2\\^14 " "reduce +int32 +pageable" "scan +double +pageable"
             "axpy +float +pageable" "add +int32 +pageable" "fill +double +pageable"
             "dot +float +pageable" "sort +int32 +pageable" "select +float +pageable"
             "runs +double +pageable" "argreduce +int32 +pageable" "segmented +float +pageable"
             "histogram +double +pageable" "# host speed: a plain fill of 128 int32 took [0-9.]+ ns")
  if(NOT out MATCHES "${want}")
    message(FATAL_ERROR "xpar-devbench regret --quick: output lacks /${want}/")
  endif()
endforeach()
if(NOT EXISTS ${WORK_DIR}/regret.csv)
  message(FATAL_ERROR "xpar-devbench regret --quick wrote no ${WORK_DIR}/regret.csv")
endif()
