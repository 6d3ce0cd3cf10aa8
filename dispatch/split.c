/*
 * The split tier (cpu+cuda): the OpenMP tier runs elements [0, m) of a call on
 * host data while the GPU runs [m, n).  Everything the GPU does is queued
 * first -- its inputs' copies, its kernel, its outputs' copies back into
 * pinned memory -- so that the copies over PCIe run while the CPU threads
 * compute their part; then the CPU part runs, the GPU part is waited for, and
 * the partial results are combined.
 *
 * Pageable arrays go through the context's pinned host staging: the CPU team
 * copies the GPU's part of an input there (in chunks, each chunk's copy to
 * the device queued behind it) and copies the GPU's part of an output back
 * after the wait.  That pass costs host memory bandwidth the CPU part also
 * needs; the split's `share` for pageable memory is measured apart.
 *
 * A scan's GPU part starts from the CPU part's total: the CPU reduces its part
 * first (one more read of it, while the GPU's input copies run), the GPU scan
 * is queued with that carry, then the CPU scans its own part.
 *
 * A histogram splits its samples: each side counts its part into counts of
 * its own (the CPU's in pinned staging, so that a failure writes nothing),
 * and the caller's counts are their sum.
 *
 * A segmented reduce, scan or argmin / argmax splits at a segment boundary:
 * segments [0, s) on the CPU, [s, m) on the GPU, each segment wholly on one
 * side (so every segment's result is that side's, reproducible bits
 * included).  The offsets are host memory here and are checked on the host
 * first (bad ones: the whole call goes to the CPU tier, which refuses it with
 * nothing written); the GPU gets its elements and its offsets rebased to them,
 * and its argmin indices are moved back by the part's first element.
 *
 * Reproducible mode (docs/reproducible.md): a float sum is the aligned
 * pairwise tree over 8,192-element block totals, padded to a power of two P
 * blocks.  Split where the tree's root halves (m = P/2 blocks), the left half
 * is the reproducible sum of [0, m) and the right one of [m, n) as an array of
 * its own (its padding nodes equal their left halves): the root is their sum,
 * one addition.  A scan's carry into block b >= P/2 begins with the left
 * half's total, so the right part is the reproducible scan of [m, n) from
 * init + that total.  The share is not used then.
 */
#include <stdio.h>
#include <string.h>

#include "gpu.h"
#include "split.h"

/* The split falls on multiples of this many elements (the reproducible block:
 * whole blocks on each side; every part stays as aligned as the array). */
#define SPLIT_GRAIN ((size_t)XPAR__REPRO_BLOCK)
/* Pageable inputs are staged in chunks of this many bytes: each chunk's copy
 * to the device runs while the next one is staged. */
#define STAGE_CHUNK ((size_t)32 << 20)
/* Host and device staging slots: x, y, out as dispatch's operands; the result. */
enum { SLOT_X = 0, SLOT_Y = 1, SLOT_OUT = 2, SLOT_RESULT = 3, SLOT_INDEX = 4 };

/* The CPU part's first element count m (the GPU runs [m, n)); m == n: the call
 * is too small to split and runs on the CPU alone. */
static size_t cpu_elements(const xpar_context *ctx, const xpar__call *c, double share,
                           int *tree) {
  const size_t n = c->n;
  *tree = xpar__repro_covers(ctx->reproducible, c);
  if (*tree) {
    const size_t blocks = (n + SPLIT_GRAIN - 1) / SPLIT_GRAIN;
    if (blocks < 2) return n;
    size_t half = 1; /* P / 2: the largest power of two below `blocks` */
    while (half * 2 < blocks) half *= 2;
    return half * SPLIT_GRAIN;
  }
  if (n <= SPLIT_GRAIN) return n;
  size_t gpu = (size_t)((double)n * share / (double)SPLIT_GRAIN + 0.5) * SPLIT_GRAIN;
  if (gpu == 0) return n;
  if (gpu > n - SPLIT_GRAIN) gpu = n - SPLIT_GRAIN; /* the CPU keeps a block at least */
  return n - gpu;
}

/* a op b for a reduce's partial results (and a scan's carry), in dtype t;
 * integer sums wrap, as every tier's do. */
#define SPLIT_COMBINE_(field, sum)                                                         \
  r->field = red == XPAR_SUM   ? (sum)                                                    \
             : red == XPAR_MIN ? (b->field < a->field ? b->field : a->field)              \
                               : (b->field > a->field ? b->field : a->field)
static void combine(xpar_dtype t, xpar_reduction red, const xpar__scalar *a,
                    const xpar__scalar *b, xpar__scalar *r) {
  switch (t) {
    case XPAR_INT32: SPLIT_COMBINE_(i32, (int32_t)((uint32_t)a->i32 + (uint32_t)b->i32)); break;
    case XPAR_UINT32: SPLIT_COMBINE_(u32, a->u32 + b->u32); break;
    case XPAR_INT64: SPLIT_COMBINE_(i64, (int64_t)((uint64_t)a->i64 + (uint64_t)b->i64)); break;
    case XPAR_UINT64: SPLIT_COMBINE_(u64, a->u64 + b->u64); break;
    case XPAR_FLOAT: SPLIT_COMBINE_(f32, a->f32 + b->f32); break;
    default: SPLIT_COMBINE_(f64, a->f64 + b->f64); break;
  }
}
#undef SPLIT_COMBINE_

/* c restricted to `count` elements (the arrays are passed beside it). */
static xpar__call part_of(const xpar__call *c, size_t count) {
  xpar__call p = *c;
  const size_t esz = xpar__dtype_size(c->dtype);
  p.n = count;
  p.bytes = count * esz;
  p.bytes2 = count * esz;
  return p;
}

static const void *at(const void *p, size_t bytes) {
  return p ? (const unsigned char *)p + bytes : NULL;
}

/* The GPU's view of its part: device staging per array (aliases share one),
 * and, for pageable arrays, the pinned host staging between. */
typedef struct gpu_part {
  const void *host[3]; /* x, y, out at the split point; NULL: absent */
  int pinned[3];
  int reads[3], writes[3];
  int alias_of[3];     /* the first array with the same pointer, else itself */
  void *dev[3];
  void *stage[3];      /* pinned host staging (pageable arrays) */
  void *dev_result, *host_result;
} gpu_part;

static xpar_status gpu_allocate(xpar_context *ctx, struct xpar__cuda_state *st, gpu_part *g,
                                size_t bytes, size_t result_bytes) {
  const xpar__backend *b = xpar__gpu_backend();
  for (int i = 0; i < 3; i++) {
    if (!g->host[i] || g->alias_of[i] != i) continue;
    XPAR__FORWARD(b->staging(st, i, bytes, &g->dev[i]));
    if (!g->pinned[i]) XPAR__FORWARD(xpar__host_staging(ctx, i, bytes, &g->stage[i]));
  }
  for (int i = 0; i < 3; i++)
    if (g->host[i] && g->alias_of[i] != i) {
      g->dev[i] = g->dev[g->alias_of[i]];
      g->stage[i] = g->stage[g->alias_of[i]];
    }
  if (result_bytes) {
    XPAR__FORWARD(b->staging(st, SLOT_RESULT, sizeof(xpar__scalar), &g->dev_result));
    XPAR__FORWARD(xpar__host_staging(ctx, SLOT_RESULT, sizeof(xpar__scalar), &g->host_result));
  }
  return XPAR_OK;
}

/* Queue the GPU part's inputs: pinned ones copied as they are, pageable ones
 * staged by the CPU team a chunk at a time. */
static xpar_status gpu_inputs(const xpar__exec *cpu, struct xpar__cuda_state *st,
                              const gpu_part *g, size_t bytes, xpar__decision_raw *d) {
  const xpar__backend *b = xpar__gpu_backend();
  for (int i = 0; i < 3; i++) {
    if (!g->host[i] || g->alias_of[i] != i || !g->reads[i]) continue;
    if (g->pinned[i]) {
      XPAR__FORWARD(b->copy(st, g->dev[i], g->host[i], bytes, XPAR__HOST_TO_DEVICE));
    } else {
      for (size_t at_byte = 0; at_byte < bytes; at_byte += STAGE_CHUNK) {
        const size_t len = bytes - at_byte < STAGE_CHUNK ? bytes - at_byte : STAGE_CHUNK;
        unsigned char *stage = (unsigned char *)g->stage[i] + at_byte;
        XPAR__FORWARD(xpar__cpu_backend.host_copy(cpu, stage, at(g->host[i], at_byte), len));
        XPAR__FORWARD(b->copy(st, (unsigned char *)g->dev[i] + at_byte, stage, len,
                              XPAR__HOST_TO_DEVICE_WRITTEN));
      }
    }
    d->bytes_to_device += bytes;
  }
  return XPAR_OK;
}

/* Queue the copies of the GPU part's output (and result) back to the host. */
static xpar_status gpu_outputs(struct xpar__cuda_state *st, const gpu_part *g, size_t bytes,
                               size_t result_bytes, xpar__decision_raw *d) {
  const xpar__backend *b = xpar__gpu_backend();
  const int o = SLOT_OUT;
  if (g->host[o] && g->writes[o]) {
    void *dst = g->pinned[o] ? (void *)g->host[o] : g->stage[o];
    XPAR__FORWARD(b->copy(st, dst, g->dev[o], bytes, XPAR__DEVICE_TO_HOST_QUEUED));
    d->bytes_to_host += bytes;
  }
  if (result_bytes) {
    XPAR__FORWARD(b->copy(st, g->host_result, g->dev_result, result_bytes,
                          XPAR__DEVICE_TO_HOST_QUEUED));
    d->bytes_to_host += result_bytes;
  }
  return XPAR_OK;
}

/* The exec of the GPU's part: queued (the CPU part runs meanwhile), on the
 * context's launch shape. */
static xpar__exec gpu_exec(const xpar_context *ctx, struct xpar__cuda_state *st) {
  const xpar__exec gx = {.cuda = st,
                         .grid = ctx->launch_grid,
                         .block = ctx->launch_block,
                         .nowait = 1,
                         .reproducible = ctx->reproducible};
  return gx;
}

/* The GPU's part failed at the wait and AUTO recovers: d says why, and the
 * error is cleared for the CPU to compute that part. */
static void record_gpu_failure(xpar_context *ctx, xpar__decision_raw *d) {
  snprintf(ctx->fallback_why, sizeof ctx->fallback_why, "%s", xpar__error_detail());
  xpar__clear_error();
  d->gpu_rule = XPAR__GPU_FAILED_FALLBACK;
  d->why = ctx->fallback_why;
  d->split_gpu_share = 0.0;
}

/* The histogram's split (m < n): samples [0, m) counted on the CPU, [m, n) on
 * the GPU, the counts added into `counts` at the end. */
static xpar_status run_split_histogram(xpar_context *ctx, const xpar__call *c, const xpar__exec *cx,
                                       const void *samples, void *counts, unsigned pinned,
                                       int recover, size_t m, xpar__decision_raw *d) {
  const xpar__backend *cpu = &xpar__cpu_backend, *gb = xpar__gpu_backend();
  const size_t esz = xpar__dtype_size(c->dtype), ng = c->n - m, gbytes = ng * esz;
  const size_t cbytes = c->hist_bins * sizeof(uint64_t);
  struct xpar__cuda_state *st;
  XPAR__FORWARD(xpar__gpu_state(ctx, &st));
  gpu_part g;
  memset(&g, 0, sizeof g);
  g.host[SLOT_X] = at(samples, m * esz);
  g.pinned[SLOT_X] = pinned & XPAR__SPLIT_X_PINNED;
  g.reads[SLOT_X] = 1;
  for (int i = 0; i < 3; i++) g.alias_of[i] = i;
  /* Everything allocated before anything is written: the samples' staging, the
   * GPU's counts (device, and pinned for their copy back), the CPU's counts. */
  void *dev_counts, *gpu_counts, *cpu_counts;
  XPAR__FORWARD(gpu_allocate(ctx, st, &g, gbytes, 0));
  XPAR__FORWARD(gb->staging(st, SLOT_OUT, cbytes, &dev_counts));
  XPAR__FORWARD(xpar__host_staging(ctx, SLOT_OUT, cbytes, &gpu_counts));
  XPAR__FORWARD(xpar__host_staging(ctx, SLOT_Y, cbytes, &cpu_counts));
  XPAR__FORWARD(gpu_inputs(cx, st, &g, gbytes, d));
  xpar__call gpu_call = part_of(c, ng), cpu_call = part_of(c, m);
  gpu_call.bytes2 = cpu_call.bytes2 = cbytes;
  const xpar__exec gx = gpu_exec(ctx, st);
  XPAR__FORWARD(xpar__run_op(gb, &gx, &gpu_call, g.dev[SLOT_X], NULL, NULL, dev_counts, NULL));
  XPAR__FORWARD(gb->copy(st, gpu_counts, dev_counts, cbytes, XPAR__DEVICE_TO_HOST_QUEUED));
  d->bytes_to_host += cbytes;
  /* The CPU part, while the GPU's copies run. */
  XPAR__FORWARD(xpar__run_op(cpu, cx, &cpu_call, samples, NULL, NULL, cpu_counts, NULL));
  xpar_status ws = gb->wait(st);
  if (ws != XPAR_OK && recover) {
    record_gpu_failure(ctx, d);
    XPAR__FORWARD(xpar__run_op(cpu, cx, &gpu_call, g.host[SLOT_X], NULL, NULL, gpu_counts, NULL));
  } else {
    XPAR__FORWARD(ws);
    d->split_gpu_share = (double)ng / (double)c->n;
  }
  uint64_t *sum = counts;
  const uint64_t *a = cpu_counts, *b = gpu_counts;
  for (size_t i = 0; i < c->hist_bins; i++) sum[i] = a[i] + b[i];
  return XPAR_OK;
}

/* Whether host offsets are good (non-decreasing, from >= 0, up to n). */
static int seg_offsets_good(const xpar__call *c, const void *offsets) {
  if (!offsets) return 1;
  int64_t prev = 0;
  for (size_t i = 0; i <= c->n_segments; i++) {
    const int64_t v = c->offset_dtype == XPAR_INT32 ? ((const int32_t *)offsets)[i]
                                                    : ((const int64_t *)offsets)[i];
    if (v < prev || (uint64_t)v > c->n) return 0;
    prev = v;
  }
  return 1;
}

/* The segmented split: segments [0, s) on the CPU, [s, m) on the GPU, s the
 * first segment starting at or after the CPU's share of the elements; s == 0
 * or s == m (one huge segment, or a part under a grain): the CPU alone. */
static xpar_status run_split_segmented(xpar_context *ctx, const xpar__call *c,
                                       const xpar__exec *cx, const void *in, const void *offsets,
                                       void *out, void *index, unsigned pinned, double share,
                                       int recover, xpar__decision_raw *d) {
  const xpar__backend *cpu = &xpar__cpu_backend, *gb = xpar__gpu_backend();
  const size_t m = c->n_segments, esz = xpar__dtype_size(c->dtype);
  if (!seg_offsets_good(c, offsets)) /* refused there, nothing written */
    return xpar__run_op(cpu, cx, c, in, offsets, out, index, NULL);
  const size_t lo = xpar__call_offset(c, offsets, 0), hi = xpar__call_offset(c, offsets, m);
  const size_t cut = hi - (size_t)((double)(hi - lo) * share); /* the GPU from here */
  size_t a = 0, b = m; /* s: the first segment starting at or after cut */
  while (a < b) {
    const size_t mid = a + (b - a) / 2;
    if (xpar__call_offset(c, offsets, mid) < cut) a = mid + 1;
    else b = mid;
  }
  const size_t s = a, first = xpar__call_offset(c, offsets, s < m ? s : m);
  if (s == 0 || s >= m || hi - first < SPLIT_GRAIN) /* d: "too small to split" */
    return xpar__run_op(cpu, cx, c, in, offsets, out, index, NULL);
  const size_t ms = m - s, ng = hi - first;
  const int scan = c->seg_kind == XPAR__SEG_SCAN, arg = c->seg_kind == XPAR__SEG_ARGREDUCE;
  const size_t in_bytes = ng * esz, out_bytes = scan ? in_bytes : ms * esz;
  const size_t osz = offsets ? xpar__dtype_size(c->offset_dtype) : 0, off_bytes = (ms + 1) * osz;
  struct xpar__cuda_state *st;
  XPAR__FORWARD(xpar__gpu_state(ctx, &st));
  /* Everything allocated before anything is written. */
  void *dev_in, *dev_off = NULL, *dev_out, *dev_index = NULL;
  void *stage_in = NULL, *stage_off = NULL, *stage_out = NULL, *stage_index = NULL;
  XPAR__FORWARD(gb->staging(st, SLOT_X, in_bytes, &dev_in));
  XPAR__FORWARD(gb->staging(st, SLOT_OUT, out_bytes, &dev_out));
  if (!(pinned & XPAR__SPLIT_X_PINNED))
    XPAR__FORWARD(xpar__host_staging(ctx, SLOT_X, in_bytes, &stage_in));
  if (!(pinned & XPAR__SPLIT_OUT_PINNED))
    XPAR__FORWARD(xpar__host_staging(ctx, SLOT_OUT, out_bytes, &stage_out));
  if (offsets) {
    XPAR__FORWARD(gb->staging(st, SLOT_Y, off_bytes, &dev_off));
    XPAR__FORWARD(xpar__host_staging(ctx, SLOT_Y, off_bytes, &stage_off));
  }
  if (arg) {
    XPAR__FORWARD(gb->staging(st, SLOT_INDEX, ms * 8, &dev_index));
    XPAR__FORWARD(xpar__host_staging(ctx, SLOT_INDEX, ms * 8, &stage_index));
  }
  /* The GPU's inputs: its elements (pageable ones staged in chunks by gpu_inputs),
   * its offsets rebased to its first element. */
  gpu_part g;
  memset(&g, 0, sizeof g);
  for (int i = 0; i < 3; i++) g.alias_of[i] = i;
  g.host[SLOT_X] = (const unsigned char *)in + first * esz;
  g.pinned[SLOT_X] = pinned & XPAR__SPLIT_X_PINNED;
  g.reads[SLOT_X] = 1;
  g.dev[SLOT_X] = dev_in;
  g.stage[SLOT_X] = stage_in;
  XPAR__FORWARD(gpu_inputs(cx, st, &g, in_bytes, d));
  if (offsets) {
    for (size_t i = 0; i <= ms; i++) {
      const size_t v = xpar__call_offset(c, offsets, s + i) - first;
      if (c->offset_dtype == XPAR_INT32) ((int32_t *)stage_off)[i] = (int32_t)v;
      else ((int64_t *)stage_off)[i] = (int64_t)v;
    }
    XPAR__FORWARD(gb->copy(st, dev_off, stage_off, off_bytes, XPAR__HOST_TO_DEVICE_WRITTEN));
    d->bytes_to_device += off_bytes;
  }
  xpar__call gpu_call = *c, cpu_call = *c;
  gpu_call.n = ng;
  gpu_call.bytes = in_bytes;
  gpu_call.n_segments = ms;
  gpu_call.nowait = 1; /* the offsets are checked: no verdict to read back */
  cpu_call.n_segments = s;
  if (!offsets) cpu_call.n = s * c->segment_size;
  const xpar__exec gx = gpu_exec(ctx, st);
  XPAR__FORWARD(xpar__run_op(gb, &gx, &gpu_call, dev_in, dev_off, dev_out, dev_index, NULL));
  /* Its outputs back: into the caller's pinned arrays, else the pinned staging. */
  unsigned char *host_out = (unsigned char *)out + (scan ? first : s) * esz;
  XPAR__FORWARD(gb->copy(st, stage_out ? stage_out : host_out, dev_out, out_bytes,
                         XPAR__DEVICE_TO_HOST_QUEUED));
  if (arg)
    XPAR__FORWARD(gb->copy(st, stage_index, dev_index, ms * 8, XPAR__DEVICE_TO_HOST_QUEUED));
  d->bytes_to_host += out_bytes + (arg ? ms * 8 : 0);
  /* The CPU part, while the GPU's copies run. */
  XPAR__FORWARD(xpar__run_op(cpu, cx, &cpu_call, in, offsets, out, index, NULL));
  int64_t *host_index = arg ? (int64_t *)index + s : NULL;
  const xpar_status ws = gb->wait(st);
  if (ws != XPAR_OK && recover) {
    /* The GPU's segments on the CPU, from the caller's arrays, which its copies
     * never wrote (not the whole call again: an in-place scan's CPU part is
     * already scanned). */
    record_gpu_failure(ctx, d);
    xpar__call rest = *c;
    rest.n_segments = ms;
    const unsigned char *rest_in = in;
    const void *rest_off = offsets ? (const unsigned char *)offsets + s * osz : NULL;
    unsigned char *rest_out = (unsigned char *)out + (scan ? 0 : s * esz);
    if (!offsets) { /* fixed rows: the GPU's rows as an array of their own */
      rest.n = ng;
      rest_in += first * esz;
      if (scan) rest_out += first * esz;
    }
    return xpar__run_op(cpu, cx, &rest, rest_in, rest_off, rest_out, host_index, NULL);
  }
  XPAR__FORWARD(ws);
  if (stage_out) XPAR__FORWARD(cpu->host_copy(cx, host_out, stage_out, out_bytes));
  if (arg) /* indices into the GPU's part: into in (an empty segment's -1 stays) */
    for (size_t i = 0; i < ms; i++) {
      const int64_t v = ((const int64_t *)stage_index)[i];
      host_index[i] = v < 0 ? v : v + (int64_t)first;
    }
  d->split_gpu_share = (double)ng / (double)(hi - lo);
  return XPAR_OK;
}

xpar_status xpar__run_split(xpar_context *ctx, const xpar__call *c, const void *x,
                            const void *y, void *out, void *out2, void *result, unsigned pinned,
                            xpar_split_memory memory, int recover, xpar__decision_raw *d) {
  const xpar__backend *cpu = &xpar__cpu_backend;
  const xpar__exec cx = {.num_threads = ctx->num_threads,
                         .reproducible = ctx->reproducible,
                         .host_scratch = &ctx->host_scratch};
  const size_t esz = xpar__dtype_size(c->dtype);
  const size_t result_bytes = c->result ? xpar__dtype_size(c->result_dtype) : 0;
  const double share = ctx->split_share[c->op][c->dtype][memory];
  d->split_memory = memory;
  d->split_share_set = (float)share;
  d->split_share_source = (xpar__source)ctx->split_share_source[c->op][c->dtype][memory];
  d->split_tree = 0;
  d->split_gpu_share = 0.0;
  if (c->op == XPAR_OP_SEGMENTED)
    return run_split_segmented(ctx, c, &cx, x, y, out, out2, pinned, share, recover, d);
  int tree = 0;
  const size_t m = cpu_elements(ctx, c, share, &tree);
  d->split_tree = tree;
  if (m == c->n) /* too small to split: the CPU part is the whole call */
    return xpar__run_op(cpu, &cx, c, x, y, out, out2, result);
  if (c->op == XPAR_OP_HISTOGRAM)
    return run_split_histogram(ctx, c, &cx, x, out2, pinned, recover, m, d);

  const size_t ng = c->n - m, gbytes = ng * esz, off = m * esz;
  const xpar__call cpu_call = part_of(c, m);
  xpar__call gpu_call = part_of(c, ng);
  const xpar__backend *gb = xpar__gpu_backend();
  struct xpar__cuda_state *st;
  XPAR__FORWARD(xpar__gpu_state(ctx, &st));

  /* The arrays at the split point: x read; y read (add, dot); out written, and
   * read too by axpy (its y) -- c's pointers say which are the same array. */
  gpu_part g;
  memset(&g, 0, sizeof g);
  const void *arrays[3] = {x, y, out};
  const void *call_arrays[3] = {c->x, c->y, c->out};
  for (int i = 0; i < 3; i++) {
    g.host[i] = call_arrays[i] ? at(arrays[i], off) : NULL;
    g.pinned[i] = (pinned >> i) & 1u;
    g.alias_of[i] = i;
    for (int j = 0; j < i; j++)
      if (call_arrays[i] && call_arrays[j] == call_arrays[i]) {
        g.alias_of[i] = j;
        break;
      }
  }
  g.reads[SLOT_X] = 1;
  g.reads[SLOT_Y] = 1;
  g.writes[SLOT_OUT] = 1;
  g.reads[SLOT_OUT] = c->op == XPAR_OP_AXPY;
  for (int i = 0; i < 3; i++) /* an alias reads what any of its names reads */
    if (g.host[i] && g.alias_of[i] != i) g.reads[g.alias_of[i]] |= g.reads[i];

  /* Everything allocated before anything is written. */
  XPAR__FORWARD(gpu_allocate(ctx, st, &g, gbytes, result_bytes));
  XPAR__FORWARD(gpu_inputs(&cx, st, &g, gbytes, d));

  /* A scan's carry into the GPU part: init op the CPU part's total. */
  if (c->op == XPAR_OP_SCAN) {
    xpar__scalar total;
    xpar__call head = cpu_call;
    head.op = XPAR_OP_REDUCE;
    head.wide = 0;
    head.result_dtype = c->dtype;
    head.result = &total;
    XPAR__FORWARD(xpar__run_op(cpu, &cx, &head, x, NULL, NULL, NULL, &total));
    if (c->has_init)
      combine(c->dtype, c->red, &c->init, &total, &gpu_call.init);
    else
      gpu_call.init = total;
    gpu_call.has_init = 1;
  }
  xpar__exec gx = gpu_exec(ctx, st);
  gx.result_on_device = 1;
  XPAR__FORWARD(xpar__run_op(gb, &gx, &gpu_call, g.dev[SLOT_X], g.dev[SLOT_Y], g.dev[SLOT_OUT],
                             NULL, g.dev_result));
  XPAR__FORWARD(gpu_outputs(st, &g, gbytes, result_bytes, d));

  /* The CPU part, while the GPU's copies run. */
  xpar__scalar cpu_result;
  XPAR__FORWARD(xpar__run_op(cpu, &cx, &cpu_call, x, y, out, NULL, &cpu_result));

  xpar__scalar gpu_result;
  xpar_status ws = gb->wait(st);
  if (ws != XPAR_OK && recover) {
    /* The GPU failed after the CPU part ran: its part on the CPU, from the
     * host arrays its copies never wrote back. */
    record_gpu_failure(ctx, d);
    XPAR__FORWARD(xpar__run_op(cpu, &cx, &gpu_call, g.host[SLOT_X], g.host[SLOT_Y],
                               (void *)g.host[SLOT_OUT], NULL, &gpu_result));
  } else {
    XPAR__FORWARD(ws);
    if (g.host[SLOT_OUT] && !g.pinned[SLOT_OUT])
      XPAR__FORWARD(cpu->host_copy(&cx, (void *)g.host[SLOT_OUT], g.stage[SLOT_OUT], gbytes));
    if (result_bytes) memcpy(&gpu_result, g.host_result, result_bytes);
    d->split_gpu_share = (double)ng / (double)c->n;
  }
  if (result_bytes) {
    xpar__scalar r;
    /* Sums of partial sums; the wide sum's partials are of its wide dtype. */
    combine(c->result_dtype, c->op == XPAR_OP_DOT || c->wide ? XPAR_SUM : c->red, &cpu_result,
            &gpu_result, &r);
    memcpy(result, &r, result_bytes);
  }
  return XPAR_OK;
}
