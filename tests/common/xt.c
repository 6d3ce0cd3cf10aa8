/* The shared helpers of xpar's tests: see xt.h. */
#define _GNU_SOURCE 1
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xt.h"

extern char **environ;

/* ---- seeds and random numbers ------------------------------------------ */

static uint64_t g_seed;
static int g_seed_set;

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void xt_unset_xpar_env(int keep_verbose) {
  for (;;) {
    char name[256];
    int found = 0;
    for (char **e = environ; e && *e; e++) {
      if (strncmp(*e, "XPAR_", 5) != 0 || strncmp(*e, "XPAR_TEST_", 10) == 0) continue;
      if (keep_verbose && strncmp(*e, "XPAR_VERBOSE=", 13) == 0) continue;
      const char *eq = strchr(*e, '=');
      size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
      if (len >= sizeof name) continue;
      memcpy(name, *e, len);
      name[len] = '\0';
      found = 1;
      break;
    }
    if (!found) return;
    unsetenv(name);
  }
}

void xt_init(const char *program, int argc, char **argv) {
  const char *s = getenv("XPAR_TEST_SEED");
  if (s && *s) {
    char *end = NULL;
    g_seed = strtoull(s, &end, 0);
    if (!end || *end) {
      fprintf(stderr, "%s: XPAR_TEST_SEED=\"%s\" is not a number\n", program, s);
      exit(2);
    }
  } else {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000007ull + (uint64_t)ts.tv_nsec;
    g_seed = splitmix64(&x) % 1000000000000ull; /* short enough to retype */
  }
  g_seed_set = 1;
  printf("[xpar-test] %s: seed %" PRIu64 " (rerun with XPAR_TEST_SEED=%" PRIu64 ")\n", program,
         g_seed, g_seed);
  fflush(stdout);

  /* The environment would change what the tests mean (XPAR_BACKEND=cuda
   * turns every cpu-serial case into something else): start clean. */
  xt_unset_xpar_env(1);
  /* AUTO's choices must not depend on how loaded the test machine is: the
   * suites that check them (and bits across calls) run without adaptation,
   * which tests/test_adapt.c drives on its own with a fake clock. */
  setenv("XPAR_ADAPT", "off", 1);
  if (argc > 1 && argv[1] && *argv[1]) cmocka_set_test_filter(argv[1]);
}

uint64_t xt_seed(void) { return g_seed; }

static uint64_t fnv1a(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ull;
  }
  return h;
}

void xt_rng_for(xt_rng *r, const char *label) {
  uint64_t x = g_seed ^ fnv1a(label);
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t xt_next(xt_rng *r) { /* xoshiro256** */
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint64_t xt_below(xt_rng *r, uint64_t bound) {
  if (bound == 0) return 0;
  return (uint64_t)(((unsigned __int128)xt_next(r) * bound) >> 64);
}

/* ---- dtypes --------------------------------------------------------------- */

const xpar_dtype xt_dtypes[XT_NDTYPES] = {
#define XT_DTYPE_(e, ctype, name, size) XPAR_##e,
    XPAR_DTYPE_MAP(XT_DTYPE_)
#undef XT_DTYPE_
};

int xt_is_float(xpar_dtype t) { return t == XPAR_FLOAT || t == XPAR_DOUBLE; }
int xt_is_signed(xpar_dtype t) { return t == XPAR_INT32 || t == XPAR_INT64; }

size_t xt_size(xpar_dtype t) {
  switch (t) {
    case XPAR_INT32: case XPAR_UINT32: case XPAR_FLOAT: return 4;
    case XPAR_INT64: case XPAR_UINT64: case XPAR_DOUBLE: return 8;
    default: return 0;
  }
}

const char *xt_dname(xpar_dtype t) {
  switch (t) {
    case XPAR_INT32: return "int32";
    case XPAR_INT64: return "int64";
    case XPAR_UINT32: return "uint32";
    case XPAR_UINT64: return "uint64";
    case XPAR_FLOAT: return "float";
    case XPAR_DOUBLE: return "double";
    default: return "?";
  }
}

xpar_dtype xt_wide(xpar_dtype t) {
  switch (t) {
    case XPAR_INT32: return XPAR_INT64;
    case XPAR_UINT32: return XPAR_UINT64;
    case XPAR_FLOAT: return XPAR_DOUBLE;
    default: return t;
  }
}

long double xt_get(xpar_dtype t, const void *p, size_t i) {
  switch (t) {
    case XPAR_INT32: { int32_t v; memcpy(&v, (const char *)p + 4 * i, 4); return v; }
    case XPAR_INT64: { int64_t v; memcpy(&v, (const char *)p + 8 * i, 8); return v; }
    case XPAR_UINT32: { uint32_t v; memcpy(&v, (const char *)p + 4 * i, 4); return v; }
    case XPAR_UINT64: { uint64_t v; memcpy(&v, (const char *)p + 8 * i, 8); return v; }
    case XPAR_FLOAT: { float v; memcpy(&v, (const char *)p + 4 * i, 4); return v; }
    case XPAR_DOUBLE: { double v; memcpy(&v, (const char *)p + 8 * i, 8); return v; }
    default: return 0;
  }
}

void xt_put(xpar_dtype t, void *p, size_t i, long double x) {
  switch (t) {
    case XPAR_INT32: { int32_t v = (int32_t)x; memcpy((char *)p + 4 * i, &v, 4); break; }
    case XPAR_INT64: { int64_t v = (int64_t)x; memcpy((char *)p + 8 * i, &v, 8); break; }
    case XPAR_UINT32: { uint32_t v = (uint32_t)x; memcpy((char *)p + 4 * i, &v, 4); break; }
    case XPAR_UINT64: { uint64_t v = (uint64_t)x; memcpy((char *)p + 8 * i, &v, 8); break; }
    case XPAR_FLOAT: { float v = (float)x; memcpy((char *)p + 4 * i, &v, 4); break; }
    case XPAR_DOUBLE: { double v = (double)x; memcpy((char *)p + 8 * i, &v, 8); break; }
    default: break;
  }
}

uint64_t xt_bits(xpar_dtype t, const void *p, size_t i) {
  if (xt_size(t) == 4) {
    uint32_t v;
    memcpy(&v, (const char *)p + 4 * i, 4);
    return v;
  }
  uint64_t v;
  memcpy(&v, (const char *)p + 8 * i, 8);
  return v;
}

long double xt_int_from_bits(xpar_dtype t, uint64_t bits) {
  switch (t) {
    case XPAR_INT32: { uint32_t u = (uint32_t)bits; int32_t v; memcpy(&v, &u, 4); return v; }
    case XPAR_INT64: { int64_t v; memcpy(&v, &bits, 8); return v; }
    case XPAR_UINT32: return (uint32_t)bits;
    case XPAR_UINT64: return bits;
    default: return 0;
  }
}

long double xt_max_value(xpar_dtype t) {
  switch (t) {
    case XPAR_INT32: return INT32_MAX;
    case XPAR_INT64: return INT64_MAX;
    case XPAR_UINT32: return UINT32_MAX;
    case XPAR_UINT64: return UINT64_MAX;
    default: return INFINITY;
  }
}

long double xt_min_value(xpar_dtype t) {
  switch (t) {
    case XPAR_INT32: return INT32_MIN;
    case XPAR_INT64: return INT64_MIN;
    case XPAR_UINT32: case XPAR_UINT64: return 0;
    default: return -INFINITY;
  }
}

long double xt_eps(xpar_dtype t) {
  if (t == XPAR_FLOAT) return FLT_EPSILON;
  if (t == XPAR_DOUBLE) return DBL_EPSILON;
  return 0;
}

static uint64_t mask_of(xpar_dtype t) { return xt_size(t) == 4 ? 0xFFFFFFFFull : ~0ull; }

/* ---- data ------------------------------------------------------------------ */

static long double random_float_value(xt_rng *r, xpar_dtype t, xt_data kind, int k) {
  uint64_t u = xt_next(r);
  if (kind == XT_DATA_SMALLINT) return (long double)((int64_t)xt_below(r, 2 * (uint64_t)k + 1) - k);
  int mbits = t == XPAR_FLOAT ? 23 : 52;
  long double m = 1.0L + ldexpl((long double)(u >> (64 - mbits)), -mbits); /* [1, 2) exact */
  int e = (int)xt_below(r, 21) - 10;
  long double v = ldexpl(m, e);
  return (u & 1) ? -v : v;
}

void xt_fill_random(xt_rng *r, xpar_dtype t, void *p, size_t n, xt_data kind, int k) {
  if (!xt_is_float(t)) {
    if (xt_size(t) == 4) {
      uint32_t *q = (uint32_t *)p;
      for (size_t i = 0; i < n; i++) q[i] = (uint32_t)(xt_next(r) >> 32);
    } else {
      uint64_t *q = (uint64_t *)p;
      for (size_t i = 0; i < n; i++) q[i] = xt_next(r);
    }
    return;
  }
  if (kind == XT_DATA_SMALLINT) {
    for (size_t i = 0; i < n; i++) xt_put(t, p, i, random_float_value(r, t, kind, k));
    return;
  }
  /* +-(1 + m) * 2^e, e in [-10, 10], built from the bits (exact, fast). */
  if (t == XPAR_FLOAT) {
    uint32_t *q = (uint32_t *)p;
    for (size_t i = 0; i < n; i++) {
      uint64_t u = xt_next(r);
      uint32_t e = (uint32_t)(127 - 10 + (uint32_t)(((u & 0xFFFFFFFFull) * 21) >> 32));
      q[i] = (uint32_t)((u >> 63) << 31) | (e << 23) | (uint32_t)((u >> 32) & 0x7FFFFFu);
    }
  } else {
    uint64_t *q = (uint64_t *)p;
    for (size_t i = 0; i < n; i++) {
      uint64_t u = xt_next(r), v = xt_next(r);
      uint64_t e = 1023 - 10 + (((v & 0xFFFFFFFFull) * 21) >> 32);
      q[i] = ((u >> 63) << 63) | (e << 52) | (u & 0xFFFFFFFFFFFFFull);
    }
  }
}

void xt_random_scalar(xt_rng *r, xpar_dtype t, void *out, xt_data kind, int k) {
  memset(out, 0, 8);
  xt_fill_random(r, t, out, 1, kind, k);
}

/* ---- guarded buffers -------------------------------------------------------- */

static void poison_pattern(xpar_dtype t, unsigned char pat[8]) {
  if (t == XPAR_FLOAT) {
    uint32_t v = 0x7FC5A5A5u; /* a quiet NaN */
    memcpy(pat, &v, 4);
    memcpy(pat + 4, &v, 4);
  } else if (t == XPAR_DOUBLE) {
    uint64_t v = 0x7FF8A5A5A5A5A5A5ull;
    memcpy(pat, &v, 8);
  } else {
    memset(pat, 0xA5, 8);
  }
}

void xt_poison(xpar_dtype t, void *p, size_t n) {
  unsigned char pat[8];
  poison_pattern(t, pat);
  size_t s = xt_size(t);
  unsigned char *q = (unsigned char *)p;
  for (size_t i = 0; i < n; i++) memcpy(q + i * s, pat, s);
}

int xt_is_poison(xpar_dtype t, const void *p, size_t n) {
  unsigned char pat[8];
  poison_pattern(t, pat);
  size_t s = xt_size(t);
  const unsigned char *q = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++)
    if (memcmp(q + i * s, pat, s) != 0) return 0;
  return 1;
}

void xt_buf_alloc(xt_buf *b, xpar_dtype t, size_t n, size_t off) {
  size_t s = xt_size(t);
  size_t total = XT_GUARD_BYTES + (off + n) * s + XT_GUARD_BYTES;
  total = (total + 63) & ~(size_t)63;
  b->base = (unsigned char *)aligned_alloc(64, total);
  if (!b->base) {
    print_error("xt_buf_alloc: out of memory (%zu bytes)\n", total);
    fail();
  }
  b->total = total;
  b->p = b->base + XT_GUARD_BYTES + off * s;
  b->n = n;
  b->off = off;
  b->t = t;
  xt_buf_poison(b);
}

void xt_buf_free(xt_buf *b) {
  free(b->base);
  memset(b, 0, sizeof *b);
}

unsigned char *xt_buf_copy(const xt_buf *b) {
  unsigned char *copy = (unsigned char *)malloc(b->total);
  if (!copy) {
    print_error("xt_buf_copy: out of memory (%zu bytes)\n", b->total);
    fail();
  }
  memcpy(copy, b->base, b->total);
  return copy;
}

void xt_buf_poison(xt_buf *b) { xt_poison(b->t, b->base, b->total / xt_size(b->t)); }

int xt_buf_guards_intact(const xt_buf *b, size_t *bad_byte) {
  unsigned char pat[8];
  poison_pattern(b->t, pat);
  size_t s = xt_size(b->t);
  size_t lo = (size_t)((unsigned char *)b->p - b->base), hi = lo + b->n * s;
  for (size_t j = 0; j < b->total; j++) {
    if (j == lo) j = hi;
    if (j >= b->total) break;
    if (b->base[j] != pat[j % s]) {
      if (bad_byte) *bad_byte = j;
      return 0;
    }
  }
  return 1;
}

/* ---- references --------------------------------------------------------------- */

/* The long double sum of n floats of type t; tolerance 2 n eps(acc) sum |x| for a sum
 * accumulated in type acc (0 when `exact`: small-integer data sums exactly). */
static xt_expect float_sum_ref(xpar_dtype t, const void *in, size_t n, int exact, xpar_dtype acc) {
  xt_expect e = {0, 0};
  long double sum = 0, abs = 0;
  for (size_t i = 0; i < n; i++) {
    long double v = xt_get(t, in, i);
    sum += v;
    abs += fabsl(v);
  }
  e.v = sum;
  e.tol = exact ? 0 : 2.0L * (long double)n * xt_eps(acc) * abs;
  return e;
}

xt_expect xt_ref_reduce(xpar_dtype t, xpar_reduction op, const void *in, size_t n, int exact) {
  xt_expect e = {0, 0};
  if (op == XPAR_MIN || op == XPAR_MAX) {
    long double m = op == XPAR_MIN ? xt_max_value(t) : xt_min_value(t);
    for (size_t i = 0; i < n; i++) {
      long double v = xt_get(t, in, i);
      if (op == XPAR_MIN ? v < m : v > m) m = v;
    }
    e.v = m;
    return e;
  }
  if (!xt_is_float(t)) {
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) acc += xt_bits(t, in, i);
    e.v = xt_int_from_bits(t, acc & mask_of(t));
    return e;
  }
  return float_sum_ref(t, in, n, exact, t);
}

xt_expect xt_ref_sum_wide(xpar_dtype t, const void *in, size_t n, int exact) {
  xt_expect e = {0, 0};
  xpar_dtype w = xt_wide(t);
  if (!xt_is_float(t)) {
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
      /* Widen by value (sign-extending int32), then wrap in the wide type. */
      long double v = xt_get(t, in, i);
      uint64_t bits = xt_is_signed(t) ? (uint64_t)(int64_t)v : (uint64_t)v;
      if (t == XPAR_INT64 || t == XPAR_UINT64) bits = xt_bits(t, in, i);
      acc += bits;
    }
    e.v = xt_int_from_bits(w, acc & mask_of(w));
    return e;
  }
  return float_sum_ref(t, in, n, exact, w);
}

/* terms: how many values the element folds (init counts as one); the float
 * tolerance is 2 terms eps sum|terms|. */
#define XT_SCAN_LOOP(CT, FL)                                                        \
  {                                                                                 \
    const CT *x = (const CT *)in;                                                   \
    for (size_t i = 0; i < n; i++) {                                                \
      xt_expect e = {0, 0};                                                         \
      if (kind == XPAR_EXCLUSIVE) { /* the value before element i enters */          \
        if (op != XPAR_SUM) e.v = m;                                                \
        else if (!FL) e.v = xt_int_from_bits(t, iacc & mask);                       \
        else {                                                                      \
          e.v = facc;                                                               \
          e.tol = exact ? 0 : 2.0L * (long double)(i + 1 + has_init) * eps * abs;   \
        }                                                                           \
      }                                                                             \
      long double v = x[i];                                                         \
      if (op == XPAR_MIN) { if (v < m) m = v; }                                     \
      else if (op == XPAR_MAX) { if (v > m) m = v; }                                \
      else if (!FL) iacc += (uint64_t)x[i];                                         \
      else { facc += v; abs += fabsl(v); }                                          \
      if (kind == XPAR_INCLUSIVE) {                                                 \
        if (op != XPAR_SUM) e.v = m;                                                \
        else if (!FL) e.v = xt_int_from_bits(t, iacc & mask);                       \
        else {                                                                      \
          e.v = facc;                                                               \
          e.tol = exact ? 0 : 2.0L * (long double)(i + 1 + has_init) * eps * abs;   \
        }                                                                           \
      }                                                                             \
      out[i] = e;                                                                   \
    }                                                                               \
  }                                                                                 \
  break;

void xt_ref_scan(xpar_dtype t, xpar_reduction op, xpar_scan_kind kind, const void *init,
                 const void *in, size_t n, int exact, xt_expect *out) {
  const size_t has_init = init != NULL;
  uint64_t iacc = init ? xt_bits(t, init, 0) : 0, mask = mask_of(t);
  long double facc = 0, abs = 0, eps = xt_eps(t);
  long double m = op == XPAR_MIN ? xt_max_value(t) : xt_min_value(t);
  if (init) {
    m = xt_get(t, init, 0);
    facc = m;
    abs = fabsl(m);
  }
  switch (t) {
    case XPAR_INT32: XT_SCAN_LOOP(int32_t, 0)
    case XPAR_INT64: XT_SCAN_LOOP(int64_t, 0)
    case XPAR_UINT32: XT_SCAN_LOOP(uint32_t, 0)
    case XPAR_UINT64: XT_SCAN_LOOP(uint64_t, 0)
    case XPAR_FLOAT: XT_SCAN_LOOP(float, 1)
    case XPAR_DOUBLE: XT_SCAN_LOOP(double, 1)
    default: break;
  }
}

xt_expect xt_ref_dot(xpar_dtype t, const void *x, const void *y, size_t n, int exact) {
  xt_expect e = {0, 0};
  if (!xt_is_float(t)) {
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) acc += xt_bits(t, x, i) * xt_bits(t, y, i);
    e.v = xt_int_from_bits(t, acc & mask_of(t));
    return e;
  }
  long double acc = 0, abs = 0;
  for (size_t i = 0; i < n; i++) {
    long double p = xt_get(t, x, i) * xt_get(t, y, i);
    acc += p;
    abs += fabsl(p);
  }
  e.v = acc;
  e.tol = exact ? 0 : 2.0L * (long double)(n + 1) * xt_eps(t) * abs;
  return e;
}

void xt_ref_axpy(xpar_dtype t, const void *alpha, const void *x, const void *y, size_t n,
                 int exact, xt_expect *out) {
  if (!xt_is_float(t)) {
    uint64_t a = xt_bits(t, alpha, 0);
    for (size_t i = 0; i < n; i++) {
      out[i].v = xt_int_from_bits(t, (a * xt_bits(t, x, i) + xt_bits(t, y, i)) & mask_of(t));
      out[i].tol = 0;
    }
    return;
  }
  long double a = xt_get(t, alpha, 0);
  for (size_t i = 0; i < n; i++) {
    long double ax = a * xt_get(t, x, i), yv = xt_get(t, y, i);
    out[i].v = ax + yv;
    /* Two roundings without FMA, one with. */
    out[i].tol = exact ? 0 : 2.0L * xt_eps(t) * (fabsl(ax) + fabsl(yv));
  }
}

void xt_ref_add(xpar_dtype t, const void *x, const void *y, size_t n, int exact,
                xt_expect *out) {
  for (size_t i = 0; i < n; i++) {
    if (!xt_is_float(t)) {
      out[i].v = xt_int_from_bits(t, (xt_bits(t, x, i) + xt_bits(t, y, i)) & mask_of(t));
      out[i].tol = 0;
    } else {
      long double a = xt_get(t, x, i), b = xt_get(t, y, i);
      out[i].v = a + b;
      out[i].tol = exact ? 0 : xt_eps(t) * (fabsl(a) + fabsl(b));
    }
  }
}

void xt_serial_sum(xpar_dtype t, const void *in, size_t n, void *result) {
  if (t == XPAR_FLOAT) {
    float acc = 0.0f;
    const float *x = (const float *)in;
    for (size_t i = 0; i < n; i++) acc += x[i];
    memcpy(result, &acc, 4);
  } else if (t == XPAR_DOUBLE) {
    double acc = 0.0;
    const double *x = (const double *)in;
    for (size_t i = 0; i < n; i++) acc += x[i];
    memcpy(result, &acc, 8);
  }
}

void xt_serial_sum_wide(xpar_dtype t, const void *in, size_t n, void *result) {
  if (t == XPAR_FLOAT) {
    double acc = 0.0;
    const float *x = (const float *)in;
    for (size_t i = 0; i < n; i++) acc += (double)x[i];
    memcpy(result, &acc, 8);
  } else {
    xt_serial_sum(t, in, n, result);
  }
}

void xt_serial_scan_sum(xpar_dtype t, xpar_scan_kind kind, const void *init, const void *in,
                        size_t n, void *out) {
  if (t == XPAR_FLOAT) {
    float acc = 0.0f;
    if (init) memcpy(&acc, init, sizeof acc);
    const float *x = (const float *)in;
    float *o = (float *)out;
    for (size_t i = 0; i < n; i++) {
      float v = x[i];
      if (kind == XPAR_EXCLUSIVE) o[i] = acc;
      acc += v;
      if (kind == XPAR_INCLUSIVE) o[i] = acc;
    }
  } else if (t == XPAR_DOUBLE) {
    double acc = 0.0;
    if (init) memcpy(&acc, init, sizeof acc);
    const double *x = (const double *)in;
    double *o = (double *)out;
    for (size_t i = 0; i < n; i++) {
      double v = x[i];
      if (kind == XPAR_EXCLUSIVE) o[i] = acc;
      acc += v;
      if (kind == XPAR_INCLUSIVE) o[i] = acc;
    }
  }
}

/* ---- comparing -------------------------------------------------------------------- */

static inline int match_inline(xpar_dtype t, long double got, xt_expect e) {
  if (!xt_is_float(t) || e.tol == 0 || isinf(e.v)) return got == e.v;
  if (isnan(got)) return 0;
  return fabsl(got - e.v) <= e.tol;
}

int xt_match(xpar_dtype t, long double got, xt_expect e) { return match_inline(t, got, e); }

static void fmt_value(char *buf, size_t len, xpar_dtype t, long double v) {
  if (xt_is_float(t)) snprintf(buf, len, "%.21Lg (%La)", v, v);
  else snprintf(buf, len, "%.0Lf", v);
}

void xt_failf(const char *label, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  print_error("FAILED [XPAR_TEST_SEED=%" PRIu64 "] %s: %s\n", g_seed, label, msg);
  fail();
}

#define XT_MISMATCHES(CT)                                                           \
  {                                                                                 \
    const CT *g = (const CT *)got;                                                  \
    for (size_t i = 0; i < n; i++)                                                  \
      if (!match_inline(t, (long double)g[i], exp[i]) && bad++ == 0) first = i;         \
  }                                                                                 \
  break;

void xt_check_array(const char *label, const char *what, xpar_dtype t, const void *got,
                    const xt_expect *exp, size_t n) {
  size_t bad = 0, first = 0;
  switch (t) {
    case XPAR_INT32: XT_MISMATCHES(int32_t)
    case XPAR_INT64: XT_MISMATCHES(int64_t)
    case XPAR_UINT32: XT_MISMATCHES(uint32_t)
    case XPAR_UINT64: XT_MISMATCHES(uint64_t)
    case XPAR_FLOAT: XT_MISMATCHES(float)
    case XPAR_DOUBLE: XT_MISMATCHES(double)
    default: break;
  }
  if (bad) {
    char e[96], g[96];
    fmt_value(e, sizeof e, t, exp[first].v);
    fmt_value(g, sizeof g, t, xt_get(t, got, first));
    xt_failf(label, "%s: %zu of %zu elements wrong; first at index %zu: expected %s (tol %.3Lg), got %s",
             what, bad, n, first, e, exp[first].tol, g);
  }
}

void xt_check_scalar(const char *label, const char *what, xpar_dtype t, const void *got,
                     xt_expect e) {
  long double g = xt_get(t, got, 0);
  if (!xt_match(t, g, e)) {
    char es[96], gs[96];
    fmt_value(es, sizeof es, t, e.v);
    fmt_value(gs, sizeof gs, t, g);
    xt_failf(label, "%s: expected %s (tol %.3Lg, diff %.3Lg), got %s", what, es, e.tol,
             fabsl(g - e.v), gs);
  }
}

void xt_check_guards(const char *label, const char *what, const xt_buf *b) {
  size_t bad = 0;
  if (!xt_buf_guards_intact(b, &bad)) {
    long pos = (long)bad - (long)((unsigned char *)b->p - b->base);
    xt_failf(label, "%s: byte %ld relative to the array start (n = %zu elements of %zu bytes) "
             "was overwritten outside the array", what, pos, b->n, xt_size(b->t));
  }
}

void xt_check_bytes(const char *label, const char *what, const void *got, const void *want,
                    size_t bytes) {
  if (memcmp(got, want, bytes) != 0) {
    const unsigned char *g = (const unsigned char *)got, *w = (const unsigned char *)want;
    size_t i = 0;
    while (g[i] == w[i]) i++;
    xt_failf(label, "%s: byte %zu of %zu differs (expected 0x%02x, got 0x%02x)", what, i, bytes,
             w[i], g[i]);
  }
}

void xt_check_status(const char *label, const char *what, xpar_status st, xpar_status want) {
  if (st != want)
    xt_failf(label, "%s: status %s (%d), expected %s (%d); detail: \"%s\"", what,
             xpar_status_name(st), (int)st, xpar_status_name(want), (int)want,
             xpar_last_error_detail());
}

/* ---- tiers under test ----------------------------------------------------------------- */

static const char *const tier_names[XT_NTIERS] = {"cpu-serial", "cpu-openmp", "auto", "cuda",
                                                  "cuda-serial"};

const char *xt_tier_name(xt_tier t) { return (unsigned)t < XT_NTIERS ? tier_names[t] : "?"; }
int xt_tier_is_gpu(xt_tier t) { return t == XT_CUDA || t == XT_CUDA_SERIAL; }

size_t xt_tier_max_n(xt_tier t) {
  /* cuda-serial runs every kernel on one GPU thread: a scan of 2^20 elements
   * takes seconds there, and there are hundreds of cases.  It runs sizes up
   * to 2^16 + 1, which still crosses every block and tile boundary the
   * kernels have at their own launch shapes. */
  size_t max = t == XT_CUDA_SERIAL ? 65537 : SIZE_MAX;
  /* XPAR_TEST_MAX_N caps every tier (compute-sanitizer runs: small sizes). */
  const char *cap = getenv("XPAR_TEST_MAX_N");
  if (cap && *cap) {
    const size_t c = (size_t)strtoull(cap, NULL, 10);
    if (c < max) max = c;
  }
  return max;
}

static int g_gpu_known, g_gpu_usable;
static char g_gpu_reason[192];

static void query_gpu(void) {
  if (g_gpu_known) return;
  xpar_device_info info;
  memset(&info, 0, sizeof info);
  xpar_status st = xpar_device_query(&info);
  g_gpu_known = 1;
  if (st != XPAR_OK) {
    snprintf(g_gpu_reason, sizeof g_gpu_reason, "xpar_device_query failed: %s (%s)",
             xpar_status_name(st), xpar_last_error_detail());
    g_gpu_usable = 0;
    return;
  }
  g_gpu_usable = info.usable != 0;
  snprintf(g_gpu_reason, sizeof g_gpu_reason, "%s", info.usable ? info.name : info.reason);
}

int xt_gpu_usable(void) {
  query_gpu();
  return g_gpu_usable;
}

const char *xt_gpu_reason(void) {
  query_gpu();
  return g_gpu_reason;
}

int xt_have_openmp(void) {
#if defined(XT_HAVE_OPENMP) && XT_HAVE_OPENMP
  return 1;
#else
  return 0;
#endif
}

static void must(xpar_status st, const char *what) {
  if (st != XPAR_OK) {
    print_error("%s failed: %s (%s)\n", what, xpar_status_name(st), xpar_last_error_detail());
    fail();
  }
}

xpar_context *xt_tier_context(xt_tier tier) {
  xpar_context *ctx = NULL;
  must(xpar_context_create(&ctx), "xpar_context_create");
  switch (tier) {
    case XT_CPU_SERIAL:
      must(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL), "set_backend(CPU_SERIAL)");
      break;
    case XT_CPU_OPENMP:
      must(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU), "set_backend(CPU)");
      for (int op = 0; op < XPAR_OP_COUNT_; op++)
        for (int d = 0; d < XT_NDTYPES; d++)
          must(xpar_context_set_threshold(ctx, (xpar_op)op, xt_dtypes[d], XPAR_THRESHOLD_OPENMP, 0),
               "set_threshold(OPENMP, 0)");
      break;
    case XT_AUTO:
      break;
    case XT_CUDA:
      must(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA), "set_backend(CUDA)");
      must(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY), "set_offload(MANDATORY)");
      break;
    case XT_CUDA_SERIAL:
      must(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA_SERIAL), "set_backend(CUDA_SERIAL)");
      must(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY), "set_offload(MANDATORY)");
      break;
    default:
      break;
  }
  return ctx;
}

xpar_context *xt_tier_open(xt_tier_state *st) {
  if (xt_tier_is_gpu(st->tier) && !xt_gpu_usable()) {
    print_message("[xpar-test] skipping %s: no usable GPU (%s)\n", xt_tier_name(st->tier),
                  xt_gpu_reason());
    skip();
  }
  if (st->tier == XT_CPU_OPENMP && !xt_have_openmp()) {
    print_message("[xpar-test] skipping cpu-openmp: built without OpenMP\n");
    skip();
  }
  st->ctx = xt_tier_context(st->tier);
  return st->ctx;
}

int xt_tier_teardown(void **state) {
  xt_tier_state *st = (xt_tier_state *)*state;
  if (st && st->ctx) {
    xpar_context_destroy(st->ctx);
    st->ctx = NULL;
  }
  return 0;
}

static xpar_tier expected_tier(xt_tier t) {
  switch (t) {
    case XT_CPU_SERIAL: return XPAR_TIER_CPU_SERIAL;
    case XT_CPU_OPENMP: return XPAR_TIER_CPU_OPENMP;
    case XT_CUDA: return XPAR_TIER_CUDA;
    case XT_CUDA_SERIAL: return XPAR_TIER_CUDA_SERIAL;
    default: return XPAR_TIER_NONE;
  }
}

void xt_check_decision(const char *label, xpar_context *ctx, xt_tier tier, xpar_op op,
                       xpar_dtype dtype, size_t n) {
  xpar_decision d;
  memset(&d, 0x5A, sizeof d);
  xpar_status st = xpar_last_decision(ctx, &d);
  if (st != XPAR_OK) xt_failf(label, "xpar_last_decision: %s", xpar_status_name(st));
  if (d.op != op || d.dtype != dtype || d.n != n)
    xt_failf(label, "decision record says op %d dtype %d n %zu, expected op %d dtype %d n %zu",
             (int)d.op, (int)d.dtype, d.n, (int)op, (int)dtype, n);
  if (n == 0) return; /* which tier ran nothing is not specified */
  xpar_tier want = expected_tier(tier);
  if (want == XPAR_TIER_NONE) {
    if (d.tier <= XPAR_TIER_NONE || d.tier >= XPAR_TIER_COUNT_)
      xt_failf(label, "auto: decision tier %d (%s) is not a tier that ran", (int)d.tier,
               xpar_tier_name(d.tier));
  } else if (d.tier != want) {
    xt_failf(label, "ran on tier %s, expected %s (reason: \"%.*s\")", xpar_tier_name(d.tier),
             xpar_tier_name(want), (int)sizeof d.reason, d.reason);
  }
}

const size_t xt_sizes[XT_NSIZES] = {0, 1, 31, 32, 33, 1000, 65535, 65537, 1048579};
const size_t xt_offs[XT_NOFFS][2] = {{0, 0}, {1, 3}, {2, 1}, {3, 2}};

int xt_run_tier_tests(const char *group, const char *const *names, const xt_body *bodies,
                      size_t count) {
  size_t num = count * XT_NTIERS;
  struct CMUnitTest *tests = (struct CMUnitTest *)calloc(num, sizeof *tests);
  xt_tier_state *states = (xt_tier_state *)calloc(num, sizeof *states);
  if (!tests || !states) return 1;
  for (size_t i = 0; i < count; i++) {
    for (int t = 0; t < XT_NTIERS; t++) {
      size_t k = i * XT_NTIERS + (size_t)t;
      char *name = NULL;
      if (asprintf(&name, "%s/%s", names[i], tier_names[t]) < 0) return 1;
      states[k].tier = (xt_tier)t;
      tests[k].name = name;
      tests[k].test_func = bodies[i];
      tests[k].setup_func = NULL;
      tests[k].teardown_func = xt_tier_teardown;
      tests[k].initial_state = &states[k];
    }
  }
  int rc = _cmocka_run_group_tests(group, tests, num, NULL, NULL);
  for (size_t k = 0; k < num; k++) free((char *)tests[k].name);
  free(tests);
  free(states);
  return rc;
}

int xt_private_cache(const char *tag, char *buf, size_t size) {
  snprintf(buf, size, "/tmp/xpar-test-%s-XXXXXX", tag);
  if (!mkdtemp(buf)) return 0;
  unsetenv("XPAR_PROFILE");
  setenv("XDG_CACHE_HOME", buf, 1);
  return 1;
}

int xt_remove_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}
