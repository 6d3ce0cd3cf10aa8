/*
 * Application kernels on the CPU (xpar/xpar_kernel.h): the kernel object's
 * CPU loop was compiled in the application's translation unit, with the
 * application's OpenMP; this backend only tells it how many threads.
 */
#include "cpu_internal.h"
#include "xpar/xpar_kernel.h"

xpar_status xpar__cpu_launch(const xpar__exec *ex, const xpar_kernel *k, size_t n,
                             const xpar_kernel_args *args) {
  XPAR__RETURN_IF(!k->cpu, XPAR_ERR_NOT_SUPPORTED, "kernel %s has no CPU variant", k->name);
  if (n == 0) return XPAR_OK;
  /* One thread in index order for the serial tiers (printf comes out in
   * order, as on cuda-serial); else the context's thread count, 0 meaning the
   * OpenMP runtime's default. */
  k->cpu(n, args, ex->serial || ex->num_threads == 1 ? 1 : ex->num_threads);
  return XPAR_OK;
}

/* One thread for the serial tiers: the operator's loop in index order. */
static int operator_threads(const xpar__exec *ex) {
  return ex->serial || ex->num_threads == 1 ? 1 : ex->num_threads;
}

xpar_status xpar__cpu_op_reduce(const xpar__exec *ex, const xpar_operator *op, size_t n,
                                const void *in, void *result) {
  XPAR__RETURN_IF(!op->cpu_reduce, XPAR_ERR_NOT_SUPPORTED, "operator %s has no CPU variant",
                  op->name);
  op->cpu_reduce(n, in, result, operator_threads(ex));
  return XPAR_OK;
}

xpar_status xpar__cpu_op_scan(const xpar__exec *ex, const xpar_operator *op, xpar_scan_kind kind,
                              size_t n, const void *in, void *out) {
  XPAR__RETURN_IF(!op->cpu_scan, XPAR_ERR_NOT_SUPPORTED, "operator %s has no CPU variant",
                  op->name);
  if (n) op->cpu_scan(n, in, out, kind == XPAR_EXCLUSIVE, operator_threads(ex));
  return XPAR_OK;
}
