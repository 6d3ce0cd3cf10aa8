/*
 * Built-in crossover thresholds: data, not code.  A calibration profile
 * (xpar-bench calibrate) overrides them, the environment overrides both, and
 * xpar_context_set_threshold() overrides everything for one context.
 *
 * Source (kept as data beside every value, calibrate_h100_median5 below, and
 * quoted by decision records): each value but one is the median of five runs of
 * `xpar-bench calibrate --dtypes int32,float,double` (every op) on the lent
 * H100 machine (H100 80GB HBM3, 16-core Intel Xeon host), 2026-11-25, each
 * on a fresh machine of that kind:
 *   bench/results/h100-2026-11-25-regret2/calibrate.txt        (issue 12, call 1)
 *   bench/results/h100-2026-11-25-regret2/run3/calibrate.txt   (call 3)
 *   bench/results/h100-2026-11-25-s8/calibrate.txt             (session 8, call 1)
 *   bench/results/h100-2026-11-25-s8/call4/calibrate.txt       (call 4)
 *   bench/results/h100-2026-11-25-s8/call5/calibrate.txt       (call 5)
 * Why a median: one calibration picks, per threshold, the power of two that
 * minimises AUTO's worst ratio over its own sweep, and at a crossing the two
 * sides differ by a few percent -- less than the spread of one host from one
 * minute to the next (a one-thread reduce of 2^15 doubles took 4.4 us in
 * one regret run and 7.1 us in the next).  Of the 90 values measured (6 ops
 * x 3 dtypes x 5 kinds) the five runs agreed on 59, were one power of two
 * apart on 23 and two on 3; the other 5 held one stalled measurement (e.g.
 * dot int32 openmp 2^5 once, 2^14..2^15 otherwise; pinned reduce double
 * "never" four times, 2^19 once), which a median ignores.  Call 1 alone, the
 * earlier source, differed from the median on 9, and the regret runs missed
 * at such values (e.g. reduce int32 on mapped data at 2^20: CUDA 11.8 us,
 * the OpenMP tier 24.2 us, with call 1's 2^21).
 * The exception: add's OpenMP threshold on 8-byte types, 2^14 since the
 * elementwise split change of session 10, is the median of five runs on one
 * machine after that change (calibrate_h100_s10_split below).
 * The regret runs of session 8 (bench/NOTES.md) are these values' check.
 * Every build measured had what the thresholds price: the constant OpenMP
 * team, the SIMD integer scans, pinned host staging for device-only data on
 * the CPU, pinned operands classified by one driver look-up.
 *
 * One row per kind of dtype, each from its own measurement: 4-byte integers
 * (int32, uint32) from int32, float from float, 8-byte types (int64, uint64,
 * double) from double (8-byte integers were not measured; they move the
 * bytes of a double, and their scans use the SIMD kernel of int32, so the
 * double row is if anything late for them).  Reading the calibrations:
 *  - OPENMP: where one parallel region pays against the vectorised one-thread
 *    kernels: 2^14..2^16.  The int32 scan crosses later (2^15) than float's
 *    (2^14): its one-thread SIMD scan runs up to twice as fast as the float
 *    chain.
 *  - GPU_DEVICE_DATA (mapped arrays valid on both sides, no transfer):
 *    reduce 2^20 (4-byte), 2^19 (double); scan 2^18 (int32), 2^17 (float,
 *    double); elementwise and dot 2^18..2^20.
 *  - GPU_PINNED_DATA and GPU_PAGEABLE_DATA: never, for every op and dtype:
 *    the copies over PCIe cost more than the CPU's pass through memory (e.g.
 *    scan int32 at 2^22: CPU 184 us, GPU from pinned memory 659 us).
 *  - GPU_DEVICE_ONLY_DATA (issue 12, item 5): below it, a synchronous call on
 *    data valid only on the device is copied to (pinned) host memory, run on
 *    the CPU and copied back; measured as copies + CPU against launch + sync.
 *    Reduce: 2^13 (4-byte), 2^12 (double); fill 2^13 / 2^12; scans, axpy, add
 *    and dot: 2^4, the smallest size measured (an output copied back to the
 *    device costs a second synchronous copy: the GPU is faster from 16
 *    elements).
 *
 * Earlier values came from the runs of 2026-11-22 (bench/results/h100-2026-
 * 11-22/calibrate.txt) and 2026-11-25 (h100-2026-11-25-regret, reduce and
 * scan only, before pinned staging and the driver look-up; then regret2's
 * call 1 alone).
 */
#include <stdio.h>

#include "state.h"

#define POW2(x) ((size_t)1 << (x))
#define NEVER XPAR_NEVER

/* Where the values below were measured: data, quoted by decision records
 * (xpar__decision_format) beside every default they cite.  A value measured
 * by another run gets a record of its own. */
static const xpar__provenance calibrate_h100_median5 = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-25",
    .run = "median of five xpar-bench calibrate --dtypes int32,float,double runs, "
           "bench/results/h100-2026-11-25-regret2/{,run3/}calibrate.txt and "
           "h100-2026-11-25-s8/{,call4/,call5/}calibrate.txt (issue 12)"};
#define M &calibrate_h100_median5
/* The elementwise OpenMP thresholds after the split change of session 10
 * (backend_cpu: an open region's parts down to 512 elements): five
 * calibrations on one machine, bench/results/h100-2026-11-25-s10/call2/.
 * Of the nine elementwise OPENMP values only add on 8-byte types moved
 * (2^15 -> 2^14; its five runs: 2^15, 2^14, 2^14, 2^15, 2^14); the others'
 * medians equal the values above, which keep their record. */
static const xpar__provenance calibrate_h100_s10_split = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-25",
    .run = "median of five xpar-bench calibrate --dtypes int32,float,double runs on one "
           "machine after the elementwise split change, "
           "bench/results/h100-2026-11-25-s10/call2/calibrate{1..5}.txt (issue 12)"};
#define S10 &calibrate_h100_s10_split

typedef struct default_value {
  size_t n;
  const xpar__provenance *from;
} default_value;

/* [op][kind], kinds in the order of XPAR_THRESHOLD_MAP:
 *   OPENMP, GPU_DEVICE_DATA, GPU_PINNED_DATA, GPU_PAGEABLE_DATA, GPU_DEVICE_ONLY_DATA */
static const default_value default_int4[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(16), M}, {POW2(20), M}, {NEVER, M}, {NEVER, M}, {POW2(13), M}},
    [XPAR_OP_SCAN] = {{POW2(15), M}, {POW2(18), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_AXPY] = {{POW2(15), M}, {POW2(18), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_ADD] = {{POW2(15), M}, {POW2(19), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_FILL] = {{POW2(16), M}, {POW2(20), M}, {NEVER, M}, {NEVER, M}, {POW2(13), M}},
    [XPAR_OP_DOT] = {{POW2(15), M}, {POW2(18), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
};
static const default_value default_float[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(16), M}, {POW2(20), M}, {NEVER, M}, {NEVER, M}, {POW2(13), M}},
    [XPAR_OP_SCAN] = {{POW2(14), M}, {POW2(17), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_AXPY] = {{POW2(15), M}, {POW2(19), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_ADD] = {{POW2(15), M}, {POW2(19), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_FILL] = {{POW2(16), M}, {POW2(20), M}, {NEVER, M}, {NEVER, M}, {POW2(13), M}},
    [XPAR_OP_DOT] = {{POW2(15), M}, {POW2(20), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
};
static const default_value default_8byte[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(15), M}, {POW2(19), M}, {NEVER, M}, {NEVER, M}, {POW2(12), M}},
    [XPAR_OP_SCAN] = {{POW2(14), M}, {POW2(17), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_AXPY] = {{POW2(14), M}, {POW2(18), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_ADD] = {{POW2(14), S10}, {POW2(18), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_FILL] = {{POW2(15), M}, {POW2(19), M}, {NEVER, M}, {NEVER, M}, {POW2(12), M}},
    [XPAR_OP_DOT] = {{POW2(15), M}, {POW2(19), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
};
#undef M
#undef S10

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
