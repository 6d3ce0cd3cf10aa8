/* One call, as api/ hands it to dispatch after validating it. */
#ifndef XPAR_DISPATCH_DISPATCH_H
#define XPAR_DISPATCH_DISPATCH_H

#include "base/hist_bin.h"
#include "gpu.h"
#include "state.h"
#include "xpar/xpar_kernel.h"

/* A kernel launch (xpar_launch), as api/ hands it over: the arguments copied
 * (scalars by value), and the context's thresholds for the kernel. */
typedef enum xpar__kernel_kind {
  XPAR__KERNEL_LAUNCH = 0, /* xpar_launch: kernel, args        */
  XPAR__KERNEL_REDUCE,     /* xpar_reduce_op: op, args[0] = in, result */
  XPAR__KERNEL_SCAN,       /* xpar_scan_op: op, args[0] = in, args[1] = out */
  XPAR__KERNEL_SELECT      /* xpar_select_op / _partition_op: pred, args[0] = in,
                              args[1] = out, result = the count (8 bytes) */
} xpar__kernel_kind;

typedef struct xpar__kernel_call {
  xpar__kernel_kind kind;
  const char *name;                /* the kernel's or operator's    */
  int has_cpu, has_gpu;            /* the sides built               */
  const xpar_kernel *kernel;       /* LAUNCH                        */
  const xpar_operator *op;         /* REDUCE, SCAN                  */
  const xpar_predicate_op *pred;   /* SELECT                        */
  int partition;                   /* SELECT: a stable partition    */
  xpar_scan_kind scan_kind;        /* SCAN                          */
  void *result;                    /* REDUCE: accumulator; SELECT: count */
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
  /* y's and out2's size: `bytes` for the ops whose arrays share one size; a
   * sort's values, a compaction's flags have their own. */
  size_t bytes2;
  /* Sort (xpar_sort, xpar_sort_pairs, xpar_argsort): x the keys in, out the
   * keys out (NULL for argsort), y the values in (NULL for keys and argsort),
   * out2 the values out or indices.  out2 is NULL for every other op; the
   * rest is read for a sort only. */
  void *out2;
  xpar_dtype dtype2;             /* the values' dtype; argsort: the indices' */
  unsigned char sort_descending; /* xpar_sort_order */
  unsigned char sort_indices;    /* argsort: out2 gets 0..n-1 permuted */
  /* Compaction (xpar_select and its family): x the input, y the flags of
   * xpar_select_flagged (bytes2 = n bytes), out the output, result the count
   * (result_dtype XPAR_UINT64); the predicate's operands copied here. */
  unsigned char select_kind;     /* xpar__select_kind */
  xpar_predicate pred;
  xpar__scalar pred_value, pred_hi;
  /* Runs (xpar_run_length_encode, xpar_reduce_by_key): x the keys, y the
   * values (NULL for run-length encode), out the first keys, out2 the values
   * or lengths (bytes2 bytes, of dtype2), result the number of runs
   * (result_dtype XPAR_UINT64), red the values' op (SUM for the lengths). */
  unsigned char runs_lengths;    /* run-length encode: out2 gets uint64 lengths */
  /* Argmin / argmax and the segmented ops (XPAR_OP_ARGREDUCE, XPAR_OP_SEGMENTED):
   * x the input (bytes), y the offsets (bytes2; NULL for fixed segments), out
   * the values (out_bytes), out2 argmin's index (out2_bytes); red, kind as a
   * reduce's and a scan's.  Read for these ops only (call_of leaves them). */
  unsigned char seg_kind;        /* xpar__seg_kind */
  xpar_dtype offset_dtype;
  size_t n_segments, segment_size;
  size_t out_bytes, out2_bytes;
  /* Histogram (xpar_histogram_even, xpar_histogram_range): x the samples, out2
   * the counts (bytes2 = hist_bins * 8, dtype2 XPAR_UINT64, all written).  The
   * boundaries of a range histogram are a host array api/ has checked, not an
   * operand: each backend reads them itself (the CUDA backend copies them in
   * stream order); NULL for even bins, whose parameters api/ prepared. */
  size_t hist_bins;
  const void *hist_bounds;
  xpar__hist_even hist_even;
} xpar__call;

/* Offset i of a segmented call from a host copy of its offsets (NULL: fixed
 * segments, i * segment_size).  Negative offsets come out huge: check first. */
static inline size_t xpar__call_offset(const xpar__call *c, const void *offsets, size_t i) {
  if (!offsets) return i * c->segment_size;
  return c->offset_dtype == XPAR_INT32 ? (size_t)((const int32_t *)offsets)[i]
                                       : (size_t)((const int64_t *)offsets)[i];
}

/** The call on its primary tier only (dispatch.c). */
xpar_status xpar__dispatch_primary(xpar_context *ctx, const xpar__call *call);
/* ---- repeats: the same call again (dispatch.c remembers them) ------------ */

/** Whether each array of `mask` (bit i: x, y, out; bit 3: the result) is still pinned host
 *  memory, asked of the driver. */
int xpar__still_pinned(const xpar__call *c, unsigned mask);
/** Run c as repeat r of its op: r's record and tier, no classifying or deciding. */
xpar_status xpar__run_repeat(xpar_context *ctx, const xpar__call *c, const xpar__repeat *r);
/** Run c as the repeat of its op at a timed call of its adaptation site
 *  (adapt.h): the site may move the repeat's tier, or time the other once. */
xpar_status xpar__run_repeat_timed(xpar_context *ctx, const xpar__call *c);

/** The entry of c's op when c repeats its call (state.h, xpar__repeat): same
 *  arguments, no setting changed since (api.h's door), no page added to or
 *  evicted from the page cache (every page the call found there is still
 *  there), every mapping it touched in the same state, and its pinned arrays
 *  still pinned; NULL otherwise.  Without pinned arrays the whole test is a
 *  few loads and compares, where checking the arguments, classifying them
 *  and deciding afresh cost a 128-element add ~350 instructions. */
static inline const xpar__repeat *xpar__repeat_of(const xpar_context *ctx, const xpar__call *c) {
  const xpar__repeat *r = &ctx->repeats[c->op];
  if (r->settings_generation != ctx->settings_generation ||
      r->page_generation != ctx->page_cache.generation || r->n != c->n || r->x != c->x ||
      r->y != c->y || r->out != c->out || r->result != c->result || r->scalar != c->scalar ||
      r->dtype != c->dtype ||
      r->red != c->red || r->kind != c->kind || r->wide != c->wide || r->has_init != c->has_init)
    return NULL;
  if (r->has_maps)
    for (int i = 0; i < 3; i++)
      if (r->maps[i] && r->maps[i]->valid != r->map_valid[i]) return NULL;
  if (r->pinned && !xpar__still_pinned(c, r->pinned)) return NULL;
  return r;
}

/** api/'s first step for a built-in op, before checking its arguments: a
 *  call that repeats its op's last call on the CPU runs at once (1, *st its
 *  status).  The arguments the repeat compares (an alpha's or fill value's
 *  pointer among them) are the ones that call passed its checks with; a
 *  NULL alpha or value is never repeated, and a scan with an init never
 *  (its value is copied into c after its checks).
 *  Not with shadow mode on (every call is compared: shadow.c), queued work,
 *  a nowait call, or the fast path switched off (tests). */
static inline int xpar__dispatch_repeat(xpar_context *ctx, const xpar__call *c, xpar_status *st) {
  if (ctx->shadow_tier != XPAR_TIER_NONE || (ctx->gpu_pending | ctx->fast_path_off | c->nowait))
    return 0;
  const xpar__repeat *r = xpar__repeat_of(ctx, c);
  if (!r) return 0;
  /* A call AUTO may move: between timed calls, a countdown and a branch. */
  if (r->site && --r->site->sample_in <= 0)
    *st = xpar__run_repeat_timed(ctx, c);
  else
    *st = xpar__run_repeat(ctx, c, r);
  return 1;
}

/** Whether reproducible mode changes call c when it is on: the float sums whose
 *  rounding depends on the order (sum, wide sum, dot, sum scans of float and
 *  double). */
static inline int xpar__repro_covers(int reproducible, const xpar__call *c) {
  return reproducible && (c->dtype == XPAR_FLOAT || c->dtype == XPAR_DOUBLE) &&
         (c->op == XPAR_OP_DOT ||
          (c->red == XPAR_SUM && (c->op == XPAR_OP_REDUCE || c->op == XPAR_OP_SCAN)));
}

/** Run one call's operation on backend b with pointers it can reach: the
 *  reproducible entries when ex->reproducible covers the call, else the
 *  ordinary ones. */
xpar_status xpar__run_op(const xpar__backend *b, const xpar__exec *ex, const xpar__call *c,
                         const void *x, const void *y, void *out, void *out2, void *result);

#endif
