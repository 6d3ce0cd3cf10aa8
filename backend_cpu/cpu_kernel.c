/*
 * Application kernels on the CPU (xpar/xpar_kernel.h): the kernel object's
 * CPU loop was compiled in the application's translation unit, with the
 * application's OpenMP; this backend only tells it how many threads.
 */
#include "cpu_internal.h"
#include "xpar/xpar_kernel.h"

_Static_assert(XPAR__CPU_MAX_THREADS == XPAR__KERNEL_MAX_THREADS_,
               "application loops and the built-in ops keep one thread cap");

/* The num_threads an application loop's region gets: one thread in index
 * order for the serial tiers (printf comes out in order, as on cuda-serial);
 * else the team the built-in ops' regions open (xpar__cpu_region_size: the
 * context's thread count, else the OpenMP runtime's default, at most
 * XPAR__CPU_MAX_THREADS) -- the default resolved here too, since
 * OMP_NUM_THREADS may ask for more than the cap.  The setter takes any count
 * >= 0, and a region of 100,000 threads crashed inside libgomp where the
 * built-in ops ran 256.  A library built without OpenMP cannot ask the
 * runtime: 0 goes to the loop, whose own macro caps it (xpar_kernel.h). */
static int loop_threads(const xpar__exec *ex) {
  if (ex->serial || ex->num_threads == 1) return 1;
#if defined(XPAR_HAVE_OPENMP)
  return xpar__cpu_region_size(ex);
#else
  return ex->num_threads > XPAR__CPU_MAX_THREADS ? XPAR__CPU_MAX_THREADS : ex->num_threads;
#endif
}

xpar_status xpar__cpu_launch(const xpar__exec *ex, const xpar_kernel *k, size_t n,
                             const xpar_kernel_args *args) {
  XPAR__RETURN_IF(!k->cpu, XPAR_ERR_NOT_SUPPORTED, "kernel %s has no CPU variant", k->name);
  if (n == 0) return XPAR_OK;
  k->cpu(n, args, loop_threads(ex));
  return XPAR_OK;
}

xpar_status xpar__cpu_op_reduce(const xpar__exec *ex, const xpar_operator *op, size_t n,
                                const void *in, void *result) {
  XPAR__RETURN_IF(!op->cpu_reduce, XPAR_ERR_NOT_SUPPORTED, "operator %s has no CPU variant",
                  op->name);
  op->cpu_reduce(n, in, result, loop_threads(ex));
  return XPAR_OK;
}

xpar_status xpar__cpu_op_scan(const xpar__exec *ex, const xpar_operator *op, xpar_scan_kind kind,
                              size_t n, const void *in, void *out) {
  XPAR__RETURN_IF(!op->cpu_scan, XPAR_ERR_NOT_SUPPORTED, "operator %s has no CPU variant",
                  op->name);
  if (n) op->cpu_scan(n, in, out, kind == XPAR_EXCLUSIVE, loop_threads(ex));
  return XPAR_OK;
}
