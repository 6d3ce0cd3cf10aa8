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

/* An application predicate (XPAR_PREDICATE).  Serial: one copying pass (a
 * partition counts first, to know where the rest begins).  OpenMP: each part
 * of a team counts its contiguous range, the counts' prefix gives every part
 * its place, then each part copies its range there -- the predicate runs
 * twice per element, the input is read twice, the output written once. */
xpar_status xpar__cpu_op_select(const xpar__exec *ex, const xpar_predicate_op *pred,
                                int partition, size_t n, const void *in, void *out,
                                uint64_t *count) {
  XPAR__RETURN_IF(!pred->cpu_count || !pred->cpu_scatter, XPAR_ERR_NOT_SUPPORTED,
                  "predicate %s has no CPU variant", pred->name);
  const size_t es = pred->in_size;
  unsigned char *o = (unsigned char *)out;
  const int team = ex->serial ? 1 : xpar__cpu_team_size(ex, n);
  if (team <= 1) {
    if (!partition) {
      *count = n ? pred->cpu_scatter(in, 0, n, out, NULL) : 0;
      return XPAR_OK;
    }
    const size_t kept = n ? pred->cpu_count(in, 0, n) : 0;
    if (n) pred->cpu_scatter(in, 0, n, out, o + kept * es);
    *count = kept;
    return XPAR_OK;
  }
  size_t kept_in[XPAR__CPU_MAX_THREADS + 1];
  int used = 1;
  XPAR__CPU_PRAGMA(omp parallel num_threads(xpar__cpu_region_size(ex)))
  {
    const int id = xpar__cpu_thread_num(), parts = xpar__cpu_parts_in_region(team);
    size_t lo = 0, hi = 0;
    if (id < parts) {
      xpar__cpu_split(0, n, id, parts, &lo, &hi);
      kept_in[id + 1] = pred->cpu_count(in, lo, hi);
    }
    XPAR__CPU_PRAGMA(omp barrier)
    XPAR__CPU_PRAGMA(omp single)
    {
      used = parts;
      kept_in[0] = 0;
      for (int p = 1; p <= parts; p++) kept_in[p] += kept_in[p - 1]; /* now: kept before part p */
    }
    /* the single's implied barrier publishes kept_in */
    if (id < parts) {
      const size_t before = kept_in[id], total = kept_in[parts];
      /* rejected before this part: its first index minus the kept before it */
      void *rest = partition ? o + (total + (lo - before)) * es : NULL;
      pred->cpu_scatter(in, lo, hi, o + before * es, rest);
    }
  }
  *count = kept_in[used];
  return XPAR_OK;
}
