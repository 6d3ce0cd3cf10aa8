/*
 * The operations as one enum, a runner (synchronous or nowait) and a CPU
 * reference checker: integers exact (wrapping modulo 2^bits, xpar.h:24-25),
 * float sums / scans / dots within 2 gamma_n of an exact (double-double)
 * reference (the tier-to-tier bound xpar.h states for shadow mode, which is
 * looser than the classical gamma_{n-1} bound against the exact value),
 * min / max / add / fill / axpy bit for bit (shadow mode compares "axpy, add
 * and fill bit for bit" across tiers, xpar.h:386-387; the reference rounds the
 * product, then the sum: no FMA).
 */
#ifndef GPUAUDIT_PROBE_OPS_H
#define GPUAUDIT_PROBE_OPS_H

#include "probe_common.h"

enum op_id {
  OP_RSUM, OP_RMIN, OP_RMAX, OP_WIDE,
  OP_SCAN_IS, OP_SCAN_ES, OP_SCAN_IMIN, OP_SCAN_EMAX,
  OP_SINIT_I, OP_SINIT_E,
  OP_AXPY, OP_ADD, OP_FILL, OP_DOT,
  OP_SCAN_INPLACE, /* inclusive sum scan with out == in */
  OP_ADD_ALIAS,    /* z == x */
  OP_AXPY_SAME,    /* x == y */
  OP_ID_COUNT
};
static const char *op_id_name[OP_ID_COUNT] = {
    "reduce_sum", "reduce_min", "reduce_max", "reduce_sum_wide", "scan_incl_sum", "scan_excl_sum",
    "scan_incl_min", "scan_excl_max", "scan_init_incl_sum", "scan_init_excl_sum", "axpy", "add",
    "fill", "dot", "scan_in_place", "add_z_eq_x", "axpy_x_eq_y"};

static inline int op_scalar(int op) { return op == OP_RSUM || op == OP_RMIN || op == OP_RMAX || op == OP_WIDE || op == OP_DOT; }
static inline int op_uses_y(int op) { return op == OP_AXPY || op == OP_ADD || op == OP_DOT || op == OP_ADD_ALIAS; }
/* The array the op writes: 0 none, 'o' out, 'y' y, 'x' x (in place). */
static inline char op_writes(int op) {
  if (op_scalar(op)) return 0;
  if (op == OP_AXPY) return 'y';
  if (op == OP_SCAN_INPLACE || op == OP_ADD_ALIAS || op == OP_AXPY_SAME) return 'x';
  return 'o';
}
static inline int op_reads_x(int op) { return op != OP_FILL; }
static inline xpar_op op_xop(int op) {
  switch (op) {
    case OP_RSUM: case OP_RMIN: case OP_RMAX: case OP_WIDE: return XPAR_OP_REDUCE;
    case OP_AXPY: case OP_AXPY_SAME: return XPAR_OP_AXPY;
    case OP_ADD: case OP_ADD_ALIAS: return XPAR_OP_ADD;
    case OP_FILL: return XPAR_OP_FILL;
    case OP_DOT: return XPAR_OP_DOT;
    default: return XPAR_OP_SCAN;
  }
}
/* Bytes of the scalar result (wide sums: the accumulator). */
static inline size_t op_result_bytes(xpar_dtype t, int op) {
  if (op == OP_WIDE) return 8;
  return op_scalar(op) ? dsize(t) : 0;
}

typedef union {
  int32_t i32; uint32_t u32; int64_t i64; uint64_t u64; float f; double d;
  unsigned char b[16];
} scal_t;

/* Random scalars for alpha / init / value of dtype t. */
static inline void rand_scalar(xpar_dtype t, scal_t *s, rng_t *r) {
  memset(s, 0, sizeof *s);
  fill_random(t, s, 1, r);
}

/* Run op: x, y, out as the caller placed them; result: where a scalar goes.
 * Returns the status. */
static inline xpar_status run_op(xpar_context *ctx, xpar_dtype t, int op, void *x, void *y, void *out,
                          size_t n, const scal_t *sc, void *result, int nowait) {
  switch (op) {
    case OP_RSUM: return nowait ? xpar_reduce_nowait(ctx, t, XPAR_SUM, x, n, result) : xpar_reduce(ctx, t, XPAR_SUM, x, n, result);
    case OP_RMIN: return nowait ? xpar_reduce_nowait(ctx, t, XPAR_MIN, x, n, result) : xpar_reduce(ctx, t, XPAR_MIN, x, n, result);
    case OP_RMAX: return nowait ? xpar_reduce_nowait(ctx, t, XPAR_MAX, x, n, result) : xpar_reduce(ctx, t, XPAR_MAX, x, n, result);
    case OP_WIDE: return xpar_reduce_sum_wide(ctx, t, x, n, result); /* no nowait variant */
    case OP_SCAN_IS: return nowait ? xpar_scan_nowait(ctx, t, XPAR_SUM, XPAR_INCLUSIVE, x, out, n) : xpar_scan(ctx, t, XPAR_SUM, XPAR_INCLUSIVE, x, out, n);
    case OP_SCAN_ES: return nowait ? xpar_scan_nowait(ctx, t, XPAR_SUM, XPAR_EXCLUSIVE, x, out, n) : xpar_scan(ctx, t, XPAR_SUM, XPAR_EXCLUSIVE, x, out, n);
    case OP_SCAN_IMIN: return nowait ? xpar_scan_nowait(ctx, t, XPAR_MIN, XPAR_INCLUSIVE, x, out, n) : xpar_scan(ctx, t, XPAR_MIN, XPAR_INCLUSIVE, x, out, n);
    case OP_SCAN_EMAX: return nowait ? xpar_scan_nowait(ctx, t, XPAR_MAX, XPAR_EXCLUSIVE, x, out, n) : xpar_scan(ctx, t, XPAR_MAX, XPAR_EXCLUSIVE, x, out, n);
    case OP_SINIT_I: return nowait ? xpar_scan_init_nowait(ctx, t, XPAR_SUM, XPAR_INCLUSIVE, sc, x, out, n) : xpar_scan_init(ctx, t, XPAR_SUM, XPAR_INCLUSIVE, sc, x, out, n);
    case OP_SINIT_E: return nowait ? xpar_scan_init_nowait(ctx, t, XPAR_SUM, XPAR_EXCLUSIVE, sc, x, out, n) : xpar_scan_init(ctx, t, XPAR_SUM, XPAR_EXCLUSIVE, sc, x, out, n);
    case OP_AXPY: return nowait ? xpar_axpy_nowait(ctx, t, sc, x, y, n) : xpar_axpy(ctx, t, sc, x, y, n);
    case OP_ADD: return nowait ? xpar_add_nowait(ctx, t, x, y, out, n) : xpar_add(ctx, t, x, y, out, n);
    case OP_FILL: return nowait ? xpar_fill_nowait(ctx, t, sc, out, n) : xpar_fill(ctx, t, sc, out, n);
    case OP_DOT: return nowait ? xpar_dot_nowait(ctx, t, x, y, n, result) : xpar_dot(ctx, t, x, y, n, result);
    case OP_SCAN_INPLACE: return nowait ? xpar_scan_nowait(ctx, t, XPAR_SUM, XPAR_INCLUSIVE, x, x, n) : xpar_scan(ctx, t, XPAR_SUM, XPAR_INCLUSIVE, x, x, n);
    case OP_ADD_ALIAS: return nowait ? xpar_add_nowait(ctx, t, x, y, x, n) : xpar_add(ctx, t, x, y, x, n);
    case OP_AXPY_SAME: return nowait ? xpar_axpy_nowait(ctx, t, sc, x, x, n) : xpar_axpy(ctx, t, sc, x, x, n);
    default: return XPAR_ERR_INTERNAL;
  }
}

/* ---- reference, per dtype ------------------------------------------------------------- */
template <typename T> struct traits;
template <> struct traits<int32_t> { typedef uint32_t U; typedef int64_t W; static const int fl = 0; };
template <> struct traits<uint32_t> { typedef uint32_t U; typedef uint64_t W; static const int fl = 0; };
template <> struct traits<int64_t> { typedef uint64_t U; typedef int64_t W; static const int fl = 0; };
template <> struct traits<uint64_t> { typedef uint64_t U; typedef uint64_t W; static const int fl = 0; };
template <> struct traits<float> { typedef float U; typedef double W; static const int fl = 1; };
template <> struct traits<double> { typedef double U; typedef double W; static const int fl = 1; };

template <typename T> static T t_max() {
  if constexpr (traits<T>::fl) return (T)INFINITY;
  else return (T)(~(typename traits<T>::U)0 >> ((T)-1 < 0 ? 1 : 0));
}
template <typename T> static T t_min() {
  if constexpr (traits<T>::fl) return (T)-INFINITY;
  else if ((T)-1 < 0) return (T)(-t_max<T>() - 1);
  else return (T)0;
}
template <typename T> static T wadd(T a, T b) {
  if constexpr (traits<T>::fl) { volatile T s = a + b; return s; }
  else return (T)((typename traits<T>::U)a + (typename traits<T>::U)b);
}
template <typename T> static T wmul(T a, T b) {
  if constexpr (traits<T>::fl) { volatile T p = a * b; return p; }
  else return (T)((typename traits<T>::U)a * (typename traits<T>::U)b);
}
template <typename T> static int same(T a, T b) {
  if (traits<T>::fl && a != a && b != b) return 1;
  return a == b;
}

/* Check an op's result.  hx, hy: the inputs as they were before the call;
 * got: the array the op wrote (n elements) or the scalar result.  Returns 1 if
 * all right; prints at most one failure line (the first bad element). */
template <typename T>
static inline int check_t(xpar_dtype dt, int op, size_t n, const T *hx, const T *hy, const scal_t *sc,
                   const void *got_v, const char *label) {
  char a[64], b[64];
  const T *got = (const T *)got_v;
  const double g2 = 2 * gamma_k(dt, (double)n + 1);
  g_checks++;
  if (op == OP_RSUM || op == OP_DOT || op == OP_WIDE) {
    if (!traits<T>::fl) {
      if (op == OP_WIDE && sizeof(T) == 4) {
        typename traits<T>::W s = 0;
        for (size_t i = 0; i < n; i++) s += (typename traits<T>::W)hx[i];
        typename traits<T>::W g;
        memcpy(&g, got_v, sizeof g);
        if (g != s) { FAILF("%s: wide sum %lld, expected %lld", label, (long long)g, (long long)s); return 0; }
        return 1;
      }
      T s = 0;
      for (size_t i = 0; i < n; i++) s = wadd(s, op == OP_DOT ? wmul(hx[i], hy[i]) : hx[i]);
      if (!same(got[0], s)) {
        FAILF("%s: %s, expected %s", label, fmt_elem(dt, got, 0, a, 64), fmt_elem(dt, &s, 0, b, 64));
        return 0;
      }
      return 1;
    }
    dd_t e = {0, 0};
    double mag = 0;
    for (size_t i = 0; i < n; i++) {
      if (op == OP_DOT) {
        dd_add_prod(&e, (double)hx[i], (double)hy[i]);
        mag += fabs((double)hx[i] * (double)hy[i]);
      } else {
        dd_add(&e, (double)hx[i]);
        mag += fabs((double)hx[i]);
      }
    }
    double g;
    if (op == OP_WIDE) memcpy(&g, got_v, 8); else g = (double)got[0];
    double bound = (op == OP_WIDE ? 2 * gamma_k(XPAR_DOUBLE, (double)n + 1) : g2) * mag;
    if (!(fabs(g - dd_val(e)) <= bound)) {
      FAILF("%s: %.17g, exact %.17g, error %.3g > bound %.3g", label, g, dd_val(e),
            fabs(g - dd_val(e)), bound);
      return 0;
    }
    return 1;
  }
  if (op == OP_RMIN || op == OP_RMAX) {
    T m = op == OP_RMIN ? t_max<T>() : t_min<T>();
    for (size_t i = 0; i < n; i++) m = op == OP_RMIN ? (hx[i] < m ? hx[i] : m) : (hx[i] > m ? hx[i] : m);
    if (!same(got[0], m)) {
      FAILF("%s: %s, expected %s", label, fmt_elem(dt, got, 0, a, 64), fmt_elem(dt, &m, 0, b, 64));
      return 0;
    }
    return 1;
  }
  if (op == OP_FILL) {
    for (size_t i = 0; i < n; i++)
      if (memcmp(&got[i], sc, sizeof(T))) {
        FAILF("%s: out[%zu] = %s, expected %s", label, i, fmt_elem(dt, got, i, a, 64), fmt_elem(dt, sc, 0, b, 64));
        return 0;
      }
    return 1;
  }
  if (op == OP_AXPY || op == OP_ADD || op == OP_ADD_ALIAS || op == OP_AXPY_SAME) {
    T al;
    memcpy(&al, sc, sizeof al);
    for (size_t i = 0; i < n; i++) {
      T w;
      if (op == OP_AXPY) w = wadd(wmul(al, hx[i]), hy[i]);
      else if (op == OP_AXPY_SAME) w = wadd(wmul(al, hx[i]), hx[i]);
      else w = wadd(hx[i], hy[i]);
      if (!same(got[i], w)) {
        FAILF("%s: out[%zu] = %s, expected %s (x %s)", label, i, fmt_elem(dt, got, i, a, 64),
              fmt_elem(dt, &w, 0, b, 64), fmt_elem(dt, hx, i, b + 32, 32));
        return 0;
      }
    }
    return 1;
  }
  /* scans */
  const int excl = op == OP_SCAN_ES || op == OP_SCAN_EMAX || op == OP_SINIT_E;
  const int mn = op == OP_SCAN_IMIN, mx = op == OP_SCAN_EMAX;
  if (mn || mx) {
    T acc = mn ? t_max<T>() : t_min<T>();
    for (size_t i = 0; i < n; i++) {
      T before = acc;
      acc = mn ? (hx[i] < acc ? hx[i] : acc) : (hx[i] > acc ? hx[i] : acc);
      T w = excl ? before : acc;
      if (!same(got[i], w)) {
        FAILF("%s: out[%zu] = %s, expected %s", label, i, fmt_elem(dt, got, i, a, 64), fmt_elem(dt, &w, 0, b, 64));
        return 0;
      }
    }
    return 1;
  }
  T init = 0;
  if (op == OP_SINIT_I || op == OP_SINIT_E) memcpy(&init, sc, sizeof init);
  if (!traits<T>::fl) {
    T acc = init;
    for (size_t i = 0; i < n; i++) {
      T before = acc;
      acc = wadd(acc, hx[i]);
      T w = excl ? before : acc;
      if (!same(got[i], w)) {
        FAILF("%s: out[%zu] = %s, expected %s", label, i, fmt_elem(dt, got, i, a, 64), fmt_elem(dt, &w, 0, b, 64));
        return 0;
      }
    }
    return 1;
  }
  dd_t e = {(double)init, 0};
  double mag = fabs((double)init);
  for (size_t i = 0; i < n; i++) {
    double want = dd_val(e), m = mag;
    if (!excl) {
      dd_add(&e, (double)hx[i]);
      mag += fabs((double)hx[i]);
      want = dd_val(e);
      m = mag;
    } else {
      dd_add(&e, (double)hx[i]);
      mag += fabs((double)hx[i]);
    }
    double g = (double)got[i];
    if (!(fabs(g - want) <= g2 * m)) {
      FAILF("%s: out[%zu] = %.17g, exact %.17g, error %.3g > bound %.3g", label, i, g, want,
            fabs(g - want), g2 * m);
      return 0;
    }
  }
  return 1;
}

static inline int check_op(xpar_dtype dt, int op, size_t n, const void *hx, const void *hy,
                    const scal_t *sc, const void *got, const char *label) {
  switch (dt) {
    case XPAR_INT32: return check_t<int32_t>(dt, op, n, (const int32_t *)hx, (const int32_t *)hy, sc, got, label);
    case XPAR_UINT32: return check_t<uint32_t>(dt, op, n, (const uint32_t *)hx, (const uint32_t *)hy, sc, got, label);
    case XPAR_INT64: return check_t<int64_t>(dt, op, n, (const int64_t *)hx, (const int64_t *)hy, sc, got, label);
    case XPAR_UINT64: return check_t<uint64_t>(dt, op, n, (const uint64_t *)hx, (const uint64_t *)hy, sc, got, label);
    case XPAR_FLOAT: return check_t<float>(dt, op, n, (const float *)hx, (const float *)hy, sc, got, label);
    case XPAR_DOUBLE: return check_t<double>(dt, op, n, (const double *)hx, (const double *)hy, sc, got, label);
    default: return 0;
  }
}

#endif
