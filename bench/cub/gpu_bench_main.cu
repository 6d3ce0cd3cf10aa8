/*
 * xpar-gpu-bench [--check] [--quick] [--bench] [--scan-sweep] [--small-scan-sweep]
 *                [--sticky-test] [--profile-scan] [--seed N]
 *   --check        correctness of the CUDA backend on the GPU (gpu_check.cu)
 *   --quick        a small subset (for compute-sanitizer), or short timings
 *   --bench        CUB vs xpar timings (gpu_timing.cu), the targets' table; the default
 *   --sticky-test  a context-corrupting error must stay reported (own process)
 *   --profile-scan three CUB and five xpar int32 scans of 2^28 elements, for ncu
 *   --scan-sweep   tile shapes x look-back delays of the scan kernel, int32 and double
 *                  (scan_sweep.cu), beside CUB, each checked against CUB
 *   --small-scan-sweep  the one-block scan's tile (1, 2 or the library's vectors per
 *                  thread) at n = 32..8192, synchronous (scan_sweep.cu)
 *   --sort         the stable sort: checked against a CPU stable sort by the radix key,
 *                  then timed beside CUB's DeviceRadixSort (gpu_sort_bench.cu);
 *                  --sort-check / --sort-bench: one of the two
 *   --select       compaction (select, select_flagged, partition, unique): checked
 *                  against a CPU loop, then timed beside CUB's DeviceSelect /
 *                  DevicePartition (gpu_select_bench.cu); --select-check /
 *                  --select-bench: one of the two
 *   --runs         runs (run-length encode, reduce by key): checked against a CPU loop,
 *                  then timed beside CUB's DeviceRunLengthEncode::Encode /
 *                  DeviceReduce::ReduceByKey (gpu_runs_bench.cu); --runs-check /
 *                  --runs-bench: one of the two
 *   --seg          argmin / argmax and the segmented reduce and scan: checked against the
 *                  CPU backend, then timed beside CUB's DeviceSegmentedReduce and
 *                  DeviceReduce::ArgMin / ArgMax (gpu_seg_bench.cu); --seg-check /
 *                  --seg-bench: one of the two
 *   --hist         the histogram (even and range bins): checked against the CPU backend,
 *                  then timed beside CUB's DeviceHistogram (gpu_hist_bench.cu);
 *                  --hist-check / --hist-bench: one of the two
 *   --embed        costs through the public API: sync reduce of 1024 device int32,
 *                  pinned vs pageable small scans, the N = 128 AUTO call
 *                  (gpu_embed_bench.cu)
 * Exit status: 0 on success, 1 on a failed check, 2 on a setup error,
 * 77 when no usable GPU is present.
 */
#include <string.h>
#include <time.h>

#include "gpu_bench.h"

int main(int argc, char **argv) {
  int check = 0, bench = 0, quick = 0, sticky = 0, profile = 0, sweep = 0, embed = 0,
      small_sweep = 0, sort = 0, select = 0, runs = 0, seg = 0, hist = 0;
  CheckOptions opt;
  opt.seed = (unsigned long long)time(NULL);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--check"))
      check = 1;
    else if (!strcmp(argv[i], "--bench"))
      bench = 1;
    else if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else if (!strcmp(argv[i], "--scan-sweep"))
      sweep = 1;
    else if (!strcmp(argv[i], "--small-scan-sweep"))
      small_sweep = 1;
    else if (!strcmp(argv[i], "--sort"))
      sort = 3;
    else if (!strcmp(argv[i], "--sort-check"))
      sort |= 1;
    else if (!strcmp(argv[i], "--sort-bench"))
      sort |= 2;
    else if (!strcmp(argv[i], "--select"))
      select = 3;
    else if (!strcmp(argv[i], "--select-check"))
      select |= 1;
    else if (!strcmp(argv[i], "--select-bench"))
      select |= 2;
    else if (!strcmp(argv[i], "--runs"))
      runs = 3;
    else if (!strcmp(argv[i], "--runs-check"))
      runs |= 1;
    else if (!strcmp(argv[i], "--runs-bench"))
      runs |= 2;
    else if (!strcmp(argv[i], "--seg"))
      seg = 3;
    else if (!strcmp(argv[i], "--seg-check"))
      seg |= 1;
    else if (!strcmp(argv[i], "--seg-bench"))
      seg |= 2;
    else if (!strcmp(argv[i], "--hist"))
      hist = 3;
    else if (!strcmp(argv[i], "--hist-check"))
      hist |= 1;
    else if (!strcmp(argv[i], "--hist-bench"))
      hist |= 2;
    else if (!strcmp(argv[i], "--embed"))
      embed = 1;
    else if (!strcmp(argv[i], "--profile-scan"))
      profile = 1;
    else if (!strcmp(argv[i], "--sticky-test"))
      sticky = 1;
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      opt.seed = strtoull(argv[++i], NULL, 0);
    else {
      fprintf(stderr, "usage: %s [--check] [--quick] [--bench] [--sticky-test] "
                      "[--scan-sweep] [--small-scan-sweep] [--profile-scan] [--embed] [--sort] [--select] [--runs] [--seg] [--hist] [--seed N]\n",
              argv[0]);
      return 2;
    }
  }
  if (!check && !sticky && !profile && !sweep && !embed && !small_sweep && !sort &&
      !select && !runs && !seg && !hist)
    bench = 1;
  opt.quick = quick;

  xpar_device_info info;
  xpar__cuda_backend.query(-1, &info);
  if (!info.usable) {
    printf("no usable GPU: %s\n", info.reason);
    return 77;
  }
  if (sticky) return gpu_sticky_test();
  if (profile) return gpu_profile_scan();
  int rc = 0;
  if (check) rc |= gpu_check_run(opt);
  if (bench) rc |= gpu_bench_run(quick);
  if (sweep) rc |= gpu_scan_sweep_run();
  if (small_sweep) rc |= gpu_small_scan_sweep_run();
  if (embed) rc |= gpu_embed_bench_run();
  if (sort) rc |= gpu_sort_run(quick, opt.seed, sort);
  if (select) rc |= gpu_select_run(quick, opt.seed, select);
  if (runs) rc |= gpu_runs_run(quick, opt.seed, runs);
  if (seg) rc |= gpu_seg_run(quick, opt.seed, seg);
  if (hist) rc |= gpu_hist_run(quick, opt.seed, hist);
  return rc;
}
