/* One call's operation on one backend, with the pointers that side reaches
 * (dispatch.h, xpar__run_op): the entry each op and mode takes, and the spec
 * structs (base/backend.h) built from the call.  Used by every path that runs
 * a call: dispatch.c's tiers, the split tier (split.c) and shadow mode. */
#include "dispatch.h"

static xpar_status run_repro(const xpar__backend *b, const xpar__exec *ex, const xpar__call *c,
                             const void *x, const void *y, void *out, void *result) {
  XPAR__RETURN_IF(!b->repro_reduce || !b->repro_scan, XPAR_ERR_NOT_SUPPORTED,
                  "the %s backend has no reproducible mode", b->name);
  if (c->op == XPAR_OP_SCAN)
    return b->repro_scan(ex, c->dtype, c->kind, c->has_init ? &c->init : NULL, x, out, c->n);
  xpar__repro_kind k = c->op == XPAR_OP_DOT ? XPAR__REPRO_DOT
                       : c->wide            ? XPAR__REPRO_WIDE
                                            : XPAR__REPRO_SUM;
  return b->repro_reduce(ex, k, c->dtype, x, y, c->n, result);
}

/* A sort as the backend takes it: the call's fields and the pointers the
 * running side reaches. */
static xpar_status run_sort(const xpar__backend *b, const xpar__exec *ex, const xpar__call *c,
                            const void *keys_in, const void *values_in, void *keys_out,
                            void *values_out) {
  XPAR__RETURN_IF(!b->sort, XPAR_ERR_NOT_SUPPORTED, "the %s backend has no sort", b->name);
  const xpar__sort_spec s = {.key_dtype = c->dtype,
                             .value_dtype = c->dtype2,
                             .descending = c->sort_descending,
                             .values_are_indices = c->sort_indices,
                             .keys_in = keys_in,
                             .keys_out = keys_out,
                             .values_in = values_in,
                             .values_out = values_out,
                             .n = c->n};
  return b->sort(ex, &s);
}

/* A compaction call as the backend takes it; the count is the call's result. */
static xpar_status run_select(const xpar__backend *b, const xpar__exec *ex, const xpar__call *c,
                              const void *in, const void *flags, void *out, void *count) {
  XPAR__RETURN_IF(!b->select, XPAR_ERR_NOT_SUPPORTED, "the %s backend has no compaction",
                  b->name);
  const xpar__select_spec s = {.kind = (xpar__select_kind)c->select_kind,
                               .dtype = c->dtype,
                               .pred = c->pred,
                               .value = c->pred_value,
                               .hi = c->pred_hi,
                               .in = in,
                               .flags = (const unsigned char *)flags,
                               .out = out,
                               .n = c->n,
                               .count = (uint64_t *)count};
  return b->select(ex, &s);
}

/* A runs call as the backend takes it; the number of runs is the call's result. */
static xpar_status run_runs(const xpar__backend *b, const xpar__exec *ex, const xpar__call *c,
                            const void *keys_in, const void *values_in, void *keys_out,
                            void *values_out, void *count) {
  XPAR__RETURN_IF(!b->runs, XPAR_ERR_NOT_SUPPORTED, "the %s backend has no runs", b->name);
  const xpar__runs_spec s = {.key_dtype = c->dtype,
                             .value_dtype = c->dtype2,
                             .op = c->red,
                             .lengths = c->runs_lengths,
                             .keys_in = keys_in,
                             .values_in = c->runs_lengths ? NULL : values_in,
                             .keys_out = keys_out,
                             .values_out = values_out,
                             .n = c->n,
                             .count = (uint64_t *)count};
  return b->runs(ex, &s);
}

/* Argmin / argmax or a segmented call as the backend takes it.  Reproducible
 * mode: a segmented float or double SUM reduce or scan is each segment's
 * reproducible sum or scan (the backends compute it, ex->reproducible). */
static xpar_status run_segmented(const xpar__backend *b, const xpar__exec *ex,
                                 const xpar__call *c, const void *in, const void *offsets,
                                 void *out, void *index) {
  XPAR__RETURN_IF(!b->segmented, XPAR_ERR_NOT_SUPPORTED,
                  "the %s backend has no segmented reduce / scan or argmin", b->name);
  const xpar__seg_spec s = {.kind = (xpar__seg_kind)c->seg_kind,
                            .dtype = c->dtype,
                            .op = c->red,
                            .scan_kind = c->kind,
                            .in = in,
                            .n = c->n,
                            .offsets = offsets,
                            .offset_dtype = c->offset_dtype,
                            .segment_size = c->segment_size,
                            .n_segments = c->n_segments,
                            .out = out,
                            .index = (int64_t *)index,
                            .report = !c->nowait};
  return b->segmented(ex, &s);
}

/* A histogram as the backend takes it: the samples and counts the running side
 * reaches, the boundaries (host memory) and even parameters from the call. */
static xpar_status run_histogram(const xpar__backend *b, const xpar__exec *ex,
                                 const xpar__call *c, const void *samples, void *counts) {
  XPAR__RETURN_IF(!b->histogram, XPAR_ERR_NOT_SUPPORTED, "the %s backend has no histogram",
                  b->name);
  const xpar__histogram_spec s = {.dtype = c->dtype,
                                  .samples = samples,
                                  .n = c->n,
                                  .num_bins = c->hist_bins,
                                  .boundaries = c->hist_bounds,
                                  .even = &c->hist_even,
                                  .counts = (uint64_t *)counts};
  return b->histogram(ex, &s);
}

xpar_status xpar__run_op(const xpar__backend *b, const xpar__exec *ex, const xpar__call *c,
                         const void *x, const void *y, void *out, void *out2, void *result) {
  if (xpar__repro_covers(ex->reproducible, c)) return run_repro(b, ex, c, x, y, out, result);
  switch (c->op) {
    case XPAR_OP_REDUCE:
      return c->wide ? b->reduce_sum_wide(ex, c->dtype, x, c->n, result)
                     : b->reduce(ex, c->dtype, c->red, x, c->n, result);
    case XPAR_OP_SCAN:
      return b->scan(ex, c->dtype, c->red, c->kind, c->has_init ? &c->init : NULL, x, out, c->n);
    case XPAR_OP_AXPY: return b->axpy(ex, c->dtype, c->scalar, x, out, c->n);
    case XPAR_OP_ADD: return b->add(ex, c->dtype, x, y, out, c->n);
    case XPAR_OP_FILL: return b->fill(ex, c->dtype, c->scalar, out, c->n);
    case XPAR_OP_DOT: return b->dot(ex, c->dtype, x, y, c->n, result);
    case XPAR_OP_SORT: return run_sort(b, ex, c, x, y, out, out2);
    case XPAR_OP_SELECT: return run_select(b, ex, c, x, y, out, result);
    case XPAR_OP_RUNS: return run_runs(b, ex, c, x, y, out, out2, result);
    case XPAR_OP_ARGREDUCE:
    case XPAR_OP_SEGMENTED: return run_segmented(b, ex, c, x, y, out, out2);
    case XPAR_OP_HISTOGRAM: return run_histogram(b, ex, c, x, out2);
    default: return xpar__fail(XPAR_ERR_INTERNAL, "unknown op %d", (int)c->op);
  }
}
