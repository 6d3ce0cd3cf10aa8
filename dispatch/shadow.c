/*
 * Shadow mode: every call also runs on a second tier, and the two results
 * are compared (xpar.h, xpar_context_set_shadow).  It lives here, in the
 * dispatch wrapper, because that is the one place every call passes through
 * (design.md); off, xpar__dispatch pays one branch for it.
 *
 * The shadow run never touches the application's data: its inputs are host
 * copies taken before the primary call (axpy and in-place scans overwrite
 * theirs), its outputs are buffers of its own, and device data is read by
 * copying, so no mapping's validity changes.  The application gets the
 * primary's result.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shadow.h"
#include "split.h"
#include "base/sort_key.h"

/* ---- test-only fault injection -------------------------------------------- */

#ifdef XPAR_TEST_HOOKS
/* Compiled into the test build's objects only (XPAR_TEST_HOOKS), never into
 * libxpar: tests link those objects and call these.
 * The next shadowed call corrupts element `index` of the primary's output
 * (index 0 for a reduce or dot result) after the primary has run, as a wrong
 * primary tier would: a float becomes v * 2^20 + 1 (beyond any rounding
 * bound), an integer gets its lowest bit flipped.  -1 = nothing planted.
 * One call only; not thread-safe (tests). */
static long long planted_index = -1;
void xpar__shadow_plant_fault(long long index);
void xpar__shadow_plant_fault(long long index) { planted_index = index; }
/* The nth shadow buffer allocation from now (1: the next) fails, as malloc
 * would; 0 = nothing planted. */
static int planted_alloc_countdown;
void xpar__shadow_plant_alloc_failure(int nth);
void xpar__shadow_plant_alloc_failure(int nth) { planted_alloc_countdown = nth; }
static void *shadow_alloc(size_t bytes) {
  if (planted_alloc_countdown > 0 && --planted_alloc_countdown == 0) return NULL;
  return malloc(bytes);
}
#else
#define shadow_alloc malloc
#endif

/* ---- reading operands wherever they live ------------------------------------ */

/* Copy `bytes` of the array at ptr into host memory dst, from its valid copy,
 * without changing any residency. */
static xpar_status read_operand(xpar_context *ctx, const void *ptr, size_t bytes, void *dst) {
  if (!bytes) return XPAR_OK;
  xpar__operand w;
  XPAR__FORWARD(xpar__classify(ctx, ptr, bytes, XPAR__CLASSIFY_CACHED, &w));
  const void *src = ptr;
  int on_device = 0;
  switch (w.loc) {
    case XPAR__LOC_HOST_PAGEABLE:
    case XPAR__LOC_HOST_PINNED: break;
    case XPAR__LOC_MAPPED:
      if (!(w.map->valid & XPAR__VALID_HOST)) {
        src = w.map->device + ((const unsigned char *)ptr - w.map->host);
        on_device = 1;
      }
      break;
    default: on_device = 1; break; /* device or managed: ask the runtime to copy */
  }
  if (!on_device) {
    memcpy(dst, src, bytes);
    return XPAR_OK;
  }
  struct xpar__cuda_state *st;
  XPAR__FORWARD(xpar__gpu_state(ctx, &st));
  const xpar__backend *g = xpar__gpu_backend();
  XPAR__FORWARD(g->copy(st, dst, src, bytes, XPAR__DEVICE_TO_HOST));
  return g->wait(st);
}

#ifdef XPAR_TEST_HOOKS
static void corrupt(xpar_dtype t, unsigned char *p) {
  if (t == XPAR_FLOAT) {
    float v;
    memcpy(&v, p, 4);
    v = v * 1048576.0f + 1.0f;
    memcpy(p, &v, 4);
  } else if (t == XPAR_DOUBLE) {
    double v;
    memcpy(&v, p, 8);
    v = v * 1048576.0 + 1.0;
    memcpy(p, &v, 8);
  } else {
    p[0] ^= 1; /* the lowest byte first: x86-64 and CUDA are little-endian */
  }
}

/* Write back one element of a planted fault where the application sees it. */
static xpar_status write_element(xpar_context *ctx, void *ptr, size_t bytes, const void *src) {
  xpar__operand w;
  XPAR__FORWARD(xpar__classify(ctx, ptr, bytes, XPAR__CLASSIFY_CACHED, &w));
  if (w.loc == XPAR__LOC_HOST_PAGEABLE || w.loc == XPAR__LOC_HOST_PINNED ||
      (w.loc == XPAR__LOC_MAPPED && (w.map->valid & XPAR__VALID_HOST) &&
       !(w.map->valid & XPAR__VALID_DEVICE))) {
    memcpy(ptr, src, bytes);
    return XPAR_OK;
  }
  return xpar__fail(XPAR_ERR_INTERNAL, "planted faults are supported for host outputs only");
}

/* The planted fault: the primary's output as a wrong primary tier would
 * have left it, where the application sees it. */
static xpar_status plant_fault(xpar_context *ctx, const xpar__call *c, int has_result,
                               int has_array_out, xpar_dtype rt, size_t size, unsigned char *prim,
                               unsigned char *prim2, xpar__scalar *prim_result) {
  const size_t i = (size_t)planted_index;
  planted_index = -1;
  if (has_result) {
    corrupt(rt, prim_result->bytes);
    return write_element(ctx, c->result, xpar__dtype_size(rt), prim_result->bytes);
  }
  if (has_array_out && i < c->n) {
    corrupt(c->dtype, prim + i * size);
    return write_element(ctx, (char *)c->out + i * size, size, prim + i * size);
  }
  if (c->out2 && i < (c->op == XPAR_OP_HISTOGRAM ? c->hist_bins : c->n)) {
    /* argsort: the indices are the output; a histogram: its counts */
    const size_t s2 = xpar__dtype_size(c->dtype2);
    corrupt(c->dtype2, prim2 + i * s2);
    return write_element(ctx, (char *)c->out2 + i * s2, s2, prim2 + i * s2);
  }
  return XPAR_OK;
}
#endif

/* ---- values, for comparing and reporting -------------------------------------- */

static int is_float(xpar_dtype t) { return t == XPAR_FLOAT || t == XPAR_DOUBLE; }

static long double value_at(xpar_dtype t, const void *p, size_t i) {
  switch (t) {
#define XPAR__SHADOW_GET_(e, ctype, name, size) \
  case XPAR_##e: {                               \
    ctype v;                                     \
    memcpy(&v, (const char *)p + i * size, size); \
    return (long double)v;                       \
  }
    XPAR_DTYPE_MAP(XPAR__SHADOW_GET_)
#undef XPAR__SHADOW_GET_
    default: return 0;
  }
}

static uint64_t bits_at(xpar_dtype t, const void *p, size_t i) {
  uint64_t b = 0;
  size_t size = xpar__dtype_size(t);
  memcpy(&b, (const char *)p + i * size, size);
  return b;
}

static void format_value(xpar_dtype t, const void *p, size_t i, char *buf, size_t size) {
  long double v = value_at(t, p, i);
  if (t == XPAR_FLOAT)
    snprintf(buf, size, "%.9g (0x%08llx)", (double)v, (unsigned long long)bits_at(t, p, i));
  else if (t == XPAR_DOUBLE)
    snprintf(buf, size, "%.17g (0x%016llx)", (double)v, (unsigned long long)bits_at(t, p, i));
  else if (t == XPAR_INT32 || t == XPAR_INT64)
    snprintf(buf, size, "%lld", (long long)v);
  else
    snprintf(buf, size, "%llu", (unsigned long long)bits_at(t, p, i));
}

/* ---- the comparison ----------------------------------------------------------------- */

/* Whether the call's float result depends on the order of its additions. */
static int order_dependent(const xpar__call *c) {
  return is_float(c->dtype) && (c->op == XPAR_OP_DOT || (c->red == XPAR_SUM &&
                                                         (c->op == XPAR_OP_REDUCE ||
                                                          c->op == XPAR_OP_SCAN)));
}

/* 2 gamma_k: how far two summations of k terms in any two orders can be
 * apart, per unit of sum |term| (Higham, Accuracy and Stability, 4.2). */
static long double two_gamma(size_t k, xpar_dtype acc) {
  long double u = acc == XPAR_FLOAT ? ldexpl(1.0L, -24) : ldexpl(1.0L, -53);
  long double ku = (long double)k * u;
  return ku >= 1.0L ? INFINITY : 2.0L * ku / (1.0L - ku);
}

typedef struct shadow_compare {
  xpar_dtype t;         /* dtype of the compared values */
  size_t count;         /* values compared */
  int bitwise;
  const xpar__call *c;
  const void *x, *y;    /* the inputs (host copies) */
  xpar__scalar init;
} shadow_compare;

/* Whether partial sums of terms whose magnitudes add up to mag can overflow
 * the accumulator type: then xpar.h lets a grouping give a finite value or
 * NaN where the element order gives inf (xpar_scan_init), so two tiers'
 * non-finite results are not a mismatch. */
static int may_overflow(long double mag, xpar_dtype acc) {
  return mag > (acc == XPAR_FLOAT ? (long double)FLT_MAX : (long double)DBL_MAX);
}

/* The tolerance of value i (0 when bitwise); *overflow: its partial sums can
 * overflow (may_overflow). */
static long double tolerance(const shadow_compare *k, size_t i, long double *running,
                             int *overflow) {
  *overflow = 0;
  if (k->bitwise) return 0;
  const xpar__call *c = k->c;
  if (c->op == XPAR_OP_SCAN) {
    /* out_i sums init and x_0..x_i (x_{i-1} for exclusive): the running sum
     * of magnitudes is kept across calls, in index order. */
    if (i == 0) *running = c->has_init ? fabsl(value_at(c->dtype, k->init.bytes, 0)) : 0;
    size_t terms = i + 1 + (c->has_init ? 1 : 0);
    long double r = *running;
    *running += fabsl(value_at(c->dtype, k->x, i));
    if (c->kind != XPAR_EXCLUSIVE) r = *running;
    *overflow = may_overflow(r, c->dtype);
    return two_gamma(terms, c->dtype) * r;
  }
  long double mag = 0;
  for (size_t j = 0; j < c->n; j++)
    mag += c->op == XPAR_OP_DOT
               ? fabsl(value_at(c->dtype, k->x, j) * value_at(c->dtype, k->y, j))
               : fabsl(value_at(c->dtype, k->x, j));
  xpar_dtype acc = c->wide ? xpar__wide_dtype(c->dtype) : c->dtype;
  *overflow = may_overflow(mag, acc);
  /* dot: each product is rounded once more before it is added. */
  return two_gamma(c->n + (c->op == XPAR_OP_DOT), acc) * mag;
}

/* Whether keys i - 1 and i of a runs call are equal (base/sort_key.h). */
static int runs_same_key(xpar_dtype t, const void *keys, size_t i) {
  const int cls = t == XPAR_FLOAT || t == XPAR_DOUBLE ? XPAR__SORT_KEY_FLOAT
                                                      : XPAR__SORT_KEY_UNSIGNED;
  if (xpar__dtype_size(t) == 4)
    return xpar__sort_radix32((uint32_t)bits_at(t, keys, i - 1), cls, 0) ==
           xpar__sort_radix32((uint32_t)bits_at(t, keys, i), cls, 0);
  return xpar__sort_radix64(bits_at(t, keys, i - 1), cls, 0) ==
         xpar__sort_radix64(bits_at(t, keys, i), cls, 0);
}

/* A runs call's values, run by run over the input (k->x the keys, k->y the
 * values): a float SUM outside reproducible mode within 2 gamma_len (sum of
 * |values|) of the run (xpar.h, xpar_reduce_by_key), everything else bit for
 * bit.  `runs` values are compared. */
static int compare_runs_values(xpar_context *ctx, const xpar__call *c, const void *x,
                               const void *y, size_t runs, const void *primary,
                               const void *shadow) {
  const xpar_dtype t = c->dtype2;
  const int tolerant = !c->runs_lengths && c->red == XPAR_SUM && is_float(t) && !ctx->reproducible;
  size_t start = 0, r = 0, bad = 0, first = 0;
  long double first_tol = 0;
  for (size_t i = 1; i <= c->n && r < runs; i++) {
    if (i < c->n && runs_same_key(c->dtype, x, i)) continue;
    /* run r is [start, i) */
    int same;
    long double tol = 0;
    long double a = value_at(t, primary, r), b = value_at(t, shadow, r);
    if (!tolerant) {
      same = bits_at(t, primary, r) == bits_at(t, shadow, r) ||
             (is_float(t) && isnan(a) && isnan(b));
    } else {
      long double mag = 0;
      for (size_t j = start; j < i; j++) mag += fabsl(value_at(t, y, j));
      tol = two_gamma(i - start, t) * mag;
      same = (isnan(a) && isnan(b)) || a == b || fabsl(a - b) <= tol ||
             (may_overflow(mag, t) && (!isfinite(a) || !isfinite(b)));
    }
    if (!same && bad++ == 0) first = r, first_tol = tol;
    r++;
    start = i;
  }
  if (!bad) return 1;
  char pv[64], sv[64];
  format_value(t, primary, first, pv, sizeof pv);
  format_value(t, shadow, first, sv, sizeof sv);
  snprintf(ctx->shadow_detail, sizeof ctx->shadow_detail,
           "%s of run %zu: primary %s, shadow %s; %zu of %zu runs differ (%s %.3Lg)",
           c->runs_lengths ? "length" : "value", first, pv, sv, bad, runs,
           tolerant ? "tolerance" : "bitwise", first_tol);
  return 0;
}

/* Compare; on a mismatch write the detail into ctx->shadow_detail. */
static int compare(xpar_context *ctx, const shadow_compare *k, const void *primary,
                   const void *shadow) {
  size_t first = 0, bad = 0;
  long double running = 0, first_tol = 0;
  for (size_t i = 0; i < k->count; i++) {
    int overflow;
    long double tol = tolerance(k, i, &running, &overflow);
    int same;
    if (k->bitwise || !is_float(k->t)) {
      long double a = value_at(k->t, primary, i), b = value_at(k->t, shadow, i);
      same = bits_at(k->t, primary, i) == bits_at(k->t, shadow, i) ||
             (is_float(k->t) && isnan(a) && isnan(b)); /* NaN payloads may differ */
    } else {
      long double a = value_at(k->t, primary, i), b = value_at(k->t, shadow, i);
      same = (isnan(a) && isnan(b)) || a == b || fabsl(a - b) <= tol ||
             (overflow && (!isfinite(a) || !isfinite(b)));
    }
    if (!same && bad++ == 0) {
      first = i;
      first_tol = tol;
    }
  }
  if (!bad) return 1;
  char pv[64], sv[64];
  format_value(k->t, primary, first, pv, sizeof pv);
  format_value(k->t, shadow, first, sv, sizeof sv);
  if (k->bitwise || !is_float(k->t))
    snprintf(ctx->shadow_detail, sizeof ctx->shadow_detail,
             "at index %zu: primary %s, shadow %s; %zu of %zu values differ (bitwise)", first,
             pv, sv, bad, k->count);
  else
    snprintf(ctx->shadow_detail, sizeof ctx->shadow_detail,
             "at index %zu: primary %s, shadow %s; %zu of %zu values differ (tolerance %.3Lg)",
             first, pv, sv, bad, k->count, first_tol);
  return 0;
}

/* ---- running the shadow tier ------------------------------------------------------------ */

/* The shadow's own working memory on the CPU: freed when the comparison is
 * done (the primary's kept scratch is the application's context's). */
static xpar_status run_shadow_cpu(xpar_context *ctx, xpar_tier tier, const xpar__call *c,
                                  const void *x, const void *y, void *out, void *out2,
                                  void *result) {
  xpar__host_scratch scratch = {NULL, 0};
  xpar__exec ex = {.serial = tier == XPAR_TIER_CPU_SERIAL,
                   .num_threads = tier == XPAR_TIER_CPU_SERIAL ? 1 : ctx->num_threads,
                   .reproducible = ctx->reproducible,
                   .host_scratch = &scratch};
  xpar_status s = xpar__run_op(&xpar__cpu_backend, &ex, c, x, y, out, out2, result);
  xpar__host_scratch_free(&scratch);
  return s;
}

/* Array slots x, y, out, out2: y and out2 have bytes2 bytes (dispatch.h);
 * argmin / argmax and the segmented ops size out and out2 themselves. */
static size_t slot_bytes(const xpar__call *c, int i) {
  if (c->op == XPAR_OP_ARGREDUCE || c->op == XPAR_OP_SEGMENTED)
    return i == 0 ? c->bytes : i == 1 ? c->bytes2 : i == 2 ? c->out_bytes : c->out2_bytes;
  return i == 1 || i == 3 ? c->bytes2 : c->bytes;
}

static xpar_status run_shadow_gpu(xpar_context *ctx, xpar_tier tier, const xpar__call *c,
                                  const void *x, const void *y, void *out, void *out2,
                                  void *result) {
  const xpar__backend *g = xpar__gpu_backend();
  struct xpar__cuda_state *st;
  XPAR__FORWARD(xpar__gpu_state(ctx, &st));
  void *dev[4] = {NULL, NULL, NULL, NULL};
  const void *host[4] = {x, y, out, out2};
  xpar_status s = XPAR_OK;
  for (int i = 0; i < 4 && s == XPAR_OK; i++) {
    if (!host[i] || !slot_bytes(c, i)) continue;
    s = g->alloc(st, slot_bytes(c, i), &dev[i]);
    if (s == XPAR_OK) s = g->copy(st, dev[i], host[i], slot_bytes(c, i), XPAR__HOST_TO_DEVICE);
  }
  if (s == XPAR_OK) {
    xpar__exec ex = {.serial = tier == XPAR_TIER_CUDA_SERIAL,
                     .cuda = st,
                     .grid = ctx->launch_grid,
                     .block = ctx->launch_block,
                     .reproducible = ctx->reproducible};
    s = xpar__run_op(g, &ex, c, dev[0], dev[1], dev[2], dev[3], result);
  }
  for (int i = 2; i < 4; i++)
    if (s == XPAR_OK && host[i] && slot_bytes(c, i))
      s = g->copy(st, (void *)host[i], dev[i], slot_bytes(c, i), XPAR__DEVICE_TO_HOST);
  if (s == XPAR_OK) s = g->wait(st);
  for (int i = 0; i < 4; i++)
    if (dev[i]) g->free(st, dev[i]);
  return s;
}

/* The shadow call sc on `tier`: 1 when it ran and its outputs may be compared; 0 when
 * it did not (the GPU not usable, or the shadow's own failure, which is not the
 * application's), with the reason in ctx->shadow_detail and d marked NOT_RUN. */
static int run_shadow(xpar_context *ctx, xpar_tier tier, const xpar__call *sc, const void *x,
                      const void *y, void *out, void *out2, void *result,
                      xpar__decision_raw *d) {
  ctx->shadow_detail[0] = '\0';
  const char *why_not = NULL;
  xpar_status ss = XPAR_OK;
  if (tier == XPAR_TIER_CUDA || tier == XPAR_TIER_CUDA_SERIAL || tier == XPAR_TIER_CPU_CUDA) {
    if (ctx->offload == XPAR_OFFLOAD_DISABLED)
      why_not = "offload disabled";
    else if (!xpar__gpu_usable(ctx, &why_not))
      why_not = why_not ? why_not : "the GPU is not usable";
    else if (tier == XPAR_TIER_CPU_CUDA && (sc->kernel || !xpar__op_splits(sc->op)))
      why_not = "the split does not cover this operation";
    else
      why_not = NULL;
    if (!why_not && tier == XPAR_TIER_CPU_CUDA) {
      /* The shadow's copies are pageable host memory; its record is its own. */
      xpar__decision_raw sd;
      memset(&sd, 0, sizeof sd);
      ss = sc->n ? xpar__run_split(ctx, sc, x, y, out, out2, result, 0, XPAR_SPLIT_PAGEABLE, 0, &sd)
                 : run_shadow_cpu(ctx, XPAR_TIER_CPU_OPENMP, sc, x, y, out, out2, result);
    } else if (!why_not) {
      ss = run_shadow_gpu(ctx, tier, sc, x, y, out, out2, result);
    }
  } else {
    ss = run_shadow_cpu(ctx, tier, sc, x, y, out, out2, result);
  }
  if (ss != XPAR_OK) {
    snprintf(ctx->shadow_detail, sizeof ctx->shadow_detail, "%s: %s", xpar__status_name(ss),
             xpar__error_detail());
    xpar__clear_error();
  } else if (why_not) {
    snprintf(ctx->shadow_detail, sizeof ctx->shadow_detail, "%s", why_not);
  } else {
    return 1;
  }
  d->shadow_state = XPAR__SHADOW_NOT_RUN;
  return 0;
}

/* The comparison's verdict in d; a mismatch is printed, and with shadow_fail it is
 * the call's status (the outputs keep the primary's result). */
static xpar_status record_verdict(xpar_context *ctx, const xpar__call *c, xpar_tier tier,
                                  xpar__decision_raw *d, int same) {
  d->shadow_state = same ? XPAR__SHADOW_MATCH : XPAR__SHADOW_MISMATCH;
  if (same) return XPAR_OK;
  fprintf(stderr, "xpar: shadow mismatch: %s %s n=%zu on %s, shadow %s: %s\n",
          xpar__op_name(c->op), xpar__dtype_name(c->dtype), c->n, xpar__tier_name(d->tier),
          xpar__tier_name(tier), ctx->shadow_detail);
  if (!ctx->shadow_fail) return XPAR_OK;
  return xpar__fail(XPAR_ERR_SHADOW_MISMATCH,
                    "%s %s n=%zu on %s, shadow %s: %s (the outputs hold the primary's result)",
                    xpar__op_name(c->op), xpar__dtype_name(c->dtype), c->n,
                    xpar__tier_name(d->tier), xpar__tier_name(tier), ctx->shadow_detail);
}

/* ---- argmin / argmax and the segmented ops ------------------------------------------------- */

/* Segment g's bounds, from the host copy of the offsets (or fixed segments). */
static void seg_bounds(const xpar__call *c, const void *offs, size_t g, size_t *lo, size_t *hi) {
  *lo = xpar__call_offset(c, offs, g);
  *hi = xpar__call_offset(c, offs, g + 1);
}

/* Compare the primary's values (and indices) with the shadow's: bitwise, except
 * float sums and sum scans outside reproducible mode, each value within
 * 2 gamma_k of the magnitudes it sums (k its segment's terms so far). */
static int seg_compare(xpar_context *ctx, const xpar__call *c, const void *xs, const void *offs,
                       const void *prim, const void *outs, const void *prim2,
                       const void *outs2) {
  const xpar_dtype t = c->dtype;
  const int tol_on = c->seg_kind != XPAR__SEG_ARGREDUCE && c->red == XPAR_SUM && is_float(t) &&
                     !ctx->reproducible;
  size_t bad = 0, first = 0;
  long double first_tol = 0;
  for (size_t g = 0; g < c->n_segments; g++) {
    size_t lo, hi;
    seg_bounds(c, offs, g, &lo, &hi);
    long double mag = 0;
    /* scan: each element of the segment; reduce / argreduce: value g */
    const size_t count = c->seg_kind == XPAR__SEG_SCAN ? hi - lo : 1;
    for (size_t j = 0; j < count; j++) {
      const size_t at = c->seg_kind == XPAR__SEG_SCAN ? lo + j : g;
      long double tol = 0;
      if (tol_on) {
        if (c->seg_kind == XPAR__SEG_SCAN) {
          const long double before = mag;
          mag += fabsl(value_at(t, xs, lo + j));
          tol = two_gamma(j + 1, t) * (c->kind == XPAR_EXCLUSIVE ? before : mag);
        } else {
          for (size_t i = lo; i < hi; i++) mag += fabsl(value_at(t, xs, i));
          tol = two_gamma(hi - lo, t) * mag;
        }
      }
      const long double a = value_at(t, prim, at), b = value_at(t, outs, at);
      int same = bits_at(t, prim, at) == bits_at(t, outs, at) || (is_float(t) && isnan(a) && isnan(b));
      if (!same && tol_on)
        same = a == b || fabsl(a - b) <= tol ||
               (may_overflow(mag, t) && (!isfinite(a) || !isfinite(b)));
      if (same && prim2 && bits_at(XPAR_INT64, prim2, g) != bits_at(XPAR_INT64, outs2, g))
        same = 0;
      if (!same && bad++ == 0) {
        first = at;
        first_tol = tol;
      }
    }
  }
  if (!bad) return 1;
  char pv[64], sv[64];
  format_value(t, prim, first, pv, sizeof pv);
  format_value(t, outs, first, sv, sizeof sv);
  if (prim2 && c->seg_kind == XPAR__SEG_ARGREDUCE)
    snprintf(ctx->shadow_detail, sizeof ctx->shadow_detail,
             "segment %zu: primary %s at index %lld, shadow %s at index %lld; %zu differ", first,
             pv, (long long)value_at(XPAR_INT64, prim2, first), sv,
             (long long)value_at(XPAR_INT64, outs2, first), bad);
  else
    snprintf(ctx->shadow_detail, sizeof ctx->shadow_detail,
             "at %s %zu: primary %s, shadow %s; %zu values differ (%s %.3Lg)",
             c->seg_kind == XPAR__SEG_SCAN ? "index" : "segment", first, pv, sv, bad,
             tol_on ? "tolerance" : "bitwise", first_tol);
  return 0;
}

/* Shadow mode for argmin / argmax and the segmented ops: their outputs have
 * sizes of their own (one value and index; a value per segment; a scan's n).
 * The inputs are copied before the primary call (a scan may run in place),
 * the output as it was too (a scan writes only inside the segments). */
static xpar_status shadow_segmented(xpar_context *ctx, const xpar__call *c) {
  const xpar_tier tier = ctx->shadow_tier;
  void *xs = NULL, *ys = NULL, *outs = NULL, *prim = NULL, *outs2 = NULL, *prim2 = NULL;
  xpar_status st = XPAR_OK, prep = XPAR_OK;
  const size_t ob = c->out_bytes, ob2 = c->out2_bytes;
  if (c->x && c->bytes)
    prep = (xs = shadow_alloc(c->bytes)) ? read_operand(ctx, c->x, c->bytes, xs)
                                         : xpar__fail(XPAR_ERR_OUT_OF_MEMORY,
                                                      "no memory for the shadow's input");
  if (prep == XPAR_OK && c->y && c->bytes2)
    prep = (ys = shadow_alloc(c->bytes2)) ? read_operand(ctx, c->y, c->bytes2, ys)
                                          : xpar__fail(XPAR_ERR_OUT_OF_MEMORY,
                                                       "no memory for the shadow's offsets");
  if (prep == XPAR_OK && c->out && ob) {
    prep = (outs = shadow_alloc(ob)) && (prim = shadow_alloc(ob))
               ? XPAR_OK
               : xpar__fail(XPAR_ERR_OUT_OF_MEMORY, "no memory for the shadow's outputs");
    if (prep == XPAR_OK && c->seg_kind == XPAR__SEG_SCAN)
      prep = read_operand(ctx, c->out, ob, outs);
  }
  if (prep == XPAR_OK && c->out2 && ob2)
    prep = (outs2 = shadow_alloc(ob2)) && (prim2 = shadow_alloc(ob2))
               ? XPAR_OK
               : xpar__fail(XPAR_ERR_OUT_OF_MEMORY, "no memory for the shadow's indices");
  char prep_failure[sizeof ctx->shadow_detail];
  if (prep != XPAR_OK) {
    snprintf(prep_failure, sizeof prep_failure, "%s: %s", xpar__status_name(prep),
             xpar__error_detail());
    xpar__clear_error();
  }
  const int verbose = ctx->verbose;
  ctx->verbose = 0;
  st = xpar__dispatch_primary(ctx, c);
  ctx->verbose = verbose;
  if (st == XPAR_OK && c->nowait) st = xpar__gpu_drain(ctx);
  if (st != XPAR_OK) goto done;
  xpar__decision_raw *d = &ctx->last;
  d->shadow_tier = tier;
  d->shadow_detail = ctx->shadow_detail;
  if (prep != XPAR_OK) {
    snprintf(ctx->shadow_detail, sizeof ctx->shadow_detail, "%s", prep_failure);
    d->shadow_state = XPAR__SHADOW_NOT_RUN;
    if (verbose) xpar__decision_log(d);
    goto done;
  }
  if (prim) st = read_operand(ctx, c->out, ob, prim);
  if (st == XPAR_OK && prim2) st = read_operand(ctx, c->out2, ob2, prim2);
  if (st != XPAR_OK) goto done;
  xpar__call sc = *c;
  sc.nowait = 0;
  if (run_shadow(ctx, tier, &sc, xs, ys, outs, outs2, NULL, d))
    st = record_verdict(ctx, c, tier, d,
                        !c->n_segments || seg_compare(ctx, c, xs, ys, prim, outs, prim2, outs2));
  if (verbose) xpar__decision_log(d);
done:
  free(xs);
  free(ys);
  free(outs);
  free(prim);
  free(outs2);
  free(prim2);
  return st;
}

/* ---- the wrapper ------------------------------------------------------------------------- */

xpar_status xpar__dispatch_shadowed(xpar_context *ctx, const xpar__call *c) {
  if (c->op == XPAR_OP_ARGREDUCE || c->op == XPAR_OP_SEGMENTED) return shadow_segmented(ctx, c);
  const xpar_tier tier = ctx->shadow_tier;
  const size_t size = xpar__dtype_size(c->dtype);
  const size_t bytes = c->n * size;
  const int has_array_out = c->out != NULL;
  const int has_result = c->result != NULL;
  const xpar_dtype rt = c->result_dtype; /* the wide sum's, a compaction's count (uint64) */
  const size_t y_bytes = c->bytes2; /* y's: a sort's values, a compaction's flags */
  const int has_out2 = c->out2 != NULL;
  void *xs = NULL, *ys = NULL, *outs = NULL, *prim = NULL, *outs2 = NULL, *prim2 = NULL;
  xpar_status st = XPAR_OK;

  /* Inputs before the primary call can overwrite them: axpy's y (in place),
   * and axpy's alpha or fill's value where it lies inside the output. */
  xpar__scalar scalar_in;
  memset(&scalar_in, 0, sizeof scalar_in);
  const int has_scalar = c->scalar && c->n > 0; /* n = 0 reads no scalar */
  if (has_scalar) memcpy(scalar_in.bytes, c->scalar, size);
  const void *y_in = c->op == XPAR_OP_AXPY ? c->out : c->y;
  xpar_status prep = XPAR_OK;
  if (bytes) {
    if (c->x)
      prep = (xs = shadow_alloc(bytes))
                 ? read_operand(ctx, c->x, bytes, xs)
                 : xpar__fail(XPAR_ERR_OUT_OF_MEMORY,
                              "no memory for the shadow's copy of the input (%zu bytes)", bytes);
    if (prep == XPAR_OK && y_in)
      prep = (ys = shadow_alloc(y_bytes))
                 ? read_operand(ctx, y_in, y_bytes, ys)
                 : xpar__fail(XPAR_ERR_OUT_OF_MEMORY,
                              "no memory for the shadow's copy of the second input (%zu bytes)",
                              bytes);
    if (prep == XPAR_OK && has_array_out)
      prep = (outs = shadow_alloc(bytes)) && (prim = shadow_alloc(bytes))
                 ? XPAR_OK
                 : xpar__fail(XPAR_ERR_OUT_OF_MEMORY,
                              "no memory for the shadow's output buffers (2 x %zu bytes)", bytes);
    if (prep == XPAR_OK && has_out2)
      prep = (outs2 = shadow_alloc(c->bytes2)) && (prim2 = shadow_alloc(c->bytes2))
                 ? XPAR_OK
                 : xpar__fail(XPAR_ERR_OUT_OF_MEMORY,
                              "no memory for the shadow's value buffers (2 x %zu bytes)",
                              c->bytes2);
  }
  /* A histogram writes its counts (out2) for n = 0 too: zeros. */
  const size_t out2_count = c->op == XPAR_OP_HISTOGRAM ? c->hist_bins : c->n;
  const int out2_always = c->op == XPAR_OP_HISTOGRAM;
  if (prep == XPAR_OK && has_out2 && out2_always && !bytes)
    prep = (outs2 = shadow_alloc(c->bytes2)) && (prim2 = shadow_alloc(c->bytes2))
               ? XPAR_OK
               : xpar__fail(XPAR_ERR_OUT_OF_MEMORY,
                            "no memory for the shadow's count buffers (2 x %zu bytes)",
                            c->bytes2);
  /* A shadow that cannot be prepared is the shadow's failure, not the
   * application's (xpar.h): the primary call runs, the record says why the
   * shadow did not. */
  char prep_failure[sizeof ctx->shadow_detail];
  if (prep != XPAR_OK) {
    snprintf(prep_failure, sizeof prep_failure, "%s: %s", xpar__status_name(prep),
             xpar__error_detail());
    xpar__clear_error();
  }

  /* The primary call, logged once below with the shadow's outcome. */
  const int verbose = ctx->verbose;
  ctx->verbose = 0;
  st = xpar__dispatch_primary(ctx, c);
  ctx->verbose = verbose;
  if (st != XPAR_OK) goto done;
  if (c->nowait) {
    st = xpar__gpu_drain(ctx);
    if (st != XPAR_OK) goto done;
  }
  xpar__decision_raw *d = &ctx->last;
  d->shadow_tier = tier;
  d->shadow_detail = ctx->shadow_detail;
  if (prep != XPAR_OK) {
    snprintf(ctx->shadow_detail, sizeof ctx->shadow_detail, "%s", prep_failure);
    d->shadow_state = XPAR__SHADOW_NOT_RUN;
    if (verbose) xpar__decision_log(d);
    goto done;
  }

  xpar__scalar prim_result, shadow_result;
  memset(&prim_result, 0, sizeof prim_result);
  memset(&shadow_result, 0, sizeof shadow_result);
  if (has_array_out && bytes) st = read_operand(ctx, c->out, bytes, prim);
  if (st == XPAR_OK && has_out2 && (bytes || out2_always))
    st = read_operand(ctx, c->out2, c->bytes2, prim2);
  if (st == XPAR_OK && has_result)
    st = read_operand(ctx, c->result, xpar__dtype_size(rt), prim_result.bytes);
  if (st != XPAR_OK) goto done;

#ifdef XPAR_TEST_HOOKS
  if (planted_index >= 0) { /* tests only: a wrong primary result */
    st = plant_fault(ctx, c, has_result, has_array_out, rt, size, prim, prim2, &prim_result);
    if (st != XPAR_OK) goto done;
  }
#endif

  /* The shadow call: same call, its own buffers (axpy starts from the old y)
   * and the scalar as it was before the primary call. */
  xpar__call sc = *c;
  sc.nowait = 0;
  if (has_scalar) sc.scalar = scalar_in.bytes;
  if (c->op == XPAR_OP_AXPY && bytes) memcpy(outs, ys, bytes);
  const void *sy = c->op == XPAR_OP_AXPY ? NULL : ys;
  if (run_shadow(ctx, tier, &sc, xs, sy, outs, outs2, has_result ? &shadow_result : NULL,
                 d)) {
    shadow_compare k = {.t = has_result ? rt : c->dtype,
                        .count = has_result ? 1 : c->n,
                        .bitwise = !order_dependent(c) || ctx->reproducible,
                        .c = c,
                        .x = xs,
                        .y = ys,
                        .init = c->init};
    int same;
    if (c->op == XPAR_OP_SELECT) {
      /* a compaction: the counts, then the elements the count covers (a
       * partition's all n; the rest of out is the application's) */
      shadow_compare kc = {.t = XPAR_UINT64, .count = 1, .bitwise = 1, .c = c};
      same = compare(ctx, &kc, prim_result.bytes, shadow_result.bytes);
      const uint64_t kept = prim_result.u64;
      k.t = c->dtype;
      k.count = c->select_kind == XPAR__PARTITION ? c->n : (size_t)kept;
      k.bitwise = 1;
      if (same && k.count <= c->n) same = compare(ctx, &k, prim, outs);
    } else if (c->op == XPAR_OP_RUNS) {
      /* runs: the counts, the first keys (moved), then each run's value or
       * length; the outputs past the count are the application's */
      shadow_compare kc = {.t = XPAR_UINT64, .count = 1, .bitwise = 1, .c = c};
      same = compare(ctx, &kc, prim_result.bytes, shadow_result.bytes);
      const uint64_t runs = prim_result.u64;
      k.t = c->dtype;
      k.count = (size_t)runs;
      k.bitwise = 1;
      if (same && runs <= c->n) same = compare(ctx, &k, prim, outs);
      if (same && runs <= c->n)
        same = compare_runs_values(ctx, c, xs, ys, (size_t)runs, prim2, outs2);
    } else {
      same = has_result      ? compare(ctx, &k, prim_result.bytes, shadow_result.bytes)
             : has_array_out ? compare(ctx, &k, prim, outs)
                             : 1;
    }
    if (same && has_out2 && c->op != XPAR_OP_RUNS) {
      /* a sort's values or indices: moved, never computed; a histogram's counts:
       * exact on every tier */
      shadow_compare kv = {.t = c->dtype2, .count = out2_count, .bitwise = 1, .c = c};
      same = compare(ctx, &kv, prim2, outs2);
    }
    st = record_verdict(ctx, c, tier, d, same);
  }
  if (verbose) xpar__decision_log(d);

done:
  free(xs);
  free(ys);
  free(outs);
  free(prim);
  free(outs2);
  free(prim2);
  return st;
}
