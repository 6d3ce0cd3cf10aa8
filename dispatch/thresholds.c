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
static const default_value default_4byte[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    /*                 OPENMP          GPU_DEVICE      GPU_PINNED    GPU_PAGEABLE */
    [XPAR_OP_REDUCE] = {{POW2(17), H100}, {POW2(20), H100}, {NEVER, H100}, {NEVER, H100}},
    [XPAR_OP_SCAN] = {{POW2(14), H100}, {POW2(17), H100}, {NEVER, H100}, {NEVER, H100}},
    [XPAR_OP_AXPY] = {{POW2(15), H100}, {POW2(18), H100}, {NEVER, H100}, {NEVER, H100}},
    [XPAR_OP_ADD] = {{POW2(15), H100}, {POW2(19), H100}, {NEVER, H100}, {NEVER, H100}},
    [XPAR_OP_FILL] = {{POW2(15), H100}, {POW2(19), H100}, {NEVER, H100}, {NEVER, H100}},
    [XPAR_OP_DOT] = {{POW2(14), H100}, {POW2(19), H100}, {NEVER, H100}, {NEVER, H100}},
};
static const default_value default_8byte[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(14), H100}, {POW2(20), H100}, {NEVER, H100}, {NEVER, H100}},
    [XPAR_OP_SCAN] = {{POW2(13), H100}, {POW2(18), H100}, {NEVER, H100}, {NEVER, H100}},
    [XPAR_OP_AXPY] = {{POW2(14), H100}, {POW2(17), H100}, {NEVER, H100}, {NEVER, H100}},
    [XPAR_OP_ADD] = {{POW2(14), H100}, {POW2(18), H100}, {NEVER, H100}, {NEVER, H100}},
    [XPAR_OP_FILL] = {{POW2(14), H100}, {POW2(19), H100}, {NEVER, H100}, {NEVER, H100}},
    [XPAR_OP_DOT] = {{POW2(13), H100}, {POW2(18), H100}, {NEVER, H100}, {NEVER, H100}},
};
#undef H100

static const default_value *default_of(int op, int dt, int k) {
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
