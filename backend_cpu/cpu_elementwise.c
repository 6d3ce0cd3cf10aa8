/*
 * CPU elementwise ops (axpy, add, fill), serial and OpenMP tiers.
 *
 * Serial formulas (cuda-serial matches them bit for bit):
 *   axpy  y[i] = alpha*x[i] + y[i]        (no FMA contraction)
 *   add   z[i] = x[i] + y[i]
 * Elementwise results do not depend on the order of elements, so both tiers
 * compute exactly the same values; the OpenMP tier splits [0, n) into one
 * contiguous static chunk per thread.  dot is a reduction: cpu_reduce.c, as
 * on the GPU (device_reduce.cu).
 *
 * Aliasing: axpy allows x == y, add allows z == x and/or z == y.  Each case
 * gets its own loop whose pointers are restrict-qualified, so every loop
 * vectorises without a run-time overlap check (which would send exact
 * aliasing down the scalar path).  Read-only pointers may alias each other
 * under restrict.
 */
#include "cpu_internal.h"

/* ---- the parallel-for driver --------------------------------------------- */

void xpar__cpu_parallel_for(const xpar__exec *ex, size_t n, xpar__cpu_range_fn fn,
                            const void *args) {
  /* Whether to open a region is the reductions' decision (a team of one at
   * under 2 x XPAR__CPU_MIN_PER_THREAD); how finely to split an open one is
   * the elementwise rule (XPAR__CPU_EW_MIN_PER_PART). */
  if (ex->serial || xpar__cpu_team_size(ex, n) <= 1) {
    fn(args, 0, n);
    return;
  }
  int team = xpar__cpu_team_size_min(ex, n, XPAR__CPU_EW_MIN_PER_PART);
  XPAR__CPU_PRAGMA(omp parallel num_threads(xpar__cpu_region_size(ex)))
  {
    int id = xpar__cpu_thread_num(), parts = xpar__cpu_parts_in_region(team);
    if (id < parts) { /* the rest of the region has no work (see xpar__cpu_region_size) */
      size_t lo, hi;
      xpar__cpu_split(0, n, id, parts, &lo, &hi);
      fn(args, lo, hi);
    }
  }
}

/* Argument blocks handed through the driver. */
typedef struct ew_args {
  const void *x, *y;
  void *z;
  xpar__scalar s; /* alpha or fill value */
} ew_args;

/* for (i = lo; i < hi; ++i) BODY, split where out + i meets a 32-byte boundary, so that
 * the vector loop of the second part stores whole aligned vectors.  Its iterations are
 * independent (an element reads at most the element it writes), and the compiler is told
 * so: GCC versioned these loops with run-time overlap checks despite their restrict
 * pointers, 18 of the 480 instructions of a 128-element add (callgrind). */
#define XPAR__CPU_FOR_ALIGNED_STORES(i, lo, hi, out, BODY)                                 \
  do {                                                                                     \
    size_t i = (lo);                                                                       \
    XPAR__CPU_TO_32B_BOUNDARY(i, hi, out, BODY);                                           \
    XPAR__CPU_INDEPENDENT for (; i < (hi); ++i) BODY;                                      \
  } while (0)

#define XPAR__CPU_EW_KERNELS_(e, ctype, name, size)                                        \
  XPAR__CPU_SIMD_CLONES                                                                    \
  static void axpy_distinct_##e(const void *args, size_t lo, size_t hi) {                  \
    const ew_args *a = (const ew_args *)args;                                              \
    const ctype *restrict x = (const ctype *)a->x;                                         \
    ctype *restrict y = (ctype *)a->z;                                                     \
    ctype alpha;                                                                           \
    memcpy(&alpha, a->s.bytes, sizeof alpha);                                              \
    XPAR__CPU_FOR_ALIGNED_STORES(                                                          \
        i, lo, hi, y, y[i] = xpar__cpu_sum_##e(xpar__cpu_mul_##e(alpha, x[i]), y[i]));     \
  }                                                                                        \
  XPAR__CPU_SIMD_CLONES                                                                    \
  static void axpy_same_##e(const void *args, size_t lo, size_t hi) { /* x == y */         \
    const ew_args *a = (const ew_args *)args;                                              \
    ctype *restrict y = (ctype *)a->z;                                                     \
    ctype alpha;                                                                           \
    memcpy(&alpha, a->s.bytes, sizeof alpha);                                              \
    XPAR__CPU_FOR_ALIGNED_STORES(                                                          \
        i, lo, hi, y, y[i] = xpar__cpu_sum_##e(xpar__cpu_mul_##e(alpha, y[i]), y[i]));     \
  }                                                                                        \
  XPAR__CPU_SIMD_CLONES                                                                    \
  static void add_distinct_##e(const void *args, size_t lo, size_t hi) {                   \
    const ew_args *a = (const ew_args *)args;                                              \
    const ctype *restrict x = (const ctype *)a->x;                                         \
    const ctype *restrict y = (const ctype *)a->y;                                         \
    ctype *restrict z = (ctype *)a->z;                                                     \
    XPAR__CPU_FOR_ALIGNED_STORES(i, lo, hi, z, z[i] = xpar__cpu_sum_##e(x[i], y[i]));      \
  }                                                                                        \
  XPAR__CPU_SIMD_CLONES                                                                    \
  static void add_z_is_x_##e(const void *args, size_t lo, size_t hi) { /* y distinct */    \
    const ew_args *a = (const ew_args *)args;                                              \
    const ctype *restrict y = (const ctype *)a->y;                                         \
    ctype *restrict z = (ctype *)a->z;                                                     \
    XPAR__CPU_FOR_ALIGNED_STORES(i, lo, hi, z, z[i] = xpar__cpu_sum_##e(z[i], y[i]));      \
  }                                                                                        \
  XPAR__CPU_SIMD_CLONES                                                                    \
  static void add_z_is_y_##e(const void *args, size_t lo, size_t hi) { /* x distinct */    \
    const ew_args *a = (const ew_args *)args;                                              \
    const ctype *restrict x = (const ctype *)a->x;                                         \
    ctype *restrict z = (ctype *)a->z;                                                     \
    XPAR__CPU_FOR_ALIGNED_STORES(i, lo, hi, z, z[i] = xpar__cpu_sum_##e(x[i], z[i]));      \
  }                                                                                        \
  XPAR__CPU_SIMD_CLONES                                                                    \
  static void add_all_same_##e(const void *args, size_t lo, size_t hi) {                   \
    const ew_args *a = (const ew_args *)args;                                              \
    ctype *restrict z = (ctype *)a->z;                                                     \
    XPAR__CPU_FOR_ALIGNED_STORES(i, lo, hi, z, z[i] = xpar__cpu_sum_##e(z[i], z[i]));      \
  }                                                                                        \
  XPAR__CPU_SIMD_CLONES                                                                    \
  static void fill_##e(const void *args, size_t lo, size_t hi) {                           \
    const ew_args *a = (const ew_args *)args;                                              \
    ctype *restrict z = (ctype *)a->z;                                                     \
    ctype v;                                                                               \
    memcpy(&v, a->s.bytes, sizeof v);                                                      \
    XPAR__CPU_FOR_ALIGNED_STORES(i, lo, hi, z, z[i] = v);                                  \
  }
XPAR_DTYPE_MAP(XPAR__CPU_EW_KERNELS_)
#undef XPAR__CPU_EW_KERNELS_

typedef struct ew_kernels {
  xpar__cpu_range_fn axpy_distinct, axpy_same;
  xpar__cpu_range_fn add_distinct, add_z_is_x, add_z_is_y, add_all_same;
  xpar__cpu_range_fn fill;
} ew_kernels;

#define XPAR__CPU_EWROW_(e, ctype, name, size)                                                \
  [XPAR_##e] = {axpy_distinct_##e, axpy_same_##e,  add_distinct_##e, add_z_is_x_##e,          \
                add_z_is_y_##e,    add_all_same_##e, fill_##e},
static const ew_kernels ew_table[XPAR_DTYPE_COUNT_] = {XPAR_DTYPE_MAP(XPAR__CPU_EWROW_)};
#undef XPAR__CPU_EWROW_

#define XPAR__CPU_CHECK_DTYPE_(t, what) \
  XPAR__RETURN_IF(!xpar__dtype_valid(t), XPAR_ERR_INTERNAL, "cpu %s: bad dtype %d", what, (int)(t))

xpar_status xpar__cpu_axpy(const xpar__exec *ex, xpar_dtype t, const void *alpha, const void *x,
                           void *y, size_t n) {
  XPAR__CPU_CHECK_DTYPE_(t, "axpy");
  if (n == 0) return XPAR_OK;
  ew_args a = {.x = x, .y = NULL, .z = y};
  memcpy(a.s.bytes, alpha, xpar__dtype_size(t));
  const ew_kernels *k = &ew_table[t];
  xpar__cpu_parallel_for(ex, n, (x == y) ? k->axpy_same : k->axpy_distinct, &a);
  return XPAR_OK;
}

xpar_status xpar__cpu_add(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y, void *z,
                          size_t n) {
  XPAR__CPU_CHECK_DTYPE_(t, "add");
  if (n == 0) return XPAR_OK;
  ew_args a = {.x = x, .y = y, .z = z};
  const ew_kernels *k = &ew_table[t];
  xpar__cpu_range_fn fn;
  if (z == x && z == y)
    fn = k->add_all_same;
  else if (z == x)
    fn = k->add_z_is_x;
  else if (z == y)
    fn = k->add_z_is_y;
  else
    fn = k->add_distinct;
  xpar__cpu_parallel_for(ex, n, fn, &a);
  return XPAR_OK;
}

xpar_status xpar__cpu_fill(const xpar__exec *ex, xpar_dtype t, const void *value, void *out,
                           size_t n) {
  XPAR__CPU_CHECK_DTYPE_(t, "fill");
  if (n == 0) return XPAR_OK;
  ew_args a = {.x = NULL, .y = NULL, .z = out};
  memcpy(a.s.bytes, value, xpar__dtype_size(t));
  xpar__cpu_parallel_for(ex, n, ew_table[t].fill, &a);
  return XPAR_OK;
}

/* ---- host_copy: the split tier's pass through pinned staging ------------------------ */

typedef struct copy_args {
  unsigned char *dst;
  const unsigned char *src;
} copy_args;

static void copy_range(const void *args, size_t lo, size_t hi) {
  const copy_args *a = args;
  memcpy(a->dst + lo, a->src + lo, hi - lo);
}

xpar_status xpar__cpu_host_copy(const xpar__exec *ex, void *dst, const void *src, size_t bytes) {
  if (bytes == 0) return XPAR_OK;
  const copy_args a = {dst, src};
  /* Split in bytes: each thread copies one contiguous range, as the elementwise
   * ops do (a copy is an elementwise op of 1-byte elements). */
  xpar__cpu_parallel_for(ex, bytes, copy_range, &a);
  return XPAR_OK;
}
