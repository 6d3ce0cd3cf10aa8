/*
 * Built-in crossover thresholds: data, not code.  A calibration profile
 * (xpar-bench calibrate) overrides them, the environment overrides both, and
 * xpar_context_set_threshold() overrides everything for one context.
 *
 * Source (kept as data beside every value, calibrate_h100_regret2 below, and
 * quoted by decision records): `xpar-bench calibrate --dtypes
 * int32,float,double` (every op) on the lent H100 machine (H100 80GB HBM3,
 * 16-core Intel Xeon host), 2026-11-25, issue 12's second run,
 * bench/results/h100-2026-11-25-regret2/calibrate.txt.  That build had what
 * the thresholds price: the constant OpenMP team, the SIMD integer scans,
 * pinned host staging for device-only data on the CPU, pinned operands
 * classified by one driver look-up.  The regret run with that profile
 * (regret-profile.txt beside it) is these values' check: bench/NOTES.md.
 *
 * One row per kind of dtype, each from its own measurement: 4-byte integers
 * (int32, uint32) from int32, float from float, 8-byte types (int64, uint64,
 * double) from double (8-byte integers were not measured; they move the
 * bytes of a double, and their scans use the SIMD kernel of int32, so the
 * double row is if anything late for them).  Reading the calibration:
 *  - OPENMP: where one parallel region pays against the vectorised one-thread
 *    kernels: 2^14..2^16.  The int32 scan crosses later (2^15) than float's
 *    (2^14): its one-thread SIMD scan runs up to twice as fast as the float
 *    chain.  At 2^15 the one-thread int32 scan ran either at 7.5 us (then
 *    faster than the OpenMP tier's 8.0-8.5 us) or at 11.6-14 us (slower),
 *    from one series to the next in the regret runs; 2^15 bounds AUTO's worst
 *    ratio there at about 1.13 where 2^16 let it reach 1.44.
 *  - GPU_DEVICE_DATA (mapped arrays valid on both sides, no transfer):
 *    reduce 2^21 (4-byte; 2^20 shipped, see median3), 2^19 (double); scan
 *    2^19 (int32; 2^18 shipped), 2^17 (float, double); elementwise and dot
 *    2^18..2^20.
 *  - GPU_PINNED_DATA and GPU_PAGEABLE_DATA: never, for every op and dtype:
 *    the copies over PCIe cost more than the CPU's pass through memory (e.g.
 *    scan int32 at 2^22: CPU 184 us, GPU from pinned memory 659 us).
 *  - GPU_DEVICE_ONLY_DATA (issue 12, item 5): below it, a synchronous call on
 *    data valid only on the device is copied to (pinned) host memory, run on
 *    the CPU and copied back; measured as copies + CPU against launch + sync.
 *    Reduce: 2^13 (4-byte and double: "at 2^13: copies + cpu 10.5 us, gpu
 *    9.89 us"; double 2^12 shipped, see median3), fill 2^13 / 2^12; scans, axpy, add and dot: 2^4, the smallest
 *    size measured (an output copied back to the device costs a second
 *    synchronous copy: the GPU is faster from 16 elements).
 *
 * Four values are the median of three calibrations instead (median3 below):
 * regret2's call 1 (the values above), its call 3 (run3/calibrate.txt) and
 * session 8's (bench/results/h100-2026-11-25-s8/calibrate.txt), which
 * agreed everywhere else.  Where two of the three put a crossing one power
 * of two lower than call 1 did, call 1's value was a near-tie decided by
 * one run's noise, and the regret runs missed there: reduce int32 / float
 * for mapped data 2^20 (was 2^21; session 8's regret: int32 2^20 on the
 * OpenMP tier 24.2 us against CUDA's 11.8), reduce double on device-only
 * data 2^12 (was 2^13; session 7's regret: CUDA 9.61 us against the copy +
 * CPU 10.70 at 2^12), scan int32 for mapped data 2^18 (was 2^19).
 *
 * Earlier values came from the runs of 2026-11-22 (bench/results/h100-2026-
 * 11-22/calibrate.txt) and 2026-11-25 (h100-2026-11-25-regret, reduce and
 * scan only, before pinned staging and the driver look-up).
 */
#include <stdio.h>

#include "state.h"

#define POW2(x) ((size_t)1 << (x))
#define NEVER XPAR_NEVER

/* Where the values below were measured: data, quoted by decision records
 * (xpar__decision_format) beside every default they cite.  A value measured
 * by another run gets a record of its own. */
static const xpar__provenance calibrate_h100_regret2 = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-25",
    .run = "xpar-bench calibrate --dtypes int32,float,double, "
           "bench/results/h100-2026-11-25-regret2/calibrate.txt (issue 12)"};
#define H &calibrate_h100_regret2
static const xpar__provenance calibrate_h100_median3 = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-25",
    .run = "median of three xpar-bench calibrate runs: bench/results/h100-2026-11-25-regret2/"
           "calibrate.txt, .../regret2/run3/calibrate.txt, .../h100-2026-11-25-s8/calibrate.txt"};
#define M3 &calibrate_h100_median3

typedef struct default_value {
  size_t n;
  const xpar__provenance *from;
} default_value;

/* [op][kind], kinds in the order of XPAR_THRESHOLD_MAP:
 *   OPENMP, GPU_DEVICE_DATA, GPU_PINNED_DATA, GPU_PAGEABLE_DATA, GPU_DEVICE_ONLY_DATA */
static const default_value default_int4[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(16), H}, {POW2(20), M3}, {NEVER, H}, {NEVER, H}, {POW2(13), H}},
    [XPAR_OP_SCAN] = {{POW2(15), H}, {POW2(18), M3}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
    [XPAR_OP_AXPY] = {{POW2(14), H}, {POW2(18), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
    [XPAR_OP_ADD] = {{POW2(15), H}, {POW2(19), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
    [XPAR_OP_FILL] = {{POW2(16), H}, {POW2(20), H}, {NEVER, H}, {NEVER, H}, {POW2(13), H}},
    [XPAR_OP_DOT] = {{POW2(15), H}, {POW2(18), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
};
static const default_value default_float[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(16), H}, {POW2(20), M3}, {NEVER, H}, {NEVER, H}, {POW2(13), H}},
    [XPAR_OP_SCAN] = {{POW2(14), H}, {POW2(17), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
    [XPAR_OP_AXPY] = {{POW2(16), H}, {POW2(19), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
    [XPAR_OP_ADD] = {{POW2(16), H}, {POW2(19), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
    [XPAR_OP_FILL] = {{POW2(16), H}, {POW2(20), H}, {NEVER, H}, {NEVER, H}, {POW2(13), H}},
    [XPAR_OP_DOT] = {{POW2(15), H}, {POW2(20), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
};
static const default_value default_8byte[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(16), H}, {POW2(19), H}, {NEVER, H}, {NEVER, H}, {POW2(12), M3}},
    [XPAR_OP_SCAN] = {{POW2(14), H}, {POW2(17), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
    [XPAR_OP_AXPY] = {{POW2(15), H}, {POW2(18), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
    [XPAR_OP_ADD] = {{POW2(15), H}, {POW2(18), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
    [XPAR_OP_FILL] = {{POW2(15), H}, {POW2(19), H}, {NEVER, H}, {NEVER, H}, {POW2(12), H}},
    [XPAR_OP_DOT] = {{POW2(15), H}, {POW2(19), H}, {NEVER, H}, {NEVER, H}, {POW2(4), H}},
};
#undef H
#undef M3

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
