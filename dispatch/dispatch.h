/* One call, as api/ hands it to dispatch after validating it. */
#ifndef XPAR_DISPATCH_DISPATCH_H
#define XPAR_DISPATCH_DISPATCH_H

#include "state.h"

typedef struct xpar__call {
  xpar_op op;
  int wide;               /* reduce: xpar_reduce_sum_wide */
  xpar_dtype dtype;
  xpar_reduction red;     /* reduce, scan */
  xpar_scan_kind kind;    /* scan */
  xpar_dtype result_dtype; /* reduce, dot: the scalar result's dtype (the wide
                              dtype for xpar_reduce_sum_wide); beside the enums,
                              where it fills what would be padding */
  size_t n;
  size_t bytes;           /* n * the dtype's size: every array operand's size  */
  const void *x;          /* first input (reduce, scan, axpy, add, dot)      */
  const void *y;          /* second input (add, dot); axpy's y is `out`      */
  void *out;              /* array output (scan, axpy's y, add's z, fill)    */
  const void *scalar;     /* axpy alpha, fill value (host)                    */
  void *result;           /* reduce, dot: host scalar (device with nowait)    */
  int has_init;           /* scan: init holds the carry-in; 0 = the identity */
  xpar__scalar init;      /* scan: a copy of the caller's *init              */
  int nowait;
} xpar__call;

/** The call on its primary tier only (dispatch.c). */
xpar_status xpar__dispatch_primary(xpar_context *ctx, const xpar__call *call);
/** The call on its primary tier, then on ctx->shadow_tier, compared (shadow.c). */
xpar_status xpar__dispatch_shadowed(xpar_context *ctx, const xpar__call *call);

/** Decide where the call runs, move what must move, run it, record why.
 *  With shadow mode on (shadow.c) the call also runs on the shadow tier and
 *  the two results are compared; off, that costs one branch. */
static inline xpar_status xpar__dispatch(xpar_context *ctx, const xpar__call *call) {
  if (ctx->shadow_tier != XPAR_TIER_NONE) return xpar__dispatch_shadowed(ctx, call);
  return xpar__dispatch_primary(ctx, call);
}

/** Run one call's operation on backend b with pointers it can reach: the
 *  reproducible entries when ex->reproducible covers the call, else the
 *  ordinary ones. */
xpar_status xpar__run_op(const xpar__backend *b, const xpar__exec *ex, const xpar__call *c,
                         const void *x, const void *y, void *out, void *result);

#endif
