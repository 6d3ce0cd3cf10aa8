/*
 * Built-in crossover thresholds: data, not code.  A calibration profile
 * (xpar-bench calibrate) overrides them, the environment overrides both, and
 * xpar_context_set_threshold() overrides everything for one context.
 *
 * Source (kept as data beside every value, calibrate_h100_2026_11_22 below,
 * and quoted by decision records): `xpar-bench calibrate` on the lent H100
 * machine (H100 80GB HBM3, 16-core host), 2026-11-22,
 * bench/results/h100-2026-11-22/calibrate.txt:
 * the crossing of each op, taken across the dtypes of one element size
 * (int32/uint32/float; int64/uint64/double), where they agree within a
 * power of two; single outliers (e.g. "axpy double openmp 2^6") are noise.
 *  - OPENMP: where a parallel region starts to pay against the vectorised
 *    one-thread kernels (2^14..2^17; reduce's one-thread lanes run at
 *    memory speed until the data leaves the L2).
 *  - GPU_DEVICE_DATA: reduce 2^20..2^21 (anchors.md: 2^19..2^20 against the
 *    CUB-style call), scan 2^17 (anchors.md: 2^16..2^17; seed 004: ~50K
 *    against one thread), elementwise and dot 2^17..2^20.  8-byte scans
 *    cross later (2^18): their look-back reads flag and value separately.
 *  - GPU_PINNED_DATA and GPU_PAGEABLE_DATA: never.  Every op moves more bytes
 *    over PCIe than the CPU moves through memory; the calibration run says
 *    "never" for every op and dtype (4-byte scans from pinned memory too:
 *    "at 2^22: cpu 395 us, gpu 664 us"; the crossover sweep of the same day
 *    saw uint32 scans from pinned memory cross at 2^26, anchors.md 2^25, a
 *    single-dtype observation the calibration did not confirm).
 *  - GPU_DEVICE_ONLY_DATA (issue 12): below it, a synchronous call on data
 *    valid only on the device is copied to the host and run on the CPU.
 *
 * Reduce and scan rows (issue 12): `xpar-bench calibrate --ops reduce,scan
 * --dtypes int32,float,double` on the lent H100 machine, 2026-11-25 (16-core
 * host; the SIMD integer scan of issue 12 in the serial tier; the OpenMP
 * tier's teams still varied with n in that build), bench/NOTES.md, issue 12:
 *  - OPENMP: reduce 2^17 (int32, float), 2^15 (double); scan 2^14 (float,
 *    double), 2^15 for int32 -- its one-thread SIMD scan runs twice as fast
 *    as the float chain, so a region pays later: int_scan_openmp below.
 *  - GPU_DEVICE_DATA: reduce 2^20 (int32, float), 2^19 (double); scan 2^18
 *    (int32), 2^17 (float, double).
 *  - GPU_PINNED / GPU_PAGEABLE: never, again (one exception, scan float from
 *    pinned memory at 2^26: 9.98 vs 11.1 ms, a single-dtype observation).
 *  - GPU_DEVICE_ONLY_DATA: copies + CPU against launch + sync are near-ties
 *    at every small N (reduce 9.4-10.8 us either way, scan 17-20 us), so the
 *    crossings are soft: reduce 2^9 (float; int32 tied at 2^4: 10.3 vs 10.0
 *    us), 2^8 (double); scan 2^8 (float; int32 tied at 2^4), 2^4 (double:
 *    the GPU is faster from 16 elements).  The regret run with the older
 *    2^11 agrees for int32 reduce (CPU 10.7-11.3 us vs GPU 10.9-11.0 us at
 *    2^7..2^9, GPU faster from 2^10).  Other ops were not measured: 0, the
 *    rule before issue 12 (device-only data stays on the GPU).
 */
#include <stdio.h>

#include "state.h"

#define POW2(x) ((size_t)1 << (x))
#define NEVER XPAR_NEVER

/* Where the values below were measured: data, quoted by decision records
 * (xpar__decision_format) beside every default they cite.  A value measured
 * by another run gets a record of its own. */
static const xpar__provenance calibrate_h100_2026_11_22 = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-22",
    .run = "xpar-bench calibrate, bench/results/h100-2026-11-22/calibrate.txt"};
#define H100 &calibrate_h100_2026_11_22

typedef struct default_value {
  size_t n;
  const xpar__provenance *from;
} default_value;

/* [op][kind] for 4-byte and for 8-byte dtypes. */
static const xpar__provenance calibrate_h100_2026_11_25 = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-25",
    .run = "xpar-bench calibrate --ops reduce,scan --dtypes int32,float,double, "
           "bench/results/h100-2026-11-25-regret/calibrate.txt (issue 12)"};
static const xpar__provenance device_only_not_measured = {
    .machine = "none: not measured",
    .date = "2026-11-25",
    .run = "0 keeps the rule before issue 12 (device-only data stays on the GPU)"};
#define H25 &calibrate_h100_2026_11_25
#define KEEP &device_only_not_measured

static const default_value default_4byte[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    /*                 OPENMP          GPU_DEVICE      GPU_PINNED    GPU_PAGEABLE  GPU_DEVICE_ONLY */
    [XPAR_OP_REDUCE] = {{POW2(17), H25}, {POW2(20), H25}, {NEVER, H25}, {NEVER, H25}, {POW2(9), H25}},
    [XPAR_OP_SCAN] = {{POW2(14), H25}, {POW2(17), H25}, {NEVER, H25}, {NEVER, H25}, {POW2(8), H25}},
    [XPAR_OP_AXPY] = {{POW2(15), H100}, {POW2(18), H100}, {NEVER, H100}, {NEVER, H100}, {0, KEEP}},
    [XPAR_OP_ADD] = {{POW2(15), H100}, {POW2(19), H100}, {NEVER, H100}, {NEVER, H100}, {0, KEEP}},
    [XPAR_OP_FILL] = {{POW2(15), H100}, {POW2(19), H100}, {NEVER, H100}, {NEVER, H100}, {0, KEEP}},
    [XPAR_OP_DOT] = {{POW2(14), H100}, {POW2(19), H100}, {NEVER, H100}, {NEVER, H100}, {0, KEEP}},
};
static const default_value default_8byte[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(15), H25}, {POW2(19), H25}, {NEVER, H25}, {NEVER, H25}, {POW2(8), H25}},
    [XPAR_OP_SCAN] = {{POW2(14), H25}, {POW2(17), H25}, {NEVER, H25}, {NEVER, H25}, {POW2(4), H25}},
    [XPAR_OP_AXPY] = {{POW2(14), H100}, {POW2(17), H100}, {NEVER, H100}, {NEVER, H100}, {0, KEEP}},
    [XPAR_OP_ADD] = {{POW2(14), H100}, {POW2(18), H100}, {NEVER, H100}, {NEVER, H100}, {0, KEEP}},
    [XPAR_OP_FILL] = {{POW2(14), H100}, {POW2(19), H100}, {NEVER, H100}, {NEVER, H100}, {0, KEEP}},
    [XPAR_OP_DOT] = {{POW2(13), H100}, {POW2(18), H100}, {NEVER, H100}, {NEVER, H100}, {0, KEEP}},
};
/* 4-byte integer scans (int32, uint32), where they differ from float's (see
 * above); 8-byte integer scans were not measured and keep the 8-byte row. */
static const default_value int_scan_4byte[XPAR_THRESHOLD_COUNT_] = {
    {POW2(15), H25}, {POW2(18), H25}, {NEVER, H25}, {NEVER, H25}, {POW2(8), H25}};
#undef H100
#undef H25
#undef KEEP

static const default_value *default_of(int op, int dt, int k) {
  if (op == XPAR_OP_SCAN && (dt == XPAR_INT32 || dt == XPAR_UINT32)) return &int_scan_4byte[k];
  return xpar__dtype_size((xpar_dtype)dt) == 8 ? &default_8byte[op][k] : &default_4byte[op][k];
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
