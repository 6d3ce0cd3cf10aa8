/*
 * Built-in crossover thresholds: data, not code.  A calibration profile
 * (xpar-bench calibrate) overrides them, the environment overrides both, and
 * xpar_context_set_threshold() overrides everything for one context.
 *
 * Every value carries, as data beside it, where it was measured: the
 * machine, the date and the command that measures it again (an
 * xpar__provenance).  A decision record quotes the machine and the date
 * ("default (H100 host, 2026-11-25)"); a saved profile's comments quote all
 * three beside the default a threshold overrides.
 *
 * The machine, "H100 host": the lent H100 machine kind, one H100 80GB HBM3
 * and a 16-core Intel Xeon host.
 *
 * How a value is chosen.  A calibration value is the median of five runs of
 * its command, each on a fresh machine of that kind.  One calibration picks,
 * per threshold, the power of two that minimises AUTO's worst ratio over its
 * own sweep, and at a crossing the two sides differ by a few percent -- less
 * than the spread of one host from one minute to the next (on the H100 host,
 * 2026-11-25, a one-thread reduce of 2^15 doubles took 4.4 us in one run and
 * 7.1 us in the next).  Of the 90 values measured (6 ops x 3 dtypes x 5
 * kinds) five runs agreed on 59, were one power of two apart on 23 and two
 * on 3; the other 5 held one stalled measurement (e.g. dot int32 openmp 2^5
 * once, 2^14..2^15 otherwise; pinned reduce double "never" four times, 2^19
 * once), which a median ignores.  One run alone differed from the median on
 * 9 values and lost at them (e.g. reduce int32 on mapped data at 2^20: CUDA
 * 11.8 us, the OpenMP tier 24.2 us, with that run's 2^21).
 * Where a GPU crossing moves between machines by more than the 10 % the
 * regret target allows, the value is chosen against several xpar-bench
 * regret runs at once by bench/regret_thresholds.py: the value with the
 * fewest points over 1.10x the best alternative and 0.3 us behind it, summed
 * over the runs, where the forced tiers' times decide; a change is kept where
 * it saves at least two such points.
 * Every build measured had what the thresholds price: the constant OpenMP
 * team, the SIMD integer scans, pinned host staging for device-only data on
 * the CPU, pinned operands classified by one driver look-up; those of the
 * values marked C to V below also the elementwise split and the SIMD clones
 * of the CPU loops.
 *
 * One row per kind of dtype, each from its own measurement: 4-byte integers
 * (int32, uint32) from int32, float from float, 8-byte types (int64, uint64,
 * double) from double (8-byte integers were not measured; they move the
 * bytes of a double, and their scans use the SIMD kernel of int32, so the
 * double row is if anything late for them).  Reading the values:
 *  - OPENMP: where one parallel region pays against the vectorised one-thread
 *    kernels: 2^14..2^17.  The scans: int32 2^16, float 2^15, double 2^14.
 *  - GPU_DEVICE_DATA (mapped arrays valid on both sides, no transfer):
 *    reduce 2^21 (int32 and float), 2^20 (double); scan 2^19 (int32), 2^18
 *    (float), 2^17 (double); elementwise and dot 2^18..2^20.
 *  - GPU_PINNED_DATA and GPU_PAGEABLE_DATA: never, for every op and dtype but
 *    sort: the copies over PCIe cost more than the CPU's pass through memory
 *    (on the H100 host, 2026-11-25, scan int32 at 2^22: CPU 184 us, GPU from
 *    pinned memory 659 us).  A sort does many passes for each byte copied:
 *    it pays on the GPU from 2^10..2^12 keys of host data (T below).
 *  - GPU_DEVICE_ONLY_DATA: below it, a synchronous call on data valid only
 *    on the device is copied to (pinned) host memory, run on the CPU and
 *    copied back; measured as copies + CPU against launch + sync.  Reduce:
 *    2^13 (4-byte), 2^12 (double); fill 2^12 (int32 and float), 2^11
 *    (double), from regret runs; scans, axpy, add and dot: 2^4, the smallest
 *    size measured (an output copied back to the device costs a second
 *    synchronous copy: the GPU is faster from 16 elements).
 */
#include <stdio.h>

#include "state.h"

#define POW2(x) ((size_t)1 << (x))
#define NEVER XPAR_NEVER

/* ---- where the values were measured: data, quoted by decision records ------- */

/* One H100 80GB HBM3, a 16-core Intel Xeon host (the lent H100 machine kind). */
#define H100_HOST XPAR__H100_HOST

/* The full calibration: every op, the three measured dtypes. */
static const xpar__provenance calibrated_h100 = {
    .machine = H100_HOST,
    .date = "2026-11-25",
    .run = "xpar-bench calibrate --dtypes int32,float,double"};
/* dot and reduce of int32 alone. */
static const xpar__provenance calibrated_h100_int32 = {
    .machine = H100_HOST,
    .date = "2026-11-25",
    .run = "xpar-bench calibrate --ops reduce,dot --dtypes int32"};
/* Several regret runs, one per fresh machine, weighed together. */
static const xpar__provenance regret_h100 = {
    .machine = H100_HOST,
    .date = "2026-11-26",
    .run = "xpar-devbench regret --out-dir RUN on each of several machines, then "
           "bench/regret_thresholds.py RUN*/regret.csv"};
/* One regret run of the float and double sums and dots around the OpenMP crossing. */
static const xpar__provenance regret_h100_float_dot = {
    .machine = H100_HOST,
    .date = "2026-11-26",
    .run = "xpar-devbench regret --ops reduce,dot --dtypes float,double "
           "--residencies pinned,pageable,mapped --min-exp 12 --max-exp 17"};

/* Sort: one calibration (not yet the median of five) on the H100 host. */
static const xpar__provenance calibrated_sort_h100 = {
    .machine = H100_HOST,
    .date = "2026-12-07",
    .run = "xpar-bench calibrate --ops sort --dtypes int32,float,double"};
/* The compaction family before its first calibration: estimates from its byte
 * counts (it reads n and writes what it keeps, as a scan reads n and writes
 * n): the scan's thresholds, and never the GPU for host data. */
static const xpar__provenance estimated_select = {
    .machine = "estimate, not measured",
    .date = "2026-12-07",
    .run = "xpar-bench calibrate --ops select"};
/* Runs (run-length encode, reduce by key) before their first calibration:
 * estimates from their byte counts (they read the keys, and the values, once
 * and write one key and one value per run, as the compaction family): the
 * compaction's thresholds, and never the GPU for host data. */
static const xpar__provenance estimated_runs = {
    .machine = "estimate, not measured",
    .date = "2026-12-08",
    .run = "xpar-bench calibrate --ops runs"};

/* Argmin / argmax and the segmented ops before their first calibration:
 * estimates from their byte counts.  argmin / argmax read n elements once, as
 * a reduce does, and write one value and one index: the reduce's thresholds.
 * A segmented reduce reads n elements and the offsets and writes a value per
 * segment, a segmented scan reads and writes n as a scan does: the scan's
 * thresholds (the larger traffic of the two), never the GPU for host data. */
static const xpar__provenance estimated_segmented = {
    .machine = "estimate, not measured",
    .date = "2026-12-07",
    .run = "xpar-bench calibrate --ops argreduce,segmented"};
/* The histogram, estimated before any calibration: it reads n samples and
 * writes num_bins counts, with a bin computed (an integer quotient or a double
 * division, or a binary search) and a counter bumped per sample -- more work
 * per byte than the compaction, no less traffic: the compaction's thresholds,
 * and never the GPU for host data. */
static const xpar__provenance estimated_histogram = {
    .machine = "estimate, not measured",
    .date = "2026-12-07",
    .run = "xpar-bench calibrate --ops histogram"};

/* ---- why each value is what it is: one letter per reason ----------------------- */

/* M: the median of five calibrations (calibrated_h100). */
#define M &calibrated_h100
/* C: moved by the SIMD clones of the CPU loops (AVX2 / SSE4.2 builds of the
 * one-thread and per-thread kernels, picked at load time): the median of five
 * calibrations of that build on the H100 host, 2026-11-25.  Every OpenMP
 * threshold of reduce, axpy and add one step up (one thread now wins
 * further; 5 of 5 runs for the elementwise ones); the GPU thresholds for
 * mapped data of reduce float, axpy double and dot int32 one or two steps up
 * (the CPU side of the crossing got faster).  A regret run with the values
 * before had 25 of its 41 misses where these decide otherwise (the OpenMP
 * tier at 2^14..2^15 where one thread was faster; CUDA on mapped data at
 * 2^18..2^19 where the OpenMP tier was). */
#define C &calibrated_h100
/* S: where the machines disagreed, the median of three machines' five-run
 * medians (H100 host, 2026-11-25): axpy int32 on mapped data 2^19 (estimates
 * 2^18 / 2^20 / 2^19), dot double on mapped data 2^19; the float scan, whose
 * loop was regrouped (1.6-2.2x faster on one thread), from the last machine's
 * five runs alone: OpenMP 2^15 (5 of 5: one thread now faster).  Crossings
 * that moved with the machine one or two steps either way keep the median of
 * the earlier calibrations (M, C). */
#define S &calibrated_h100
/* A: dot int32's OpenMP threshold after the integer reduce and dot loops began
 * at a 32-byte boundary (backend_cpu/cpu_reduce.c): one thread on arrays
 * aligned to 16 bytes only (malloc's) got the speed it had on aligned ones,
 * and five calibrations (H100 host, 2026-11-25) put dot's crossing at 2^16 (5
 * of 5; 2^15 5 of 5 before) and kept reduce's at 2^17 (5 of 5).  Regret runs
 * before had dot int32 lose at 2^15 on pinned, page-aligned arrays, where one
 * thread was already that fast (1.16-1.76x). */
#define A &calibrated_h100_int32
/* R: GPU thresholds whose crossing moves between machines by more than the
 * regret target allows, chosen against six regret runs (H100 host,
 * 2026-11-26); misses over the six under the value before -> this one:
 * reduce double mapped 2^19 -> 2^20 (3 -> 1), scan int32 mapped 2^18 -> 2^19
 * (5 -> 3), add int32 mapped 2^20 -> 2^19 (3 -> 0), fill int32 on
 * device-only data 2^13 -> 2^12 (6 -> 1: the CPU path's copy back of 16 KiB
 * written on the host costs what CUDA's whole call does). */
#define R &regret_h100
/* D: after synchronous scans and elementwise calls up to 2^22 began to return
 * on their kernel's done flag, and reduces on their stamped result (the CUDA
 * side of a mid-N synchronous call ~1 us, 5-10 %, faster), a regret run (H100
 * host, 2026-11-26) had CUDA win below its threshold: reduce int32 on mapped
 * data at 2^21 (the OpenMP tier 13.97 us, CUDA 11.80), scan float mapped 2^18
 * (16.07 / 14.22), fill float on device-only data 2^12 (the copies and the CPU
 * 10.88, CUDA 9.54); those and fill double on device-only data moved one
 * power of two down, each with a smaller sum of ln(time / best).  A second
 * machine's run held them (every point at and just below within target). */
#define D &regret_h100
/* L: dot float's OpenMP threshold after the float sums and dots began their
 * lanes at a 64-byte boundary (backend_cpu/cpu_reduce.c): one thread on
 * malloc'd and mapped arrays got most of the speed it had on page-aligned
 * pinned ones.  On the H100 host (2026-11-26) dot float at 2^15 took one
 * thread 2.45 / 3.23 / 3.24 us on pinned / pageable / mapped arrays, the
 * OpenMP tier 5.09 / 4.77 / 4.63; at 2^16 the OpenMP tier wins on malloc'd
 * and mapped arrays (5.13 / 5.05 us against one thread's 6.67 / 6.53) and is
 * within 5 % on pinned ones (5.37 against 4.96). */
#define L &regret_h100_float_dot
/* N: axpy float on mapped data 2^20: over nine regret runs (H100 host,
 * 2026-11-26) 2^20 misses 2 times, 2^19 4; over the four latest, each value
 * twice, and 2^20 has the smaller sum of ln(time / best) (4.61 against
 * 4.75).  The OpenMP side of this crossing moves with the host: one machine
 * ran it at 2^19-2^21 in 0.6-0.7x the time of the others. */
#define N &regret_h100
/* V: the 4-byte integer scan's OpenMP threshold 2^16: its one-thread side is a
 * vectorised in-register prefix sum, and two regret runs (H100 host,
 * 2026-11-26) missed at 2^15 -- scan int32 on pageable data 8.76 us (OpenMP)
 * against one thread's 7.91; on pinned and mapped data 8.51 / 8.64 against
 * 7.56 / 7.52 -- while at 2^16 the OpenMP tier wins by 1.5-1.9x (4 misses ->
 * 2).  The float scan (regrouped, not vectorised that way) keeps 2^15: no miss
 * there in either run. */
#define V &regret_h100
/* T: sort, from one calibration (calibrated_sort_h100).  Sort pays on the GPU
 * early, host data included: at 2^12 int32 keys the one-thread sort took 48 us
 * and the GPU 35 us from pinned, 45 us from pageable memory (copies both ways
 * included); the OpenMP tier pays from 2^17 (2^18 for doubles), where one
 * thread took 1.8 ms (int32) and 16 threads 1.2 ms. */
#define T &calibrated_sort_h100
/* E: the compaction family, estimated (estimated_select). */
#define E &estimated_select
/* U: runs, estimated (estimated_runs). */
#define U &estimated_runs
/* G: argmin / argmax and the segmented ops, estimated (estimated_segmented). */
#define G &estimated_segmented
/* H: the histogram, estimated (estimated_histogram). */
#define H &estimated_histogram

typedef struct default_value {
  size_t n;
  const xpar__provenance *from;
} default_value;

/* [op][kind], kinds in the order of XPAR_THRESHOLD_MAP:
 *   OPENMP, GPU_DEVICE_DATA, GPU_PINNED_DATA, GPU_PAGEABLE_DATA, GPU_DEVICE_ONLY_DATA */
static const default_value default_int4[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(17), C}, {POW2(21), D}, {NEVER, M}, {NEVER, M}, {POW2(13), M}},
    [XPAR_OP_SCAN] = {{POW2(16), V}, {POW2(19), R}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_AXPY] = {{POW2(16), C}, {POW2(19), S}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_ADD] = {{POW2(16), C}, {POW2(19), R}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_FILL] = {{POW2(16), M}, {POW2(20), M}, {NEVER, M}, {NEVER, M}, {POW2(12), R}},
    [XPAR_OP_DOT] = {{POW2(16), A}, {POW2(20), C}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_SORT] = {{POW2(17), T}, {POW2(11), T}, {POW2(12), T}, {POW2(12), T}, {POW2(4), T}},
    [XPAR_OP_SELECT] = {{POW2(16), E}, {POW2(19), E}, {NEVER, E}, {NEVER, E}, {POW2(4), E}},
    [XPAR_OP_RUNS] = {{POW2(16), U}, {POW2(19), U}, {NEVER, U}, {NEVER, U}, {POW2(4), U}},
    [XPAR_OP_ARGREDUCE] = {{POW2(17), G}, {POW2(21), G}, {NEVER, G}, {NEVER, G}, {POW2(13), G}},
    [XPAR_OP_SEGMENTED] = {{POW2(16), G}, {POW2(19), G}, {NEVER, G}, {NEVER, G}, {POW2(4), G}},
    [XPAR_OP_HISTOGRAM] = {{POW2(16), H}, {POW2(19), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
};
static const default_value default_float[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(17), C}, {POW2(21), C}, {NEVER, M}, {NEVER, M}, {POW2(13), M}},
    [XPAR_OP_SCAN] = {{POW2(15), S}, {POW2(18), D}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_AXPY] = {{POW2(16), C}, {POW2(20), N}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_ADD] = {{POW2(16), C}, {POW2(19), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_FILL] = {{POW2(16), M}, {POW2(20), M}, {NEVER, M}, {NEVER, M}, {POW2(12), D}},
    [XPAR_OP_DOT] = {{POW2(16), L}, {POW2(20), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_SORT] = {{POW2(17), T}, {POW2(10), T}, {POW2(11), T}, {POW2(12), T}, {POW2(4), T}},
    [XPAR_OP_SELECT] = {{POW2(16), E}, {POW2(19), E}, {NEVER, E}, {NEVER, E}, {POW2(4), E}},
    [XPAR_OP_RUNS] = {{POW2(16), U}, {POW2(19), U}, {NEVER, U}, {NEVER, U}, {POW2(4), U}},
    [XPAR_OP_ARGREDUCE] = {{POW2(17), G}, {POW2(21), G}, {NEVER, G}, {NEVER, G}, {POW2(13), G}},
    [XPAR_OP_SEGMENTED] = {{POW2(15), G}, {POW2(18), G}, {NEVER, G}, {NEVER, G}, {POW2(4), G}},
    [XPAR_OP_HISTOGRAM] = {{POW2(16), H}, {POW2(19), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
};
static const default_value default_8byte[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(16), C}, {POW2(20), R}, {NEVER, M}, {NEVER, M}, {POW2(12), M}},
    [XPAR_OP_SCAN] = {{POW2(14), M}, {POW2(17), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_AXPY] = {{POW2(15), C}, {POW2(19), C}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_ADD] = {{POW2(15), C}, {POW2(18), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_FILL] = {{POW2(15), M}, {POW2(19), M}, {NEVER, M}, {NEVER, M}, {POW2(11), D}},
    [XPAR_OP_DOT] = {{POW2(15), M}, {POW2(19), S}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_SORT] = {{POW2(18), T}, {POW2(10), T}, {POW2(10), T}, {POW2(12), T}, {POW2(9), T}},
    [XPAR_OP_SELECT] = {{POW2(16), E}, {POW2(19), E}, {NEVER, E}, {NEVER, E}, {POW2(4), E}},
    [XPAR_OP_RUNS] = {{POW2(16), U}, {POW2(19), U}, {NEVER, U}, {NEVER, U}, {POW2(4), U}},
    [XPAR_OP_ARGREDUCE] = {{POW2(16), G}, {POW2(20), G}, {NEVER, G}, {NEVER, G}, {POW2(12), G}},
    [XPAR_OP_SEGMENTED] = {{POW2(14), G}, {POW2(17), G}, {NEVER, G}, {NEVER, G}, {POW2(4), G}},
    [XPAR_OP_HISTOGRAM] = {{POW2(16), H}, {POW2(19), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
};
#undef M
#undef C
#undef S
#undef A
#undef R
#undef D
#undef L
#undef N
#undef V
#undef T
#undef E
#undef U
#undef G
#undef H

static const default_value *default_of(int op, int dt, int k) {
  if (xpar__dtype_size((xpar_dtype)dt) == 8) return &default_8byte[op][k];
  return dt == XPAR_FLOAT ? &default_float[op][k] : &default_int4[op][k];
}

void xpar__thresholds_default(size_t t[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_]) {
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int dt = 0; dt < XPAR_DTYPE_COUNT_; dt++)
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++) t[op][dt][k] = default_of(op, dt, k)->n;
}

const xpar__provenance *xpar__threshold_default_from(xpar_op op, xpar_dtype dtype,
                                                     xpar_threshold k, size_t *value) {
  const default_value *d = default_of(op, dtype, k);
  if (value) *value = d->n;
  return d->from;
}

int xpar__provenance_format(const xpar__provenance *p, char *buf, size_t size) {
  return snprintf(buf, size, "%s, %s, %s", p->date, p->machine, p->run);
}



/* ---- the split tier (xpar_context_set_split): its built-in settings ------------ */

/* Before the split's calibration (five runs): AUTO never splits (`from` never).
 * The GPU's share: one run of xpar-bench split on the H100 host (2026-12-07,
 * reduce and axpy, int32 and double, 2^26-2^27; docs/split.md) gave 0.30-0.36
 * for pinned memory -- 16 threads read host memory at 130-140 GB/s, the PCIe
 * link copies it at 54 GB/s: 1/3 -- and 0.07-0.08 for pageable memory, which
 * CUDA copies at 8-9 GB/s: 0.075. */
static const xpar__provenance estimated_split = {
    .machine = H100_HOST,
    .date = "2026-12-07",
    .run = "xpar-bench split --ops reduce,axpy --dtypes int32,double --min-exp 26 "
           "--max-exp 27 --rounds 3 (one run; from: not measured)"};

void xpar__split_default(xpar_context *ctx) {
  static const float share[XPAR_SPLIT_MEMORY_COUNT_] = {[XPAR_SPLIT_PINNED] = 1.0f / 3,
                                                        [XPAR_SPLIT_PAGEABLE] = 0.075f};
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int dt = 0; dt < XPAR_DTYPE_COUNT_; dt++)
      for (int m = 0; m < XPAR_SPLIT_MEMORY_COUNT_; m++) {
        ctx->split_from[op][dt][m] = NEVER;
        ctx->split_share[op][dt][m] = xpar__op_splits((xpar_op)op) ? share[m] : 0.0f;
        ctx->split_from_source[op][dt][m] = XPAR__SRC_DEFAULT;
        ctx->split_share_source[op][dt][m] = XPAR__SRC_DEFAULT;
      }
}

const xpar__provenance *xpar__split_default_from(xpar_op op, xpar_dtype dtype,
                                                 xpar_split_memory m) {
  (void)op, (void)dtype, (void)m;
  return &estimated_split;
}
