/*
 * xpar-gpu-bench: shared pieces of the check harness (gpu_check.cu) and the
 * timing runs (gpu_timing.cu).  Both call the CUDA backend's table directly.
 */
#ifndef XPAR_BENCH_CUB_GPU_BENCH_H
#define XPAR_BENCH_CUB_GPU_BENCH_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/backend.h"
#include "backend_cuda/cuda_ops.h"

#define GB_CUDA(call)                                                              \
  do {                                                                             \
    cudaError_t gb_err_ = (call);                                                  \
    if (gb_err_ != cudaSuccess) {                                                  \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                \
              cudaGetErrorName(gb_err_));                                          \
      exit(2);                                                                     \
    }                                                                              \
  } while (0)

#define GB_XPAR(call)                                                              \
  do {                                                                             \
    xpar_status gb_st_ = (call);                                                   \
    if (gb_st_ != XPAR_OK) {                                                       \
      fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call,           \
              xpar_status_name(gb_st_), xpar_last_error_detail());                 \
      exit(2);                                                                     \
    }                                                                              \
  } while (0)

struct CheckOptions {
  unsigned long long seed;
  int quick; /* small subset, for compute-sanitizer */
};

int gpu_check_run(const CheckOptions &opt);
int gpu_sticky_test(void);
int gpu_bench_run(int quick);
int gpu_profile_scan(void);
int gpu_scan_sweep_run(void);
/* --small-scan-sweep: the one-block scan's tile shape at n = 32..8192 (scan_sweep.cu). */
int gpu_small_scan_sweep_run(void);
int gpu_embed_bench_run(void);
/* --sort / --sort-check / --sort-bench: the stable sort, checked and beside CUB's
 * DeviceRadixSort (gpu_sort_bench.cu); what: 1 check, 2 timings, 3 both. */
int gpu_sort_run(int quick, unsigned long long seed, int what);
/* --select / --select-check / --select-bench: compaction (select, select_flagged,
 * partition, unique), checked and beside CUB's DeviceSelect / DevicePartition
 * (gpu_select_bench.cu); what: 1 check, 2 timings, 3 both. */
int gpu_select_run(int quick, unsigned long long seed, int what);
/* --runs / --runs-check / --runs-bench: run-length encode and reduce by key, checked and
 * beside CUB's DeviceRunLengthEncode::Encode / DeviceReduce::ReduceByKey
 * (gpu_runs_bench.cu); what: 1 check, 2 timings, 3 both. */
int gpu_runs_run(int quick, unsigned long long seed, int what);
/* --seg / --seg-check / --seg-bench: argmin / argmax and the segmented reduce and scan,
 * checked against the CPU backend and beside CUB's DeviceSegmentedReduce and
 * DeviceReduce::ArgMin / ArgMax (gpu_seg_bench.cu); what: 1 check, 2 timings, 3 both. */
int gpu_seg_run(int quick, unsigned long long seed, int what);
/* --hist / --hist-check / --hist-bench: the histogram (even and range bins), checked and
 * beside CUB's DeviceHistogram (gpu_hist_bench.cu); what: 1 check, 2 timings, 3 both. */
int gpu_hist_run(int quick, unsigned long long seed, int what);

#endif
