/*
 * The shipped operator examples, which the suite runs on every tier
 * (tests/test_operator.c) and that bench/operators measures against the built-in ops.  Each is written once: the functions exist on
 * both sides (XPAR_KERNEL_FN), XPAR_OPERATOR makes the CPU loops under the C
 * compiler and instantiates the GPU templates under nvcc.
 */
#include <stdint.h>

#include "operators.h"

/* ---- argmin / argmax with the first index on ties ----------------------------
 * Not commutative in the index on ties: the earlier element wins, which every
 * tier keeps because every tier combines in index order. */
static XPAR_KERNEL_FN inline xk_arg argmin_identity(void) {
  xk_arg r = {INT32_MAX, 0, INT64_MAX};
  return r;
}
static XPAR_KERNEL_FN inline xk_arg argmax_identity(void) {
  xk_arg r = {INT32_MIN, 0, INT64_MAX};
  return r;
}
static XPAR_KERNEL_FN inline xk_arg argmin_combine(xk_arg a, xk_arg b) {
  return (b.v < a.v || (b.v == a.v && b.i < a.i)) ? b : a;
}
static XPAR_KERNEL_FN inline xk_arg argmax_combine(xk_arg a, xk_arg b) {
  return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a;
}
static XPAR_KERNEL_FN inline xk_arg arg_transform(const int32_t *in, size_t i) {
  xk_arg r = {in[i], 0, (int64_t)i};
  return r;
}
XPAR_OPERATOR(xk_argmin, xk_arg, int32_t, argmin_identity, argmin_combine, arg_transform);
XPAR_OPERATOR(xk_argmax, xk_arg, int32_t, argmax_identity, argmax_combine, arg_transform);

/* ---- the linear recurrence h[i] = a[i] h[i-1] + b[i] (h[-1] = 0) ---------------
 * As a scan over affine maps h -> a h + b: applying (a1, b1), then (a2, b2),
 * is (a1 a2, a2 b1 + b2).  The inclusive scan's b at i is h[i].  uint32,
 * wrapping: exact on every tier. */
static XPAR_KERNEL_FN inline xk_affine affine_identity(void) {
  xk_affine r = {1u, 0u};
  return r;
}
static XPAR_KERNEL_FN inline xk_affine affine_combine(xk_affine f, xk_affine g) {
  xk_affine r = {f.a * g.a, g.a * f.b + g.b};
  return r;
}
static XPAR_KERNEL_FN inline xk_affine affine_transform(const xk_affine *in, size_t i) {
  return in[i];
}
XPAR_OPERATOR(xk_recurrence, xk_affine, xk_affine, affine_identity, affine_combine,
              affine_transform);

/* ---- fused transform-reduce: sum of squares of floats, in double --------------- */
static XPAR_KERNEL_FN inline double sumsq_zero(void) { return 0.0; }
static XPAR_KERNEL_FN inline double sumsq_add(double a, double b) { return a + b; }
static XPAR_KERNEL_FN inline double square_of(const float *in, size_t i) {
  return (double)in[i] * (double)in[i];
}
XPAR_OPERATOR(xk_sumsq, double, float, sumsq_zero, sumsq_add, square_of);

/* ---- a 4-byte scalar operator: uint32 sum (wrapping), the built-in sum's peer -- */
static XPAR_KERNEL_FN inline uint32_t sum_u32_zero(void) { return 0u; }
static XPAR_KERNEL_FN inline uint32_t sum_u32_add(uint32_t a, uint32_t b) { return a + b; }
static XPAR_KERNEL_FN inline uint32_t sum_u32_load(const uint32_t *in, size_t i) { return in[i]; }
XPAR_OPERATOR(xk_sum_u32, uint32_t, uint32_t, sum_u32_zero, sum_u32_add, sum_u32_load);

/* ---- predicates ------------------------------------------------------------------
 * A test of element i that may read the whole input (a neighbour, a field of a
 * struct); xpar_select_op keeps the elements it accepts, xpar_partition_op puts
 * them first. */
static XPAR_KERNEL_FN inline int even_i32(const int32_t *in, size_t i) {
  return (in[i] & 1) == 0;
}
XPAR_PREDICATE(xk_even_i32, int32_t, even_i32);

/* A rise: greater than the element before it (the first element always kept).
 * The test reads in[i - 1]: a predicate sees the whole array, but not n, so it
 * may look back, never past the end. */
static XPAR_KERNEL_FN inline int rise_f64(const double *in, size_t i) {
  return i == 0 || in[i] > in[i - 1];
}
XPAR_PREDICATE(xk_rise_f64, double, rise_f64);

static XPAR_KERNEL_FN inline int in_box(const xk_point *in, size_t i) {
  const xk_point p = in[i];
  return p.x >= 0.0f && p.x < 1.0f && p.y >= 0.0f && p.y < 1.0f && p.z >= 0.0f && p.z < 1.0f;
}
XPAR_PREDICATE(xk_in_box_point, xk_point, in_box);
