/* The split tier (cpu+cuda): one call on host data run by the CPU's OpenMP
 * team and the GPU at once (split.c; xpar.h, xpar_context_set_split). */
#ifndef XPAR_DISPATCH_SPLIT_H
#define XPAR_DISPATCH_SPLIT_H

#include "dispatch.h"

/** Bits of xpar__run_split's `pinned`: which arrays are pinned host memory
 *  (the others are pageable and go through the context's pinned staging). */
enum { XPAR__SPLIT_X_PINNED = 1, XPAR__SPLIT_Y_PINNED = 2, XPAR__SPLIT_OUT_PINNED = 4 };

/**
 * Run call c (an op xpar__op_splits covers, n > 0) on both sides: elements
 * [0, m) on the OpenMP tier, [m, n) on the GPU, combined as one tier would.
 * x, y, out, out2 (a histogram's counts) and result are host memory (c's own,
 * or shadow mode's copies);
 * m comes from the context's split share for `memory` (d records it), or from
 * the reproducible block tree.  Before anything is written: GPU memory or
 * staging that cannot be had fails (XPAR_ERR_DEVICE_OUT_OF_MEMORY for the
 * device's).  A GPU failure found when its part is waited for: with
 * `recover`, the GPU's part is computed on the CPU and d says so; else the
 * error is returned (the CPU's part of an output array may be written; a
 * histogram's counts are not).
 */
xpar_status xpar__run_split(xpar_context *ctx, const xpar__call *c, const void *x,
                            const void *y, void *out, void *out2, void *result, unsigned pinned,
                            xpar_split_memory memory, int recover, xpar__decision_raw *d);

#endif
