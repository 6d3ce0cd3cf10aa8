/*
 * Reproducible mode (docs/reproducible.md): float and double sum, wide sum,
 * dot and sum scans (inclusive, exclusive, with a carry-in) give the same bits
 * on every tier.
 *
 *  spec     cpu-serial against an independent, naive implementation of the
 *           specification written here from the document (recursive trees),
 *           bit for bit; and against a compensated long double sum within
 *           the error bound the header states (h u / (1 - h u) sum |terms|)
 *  threads  cpu-openmp with 1..16 threads == cpu-serial, bit for bit
 *  auto     AUTO at several OpenMP thresholds == cpu-serial
 *  gpu      cuda (default shape and 1x1, 7x33, 1x256, 3x256, 2x64, 5x1024,
 *           4x1023, 1000x256) and cuda-serial == cpu-serial (skipped without a
 *           GPU; XPAR_TEST_REPRO_QUICK=1 keeps to sizes up to 3 blocks)
 *  mode     the setter/getter, XPAR_REPRODUCIBLE (valid and invalid values),
 *           the decision record, and min/max/integers left as they were
 * Inputs: seeded random data of mixed signs and magnitudes (2^-40..2^40,
 * with cancelling pairs), at element offsets 0..3, sizes around the block
 * (8192), lane (1024) and quad (4) boundaries.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "xt.h"

enum { LANES = 1024, ROWS = 8, BLOCK = 8192, QUADS = 2048 };

typedef enum { OP_SUM, OP_WIDE, OP_DOT, OP_SCAN_INC, OP_SCAN_EXC, OP_SCAN_INIT_INC,
               OP_SCAN_INIT_EXC, OP_COUNT } op_t;
static const char *const op_names[] = {"sum", "wide", "dot", "scan_inc", "scan_exc",
                                       "scan_init_inc", "scan_init_exc"};
static int is_scan(op_t o) { return o >= OP_SCAN_INC; }

/* ---- the specification, naively ------------------------------------------------ */

/* Values are held in double; for float every operation is rounded to float
 * (double rounding of one float + or * through double is exact). */
static int g_f32; /* the arithmetic of the current reference: float or double */
static double rnd(double v) { return g_f32 ? (double)(float)v : v; }
static double add(double a, double b) { return rnd(a + b); }

typedef struct ref_in {
  xpar_dtype t;
  const void *x, *y;
  size_t n;
  op_t op;
} ref_in;

static double elem(xpar_dtype t, const void *p, size_t i) {
  return t == XPAR_FLOAT ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static double term(const ref_in *r, size_t i) {
  if (r->op == OP_DOT) return rnd(elem(r->t, r->x, i) * elem(r->t, r->y, i));
  return elem(r->t, r->x, i);
}

/* Aligned pairwise tree over v[lo, lo + size) of `count` leaves; leaves past
 * count are absent (a node with an absent right half is its left half). */
static double tree(const double *v, size_t count, size_t lo, size_t size) {
  if (size == 1) return v[lo];
  size_t h = size / 2;
  if (lo + h >= count) return tree(v, count, lo, h);
  return add(tree(v, count, lo, h), tree(v, count, lo + h, h));
}

static size_t pow2_at_least(size_t n) {
  size_t p = 1;
  while (p < n) p *= 2;
  return p;
}

static double block_total(const ref_in *r, size_t b) {
  static double lane[LANES];
  for (size_t j = 0; j < LANES; j++) {
    double acc = 0.0;
    for (size_t k = 0; k < ROWS; k++) {
      size_t i = b * BLOCK + k * LANES + j;
      if (i < r->n) acc = add(acc, term(r, i));
    }
    lane[j] = acc;
  }
  /* folded in halves: lane i + lane i + h, h = 512 .. 1 */
  for (size_t h = LANES / 2; h >= 1; h /= 2)
    for (size_t i = 0; i < h; i++) lane[i] = add(lane[i], lane[i + h]);
  return lane[0];
}

/* init folded with the aligned subtrees of v covering [0, b), largest first. */
static double fold_prefix(const double *v, size_t count, size_t b, double init) {
  double acc = init;
  for (int k = 62; k >= 0; k--) {
    size_t bit = (size_t)1 << k;
    if (!(b & bit)) continue;
    size_t start = (b >> (k + 1)) << (k + 1);
    acc = add(acc, tree(v, count, start, bit));
  }
  return acc;
}

/* The reduce of the spec (sum, wide, dot), as a double holding the result. */
static double ref_reduce(const ref_in *r) {
  if (r->n == 0) return 0.0;
  size_t nb = (r->n + BLOCK - 1) / BLOCK;
  double *t = malloc(nb * sizeof *t);
  for (size_t b = 0; b < nb; b++) t[b] = block_total(r, b);
  double s = tree(t, nb, 0, pow2_at_least(nb));
  free(t);
  return s;
}

/* The scan of the spec: out[i] as doubles. */
static void ref_scan(const ref_in *r, double init, int exclusive, double *out) {
  size_t nb = (r->n + BLOCK - 1) / BLOCK;
  double *t = malloc((nb ? nb : 1) * sizeof *t);
  for (size_t b = 0; b < nb; b++) t[b] = block_total(r, b);
  static double u[QUADS];
  for (size_t b = 0; b < nb; b++) {
    double carry = fold_prefix(t, nb, b, init);
    size_t lo = b * BLOCK, len = r->n - lo < BLOCK ? r->n - lo : BLOCK;
    size_t nq = (len + 3) / 4;
    for (size_t q = 0; q < QUADS; q++) {
      if (4 * q + 3 < len) {
        size_t i = lo + 4 * q;
        u[q] = add(add(add(term(r, i), term(r, i + 1)), term(r, i + 2)), term(r, i + 3));
      } else {
        u[q] = 0.0;
      }
    }
    for (size_t q = 0; q < nq; q++) {
      double run = fold_prefix(u, QUADS, q, carry);
      for (size_t i = lo + 4 * q; i < lo + 4 * q + 4 && i < r->n; i++) {
        if (exclusive) {
          out[i] = run;
          run = add(run, term(r, i));
        } else {
          run = add(run, term(r, i));
          out[i] = run;
        }
      }
    }
  }
  free(t);
}

/* ---- data ------------------------------------------------------------------------ */

/* Mixed signs and magnitudes 2^-40..2^40, every third element nearly
 * cancelling its predecessor: not exactly summable in any type. */
static void fill_hard(xt_rng *rng, xpar_dtype t, void *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    double v;
    if (i % 3 == 2) {
      double prev = elem(t, p, i - 1);
      v = -prev * (1.0 + ldexp((double)xt_below(rng, 1000) + 1, -20));
    } else {
      double m = 1.0 + ldexp((double)(xt_next(rng) >> 11), -53);
      int e = (int)xt_below(rng, 81) - 40;
      v = ldexp(m, e) * ((xt_next(rng) & 1) ? -1 : 1);
    }
    if (t == XPAR_FLOAT) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
  }
}

/* ---- calling xpar ----------------------------------------------------------------- */

typedef struct call_case {
  xpar_dtype t;
  op_t op;
  size_t n;
  void *x, *y;    /* inputs (y: dot only) */
  double init;
} call_case;

static size_t result_size(const call_case *k) {
  return k->op == OP_WIDE ? sizeof(double) : xt_size(k->t);
}

/* Run the case on ctx into out (n elements for scans, else one result). */
static xpar_status run_case(xpar_context *ctx, const call_case *k, void *out) {
  unsigned char init[8];
  if (k->t == XPAR_FLOAT) {
    float f = (float)k->init;
    memcpy(init, &f, 4);
  } else {
    memcpy(init, &k->init, 8);
  }
  switch (k->op) {
    case OP_SUM: return xpar_reduce(ctx, k->t, XPAR_SUM, k->x, k->n, out);
    case OP_WIDE: return xpar_reduce_sum_wide(ctx, k->t, k->x, k->n, out);
    case OP_DOT: return xpar_dot(ctx, k->t, k->x, k->y, k->n, out);
    case OP_SCAN_INC: return xpar_scan(ctx, k->t, XPAR_SUM, XPAR_INCLUSIVE, k->x, out, k->n);
    case OP_SCAN_EXC: return xpar_scan(ctx, k->t, XPAR_SUM, XPAR_EXCLUSIVE, k->x, out, k->n);
    case OP_SCAN_INIT_INC:
      return xpar_scan_init(ctx, k->t, XPAR_SUM, XPAR_INCLUSIVE, init, k->x, out, k->n);
    default: return xpar_scan_init(ctx, k->t, XPAR_SUM, XPAR_EXCLUSIVE, init, k->x, out, k->n);
  }
}

static xpar_context *repro_context(xt_tier tier) {
  xpar_context *ctx = xt_tier_context(tier);
  assert_int_equal(xpar_context_set_reproducible(ctx, 1), XPAR_OK);
  return ctx;
}

/* ---- the cases --------------------------------------------------------------------- */

static const size_t spec_sizes[] = {0, 1, 3, 4, 5, 7, 1023, 1024, 1025, 2049, 4096, 8191, 8192,
                                    8193, 16387, 3 * 8192 + 5, 9 * 8192 + 4093};

/* A case's inputs, the cpu-serial result; labels and seeds per case. */
typedef struct fixture {
  char label[192];
  xt_buf x, y, out;
  call_case k;
} fixture;

static void fixture_make(fixture *f, const char *group, xpar_dtype t, op_t op, size_t n,
                         size_t off) {
  snprintf(f->label, sizeof f->label, "%s/%s/%s/n=%zu/off=%zu", group, op_names[op], xt_dname(t),
           n, off);
  xt_rng rng;
  xt_rng_for(&rng, f->label);
  xt_buf_alloc(&f->x, t, n, off);
  xt_buf_alloc(&f->y, t, n, (off + 1) % 4); /* dot: x and y misaligned to each other too */
  fill_hard(&rng, t, f->x.p, n);
  fill_hard(&rng, t, f->y.p, n);
  xt_buf_alloc(&f->out, is_scan(op) ? t : (op == OP_WIDE ? XPAR_DOUBLE : t), is_scan(op) ? n : 1,
               (off + 2) % 4);
  f->k.t = t;
  f->k.op = op;
  f->k.n = n;
  f->k.x = f->x.p;
  f->k.y = f->y.p;
  f->k.init = op == OP_SCAN_INIT_INC || op == OP_SCAN_INIT_EXC ? -1234.5678 : 0.0;
}

static void fixture_free(fixture *f) {
  xt_buf_free(&f->x);
  xt_buf_free(&f->y);
  xt_buf_free(&f->out);
}

static size_t out_bytes(const fixture *f) {
  return is_scan(f->k.op) ? f->k.n * xt_size(f->k.t) : result_size(&f->k);
}

/* Run on ctx into a freshly poisoned output; return a malloc'd copy of it. */
static unsigned char *run_fresh(fixture *f, xpar_context *ctx, const char *what) {
  xt_buf_poison(&f->out);
  xt_check_status(f->label, what, run_case(ctx, &f->k, f->out.p), XPAR_OK);
  xt_check_guards(f->label, what, &f->out);
  unsigned char *copy = malloc(out_bytes(f) + 1);
  memcpy(copy, f->out.p, out_bytes(f));
  return copy;
}

static long double ceil_log2(size_t v) {
  long double l = 0;
  while (((size_t)1 << (size_t)l) < v) l++;
  return l;
}

/* The stated bound, against a compensated long double sum. */
static void check_bound(const fixture *f, const void *got) {
  const call_case *k = &f->k;
  size_t nb = (k->n + BLOCK - 1) / BLOCK;
  long double u = (k->t == XPAR_FLOAT && k->op != OP_WIDE) ? ldexpl(1, -24) : ldexpl(1, -53);
  long double h = is_scan(k->op) ? 34 + 2 * ceil_log2(nb ? nb : 1) : 19 + ceil_log2(nb ? nb : 1);
  long double g = h * u / (1 - h * u);
  long double s = 0, c = 0, mag = 0;
  if (is_scan(k->op)) {
    s = k->t == XPAR_FLOAT ? (long double)(float)k->init : (long double)k->init;
    mag = fabsl(s);
  }
  for (size_t i = 0; i < k->n || (!is_scan(k->op) && i == k->n); i++) {
    if (!is_scan(k->op) && i == k->n) break;
    long double tv = k->op == OP_DOT ? (long double)elem(k->t, k->x, i) * elem(k->t, k->y, i)
                                     : (long double)elem(k->t, k->x, i);
    /* Kahan: the running sum is s - c */
    const long double before = s - c, mag_before = mag;
    long double y = tv - c, t2 = s + y;
    c = (t2 - s) - y;
    s = t2;
    mag += fabsl(tv);
    if (is_scan(k->op)) {
      const int excl = k->op == OP_SCAN_EXC || k->op == OP_SCAN_INIT_EXC;
      long double want = excl ? before : s - c;
      long double m = excl ? mag_before : mag;
      long double gotv = elem(k->t, got, i);
      if (!(fabsl(gotv - want) <= g * m + ldexpl(m, -62)))
        xt_failf(f->label, "scan element %zu: %.21Lg, reference %.21Lg, bound %.3Lg", i, gotv,
                 want, g * m);
    }
  }
  if (!is_scan(k->op)) {
    long double gotv = k->op == OP_WIDE ? (long double)*(const double *)got : elem(k->t, got, 0);
    if (!(fabsl(gotv - (s - c)) <= g * mag + ldexpl(mag, -62)))
      xt_failf(f->label, "result %.21Lg, reference %.21Lg, bound %.3Lg", gotv, s - c, g * mag);
  }
}

/* The spec, naively, in the output's layout. */
static void check_spec(const fixture *f, const void *got) {
  const call_case *k = &f->k;
  g_f32 = k->t == XPAR_FLOAT && k->op != OP_WIDE;
  ref_in r = {k->t, k->x, k->y, k->n, k->op};
  if (is_scan(k->op)) {
    double *want = malloc((k->n ? k->n : 1) * sizeof *want);
    double init = k->t == XPAR_FLOAT ? (double)(float)k->init : k->init;
    ref_scan(&r, init, k->op == OP_SCAN_EXC || k->op == OP_SCAN_INIT_EXC, want);
    for (size_t i = 0; i < k->n; i++) {
      double gv = elem(k->t, got, i);
      if (memcmp(&gv, &want[i], sizeof gv) != 0 && !(gv == 0 && want[i] == 0 && 0))
        xt_failf(f->label, "scan element %zu: got %.17g, the specification gives %.17g", i, gv,
                 want[i]);
    }
    free(want);
  } else {
    double want = ref_reduce(&r);
    double gv = k->op == OP_WIDE ? *(const double *)got : elem(k->t, got, 0);
    if (memcmp(&gv, &want, sizeof gv) != 0)
      xt_failf(f->label, "result %.17g (%a), the specification gives %.17g (%a)", gv, gv, want,
               want);
  }
}

static const xpar_dtype float_types[] = {XPAR_FLOAT, XPAR_DOUBLE};

static void spec_cpu_serial(void **state) {
  (void)state;
  xpar_context *ctx = repro_context(XT_CPU_SERIAL);
  for (int ti = 0; ti < 2; ti++)
    for (int op = 0; op < OP_COUNT; op++)
      for (size_t si = 0; si < sizeof spec_sizes / sizeof spec_sizes[0]; si++)
        for (size_t off = 0; off < 4; off++) {
          fixture f;
          fixture_make(&f, "spec", float_types[ti], (op_t)op, spec_sizes[si], off);
          unsigned char *got = run_fresh(&f, ctx, "cpu-serial");
          check_spec(&f, got);
          check_bound(&f, got);
          free(got);
          fixture_free(&f);
        }
  xpar_context_destroy(ctx);
}

/* Every other configuration against cpu-serial, bit for bit. */
static void same_bits(fixture *f, const unsigned char *want, xpar_context *ctx, const char *what) {
  unsigned char *got = run_fresh(f, ctx, what);
  if (memcmp(got, want, out_bytes(f)) != 0) {
    size_t es = is_scan(f->k.op) ? xt_size(f->k.t) : out_bytes(f), i = 0;
    while (memcmp(got + i * es, want + i * es, es) == 0) i++;
    double g = f->k.op == OP_WIDE || f->k.t == XPAR_DOUBLE ? ((double *)got)[i] : ((float *)got)[i];
    double w = f->k.op == OP_WIDE || f->k.t == XPAR_DOUBLE ? ((double *)want)[i]
                                                            : ((float *)want)[i];
    xt_failf(f->label, "%s differs from cpu-serial at element %zu: %a vs %a", what, i, g, w);
  }
  free(got);
}

static const size_t thread_sizes[] = {8193, 5 * 8192 + 77, 37 * 8192 + 4095, (1u << 20) + 77};

static void cpu_threads(void **state) {
  (void)state;
  if (!xt_have_openmp()) skip();
  xpar_context *serial = repro_context(XT_CPU_SERIAL);
  xpar_context *omp = repro_context(XT_CPU_OPENMP);
  for (int ti = 0; ti < 2; ti++)
    for (int op = 0; op < OP_COUNT; op++)
      for (size_t si = 0; si < sizeof thread_sizes / sizeof thread_sizes[0]; si++) {
        fixture f;
        fixture_make(&f, "threads", float_types[ti], (op_t)op, thread_sizes[si], si % 4);
        unsigned char *want = run_fresh(&f, serial, "cpu-serial");
        for (int th = 1; th <= 16; th++) {
          if (si == 3 && th % 5 != 1) continue; /* the largest: threads 1, 6, 11, 16 */
          char what[64];
          snprintf(what, sizeof what, "cpu-openmp with %d threads", th);
          assert_int_equal(xpar_context_set_num_threads(omp, th), XPAR_OK);
          same_bits(&f, want, omp, what);
          xpar_decision d;
          xpar_last_decision(omp, &d);
          if (d.tier != XPAR_TIER_CPU_OPENMP || !d.reproducible || !strstr(d.reason, "reproducible"))
            xt_failf(f.label, "decision: tier %s, reproducible %d, reason \"%s\"",
                     xpar_tier_name(d.tier), d.reproducible, d.reason);
        }
        free(want);
        fixture_free(&f);
      }
  xpar_context_destroy(serial);
  xpar_context_destroy(omp);
}

static void auto_thresholds(void **state) {
  (void)state;
  xpar_context *serial = repro_context(XT_CPU_SERIAL);
  xpar_context *aut = repro_context(XT_AUTO);
  const size_t thresholds[] = {0, 1, 4096, 8193, 100000, XPAR_NEVER};
  for (int ti = 0; ti < 2; ti++)
    for (int op = 0; op < OP_COUNT; op++)
      for (size_t si = 0; si < 3; si++) {
        fixture f;
        fixture_make(&f, "auto", float_types[ti], (op_t)op, thread_sizes[si], (si + 1) % 4);
        unsigned char *want = run_fresh(&f, serial, "cpu-serial");
        for (size_t k = 0; k < sizeof thresholds / sizeof thresholds[0]; k++) {
          for (int o = 0; o < XPAR_OP_COUNT_; o++)
            assert_int_equal(xpar_context_set_threshold(aut, (xpar_op)o, float_types[ti],
                                                        XPAR_THRESHOLD_OPENMP, thresholds[k]),
                             XPAR_OK);
          char what[64];
          snprintf(what, sizeof what, "auto with openmp threshold %zu", thresholds[k]);
          same_bits(&f, want, aut, what);
        }
        free(want);
        fixture_free(&f);
      }
  xpar_context_destroy(serial);
  xpar_context_destroy(aut);
}

static void gpu_tiers(void **state) {
  (void)state;
  if (!xt_gpu_usable()) {
    print_message("[xpar-test] skipping the GPU tiers: %s\n", xt_gpu_reason());
    skip();
  }
  xpar_context *serial = repro_context(XT_CPU_SERIAL);
  xpar_context *cuda = repro_context(XT_CUDA);
  xpar_context *cserial = repro_context(XT_CUDA_SERIAL);
  static const unsigned shapes[][2] = {{0, 0},   {1, 1},   {7, 33}, {1, 256}, {3, 256},
                                       {2, 64},  {5, 1024}, {4, 1023}, {1000, 256}};
  const size_t sizes[] = {0, 1, 5, 1025, 8191, 8192, 8193, 3 * 8192 + 5, 37 * 8192 + 4095,
                          (1u << 22) + 77};
  /* XPAR_TEST_REPRO_QUICK=1 (under compute-sanitizer): a quad, one block and
   * a bit, three blocks and a bit (the fast and the generic paths, the
   * combine), at offsets 0 and 3 */
  const char *quick = getenv("XPAR_TEST_REPRO_QUICK");
  const int q = quick && *quick == '1';
  for (int ti = 0; ti < 2; ti++)
    for (int op = 0; op < OP_COUNT; op++)
      for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t off = 0; off < 4; off += (si < 4 && !q ? 1 : 3)) {
          if (q && si != 2 && si != 6 && si != 7) continue;
          fixture f;
          fixture_make(&f, "gpu", float_types[ti], (op_t)op, sizes[si], off);
          unsigned char *want = run_fresh(&f, serial, "cpu-serial");
          for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            /* one GPU thread per block is slow: moderate sizes only */
            if ((shapes[s][1] == 1 || shapes[s][1] == 33) && sizes[si] > 400000) continue;
            assert_int_equal(xpar_context_set_launch_shape(cuda, shapes[s][0], shapes[s][1]),
                             XPAR_OK);
            char what[64];
            snprintf(what, sizeof what, "cuda %ux%u", shapes[s][0], shapes[s][1]);
            same_bits(&f, want, cuda, what);
          }
          if (sizes[si] <= 400000) same_bits(&f, want, cserial, "cuda-serial");
          free(want);
          fixture_free(&f);
        }
  xpar_context_destroy(serial);
  xpar_context_destroy(cuda);
  xpar_context_destroy(cserial);
}

/* In place (out == in): the same bits as out of place, on every tier here. */
static void in_place(void **state) {
  (void)state;
  const xt_tier tiers[] = {XT_CPU_SERIAL, XT_CPU_OPENMP, XT_CUDA, XT_CUDA_SERIAL};
  for (size_t ti = 0; ti < 4; ti++) {
    if (xt_tier_is_gpu(tiers[ti]) && !xt_gpu_usable()) continue;
    if (tiers[ti] == XT_CPU_OPENMP && !xt_have_openmp()) continue;
    xpar_context *ctx = repro_context(tiers[ti]);
    for (int d = 0; d < 2; d++)
      for (int op = OP_SCAN_INC; op < OP_COUNT; op++) {
        fixture f;
        fixture_make(&f, "in_place", float_types[d], (op_t)op, 5 * 8192 + 4099, 2);
        unsigned char *want = run_fresh(&f, ctx, "out of place");
        f.out.p = f.x.p; /* the input is overwritten with its scan */
        xt_check_status(f.label, "in place", run_case(ctx, &f.k, f.x.p), XPAR_OK);
        if (memcmp(f.x.p, want, out_bytes(&f)) != 0)
          xt_failf(f.label, "%s: the in-place scan differs from the out-of-place one",
                   xt_tier_name(tiers[ti]));
        free(want);
        fixture_free(&f);
      }
    xpar_context_destroy(ctx);
  }
}

/* The setter, the environment, and what the mode leaves alone. */
static void mode_switches(void **state) {
  (void)state;
  xpar_context *ctx;
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  int on = -1;
  assert_int_equal(xpar_context_get_reproducible(ctx, &on), XPAR_OK);
  assert_int_equal(on, 0);
  assert_int_equal(xpar_context_set_reproducible(ctx, 7), XPAR_OK);
  assert_int_equal(xpar_context_get_reproducible(ctx, &on), XPAR_OK);
  assert_int_equal(on, 1);
  assert_int_equal(xpar_context_get_reproducible(NULL, &on), XPAR_ERR_NULL_CONTEXT);
  assert_int_equal(xpar_context_get_reproducible(ctx, NULL), XPAR_ERR_NULL_POINTER);
  assert_int_equal(xpar_context_set_reproducible(NULL, 1), XPAR_ERR_NULL_CONTEXT);
  xpar_context_destroy(ctx);

  setenv("XPAR_REPRODUCIBLE", "1", 1);
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  assert_int_equal(xpar_context_get_reproducible(ctx, &on), XPAR_OK);
  assert_int_equal(on, 1);
  /* the decision record says so, and XPAR_VERBOSE's line is the same text */
  float v[3] = {1.5f, -2.25f, 4.0f}, r = 0;
  assert_int_equal(xpar_reduce(ctx, XPAR_FLOAT, XPAR_SUM, v, 3, &r), XPAR_OK);
  assert_true(r == 3.25f);
  xpar_decision d;
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  assert_int_equal(d.reproducible, 1);
  assert_non_null(strstr(d.reason, "reproducible mode"));
  xpar_context_destroy(ctx);
  const char *bad[] = {"2", "yes", "", "on"};
  for (size_t i = 0; i < 4; i++) {
    setenv("XPAR_REPRODUCIBLE", bad[i], 1);
    ctx = (xpar_context *)&on;
    assert_int_equal(xpar_context_create(&ctx), XPAR_ERR_INVALID_ENV);
    assert_null(ctx);
    assert_non_null(strstr(xpar_last_error_detail(), "XPAR_REPRODUCIBLE"));
  }
  setenv("XPAR_REPRODUCIBLE", "0", 1);
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  assert_int_equal(xpar_context_get_reproducible(ctx, &on), XPAR_OK);
  assert_int_equal(on, 0);
  xpar_context_destroy(ctx);
  unsetenv("XPAR_REPRODUCIBLE");

  /* min, max and integer sums: exact already, and still right */
  xpar_context *rep = repro_context(XT_CPU_OPENMP);
  fixture f;
  fixture_make(&f, "untouched", XPAR_DOUBLE, OP_SUM, 100003, 1);
  double mn = 0, mx = 0;
  assert_int_equal(xpar_reduce(rep, XPAR_DOUBLE, XPAR_MIN, f.x.p, f.k.n, &mn), XPAR_OK);
  assert_int_equal(xpar_reduce(rep, XPAR_DOUBLE, XPAR_MAX, f.x.p, f.k.n, &mx), XPAR_OK);
  xt_check_scalar(f.label, "min", XPAR_DOUBLE, &mn, xt_ref_reduce(XPAR_DOUBLE, XPAR_MIN, f.x.p, f.k.n, 0));
  xt_check_scalar(f.label, "max", XPAR_DOUBLE, &mx, xt_ref_reduce(XPAR_DOUBLE, XPAR_MAX, f.x.p, f.k.n, 0));
  fixture_free(&f);
  xt_buf ib;
  xt_rng rng;
  xt_rng_for(&rng, "untouched/int64");
  xt_buf_alloc(&ib, XPAR_INT64, 100003, 0);
  xt_fill_random(&rng, XPAR_INT64, ib.p, 100003, XT_DATA_RANDOM, 0);
  int64_t is = 0;
  assert_int_equal(xpar_reduce(rep, XPAR_INT64, XPAR_SUM, ib.p, 100003, &is), XPAR_OK);
  xt_check_scalar("untouched/int64", "sum", XPAR_INT64, &is,
                  xt_ref_reduce(XPAR_INT64, XPAR_SUM, ib.p, 100003, 0));
  xt_buf_free(&ib);
  xpar_context_destroy(rep);
}

int main(int argc, char **argv) {
  xt_init("test_repro", argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(spec_cpu_serial), cmocka_unit_test(cpu_threads),
      cmocka_unit_test(auto_thresholds), cmocka_unit_test(mode_switches),
      cmocka_unit_test(in_place),
      cmocka_unit_test(gpu_tiers),
  };
  return cmocka_run_group_tests_name("repro", tests, NULL, NULL);
}
