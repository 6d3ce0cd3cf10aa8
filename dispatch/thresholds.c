/*
 * Built-in crossover thresholds: data, not code.  A calibration profile
 * (xpar-bench calibrate) overrides them, the environment overrides both, and
 * xpar_context_set_threshold() overrides everything for one context.
 *
 * Source: ../shared/anchors.md, "Measured on the lent H100 machine (H100 80GB
 * HBM3, 16 host cores), 2026-11-22", synchronous calls, medians:
 *  - serial -> OpenMP: ~2^14 for reduce and scan (a parallel region costs
 *    ~4.8 us; a serial 2^13-int sum 2.9 us).  Elementwise ops move 2-3x the
 *    bytes per element, and dot 2x: the same element count is a fair first
 *    guess for them too (the region cost dominates below it).
 *  - CPU -> GPU, data on the device: reduce ~2^19-2^20, scan ~2^16-2^17
 *    (the product card: ~50K for scan).  Elementwise and dot ops have no
 *    result to bring back (dot has one) and move more bytes per element
 *    than reduce, so they pay off earlier: 2^17 (dot 2^18), by the same
 *    ~15 us GPU call cost against 68 GB/s of 16-thread CPU bandwidth.
 *  - CPU -> GPU, data on the host (transfer counted): reduce never (PCIe is
 *    slower than CPU memory), scan 2^25 from pinned memory, never from
 *    pageable memory.  Elementwise ops move more bytes over PCIe than the
 *    CPU moves through memory: never.
 * The figures are elements of 4-byte types; 8-byte types cross at half the
 * element count (same bytes), except "never".
 */
#include "context.h"

#define K(x) ((size_t)1 << (x))

/* Thresholds for 4-byte dtypes, indexed [op][kind]. */
static const size_t default_4byte[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    /*                OPENMP  GPU_DEVICE  GPU_PINNED  GPU_PAGEABLE */
    [XPAR_OP_REDUCE] = {K(14), K(19), XPAR_NEVER, XPAR_NEVER},
    [XPAR_OP_SCAN] = {K(14), K(16), K(25), XPAR_NEVER},
    [XPAR_OP_AXPY] = {K(14), K(17), XPAR_NEVER, XPAR_NEVER},
    [XPAR_OP_ADD] = {K(14), K(17), XPAR_NEVER, XPAR_NEVER},
    [XPAR_OP_FILL] = {K(14), K(17), XPAR_NEVER, XPAR_NEVER},
    [XPAR_OP_DOT] = {K(14), K(18), XPAR_NEVER, XPAR_NEVER},
};

void xpar__thresholds_default(size_t t[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_]) {
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int dt = 0; dt < XPAR_DTYPE_COUNT_; dt++)
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++) {
        size_t v = default_4byte[op][k];
        if (v != XPAR_NEVER && xpar__dtype_size((xpar_dtype)dt) == 8) v /= 2;
        t[op][dt][k] = v;
      }
}

const char *xpar__threshold_name(xpar_threshold which) {
  switch (which) {
    case XPAR_THRESHOLD_OPENMP: return "openmp";
    case XPAR_THRESHOLD_GPU_DEVICE_DATA: return "gpu (device data)";
    case XPAR_THRESHOLD_GPU_PINNED_DATA: return "gpu (pinned host data)";
    case XPAR_THRESHOLD_GPU_PAGEABLE_DATA: return "gpu (pageable host data)";
    default: return "?";
  }
}
