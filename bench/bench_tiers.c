/*
 * The tier table of xpar-bench: each xpar tier is a context with a backend
 * policy, set through the public API only; "plain" is the op's OpenMP
 * baseline written in the bench itself.
 */
#include <string.h>

#include "bench.h"

static const bench_tier tiers[] = {
    /* name          kind                 backend                    omp gpu on never-omp */
    {"serial", BENCH_TIER_XPAR, XPAR_BACKEND_CPU_SERIAL, 0, 0, 1, 0},
    {"openmp", BENCH_TIER_XPAR, XPAR_BACKEND_CPU, 1, 0, 1, 0},
    {"cuda", BENCH_TIER_XPAR, XPAR_BACKEND_CUDA, 0, 1, 1, 0},
    /* grid = block = 1: a debugging mode, minutes at large n; opt-in */
    {"cuda-serial", BENCH_TIER_XPAR, XPAR_BACKEND_CUDA_SERIAL, 0, 1, 0, 0},
    {"auto", BENCH_TIER_XPAR, XPAR_BACKEND_AUTO, 0, 0, 1, 0},
    /* XPAR_BACKEND_CPU below its OpenMP threshold at every n: AUTO's one-thread tier
     * (vectorised, regrouped float sums), which the serial backend's strict element
     * order is not; the regret bench's alternative, not a sweep column by default */
    {"one-thread", BENCH_TIER_XPAR, XPAR_BACKEND_CPU, 0, 0, 0, 1},
    {"plain", BENCH_TIER_BASELINE, XPAR_BACKEND_CPU, 0, 0, 1, 0},
    /* the split tier: both sides at once on host data (its settings from the
     * profile); a sweep column with --tiers only */
    {"cpu+cuda", BENCH_TIER_XPAR, XPAR_BACKEND_CPU_CUDA, 0, 1, 0, 0},
};

int bench_tier_count(void) { return (int)(sizeof tiers / sizeof tiers[0]); }
const bench_tier *bench_tier_at(int i) {
  return (i >= 0 && i < bench_tier_count()) ? &tiers[i] : NULL;
}

xpar_status bench_tier_open(bench_tier_run *tr, const bench_tier *tier, int threads) {
  memset(tr, 0, sizeof *tr);
  tr->tier = tier;
  if (tier->kind != BENCH_TIER_XPAR) return XPAR_OK;
  xpar_status st = xpar_context_create(&tr->ctx);
  if (st != XPAR_OK) return st;
  st = xpar_context_set_backend(tr->ctx, tier->backend);
  if (st == XPAR_OK && threads > 0) st = xpar_context_set_num_threads(tr->ctx, threads);
  /* The openmp tier: CPU always takes OpenMP, at every n; the one-thread tier never. */
  for (int op = 0; st == XPAR_OK && (tier->force_openmp || tier->never_openmp) &&
                   op < XPAR_OP_COUNT_;
       ++op)
    for (int t = 0; st == XPAR_OK && t < XPAR_DTYPE_COUNT_; ++t)
      st = xpar_context_set_threshold(tr->ctx, (xpar_op)op, (xpar_dtype)t, XPAR_THRESHOLD_OPENMP,
                                      tier->never_openmp ? XPAR_NEVER : 0);
  if (st != XPAR_OK) {
    xpar_context_destroy(tr->ctx);
    tr->ctx = NULL;
  }
  return st;
}

void bench_tier_close(bench_tier_run *tr) {
  if (tr->ctx) xpar_context_destroy(tr->ctx);
  tr->ctx = NULL;
}

/* The arrays of a case and whether the device copy must start valid. */
static int case_arrays(bench_case *c, const bench_op *op, void **arr, int *to_device) {
  int k = 0;
  arr[k] = c->x, to_device[k++] = 1;
  if (c->y) arr[k] = c->y, to_device[k++] = 1;
  if (c->out) arr[k] = c->out, to_device[k++] = 0;
  (void)op;
  return k;
}

xpar_status bench_tier_map(bench_tier_run *tr, bench_case *c, const bench_op *op) {
  if (!tr->ctx || c->n == 0) return XPAR_OK;
  void *arr[3];
  int to_dev[3];
  int k = case_arrays(c, op, arr, to_dev);
  for (int i = 0; i < k; ++i) {
    xpar_status st = xpar_map(tr->ctx, arr[i], c->n * c->esize, to_dev[i] ? XPAR_MAP_TO : XPAR_MAP_ALLOC);
    if (st != XPAR_OK) {
      for (int j = 0; j < i; ++j) xpar_unmap(tr->ctx, arr[j], XPAR_UNMAP_RELEASE);
      return st;
    }
  }
  tr->mapped = 1;
  return XPAR_OK;
}

void bench_tier_unmap(bench_tier_run *tr, bench_case *c, const bench_op *op) {
  if (!tr->mapped) return;
  void *arr[3];
  int to_dev[3];
  int k = case_arrays(c, op, arr, to_dev);
  for (int i = 0; i < k; ++i) xpar_unmap(tr->ctx, arr[i], XPAR_UNMAP_RELEASE);
  tr->mapped = 0;
}

xpar_status bench_tier_call(bench_tier_run *tr, bench_case *c, const bench_op *op, int threads,
                            int fetch) {
  if (tr->tier->kind == BENCH_TIER_BASELINE) {
    op->baseline(c, threads);
    return XPAR_OK;
  }
  /* a checked run starts from freshly reset host arrays: push axpy's y */
  if (fetch && tr->mapped && op->op == XPAR_OP_AXPY) {
    xpar_status st = xpar_update(tr->ctx, c->y, XPAR_UPDATE_TO_DEVICE);
    if (st != XPAR_OK) return st;
  }
  xpar_status st = op->run(tr->ctx, c);
  if (st == XPAR_OK && fetch && tr->mapped && op->has_array_output) {
    /* Only a GPU run leaves the result in the device copy: after a CPU run
     * (a CPU tier, or AUTO choosing the CPU) the host copy holds it, and
     * fetching would overwrite it with the stale device copy. */
    xpar_decision d;
    st = xpar_last_decision(tr->ctx, &d);
    if (st == XPAR_OK && (d.tier == XPAR_TIER_CUDA || d.tier == XPAR_TIER_CUDA_SERIAL))
      st = xpar_update(tr->ctx, op->op == XPAR_OP_AXPY ? c->y : c->out, XPAR_UPDATE_FROM_DEVICE);
  }
  return st;
}

int bench_timed_call(void *arg) {
  bench_call_arg *a = (bench_call_arg *)arg;
  return bench_tier_call(a->tr, a->c, a->op, a->threads, 0) == XPAR_OK;
}
