/*
 * Application predicates (XPAR_PREDICATE, xpar/xpar_kernel.h): xpar_select_op and
 * xpar_partition_op, through the door of the kernels and operators.  Every
 * argument is checked here (nothing runs on bad input), then one xpar__call
 * carries the predicate to dispatch, which classifies, stages, decides and
 * records as for an operator; the count is the call's 8-byte result.
 */
#include <stdint.h>
#include <string.h>

#include "api.h"

static xpar_status check_predicate(const xpar_predicate_op *p) {
  XPAR__RETURN_IF(!p, XPAR_ERR_NULL_POINTER, "predicate is NULL");
  XPAR__RETURN_IF(p->abi != XPAR_KERNEL_ABI, XPAR_ERR_INVALID_ARGUMENT,
                  "predicate object at %p has layout version %u, this library expects %u "
                  "(rebuild it against this xpar)",
                  (const void *)p, p->abi, XPAR_KERNEL_ABI);
  XPAR__RETURN_IF(!p->name, XPAR_ERR_INVALID_ARGUMENT, "predicate object at %p has no name",
                  (const void *)p);
  XPAR__RETURN_IF(p->in_size == 0, XPAR_ERR_INVALID_ARGUMENT,
                  "predicate %s: element of 0 bytes; an element has at least 1 byte", p->name);
  XPAR__RETURN_IF(!xpar__power_of_two(p->in_align), XPAR_ERR_INVALID_ARGUMENT,
                  "predicate %s: element alignment %zu; an alignment is a power of two",
                  p->name, p->in_align);
  XPAR__RETURN_IF(!(p->cpu_count && p->cpu_scatter) && !p->gpu_flags, XPAR_ERR_NOT_SUPPORTED,
                  "predicate %s has neither a CPU nor a GPU test", p->name);
  return XPAR_OK;
}

static int overlaps(const void *a, size_t an, const void *b, size_t bn) {
  const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return an && bn && x < y + bn && y < x + an;
}

static xpar_status predicate_entered(xpar_context *ctx, const xpar_predicate_op *pred,
                                     int partition, const void *in, void *out, size_t n,
                                     size_t *count, int nowait) {
  xpar__kernel_call kc;
  memset(&kc, 0, sizeof kc);
  const char *what = partition ? "partition" : "select";
  xpar_status st = check_predicate(pred);
  if (st == XPAR_OK) st = xpar__check_app_array("predicate", pred->name, "in", in, n, pred->in_size,
                                                    pred->in_align, &kc.bytes[0]);
  if (st == XPAR_OK) st = xpar__check_app_array("predicate", pred->name, "out", out, n, pred->in_size,
                                                    pred->in_align, &kc.bytes[1]);
  if (st == XPAR_OK && !count)
    st = xpar__fail(XPAR_ERR_NULL_POINTER, "%s with predicate %s: count is NULL", what,
                    pred->name);
  if (st == XPAR_OK && nowait && ((uintptr_t)count & 7u))
    st = xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                    "%s with predicate %s: device_count (%p) is not aligned to 8 bytes", what,
                    pred->name, (void *)count);
  if (st == XPAR_OK && overlaps(in, kc.bytes[0], out, kc.bytes[1]))
    st = xpar__fail(XPAR_ERR_OVERLAP,
                    "%s with predicate %s: in [%p, +%zu bytes) overlaps out [%p, +%zu bytes); "
                    "a predicate's select or partition needs disjoint arrays",
                    what, pred->name, in, kc.bytes[0], (void *)out, kc.bytes[1]);
  if (st == XPAR_OK && (overlaps(count, sizeof *count, in, kc.bytes[0]) ||
                        overlaps(count, sizeof *count, out, kc.bytes[1])))
    st = xpar__fail(XPAR_ERR_OVERLAP, "%s with predicate %s: count (%p) lies inside in or out",
                    what, pred->name, (void *)count);
  xpar__kernel_entry *entry = NULL;
  if (st == XPAR_OK) st = xpar__kernel_entry_of(ctx, pred, pred->name, &entry);
  if (st != XPAR_OK) {
    /* A predicate's types are the application's: INT32, as a run records. */
    xpar__context_record_refused(ctx, XPAR_OP_KERNEL, XPAR_INT32, n,
                                 pred && pred->abi == XPAR_KERNEL_ABI ? pred->name : NULL);
    return st;
  }
  kc.kind = XPAR__KERNEL_SELECT;
  kc.name = pred->name;
  kc.has_cpu = pred->cpu_count && pred->cpu_scatter;
  /* The GPU compacts with the built-in select by flags: 4- and 8-byte elements. */
  kc.has_gpu = pred->gpu_flags && (pred->in_size == 4 || pred->in_size == 8);
  kc.pred = pred;
  kc.partition = partition;
  kc.result = count;
  kc.entry = entry;
  kc.nargs = 2;
  kc.args[0] = (xpar_arg){XPAR_ARG_READ, XPAR_INT32, n, in};
  /* A select writes out only up to the count: the rest must come back as it was. */
  kc.args[1] = (xpar_arg){partition ? XPAR_ARG_WRITE : XPAR_ARG_READ_WRITE, XPAR_INT32, n, out};
  xpar__call c;
  memset(&c, 0, sizeof c);
  c.op = XPAR_OP_KERNEL;
  c.dtype = XPAR_INT32; /* a predicate's types are the application's */
  c.result_dtype = XPAR_UINT64;
  c.n = n;
  c.nowait = nowait;
  c.kernel = &kc;
  /* Shadow mode compares the built-in ops' results only: predicates run once. */
  return xpar__dispatch_primary(ctx, &c);
}

XPAR_API xpar_status xpar_select_op(xpar_context *ctx, const xpar_predicate_op *pred,
                                    const void *in, void *out, size_t n, size_t *count) {
  XPAR__OP_THROUGH_CONTEXT(ctx, predicate_entered(ctx, pred, 0, in, out, n, count, 0));
}

XPAR_API xpar_status xpar_partition_op(xpar_context *ctx, const xpar_predicate_op *pred,
                                       const void *in, void *out, size_t n, size_t *count) {
  XPAR__OP_THROUGH_CONTEXT(ctx, predicate_entered(ctx, pred, 1, in, out, n, count, 0));
}

XPAR_API xpar_status xpar_select_op_nowait(xpar_context *ctx, const xpar_predicate_op *pred,
                                           const void *in, void *out, size_t n,
                                           size_t *device_count) {
  XPAR__OP_THROUGH_CONTEXT(ctx, predicate_entered(ctx, pred, 0, in, out, n, device_count, 1));
}

XPAR_API xpar_status xpar_partition_op_nowait(xpar_context *ctx, const xpar_predicate_op *pred,
                                              const void *in, void *out, size_t n,
                                              size_t *device_count) {
  XPAR__OP_THROUGH_CONTEXT(ctx, predicate_entered(ctx, pred, 1, in, out, n, device_count, 1));
}
