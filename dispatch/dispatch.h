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

/** Decide where the call runs, move what must move, run it, record why. */
xpar_status xpar__dispatch(xpar_context *ctx, const xpar__call *call);

#endif
