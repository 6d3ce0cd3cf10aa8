/*
 * Application operators (XPAR_OPERATOR) on every tier: the shipped examples
 * of examples/operators/operators.xk.c --
 *  - argmin / argmax of int32 with the first index on ties (values drawn
 *    from [-7, 7], so ties are everywhere): reduce, and the inclusive scan
 *    (running argmin);
 *  - the linear recurrence h[i] = a[i] h[i-1] + b[i] as a scan over affine
 *    pairs (uint32, wrapping), inclusive and exclusive, and its reduce;
 *  - the fused transform-reduce sum of squares (float in, double
 *    accumulator): every term is exact in double and positive, so any order
 *    of summation is within n eps(double) x the sum of the long double
 *    reference -- the documented tolerance;
 *  - a 4-byte scalar operator (uint32 sum): reduce, inclusive and exclusive scan,
 *    synchronous and nowait (host outputs: complete on return);
 *  - on the cuda tier, launch-shape overrides and sizes up to 5e6 (t_shapes).
 * Integers are exact on every tier.  Sizes are the conformance sizes, each
 * at two offsets; scan outputs start poisoned and their guards must hold;
 * inputs must be unchanged; the decision record must name the operator.
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

typedef enum { C_ARGMIN, C_ARGMAX, C_RECURRENCE, C_SUMSQ, C_SUM_U32, C_COUNT } case_t;
static const char *const case_names[C_COUNT] = {"argmin", "argmax", "recurrence", "sumsq",
                                                "sum_u32"};
static const xpar_operator *const case_ops[C_COUNT] = {&xk_argmin, &xk_argmax, &xk_recurrence,
                                                       &xk_sumsq, &xk_sum_u32};

static xpar_context *operator_context(xt_tier_state *st) {
  xpar_context *ctx = xt_tier_open(st);
  if (st->tier == XT_CPU_OPENMP)
    for (int c = 0; c < C_COUNT; c++)
      xt_check_status("setup", "set_operator_threshold(OPENMP, 0)",
                      xpar_context_set_operator_threshold(ctx, case_ops[c], XPAR_THRESHOLD_OPENMP, 0),
                      XPAR_OK);
  return ctx;
}

static void check_op_decision(const char *label, xpar_context *ctx, xt_tier tier,
                              const xpar_operator *op, size_t n) {
  xt_check_decision(label, ctx, tier, XPAR_OP_KERNEL, XPAR_INT32, n);
  xpar_decision d;
  xpar_last_decision(ctx, &d);
  if (!d.kernel || strcmp(d.kernel, op->name) != 0)
    xt_failf(label, "decision names %s, expected %s", d.kernel ? d.kernel : "(null)", op->name);
}

/* Serial references, in index order. */
static xk_arg ref_arg(const int32_t *v, size_t n, size_t upto, int max) {
  xk_arg r = {max ? INT32_MIN : INT32_MAX, 0, INT64_MAX};
  for (size_t i = 0; i < n && i <= upto; i++)
    if (max ? v[i] > r.v : v[i] < r.v) r = (xk_arg){v[i], 0, (int64_t)i};
  return r;
}

static void check_arg(const char *label, const char *what, size_t i, xk_arg got, xk_arg want) {
  if (got.v != want.v || got.i != want.i)
    xt_failf(label, "%s[%zu] = (%d, %lld), expected (%d, %lld)", what, i, got.v,
             (long long)got.i, want.v, (long long)want.i);
}

/* The scan output: n accumulators of acc_size bytes, in a guarded buffer of
 * 8-byte words (every accumulator here is a multiple of 8 bytes but one). */
static void alloc_acc(xt_buf *b, size_t acc_size, size_t n, size_t off) {
  xt_buf_alloc(b, XPAR_UINT32, n * acc_size / 4, off * 2);
}

static void run_case(void **state, case_t c) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = operator_context(st);
  const xpar_operator *op = case_ops[c];
  const char *tier = xt_tier_name(st->tier);
  if (c == C_ARGMIN || c == C_ARGMAX) {
    /* n = 0 reads and writes no element (xpar.h): unaligned arrays are
     * accepted, the reduce writes the identity, the scan nothing. */
    char label[120];
    snprintf(label, sizeof label, "%s/%s/n=0 unaligned", case_names[c], tier);
    unsigned char bytes[64], before[64];
    memset(bytes, 0x3C, sizeof bytes);
    memcpy(before, bytes, sizeof bytes);
    xk_arg r;
    memset(&r, 0x5A, sizeof r);
    xt_check_status(label, "reduce", xpar_reduce_op(ctx, op, bytes + 1, 0, &r), XPAR_OK);
    check_arg(label, "reduce", 0, r, ref_arg(NULL, 0, 0, c == C_ARGMAX));
    xt_check_status(label, "scan", xpar_scan_op(ctx, op, XPAR_INCLUSIVE, bytes + 1, bytes + 3, 0),
                    XPAR_OK);
    xt_check_bytes(label, "the unaligned arrays", bytes, before, sizeof bytes);
  }
  for (int si = 0; si < XT_NSIZES; si++) {
    const size_t n = xt_sizes[si];
    if (n > xt_tier_max_n(st->tier)) continue;
    for (int oi = 0; oi < 3; oi++) { /* offset 0: the aligned (vector) paths */
      const size_t off = xt_offs[oi][0];
      char label[200];
      snprintf(label, sizeof label, "%s/%s/n=%zu/off=%zu", case_names[c], tier, n, off);
      xt_rng rng;
      xt_rng_for(&rng, label);
      xt_buf in, out;
      memset(&out, 0, sizeof out);
      switch (c) {
        case C_ARGMIN:
        case C_ARGMAX: {
          const int max = c == C_ARGMAX;
          xt_buf_alloc(&in, XPAR_INT32, n, off);
          int32_t *v = (int32_t *)in.p;
          for (size_t i = 0; i < n; i++) v[i] = (int32_t)xt_below(&rng, 15) - 7;
          unsigned char *in_copy = xt_buf_copy(&in);
          xk_arg r;
          memset(&r, 0x5A, sizeof r);
          xt_check_status(label, "reduce", xpar_reduce_op(ctx, op, in.p, n, &r), XPAR_OK);
          check_op_decision(label, ctx, st->tier, op, n);
          check_arg(label, "reduce", 0, r, ref_arg(v, n, n, max));
          /* the running argmin / argmax */
          alloc_acc(&out, sizeof(xk_arg), n, off);
          xt_check_status(label, "inclusive scan",
                          xpar_scan_op(ctx, op, XPAR_INCLUSIVE, in.p, out.p, n), XPAR_OK);
          const xk_arg *o = (const xk_arg *)out.p;
          xk_arg run = ref_arg(v, 0, 0, max);
          for (size_t i = 0; i < n; i++) {
            if (max ? v[i] > run.v : v[i] < run.v) run = (xk_arg){v[i], 0, (int64_t)i};
            check_arg(label, "scan", i, o[i], run);
          }
          xt_check_guards(label, "scan output", &out);
          xt_check_bytes(label, "input", in.base, in_copy, in.total);
          free(in_copy);
          break;
        }
        case C_RECURRENCE: {
          xt_buf_alloc(&in, XPAR_UINT64, n, off);
          xt_fill_random(&rng, XPAR_UINT32, in.p, 2 * n, XT_DATA_RANDOM, 0);
          const xk_affine *f = (const xk_affine *)in.p;
          unsigned char *in_copy = xt_buf_copy(&in);
          alloc_acc(&out, sizeof(xk_affine), n, off);
          for (int kind = 0; kind < 2; kind++) {
            xt_buf_poison(&out);
            xt_check_status(label, kind ? "exclusive scan" : "inclusive scan",
                            xpar_scan_op(ctx, op, (xpar_scan_kind)kind, in.p, out.p, n), XPAR_OK);
            check_op_decision(label, ctx, st->tier, op, n);
            const xk_affine *o = (const xk_affine *)out.p;
            uint32_t A = 1, h = 0; /* the composition so far: h -> A h + h0 */
            for (size_t i = 0; i < n; i++) {
              if (kind && (o[i].a != A || o[i].b != h))
                xt_failf(label, "exclusive out[%zu] = (%u, %u), expected (%u, %u)", i, o[i].a,
                         o[i].b, A, h);
              A = A * f[i].a;
              h = f[i].a * h + f[i].b; /* h[i] = a[i] h[i-1] + b[i] */
              if (!kind && (o[i].a != A || o[i].b != h))
                xt_failf(label, "inclusive out[%zu] = (%u, %u), expected (a-product %u, h %u)", i,
                         o[i].a, o[i].b, A, h);
            }
            xt_check_guards(label, "scan output", &out);
          }
          xk_affine r;
          xt_check_status(label, "reduce", xpar_reduce_op(ctx, op, in.p, n, &r), XPAR_OK);
          uint32_t A = 1, h = 0;
          for (size_t i = 0; i < n; i++) {
            A *= f[i].a;
            h = f[i].a * h + f[i].b;
          }
          if (r.a != A || r.b != h)
            xt_failf(label, "reduce = (%u, %u), expected (%u, %u)", r.a, r.b, A, h);
          xt_check_bytes(label, "input", in.base, in_copy, in.total);
          free(in_copy);
          break;
        }
        case C_SUMSQ: {
          xt_buf_alloc(&in, XPAR_FLOAT, n, off);
          xt_fill_random(&rng, XPAR_FLOAT, in.p, n, XT_DATA_RANDOM, 0);
          const float *v = (const float *)in.p;
          long double want = 0;
          for (size_t i = 0; i < n; i++) want += (long double)v[i] * v[i];
          double got;
          xt_check_status(label, "reduce", xpar_reduce_op(ctx, op, in.p, n, &got), XPAR_OK);
          check_op_decision(label, ctx, st->tier, op, n);
          xt_expect e = {want, (long double)n * xt_eps(XPAR_DOUBLE) * want};
          xt_check_scalar(label, "sum of squares", XPAR_DOUBLE, &got, e);
          break;
        }
        case C_SUM_U32:
        default: {
          xt_buf_alloc(&in, XPAR_UINT32, n, off);
          xt_fill_random(&rng, XPAR_UINT32, in.p, n, XT_DATA_RANDOM, 0);
          const uint32_t *v = (const uint32_t *)in.p;
          uint32_t want = 0;
          for (size_t i = 0; i < n; i++) want += v[i];
          alloc_acc(&out, sizeof(uint32_t), n, off);
          /* synchronous, then nowait (host outputs: complete before it returns,
           * xpar_wait harmless) */
          for (int nowait = 0; nowait < 2; nowait++) {
            uint32_t got = 0x5A5A5A5Au;
            xt_check_status(label, nowait ? "reduce nowait" : "reduce",
                            nowait ? xpar_reduce_op_nowait(ctx, op, in.p, n, &got)
                                   : xpar_reduce_op(ctx, op, in.p, n, &got),
                            XPAR_OK);
            if (nowait) xt_check_status(label, "wait", xpar_wait(ctx), XPAR_OK);
            if (got != want)
              xt_failf(label, "reduce%s = %u, expected %u", nowait ? " nowait" : "", got, want);
            for (int kind = 0; kind < 2; kind++) {
              xt_buf_poison(&out);
              xt_check_status(label, kind ? "exclusive scan" : "inclusive scan",
                              nowait ? xpar_scan_op_nowait(ctx, op, (xpar_scan_kind)kind, in.p, out.p, n)
                                     : xpar_scan_op(ctx, op, (xpar_scan_kind)kind, in.p, out.p, n),
                              XPAR_OK);
              if (nowait) xt_check_status(label, "wait", xpar_wait(ctx), XPAR_OK);
              check_op_decision(label, ctx, st->tier, op, n);
              const uint32_t *o = (const uint32_t *)out.p;
              uint32_t acc = 0;
              for (size_t i = 0; i < n; i++) {
                const uint32_t before = acc;
                acc += v[i];
                if (o[i] != (kind ? before : acc))
                  xt_failf(label, "%s out[%zu] = %u, expected %u", kind ? "exclusive" : "inclusive",
                           i, o[i], kind ? before : acc);
              }
              xt_check_guards(label, "scan output", &out);
            }
          }
          break;
        }
      }
      xt_buf_free(&in);
      if (out.base) xt_buf_free(&out);
    }
  }
}

/* The GPU's shapes (cuda tier only): launch-shape overrides -- odd blocks with a
 * partial last warp, grids smaller than the tile count (blocks draw tiles from
 * the counter), one block, one lane per warp -- sizes at the one-block paths'
 * edges (scan: one row per thread up to 512 threads, 1,024 / 2,048 items, one
 * tile of up to 1,024 threads, 3,584 / 8,192 -- the tuned tile of the 8- and
 * 4-byte accumulators; reduce: one row per thread up to 1,024 threads, 2,048 /
 * 4,096 items), also as a grid of one block of xpar's size, and a size
 * large enough for a grid of more than 500 tiles (the look-back's sleeps), for a
 * 4-byte (packed status word), an 8-byte (128-bit word) and a 16-byte (flag + value slots)
 * accumulator; reduce, inclusive and exclusive scan, every element checked. */
static void t_shapes(void **state) {
  xt_tier_state *st = (xt_tier_state *)*state;
  if (st->tier != XT_CUDA) return;
  xpar_context *ctx = operator_context(st);
  static const unsigned shapes[][2] = {{0, 0}, {7, 33}, {3, 64}, {1, 1024},
                                      {2, 1}, {0, 97}, {1, 0}};
  static const size_t sizes[] = {1000, 1024, 1025, 2048,  2049,    3584,   3585,
                                 4096, 4097, 8192, 8193, 65537, 1048579, 5000011};
  for (size_t hi = 0; hi < sizeof shapes / sizeof shapes[0]; hi++) {
    xt_check_status("shapes", "set_launch_shape",
                    xpar_context_set_launch_shape(ctx, shapes[hi][0], shapes[hi][1]), XPAR_OK);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      const size_t n = sizes[si];
      if (n > xt_tier_max_n(st->tier)) continue;
      if (n > 65537 && shapes[hi][1] == 1) continue; /* one lane per block: slow */
      char label[160];
      snprintf(label, sizeof label, "shapes/%ux%u/n=%zu", shapes[hi][0], shapes[hi][1], n);
      xt_rng rng;
      xt_rng_for(&rng, label);
      uint32_t *v = malloc(n * sizeof *v), *o = malloc(n * sizeof *o);
      xk_affine *f = malloc(n * sizeof *f), *fo = malloc(n * sizeof *fo);
      xk_arg *ao = malloc(n * sizeof *ao);
      assert_non_null(v && o && f && fo && ao);
      xt_fill_random(&rng, XPAR_UINT32, v, n, XT_DATA_RANDOM, 0);
      xt_fill_random(&rng, XPAR_UINT32, f, 2 * n, XT_DATA_RANDOM, 0);
      /* sum_u32: reduce, inclusive and exclusive */
      uint32_t got, want = 0;
      for (size_t i = 0; i < n; i++) want += v[i];
      xt_check_status(label, "sum reduce", xpar_reduce_op(ctx, &xk_sum_u32, v, n, &got), XPAR_OK);
      if (got != want) xt_failf(label, "sum reduce = %u, expected %u", got, want);
      /* The operator's 4-byte scan looks back over the context's tile status,
       * the built-in scan's words: each operator scan runs right after a
       * built-in scan (and vice versa) on the same context, so a word left by
       * the other, of a longer or shorter tile run, must never be taken for
       * this call's (round 1 follows round 0's larger built-in scan). */
      for (int round = 0; round < 2; round++)
        for (int kind = 0; kind < 2; kind++)
          for (int builtin = 0; builtin < 2; builtin++) {
            const size_t m = round ? n : (builtin ? n : n / 2 + 1);
            memset(o, 0xA5, n * sizeof *o);
            xt_check_status(label, builtin ? "built-in sum scan" : "sum scan",
                            builtin ? xpar_scan(ctx, XPAR_UINT32, XPAR_SUM, (xpar_scan_kind)kind,
                                                v, o, m)
                                    : xpar_scan_op(ctx, &xk_sum_u32, (xpar_scan_kind)kind, v, o, m),
                            XPAR_OK);
            uint32_t acc = 0;
            for (size_t i = 0; i < n; i++) {
              const uint32_t before = acc;
              acc += v[i];
              const uint32_t expect = i >= m ? 0xA5A5A5A5u : (kind ? before : acc);
              if (o[i] != expect) {
                xt_failf(label, "%s sum %s scan of %zu: out[%zu] = %u, expected %u",
                         builtin ? "built-in" : "operator", kind ? "exclusive" : "inclusive", m,
                         i, o[i], expect);
                break;
              }
            }
          }
      /* argmin over values with ties (16-byte accumulator) */
      int32_t *iv = (int32_t *)v;
      for (size_t i = 0; i < n; i++) iv[i] = (int32_t)(v[i] % 15u) - 7;
      xk_arg r;
      xt_check_status(label, "argmin reduce", xpar_reduce_op(ctx, &xk_argmin, iv, n, &r), XPAR_OK);
      check_arg(label, "argmin reduce", 0, r, ref_arg(iv, n, n, 0));
      memset(ao, 0xA5, n * sizeof *ao);
      xt_check_status(label, "argmin scan",
                      xpar_scan_op(ctx, &xk_argmin, XPAR_INCLUSIVE, iv, ao, n), XPAR_OK);
      xk_arg run = ref_arg(iv, 0, 0, 0);
      for (size_t i = 0; i < n; i++) {
        if (iv[i] < run.v) run = (xk_arg){iv[i], 0, (int64_t)i};
        if (ao[i].v != run.v || ao[i].i != run.i) {
          check_arg(label, "argmin scan", i, ao[i], run);
          break;
        }
      }
      /* the recurrence (8-byte accumulator), exclusive */
      memset(fo, 0xA5, n * sizeof *fo);
      xt_check_status(label, "recurrence scan",
                      xpar_scan_op(ctx, &xk_recurrence, XPAR_EXCLUSIVE, f, fo, n), XPAR_OK);
      uint32_t A = 1, h = 0;
      for (size_t i = 0; i < n; i++) {
        if (fo[i].a != A || fo[i].b != h) {
          xt_failf(label, "recurrence out[%zu] = (%u, %u), expected (%u, %u)", i, fo[i].a,
                   fo[i].b, A, h);
          break;
        }
        A *= f[i].a;
        h = f[i].a * h + f[i].b;
      }
      free(v);
      free(o);
      free(f);
      free(fo);
      free(ao);
    }
  }
}

#define OP_TEST(C, name) \
  static void name(void **state) { run_case(state, C); }
OP_TEST(C_ARGMIN, t_argmin)
OP_TEST(C_ARGMAX, t_argmax)
OP_TEST(C_RECURRENCE, t_recurrence)
OP_TEST(C_SUMSQ, t_sumsq)
OP_TEST(C_SUM_U32, t_sum_u32)

int main(int argc, char **argv) {
  xt_init("test_operator", argc, argv);
  static const char *const names[C_COUNT + 1] = {"argmin", "argmax", "recurrence", "sumsq",
                                                  "sum_u32", "shapes"};
  static const xt_body bodies[C_COUNT + 1] = {t_argmin, t_argmax, t_recurrence,
                                              t_sumsq,  t_sum_u32, t_shapes};
  return xt_run_tier_tests("operator", names, bodies, C_COUNT + 1);
}
