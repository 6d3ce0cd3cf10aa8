/*
 * Built-in crossover thresholds: data, not code.  A calibration profile
 * (xpar-bench calibrate) overrides them, the environment overrides both, and
 * xpar_context_set_threshold() overrides everything for one context.
 *
 * Source: `xpar-bench calibrate` on the lent H100 machine (H100 80GB HBM3,
 * 16-core host), 2026-11-22, bench/results/h100-2026-11-22/calibrate.txt:
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
 *  - GPU_DEVICE_ONLY_DATA (issue 12): below it, data valid only on the
 *    device is copied to the host and run on the CPU.  Provisional values
 *    from issue 12's outside measurement on the H100 machine (device data,
 *    2^8..2^10: CUDA 11-13 us per call, a copy to the host plus a serial loop
 *    10-11 us; a kernel launch + synchronise alone 8.8 us, a 4-byte D2H copy
 *    6.6 us, anchors.md): reduce and dot 2^11 (4-byte) / 2^10 (8-byte), a
 *    scan copies in and out: 2^9 / 2^8; `xpar-bench calibrate` measures it.
 */
#include "context.h"

#define POW2(x) ((size_t)1 << (x))
#define NEVER XPAR_NEVER

/* [op][kind] for 4-byte and for 8-byte dtypes. */
static const size_t default_4byte[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    /*                OPENMP  GPU_DEVICE  GPU_PINNED  GPU_PAGEABLE  GPU_DEVICE_ONLY */
    [XPAR_OP_REDUCE] = {POW2(17), POW2(20), NEVER, NEVER, POW2(11)},
    [XPAR_OP_SCAN] = {POW2(14), POW2(17), NEVER, NEVER, POW2(9)},
    [XPAR_OP_AXPY] = {POW2(15), POW2(18), NEVER, NEVER, POW2(8)},
    [XPAR_OP_ADD] = {POW2(15), POW2(19), NEVER, NEVER, POW2(8)},
    [XPAR_OP_FILL] = {POW2(15), POW2(19), NEVER, NEVER, POW2(9)},
    [XPAR_OP_DOT] = {POW2(14), POW2(19), NEVER, NEVER, POW2(10)},
};
static const size_t default_8byte[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {POW2(14), POW2(20), NEVER, NEVER, POW2(10)},
    [XPAR_OP_SCAN] = {POW2(13), POW2(18), NEVER, NEVER, POW2(8)},
    [XPAR_OP_AXPY] = {POW2(14), POW2(17), NEVER, NEVER, POW2(7)},
    [XPAR_OP_ADD] = {POW2(14), POW2(18), NEVER, NEVER, POW2(7)},
    [XPAR_OP_FILL] = {POW2(14), POW2(19), NEVER, NEVER, POW2(8)},
    [XPAR_OP_DOT] = {POW2(13), POW2(18), NEVER, NEVER, POW2(9)},
};

void xpar__thresholds_default(size_t t[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_]) {
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int dt = 0; dt < XPAR_DTYPE_COUNT_; dt++)
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++)
        t[op][dt][k] = xpar__dtype_size((xpar_dtype)dt) == 8 ? default_8byte[op][k]
                                                            : default_4byte[op][k];
}
