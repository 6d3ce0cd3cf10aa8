/* One call, as api/ hands it to dispatch after validating it. */
#ifndef XPAR_DISPATCH_DISPATCH_H
#define XPAR_DISPATCH_DISPATCH_H

#include "state.h"
#include "xpar/xpar_kernel.h"

/* A kernel launch (xpar_launch), as api/ hands it over: the arguments copied
 * (scalars by value), and the context's thresholds for the kernel. */
typedef enum xpar__kernel_kind {
  XPAR__KERNEL_LAUNCH = 0, /* xpar_launch: kernel, args        */
  XPAR__KERNEL_REDUCE,     /* xpar_reduce_op: op, args[0] = in, result */
  XPAR__KERNEL_SCAN        /* xpar_scan_op: op, args[0] = in, args[1] = out */
} xpar__kernel_kind;

typedef struct xpar__kernel_call {
  xpar__kernel_kind kind;
  const char *name;                /* the kernel's or operator's    */
  int has_cpu, has_gpu;            /* the sides built               */
  const xpar_kernel *kernel;       /* LAUNCH                        */
  const xpar_operator *op;         /* REDUCE, SCAN                  */
  xpar_scan_kind scan_kind;        /* SCAN                          */
  void *result;                    /* REDUCE: host accumulator      */
  const xpar__kernel_entry *entry;
  int nargs;
  xpar_arg args[XPAR_KERNEL_MAX_ARGS];
  size_t bytes[XPAR_KERNEL_MAX_ARGS]; /* arrays: count * the dtype's size */
  xpar_kernel_args values;            /* scalars already in place */
} xpar__kernel_call;

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
  const xpar__kernel_call *kernel; /* xpar_launch; NULL for the built-in ops */
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
