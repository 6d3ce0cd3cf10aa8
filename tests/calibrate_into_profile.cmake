# `XPAR_PROFILE=<file not there yet> xpar-bench calibrate`: the
# calibration writes the profile there, and a later process loads it.
#   cmake -DBENCH=<xpar-bench> -DDEVBENCH=<xpar-devbench> -DWORK_DIR=<dir> -P calibrate_into_profile.cmake
# Calibrates one op and dtype over 2^4..2^6 without the GPU: a second or so.
cmake_minimum_required(VERSION 3.24)
foreach(v BENCH DEVBENCH WORK_DIR)
  if(NOT ${v})
    message(FATAL_ERROR "${v} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(QUICK --dtypes int32 --omp-range 4:6 --no-gpu --min-time-ms 1)
set(PROG ${BENCH}) # the program run_bench runs: xpar-bench, or xpar-devbench

# Runs xpar-bench with XPAR_PROFILE=<profile> and args; fails unless it exits 0.
function(run_bench profile)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env "XPAR_PROFILE=${profile}" ${PROG} ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "xpar-bench ${ARGN} (XPAR_PROFILE=${profile}):\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "xpar-bench ${ARGN} exited with ${rc}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect text what)
  string(FIND "${text}" "${what}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected \"${what}\" in:\n${text}")
  endif()
endfunction()

function(count_matches text regex result)
  string(REGEX MATCHALL "${regex}" hits "${text}")
  list(LENGTH hits n)
  set(${result} ${n} PARENT_SCOPE)
endfunction()

# 1. The directory exists, the file does not: one notice (not one per
#    context), no "cannot open", the file written with its written: line,
#    and calibrate's own check (a fresh context loads it) passed.
set(profile "${WORK_DIR}/profile.txt")
run_bench("${profile}" calibrate --ops reduce ${QUICK})
count_matches("${err}" "does not exist yet" notices)
if(NOT notices EQUAL 1)
  message(FATAL_ERROR "expected one notice about the missing profile, got ${notices}")
endif()
count_matches("${err}" "cannot open" cannot_open)
if(NOT cannot_open EQUAL 0)
  message(FATAL_ERROR "calibrate's contexts refused the missing profile")
endif()
expect("${out}" "quotes (profile): OK")
file(READ "${profile}" text)
expect("${text}" "\nxpar-profile 1\n")
expect("${text}" "\nwritten: ")
expect("${text}" "\nreduce int32 openmp ")

# 2. Another process loads it: AUTO's decision record quotes the profile.
set(PROG ${DEVBENCH})
run_bench("${profile}" overhead --batches 1 --calls 1)
set(PROG ${BENCH})
expect("${out}" "openmp threshold")
if(NOT out MATCHES "openmp threshold [^ ]+ \\(profile\\)")
  message(FATAL_ERROR "the decision record does not quote the profile's threshold")
endif()

# 3. Calibrating again into the existing profile updates it: the new op is
#    added, the one measured before is kept, nothing more is said on stderr.
run_bench("${profile}" calibrate --ops scan ${QUICK})
count_matches("${err}" "notice" notices)
if(NOT notices EQUAL 0)
  message(FATAL_ERROR "unexpected notice calibrating into an existing profile:\n${err}")
endif()
file(READ "${profile}" text)
expect("${text}" "\nreduce int32 openmp ")
expect("${text}" "\nscan int32 openmp ")

# 4. A directory that does not exist yet: calibrate creates it first.
run_bench("${WORK_DIR}/new/dir/profile.txt" calibrate --ops dot ${QUICK})
file(READ "${WORK_DIR}/new/dir/profile.txt" text)
expect("${text}" "\ndot int32 openmp ")
file(REMOVE_RECURSE "${WORK_DIR}")
