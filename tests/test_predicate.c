/*
 * Application predicates (XPAR_PREDICATE) on every tier: the shipped examples
 * of examples/operators/operators.xk.c --
 *  - xk_even_i32 (int32 even), random values: about half kept;
 *  - xk_rise_f64 (double above the element before it): the test reads a
 *    neighbour, so a tier that hands it the wrong base pointer fails;
 *  - xk_in_box_point (12-byte points inside [0, 1)^3): a CPU-only element
 *    size: AUTO runs it on the CPU, a forced GPU tier refuses it.
 * select_op and partition_op at the conformance sizes, each at two offsets,
 * synchronous and nowait (host count: complete on return): the kept elements
 * in order, a partition's rest in order after them, a select's output past the
 * count untouched, the guards around the output intact, the input unchanged,
 * the decision record naming the predicate.  Then the refusals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "operators/operators.h"
#include "xt.h"

typedef enum { P_EVEN, P_RISE, P_BOX, P_COUNT } pred_t;
static const char *const pred_names[P_COUNT] = {"even_i32", "rise_f64", "in_box_point"};
static const xpar_predicate_op *const preds[P_COUNT] = {&xk_even_i32, &xk_rise_f64,
                                                        &xk_in_box_point};

static xpar_context *predicate_context(xt_tier_state *st) {
  xpar_context *ctx = xt_tier_open(st);
  return ctx;
}

/* The reference test, as the predicate defines it. */
static int keeps(pred_t p, const void *in, size_t i) {
  switch (p) {
    case P_EVEN: return (((const int32_t *)in)[i] & 1) == 0;
    case P_RISE: {
      const double *v = (const double *)in;
      return i == 0 || v[i] > v[i - 1];
    }
    default: {
      const xk_point q = ((const xk_point *)in)[i];
      return q.x >= 0.0f && q.x < 1.0f && q.y >= 0.0f && q.y < 1.0f && q.z >= 0.0f &&
             q.z < 1.0f;
    }
  }
}

static void fill(pred_t p, xt_rng *r, void *in, size_t n) {
  for (size_t i = 0; i < n; i++) {
    switch (p) {
      case P_EVEN: ((int32_t *)in)[i] = (int32_t)xt_next(r); break;
      case P_RISE: ((double *)in)[i] = (double)(int64_t)xt_below(r, 64) - 32.0; break;
      default: {
        xk_point *q = &((xk_point *)in)[i];
        q->x = (float)xt_below(r, 5) * 0.3f - 0.1f; /* -0.1 .. 1.1: about 3/5 inside per axis */
        q->y = (float)xt_below(r, 5) * 0.3f - 0.1f;
        q->z = xt_below(r, 8) ? 0.5f : 2.0f;
      }
    }
  }
}

/* Elements of the predicate's size as xt buffers of 4-byte words. */
static void alloc_elems(xt_buf *b, pred_t p, size_t n, size_t off) {
  const size_t words = preds[p]->in_size / 4;
  xt_buf_alloc(b, XPAR_UINT32, n * words, off * words);
}

static void check_decision(const char *label, xpar_context *ctx, xt_tier tier, pred_t p,
                           size_t n) {
  xpar_decision d;
  xpar_last_decision(ctx, &d);
  if (!d.kernel || strcmp(d.kernel, preds[p]->name) != 0)
    xt_failf(label, "decision names %s, expected %s", d.kernel ? d.kernel : "(null)",
             preds[p]->name);
  if (n && tier != XT_AUTO) {
    const xpar_tier want = tier == XT_CPU_SERIAL   ? XPAR_TIER_CPU_SERIAL
                           : tier == XT_CPU_OPENMP ? XPAR_TIER_CPU_OPENMP
                           : tier == XT_CUDA       ? XPAR_TIER_CUDA
                                                   : XPAR_TIER_CUDA_SERIAL;
    /* the OpenMP tier runs small n on one thread and records it so */
    if (d.tier != want && !(tier == XT_CPU_OPENMP && d.tier == XPAR_TIER_CPU_SERIAL))
      xt_failf(label, "ran on %s, expected %s", xpar_tier_name(d.tier), xpar_tier_name(want));
  }
  if (p == P_BOX && n && (d.tier == XPAR_TIER_CUDA || d.tier == XPAR_TIER_CUDA_SERIAL))
    xt_failf(label, "a 12-byte predicate ran on %s", xpar_tier_name(d.tier));
}

static void run_pred(void **state, pred_t p) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = predicate_context(st);
  const char *tier = xt_tier_name(st->tier);
  const xpar_predicate_op *pred = preds[p];
  const size_t es = pred->in_size;
  const int gpu_tier = st->tier == XT_CUDA || st->tier == XT_CUDA_SERIAL;
  if (p == P_BOX && gpu_tier) {
    /* forced onto the GPU, a 12-byte element is refused, nothing written */
    char label[120];
    snprintf(label, sizeof label, "%s/%s/refused", pred_names[p], tier);
    xk_point in[4] = {{0.5f, 0.5f, 0.5f}, {2, 0, 0}, {0.1f, 0.2f, 0.3f}, {0, 0, 0}};
    xk_point out[4];
    memset(out, 0x5A, sizeof out);
    unsigned char before[sizeof out];
    memcpy(before, out, sizeof out);
    size_t count = 77;
    xt_check_status(label, "select_op", xpar_select_op(ctx, pred, in, out, 4, &count),
                    XPAR_ERR_NOT_SUPPORTED);
    xt_check_bytes(label, "out", out, before, sizeof out);
    if (count != 77) xt_failf(label, "count written: %zu", count);
    return;
  }
  for (int si = 0; si < XT_NSIZES; si++) {
    const size_t n = xt_sizes[si];
    if (n > xt_tier_max_n(st->tier)) continue;
    for (int oi = 0; oi < 2; oi++) {
      const size_t off = xt_offs[oi][0], ooff = xt_offs[oi][1];
      for (int part = 0; part < 2; part++) {
        for (int nowait = 0; nowait < 2; nowait++) {
          char label[200];
          snprintf(label, sizeof label, "%s/%s/%s%s/n=%zu/off=%zu,%zu", pred_names[p], tier,
                   part ? "partition" : "select", nowait ? "_nowait" : "", n, off, ooff);
          xt_rng rng;
          xt_rng_for(&rng, label);
          xt_buf in, out;
          alloc_elems(&in, p, n, off);
          alloc_elems(&out, p, n, ooff);
          fill(p, &rng, in.p, n);
          unsigned char *in_copy = xt_buf_copy(&in);
          xt_buf_poison(&out);
          unsigned char *out_before = xt_buf_copy(&out);
          size_t count = (size_t)-1;
          xpar_status s;
          if (part)
            s = nowait ? xpar_partition_op_nowait(ctx, pred, in.p, out.p, n, &count)
                       : xpar_partition_op(ctx, pred, in.p, out.p, n, &count);
          else
            s = nowait ? xpar_select_op_nowait(ctx, pred, in.p, out.p, n, &count)
                       : xpar_select_op(ctx, pred, in.p, out.p, n, &count);
          xt_check_status(label, "call", s, XPAR_OK);
          if (nowait) xt_check_status(label, "wait", xpar_wait(ctx), XPAR_OK);
          if (s == XPAR_OK) {
            check_decision(label, ctx, st->tier, p, n);
            size_t want = 0;
            for (size_t i = 0; i < n; i++) want += keeps(p, in.p, i) != 0;
            if (count != want) xt_failf(label, "count %zu, expected %zu", count, want);
            /* kept in order, then (partition) the rest in order */
            const unsigned char *src = (const unsigned char *)in.p;
            const unsigned char *dst = (const unsigned char *)out.p;
            size_t k = 0, r = want, bad = 0;
            for (size_t i = 0; i < n && !bad; i++) {
              const int keep = keeps(p, in.p, i);
              if (!keep && !part) continue;
              const size_t at = keep ? k++ : r++;
              if (memcmp(dst + at * es, src + i * es, es) != 0) {
                xt_failf(label, "out[%zu] is not element %zu (%s)", at, i,
                         keep ? "kept" : "rest");
                bad = 1;
              }
            }
            if (!part && !bad && n > want)
              xt_check_bytes(label, "out past the count", dst + want * es,
                             out_before + (dst - out.base) + want * es, (n - want) * es);
          }
          xt_check_guards(label, "out", &out);
          xt_check_bytes(label, "in", in.p, in_copy + ((unsigned char *)in.p - in.base), n * es);
          free(in_copy);
          free(out_before);
          xt_buf_free(&in);
          xt_buf_free(&out);
        }
      }
    }
  }
}

static void t_even(void **state) { run_pred(state, P_EVEN); }
static void t_rise(void **state) { run_pred(state, P_RISE); }
static void t_box(void **state) { run_pred(state, P_BOX); }

/* Bad input: a status and a detail, nothing written. */
static void t_refusals(void **state) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = predicate_context(st);
  const char *tier = xt_tier_name(st->tier);
  char label[120];
  snprintf(label, sizeof label, "refusals/%s", tier);
  int32_t in[16], out[16];
  for (int i = 0; i < 16; i++) in[i] = i;
  memset(out, 0x5A, sizeof out);
  unsigned char before[sizeof out];
  memcpy(before, out, sizeof out);
  size_t count = 77;
  xt_check_status(label, "NULL predicate", xpar_select_op(ctx, NULL, in, out, 16, &count),
                  XPAR_ERR_NULL_POINTER);
  xt_check_status(label, "NULL in", xpar_select_op(ctx, &xk_even_i32, NULL, out, 16, &count),
                  XPAR_ERR_NULL_POINTER);
  xt_check_status(label, "NULL out", xpar_partition_op(ctx, &xk_even_i32, in, NULL, 16, &count),
                  XPAR_ERR_NULL_POINTER);
  xt_check_status(label, "NULL count", xpar_select_op(ctx, &xk_even_i32, in, out, 16, NULL),
                  XPAR_ERR_NULL_POINTER);
  xt_check_status(label, "in place", xpar_select_op(ctx, &xk_even_i32, in, in, 16, &count),
                  XPAR_ERR_OVERLAP);
  xt_check_status(label, "overlap", xpar_partition_op(ctx, &xk_even_i32, in, in + 3, 8, &count),
                  XPAR_ERR_OVERLAP);
  xt_check_status(label, "count inside out",
                  xpar_select_op(ctx, &xk_even_i32, in, out, 16, (size_t *)(void *)(out + 2)),
                  XPAR_ERR_OVERLAP);
  xt_check_status(label, "misaligned in",
                  xpar_select_op(ctx, &xk_even_i32, (const char *)in + 1, out, 4, &count),
                  XPAR_ERR_INVALID_ARGUMENT);
  xt_check_status(label, "size overflow",
                  xpar_select_op(ctx, &xk_even_i32, in, out, SIZE_MAX / 2, &count),
                  XPAR_ERR_SIZE_OVERFLOW);
  xt_check_status(label, "misaligned nowait count",
                  xpar_select_op_nowait(ctx, &xk_even_i32, in, out, 16,
                                        (size_t *)(void *)((char *)&count + 1)),
                  XPAR_ERR_INVALID_ARGUMENT);
  xpar_predicate_op wrong = xk_even_i32;
  wrong.abi = XPAR_KERNEL_ABI + 1;
  xt_check_status(label, "layout version", xpar_select_op(ctx, &wrong, in, out, 16, &count),
                  XPAR_ERR_INVALID_ARGUMENT);
  wrong = xk_even_i32;
  wrong.in_align = 3;
  xt_check_status(label, "alignment", xpar_select_op(ctx, &wrong, in, out, 16, &count),
                  XPAR_ERR_INVALID_ARGUMENT);
  wrong = xk_even_i32;
  wrong.cpu_count = NULL;
  wrong.cpu_scatter = NULL;
  wrong.gpu_flags = NULL;
  xt_check_status(label, "no side", xpar_select_op(ctx, &wrong, in, out, 16, &count),
                  XPAR_ERR_NOT_SUPPORTED);
  xt_check_bytes(label, "out", out, before, sizeof out);
  if (count != 77) xt_failf(label, "count written: %zu", count);
  /* n = 0: no element read or written, the count 0 */
  xt_check_status(label, "n = 0", xpar_select_op(ctx, &xk_even_i32, NULL, NULL, 0, &count),
                  XPAR_OK);
  if (count != 0) xt_failf(label, "n = 0: count %zu", count);
}

int main(int argc, char **argv) {
  xt_init("test_predicate", argc, argv);
  static const char *const names[] = {"even_i32", "rise_f64", "in_box_point", "refusals"};
  static const xt_body bodies[] = {t_even, t_rise, t_box, t_refusals};
  return xt_run_tier_tests("predicate", names, bodies, 4);
}
