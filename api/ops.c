/*
 * Public operations: through the context's door (api.h), validate every
 * argument (nothing is written when anything is wrong), then hand one
 * xpar__call to dispatch, with the facts computed here once (bytes per
 * array, the result's dtype).  A call that repeats its op's last call on the
 * CPU runs before the checks, which its arguments passed then (TRY_REPEAT).
 */
#include <string.h>

#include "api.h"

static xpar_status check_dtype(xpar_dtype dtype, size_t n, size_t *bytes) {
  XPAR__RETURN_IF(!xpar__dtype_valid(dtype), XPAR_ERR_INVALID_ENUM, "unknown dtype %d",
                  (int)dtype);
  size_t size = xpar__dtype_size(dtype);
  XPAR__RETURN_IF(n > SIZE_MAX / size, XPAR_ERR_SIZE_OVERFLOW,
                  "n * sizeof(%s) overflows size_t (n = %zu)", xpar_dtype_name(dtype), n);
  *bytes = n * size;
  return XPAR_OK;
}

/* Two ranges of `bytes` may be identical or disjoint; anything between is
 * refused, since parallel tiers would read what they already overwrote. */
static xpar_status check_alias(const char *a_name, const void *a, const char *b_name,
                               const void *b, size_t bytes) {
  if (!a || !b || a == b || bytes == 0) return XPAR_OK;
  uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
  XPAR__RETURN_IF(pa < pb + bytes && pb < pa + bytes, XPAR_ERR_OVERLAP,
                  "%s [%p, +%zu bytes) partially overlaps %s [%p, +%zu bytes); only identical "
                  "or disjoint ranges are allowed",
                  a_name, a, bytes, b_name, b, bytes);
  return XPAR_OK;
}

/* A scalar result must exist (n = 0 writes the identity); a nowait result
 * may be device memory, which a kernel stores to: it must be aligned. */
static xpar_status check_result(const void *result, xpar_dtype type, int nowait) {
  XPAR__RETURN_IF(!result, XPAR_ERR_NULL_POINTER, "result is NULL");
  XPAR__RETURN_IF(nowait && ((uintptr_t)result & (xpar__dtype_size(type) - 1)),
                  XPAR_ERR_INVALID_ARGUMENT, "device_result (%p) is not aligned to %zu bytes",
                  result, xpar__dtype_size(type));
  return XPAR_OK;
}

static xpar_status check_reduction(xpar_reduction op) {
  XPAR__RETURN_IF((unsigned)op >= XPAR_REDUCTION_COUNT_, XPAR_ERR_INVALID_ENUM,
                  "unknown reduction %d", (int)op);
  return XPAR_OK;
}

/* The call as dispatch gets it, every field written once: a designated
 * initializer would zero the whole struct first (the 16-byte init copy
 * included), which the N = 128 call pays for in stores.  `init` is left
 * unwritten: has_init says whether it holds anything. */
XPAR__HOT_INLINE xpar__call call_of(xpar_op op, xpar_dtype dtype, size_t n, size_t bytes,
                                    const void *x, const void *y, void *out, int nowait) {
  xpar__call c;
  c.op = op;
  c.wide = 0;
  c.dtype = dtype;
  c.red = XPAR_SUM;
  c.kind = XPAR_INCLUSIVE;
  c.result_dtype = dtype;
  c.n = n;
  c.bytes = bytes;
  c.x = x;
  c.y = y;
  c.out = out;
  c.scalar = NULL;
  c.result = NULL;
  c.has_init = 0;
  c.nowait = nowait;
  c.kernel = NULL;
  c.bytes2 = bytes;
  c.out2 = NULL;
  return c;
}

/* Validation failed: the decision record names this call (op this_op, the
 * function's dtype and n) and says it did not run (the door leaves the
 * context).  Out of line: the passing case is the hot one. */
#define CHECK(expr)                                                \
  do {                                                             \
    xpar_status s_ = (expr);                                       \
    if (s_ != XPAR_OK) return refused(ctx, this_op, dtype, n, s_); \
  } while (0)

/* A repeat of the op's last call on the CPU runs before any check
 * (dispatch.h, xpar__dispatch_repeat): every argument it compares passed
 * them then.  `c` holds the call as it would be dispatched (its bytes n
 * times the element size: garbage only for arguments the checks refuse,
 * which no repeat matches). */
#define TRY_REPEAT(c)                                                         \
  do {                                                                        \
    xpar_status repeat_st_;                                                   \
    if (xpar__dispatch_repeat(ctx, &(c), &repeat_st_)) return repeat_st_;     \
  } while (0)

XPAR__COLD xpar_status refused(xpar_context *ctx, xpar_op op, xpar_dtype dtype, size_t n,
                               xpar_status st) {
  xpar__context_record_refused(ctx, op, dtype, n, NULL);
  return st;
}

XPAR__HOT_INLINE xpar_status reduce_entered(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                            int wide, const void *in, size_t n, void *result,
                                            int nowait) {
  const xpar_op this_op = XPAR_OP_REDUCE;
  const xpar_dtype result_dtype = wide ? xpar__wide_dtype(dtype) : dtype;
  xpar__call c =
      call_of(XPAR_OP_REDUCE, dtype, n, n * xpar__dtype_size(dtype), in, NULL, NULL, nowait);
  c.result_dtype = result_dtype;
  c.wide = wide;
  c.red = op;
  c.result = result;
  TRY_REPEAT(c);
  size_t bytes = 0;
  CHECK(check_dtype(dtype, n, &bytes));
  CHECK(check_reduction(op));
  CHECK(xpar__check_array("in", in, n, bytes, dtype));
  CHECK(check_result(result, result_dtype, nowait));
  return xpar__dispatch(ctx, &c);
}

XPAR_API xpar_status xpar_reduce(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                 const void *in, size_t n, void *result) {
  XPAR__OP_THROUGH_CONTEXT(ctx, reduce_entered(ctx, dtype, op, 0, in, n, result, 0));
}

XPAR_API xpar_status xpar_reduce_nowait(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                        const void *in, size_t n, void *device_result) {
  XPAR__OP_THROUGH_CONTEXT(ctx, reduce_entered(ctx, dtype, op, 0, in, n, device_result, 1));
}

XPAR_API xpar_status xpar_reduce_sum_wide(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                          size_t n, void *result) {
  XPAR__OP_THROUGH_CONTEXT(ctx, reduce_entered(ctx, dtype, XPAR_SUM, 1, in, n, result, 0));
}

/* xpar_scan is scan_init with init = NULL (the identity): one path for both. */
XPAR__HOT_INLINE xpar_status scan_entered(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                          xpar_scan_kind kind, const void *init, const void *in,
                                          void *out, size_t n, int with_init, int nowait) {
  const xpar_op this_op = XPAR_OP_SCAN;
  xpar__call c =
      call_of(XPAR_OP_SCAN, dtype, n, n * xpar__dtype_size(dtype), in, NULL, out, nowait);
  c.red = op;
  c.kind = kind;
  /* With an init, the checks come first: they may refuse the call before
   * anything reads *init. */
  if (!with_init) TRY_REPEAT(c);
  size_t bytes = 0;
  CHECK(check_dtype(dtype, n, &bytes));
  CHECK(check_reduction(op));
  CHECK((unsigned)kind < XPAR_SCAN_KIND_COUNT_
            ? XPAR_OK
            : xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown scan kind %d", (int)kind));
  CHECK(with_init && n > 0 && !init
            ? xpar__fail(XPAR_ERR_NULL_POINTER, "init is NULL (n = %zu)", n)
            : XPAR_OK);
  CHECK(xpar__check_array("in", in, n, bytes, dtype));
  CHECK(xpar__check_array("out", out, n, bytes, dtype));
  CHECK(check_alias("in", in, "out", out, bytes));
  /* Copied here (once checked to be host memory), so that no layer below (nor
   * queued GPU work) holds a pointer to the caller's scalar.  n = 0 reads
   * nothing: init may be NULL then. */
  if (with_init && n > 0) {
    CHECK(xpar__check_host_scalar(ctx, "init", init, xpar__dtype_size(dtype)));
    memcpy(c.init.bytes, init, xpar__dtype_size(dtype));
    c.has_init = 1;
  }
  return xpar__dispatch(ctx, &c);
}

XPAR_API xpar_status xpar_scan(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                               xpar_scan_kind kind, const void *in, void *out, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, scan_entered(ctx, dtype, op, kind, NULL, in, out, n, 0, 0));
}

XPAR_API xpar_status xpar_scan_nowait(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                      xpar_scan_kind kind, const void *in, void *out, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, scan_entered(ctx, dtype, op, kind, NULL, in, out, n, 0, 1));
}

XPAR_API xpar_status xpar_scan_init(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                    xpar_scan_kind kind, const void *init, const void *in,
                                    void *out, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, scan_entered(ctx, dtype, op, kind, init, in, out, n, 1, 0));
}

XPAR_API xpar_status xpar_scan_init_nowait(xpar_context *ctx, xpar_dtype dtype,
                                           xpar_reduction op, xpar_scan_kind kind,
                                           const void *init, const void *in, void *out,
                                           size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, scan_entered(ctx, dtype, op, kind, init, in, out, n, 1, 1));
}

XPAR__HOT_INLINE xpar_status axpy_entered(xpar_context *ctx, xpar_dtype dtype, const void *alpha,
                                          const void *x, void *y, size_t n, int nowait) {
  const xpar_op this_op = XPAR_OP_AXPY;
  xpar__call c = call_of(XPAR_OP_AXPY, dtype, n, n * xpar__dtype_size(dtype), x, NULL, y, nowait);
  c.scalar = alpha;
  if (alpha || n == 0) TRY_REPEAT(c);
  size_t bytes = 0;
  CHECK(check_dtype(dtype, n, &bytes));
  CHECK(n > 0 && !alpha ? xpar__fail(XPAR_ERR_NULL_POINTER, "alpha is NULL (n = %zu)", n)
                        : XPAR_OK);
  CHECK(xpar__check_array("x", x, n, bytes, dtype));
  CHECK(xpar__check_array("y", y, n, bytes, dtype));
  CHECK(check_alias("x", x, "y", y, bytes));
  if (n > 0) CHECK(xpar__check_host_scalar(ctx, "alpha", alpha, xpar__dtype_size(dtype)));
  return xpar__dispatch(ctx, &c);
}

XPAR_API xpar_status xpar_axpy(xpar_context *ctx, xpar_dtype dtype, const void *alpha,
                               const void *x, void *y, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, axpy_entered(ctx, dtype, alpha, x, y, n, 0));
}

XPAR_API xpar_status xpar_axpy_nowait(xpar_context *ctx, xpar_dtype dtype, const void *alpha,
                                      const void *x, void *y, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, axpy_entered(ctx, dtype, alpha, x, y, n, 1));
}

XPAR__HOT_INLINE xpar_status add_entered(xpar_context *ctx, xpar_dtype dtype, const void *x,
                                         const void *y, void *z, size_t n, int nowait) {
  const xpar_op this_op = XPAR_OP_ADD;
  xpar__call c = call_of(XPAR_OP_ADD, dtype, n, n * xpar__dtype_size(dtype), x, y, z, nowait);
  TRY_REPEAT(c);
  size_t bytes = 0;
  CHECK(check_dtype(dtype, n, &bytes));
  CHECK(xpar__check_array("x", x, n, bytes, dtype));
  CHECK(xpar__check_array("y", y, n, bytes, dtype));
  CHECK(xpar__check_array("z", z, n, bytes, dtype));
  CHECK(check_alias("x", x, "z", z, bytes));
  CHECK(check_alias("y", y, "z", z, bytes));
  return xpar__dispatch(ctx, &c);
}

XPAR_API xpar_status xpar_add(xpar_context *ctx, xpar_dtype dtype, const void *x, const void *y,
                              void *z, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, add_entered(ctx, dtype, x, y, z, n, 0));
}

XPAR_API xpar_status xpar_add_nowait(xpar_context *ctx, xpar_dtype dtype, const void *x,
                                     const void *y, void *z, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, add_entered(ctx, dtype, x, y, z, n, 1));
}

XPAR__HOT_INLINE xpar_status fill_entered(xpar_context *ctx, xpar_dtype dtype, const void *value,
                                          void *out, size_t n, int nowait) {
  const xpar_op this_op = XPAR_OP_FILL;
  xpar__call c = call_of(XPAR_OP_FILL, dtype, n, n * xpar__dtype_size(dtype), NULL, NULL, out, nowait);
  c.scalar = value;
  if (value || n == 0) TRY_REPEAT(c);
  size_t bytes = 0;
  CHECK(check_dtype(dtype, n, &bytes));
  CHECK(n > 0 && !value ? xpar__fail(XPAR_ERR_NULL_POINTER, "value is NULL (n = %zu)", n)
                        : XPAR_OK);
  CHECK(xpar__check_array("out", out, n, bytes, dtype));
  if (n > 0) CHECK(xpar__check_host_scalar(ctx, "value", value, xpar__dtype_size(dtype)));
  return xpar__dispatch(ctx, &c);
}

XPAR_API xpar_status xpar_fill(xpar_context *ctx, xpar_dtype dtype, const void *value, void *out,
                               size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, fill_entered(ctx, dtype, value, out, n, 0));
}

XPAR_API xpar_status xpar_fill_nowait(xpar_context *ctx, xpar_dtype dtype, const void *value,
                                      void *out, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, fill_entered(ctx, dtype, value, out, n, 1));
}

XPAR__HOT_INLINE xpar_status dot_entered(xpar_context *ctx, xpar_dtype dtype, const void *x,
                                         const void *y, size_t n, void *result, int nowait) {
  const xpar_op this_op = XPAR_OP_DOT;
  xpar__call c = call_of(XPAR_OP_DOT, dtype, n, n * xpar__dtype_size(dtype), x, y, NULL, nowait);
  c.result = result;
  TRY_REPEAT(c);
  size_t bytes = 0;
  CHECK(check_dtype(dtype, n, &bytes));
  CHECK(xpar__check_array("x", x, n, bytes, dtype));
  CHECK(xpar__check_array("y", y, n, bytes, dtype));
  CHECK(check_result(result, dtype, nowait));
  return xpar__dispatch(ctx, &c);
}

XPAR_API xpar_status xpar_dot(xpar_context *ctx, xpar_dtype dtype, const void *x, const void *y,
                              size_t n, void *result) {
  XPAR__OP_THROUGH_CONTEXT(ctx, dot_entered(ctx, dtype, x, y, n, result, 0));
}

XPAR_API xpar_status xpar_dot_nowait(xpar_context *ctx, xpar_dtype dtype, const void *x,
                                     const void *y, size_t n, void *device_result) {
  XPAR__OP_THROUGH_CONTEXT(ctx, dot_entered(ctx, dtype, x, y, n, device_result, 1));
}

/* ---- sort ------------------------------------------------------------------ */

/* Two arrays that may not share a byte (a sort's keys and values). */
static xpar_status check_disjoint(const char *a_name, const void *a, size_t a_bytes,
                                  const char *b_name, const void *b, size_t b_bytes) {
  if (!a || !b || !a_bytes || !b_bytes) return XPAR_OK;
  uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
  XPAR__RETURN_IF(pa < pb + b_bytes && pb < pa + a_bytes, XPAR_ERR_OVERLAP,
                  "%s [%p, +%zu bytes) overlaps %s [%p, +%zu bytes); they must be disjoint",
                  a_name, a, a_bytes, b_name, b, b_bytes);
  return XPAR_OK;
}

typedef enum sort_form { SORT_KEYS, SORT_PAIRS, SORT_ARGSORT } sort_form;

/* xpar_sort, xpar_sort_pairs and xpar_argsort: one path.  keys_out is NULL for
 * argsort, values_in NULL for keys and argsort; values_out is argsort's
 * indices. */
static xpar_status sort_entered(xpar_context *ctx, sort_form form, xpar_dtype dtype,
                                xpar_dtype value_dtype, xpar_sort_order order,
                                const void *keys_in, const void *values_in, void *keys_out,
                                void *values_out, size_t n, int nowait) {
  const xpar_op this_op = XPAR_OP_SORT;
  const char *values_name = form == SORT_ARGSORT ? "indices" : "values_out";
  size_t bytes = 0, bytes2 = 0;
  CHECK(check_dtype(dtype, n, &bytes));
  CHECK((unsigned)order < XPAR_SORT_ORDER_COUNT_
            ? XPAR_OK
            : xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown sort order %d", (int)order));
  if (form != SORT_KEYS) {
    CHECK(xpar__dtype_valid(value_dtype)
              ? XPAR_OK
              : xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown %s dtype %d",
                           form == SORT_ARGSORT ? "index" : "value", (int)value_dtype));
    CHECK(form != SORT_ARGSORT || value_dtype == XPAR_INT32 || value_dtype == XPAR_INT64
              ? XPAR_OK
              : xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                           "index dtype %s: argsort's indices are int32 or int64",
                           xpar_dtype_name(value_dtype)));
    CHECK(form == SORT_ARGSORT && value_dtype == XPAR_INT32 && n > (size_t)INT32_MAX
              ? xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                           "n = %zu keys do not fit int32 indices (at most %d); use int64", n,
                           INT32_MAX)
              : XPAR_OK);
    CHECK(check_dtype(value_dtype, n, &bytes2));
  }
  CHECK(xpar__check_array(form == SORT_PAIRS ? "keys_in" : "in", keys_in, n, bytes, dtype));
  if (form != SORT_ARGSORT)
    CHECK(xpar__check_array(form == SORT_PAIRS ? "keys_out" : "out", keys_out, n, bytes, dtype));
  if (form == SORT_PAIRS)
    CHECK(xpar__check_array("values_in", values_in, n, bytes2, value_dtype));
  if (form != SORT_KEYS)
    CHECK(xpar__check_array(values_name, values_out, n, bytes2, value_dtype));
  CHECK(check_alias(form == SORT_PAIRS ? "keys_in" : "in", keys_in,
                    form == SORT_PAIRS ? "keys_out" : "out", keys_out, bytes));
  CHECK(check_alias("values_in", values_in, "values_out", values_out, bytes2));
  CHECK(check_disjoint(form == SORT_PAIRS ? "keys_in" : "in", keys_in, bytes, values_name,
                       values_out, bytes2));
  CHECK(check_disjoint("keys_out", keys_out, bytes, values_name, values_out, bytes2));
  CHECK(check_disjoint("keys_in", keys_in, bytes, "values_in", values_in, bytes2));
  CHECK(check_disjoint("keys_out", keys_out, bytes, "values_in", values_in, bytes2));
  xpar__call c = call_of(XPAR_OP_SORT, dtype, n, bytes, keys_in, values_in, keys_out, nowait);
  c.out2 = values_out;
  c.bytes2 = bytes2;
  c.dtype2 = form == SORT_KEYS ? dtype : value_dtype;
  c.sort_descending = order == XPAR_DESCENDING;
  c.sort_indices = form == SORT_ARGSORT;
  return xpar__dispatch(ctx, &c);
}

XPAR_API xpar_status xpar_sort(xpar_context *ctx, xpar_dtype dtype, xpar_sort_order order,
                               const void *in, void *out, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, sort_entered(ctx, SORT_KEYS, dtype, dtype, order, in, NULL, out,
                                             NULL, n, 0));
}

XPAR_API xpar_status xpar_sort_nowait(xpar_context *ctx, xpar_dtype dtype, xpar_sort_order order,
                                      const void *in, void *out, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, sort_entered(ctx, SORT_KEYS, dtype, dtype, order, in, NULL, out,
                                             NULL, n, 1));
}

XPAR_API xpar_status xpar_sort_pairs(xpar_context *ctx, xpar_dtype key_dtype,
                                     xpar_dtype value_dtype, xpar_sort_order order,
                                     const void *keys_in, const void *values_in, void *keys_out,
                                     void *values_out, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, sort_entered(ctx, SORT_PAIRS, key_dtype, value_dtype, order,
                                             keys_in, values_in, keys_out, values_out, n, 0));
}

XPAR_API xpar_status xpar_sort_pairs_nowait(xpar_context *ctx, xpar_dtype key_dtype,
                                            xpar_dtype value_dtype, xpar_sort_order order,
                                            const void *keys_in, const void *values_in,
                                            void *keys_out, void *values_out, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, sort_entered(ctx, SORT_PAIRS, key_dtype, value_dtype, order,
                                             keys_in, values_in, keys_out, values_out, n, 1));
}

XPAR_API xpar_status xpar_argsort(xpar_context *ctx, xpar_dtype dtype, xpar_dtype index_dtype,
                                  xpar_sort_order order, const void *in, void *indices,
                                  size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, sort_entered(ctx, SORT_ARGSORT, dtype, index_dtype, order, in,
                                             NULL, NULL, indices, n, 0));
}

XPAR_API xpar_status xpar_argsort_nowait(xpar_context *ctx, xpar_dtype dtype,
                                         xpar_dtype index_dtype, xpar_sort_order order,
                                         const void *in, void *indices, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, sort_entered(ctx, SORT_ARGSORT, dtype, index_dtype, order, in,
                                             NULL, NULL, indices, n, 1));
}

/* ---- compaction ------------------------------------------------------------ */

/* xpar_select, xpar_select_flagged, xpar_partition and xpar_unique: one path.
 * value / hi are the predicate's host scalars (select and partition), flags
 * select_flagged's bytes; count is 8 bytes, device memory allowed with
 * nowait. */
static xpar_status select_entered(xpar_context *ctx, xpar__select_kind kind, xpar_dtype dtype,
                                  xpar_predicate pred, const void *value, const void *hi,
                                  const void *in, const unsigned char *flags, void *out, size_t n,
                                  size_t *count, int nowait) {
  const xpar_op this_op = XPAR_OP_SELECT;
  const int predicated = kind == XPAR__SELECT_IF || kind == XPAR__PARTITION;
  size_t bytes = 0;
  CHECK(check_dtype(dtype, n, &bytes));
  CHECK(!predicated || (unsigned)pred < XPAR_PREDICATE_COUNT_
            ? XPAR_OK
            : xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown predicate %d", (int)pred));
  CHECK(predicated && n > 0 && !value
            ? xpar__fail(XPAR_ERR_NULL_POINTER, "value is NULL (n = %zu)", n)
            : XPAR_OK);
  CHECK(predicated && pred == XPAR_IN_RANGE && n > 0 && !hi
            ? xpar__fail(XPAR_ERR_NULL_POINTER, "hi is NULL with XPAR_IN_RANGE (n = %zu)", n)
            : XPAR_OK);
  CHECK(kind == XPAR__SELECT_FLAGGED && n > 0 && !flags
            ? xpar__fail(XPAR_ERR_NULL_POINTER, "flags is NULL (n = %zu)", n)
            : XPAR_OK);
  CHECK(xpar__check_array("in", in, n, bytes, dtype));
  CHECK(xpar__check_array("out", out, n, bytes, dtype));
  CHECK(check_result(count, XPAR_UINT64, nowait));
  CHECK(kind == XPAR__PARTITION ? check_disjoint("in", in, bytes, "out", out, bytes)
                                : check_alias("in", in, "out", out, bytes));
  CHECK(check_disjoint("flags", flags, n, "out", out, bytes));
  xpar__call c = call_of(XPAR_OP_SELECT, dtype, n, bytes, in, flags, out, nowait);
  c.result = count;
  c.result_dtype = XPAR_UINT64;
  c.bytes2 = n; /* the flags, one byte each (read for select_flagged only) */
  c.select_kind = (unsigned char)kind;
  c.pred = predicated ? pred : XPAR_EQ;
  memset(&c.pred_value, 0, sizeof c.pred_value);
  memset(&c.pred_hi, 0, sizeof c.pred_hi);
  /* Copied once checked to be host memory: nothing below holds the caller's
   * scalars (queued GPU work takes them by value). */
  if (predicated && n > 0) {
    CHECK(xpar__check_host_scalar(ctx, "value", value, xpar__dtype_size(dtype)));
    memcpy(c.pred_value.bytes, value, xpar__dtype_size(dtype));
    if (pred == XPAR_IN_RANGE) {
      CHECK(xpar__check_host_scalar(ctx, "hi", hi, xpar__dtype_size(dtype)));
      memcpy(c.pred_hi.bytes, hi, xpar__dtype_size(dtype));
    }
  }
  return xpar__dispatch(ctx, &c);
}

XPAR_API xpar_status xpar_select(xpar_context *ctx, xpar_dtype dtype, xpar_predicate pred,
                                 const void *value, const void *hi, const void *in, void *out,
                                 size_t n, size_t *count) {
  XPAR__OP_THROUGH_CONTEXT(ctx, select_entered(ctx, XPAR__SELECT_IF, dtype, pred, value, hi, in,
                                               NULL, out, n, count, 0));
}

XPAR_API xpar_status xpar_select_nowait(xpar_context *ctx, xpar_dtype dtype, xpar_predicate pred,
                                        const void *value, const void *hi, const void *in,
                                        void *out, size_t n, size_t *device_count) {
  XPAR__OP_THROUGH_CONTEXT(ctx, select_entered(ctx, XPAR__SELECT_IF, dtype, pred, value, hi, in,
                                               NULL, out, n, device_count, 1));
}

XPAR_API xpar_status xpar_select_flagged(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                         const unsigned char *flags, void *out, size_t n,
                                         size_t *count) {
  XPAR__OP_THROUGH_CONTEXT(ctx, select_entered(ctx, XPAR__SELECT_FLAGGED, dtype, XPAR_EQ, NULL,
                                               NULL, in, flags, out, n, count, 0));
}

XPAR_API xpar_status xpar_select_flagged_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                const void *in, const unsigned char *flags,
                                                void *out, size_t n, size_t *device_count) {
  XPAR__OP_THROUGH_CONTEXT(ctx, select_entered(ctx, XPAR__SELECT_FLAGGED, dtype, XPAR_EQ, NULL,
                                               NULL, in, flags, out, n, device_count, 1));
}

XPAR_API xpar_status xpar_partition(xpar_context *ctx, xpar_dtype dtype, xpar_predicate pred,
                                    const void *value, const void *hi, const void *in,
                                    void *out, size_t n, size_t *count) {
  XPAR__OP_THROUGH_CONTEXT(ctx, select_entered(ctx, XPAR__PARTITION, dtype, pred, value, hi, in,
                                               NULL, out, n, count, 0));
}

XPAR_API xpar_status xpar_partition_nowait(xpar_context *ctx, xpar_dtype dtype,
                                           xpar_predicate pred, const void *value,
                                           const void *hi, const void *in, void *out, size_t n,
                                           size_t *device_count) {
  XPAR__OP_THROUGH_CONTEXT(ctx, select_entered(ctx, XPAR__PARTITION, dtype, pred, value, hi, in,
                                               NULL, out, n, device_count, 1));
}

XPAR_API xpar_status xpar_unique(xpar_context *ctx, xpar_dtype dtype, const void *in, void *out,
                                 size_t n, size_t *count) {
  XPAR__OP_THROUGH_CONTEXT(ctx, select_entered(ctx, XPAR__UNIQUE, dtype, XPAR_EQ, NULL, NULL, in,
                                               NULL, out, n, count, 0));
}

XPAR_API xpar_status xpar_unique_nowait(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                        void *out, size_t n, size_t *device_count) {
  XPAR__OP_THROUGH_CONTEXT(ctx, select_entered(ctx, XPAR__UNIQUE, dtype, XPAR_EQ, NULL, NULL, in,
                                               NULL, out, n, device_count, 1));
}

/* ---- runs ------------------------------------------------------------------ */

/* xpar_run_length_encode (lengths: the values are uint64 lengths, no values
 * in) and xpar_reduce_by_key: one path.  No two of the arrays may overlap;
 * num_runs is 8 bytes, device memory allowed with nowait. */
static xpar_status runs_entered(xpar_context *ctx, int lengths, xpar_dtype dtype,
                                xpar_dtype value_dtype, xpar_reduction op, const void *keys_in,
                                const void *values_in, size_t n, void *keys_out,
                                void *values_out, size_t *num_runs, int nowait) {
  const xpar_op this_op = XPAR_OP_RUNS;
  const char *kin = lengths ? "in" : "keys_in";
  const char *kout = lengths ? "values_out" : "keys_out";
  const char *vout = lengths ? "lengths_out" : "values_out";
  size_t bytes = 0, bytes2 = 0;
  CHECK(check_dtype(dtype, n, &bytes));
  if (!lengths) {
    CHECK(xpar__dtype_valid(value_dtype)
              ? XPAR_OK
              : xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown value dtype %d", (int)value_dtype));
    CHECK(check_reduction(op));
  }
  CHECK(check_dtype(value_dtype, n, &bytes2));
  CHECK(xpar__check_array(kin, keys_in, n, bytes, dtype));
  if (!lengths) CHECK(xpar__check_array("values_in", values_in, n, bytes2, value_dtype));
  CHECK(xpar__check_array(kout, keys_out, n, bytes, dtype));
  CHECK(xpar__check_array(vout, values_out, n, bytes2, value_dtype));
  CHECK(check_result(num_runs, XPAR_UINT64, nowait));
  CHECK(check_disjoint(kin, keys_in, bytes, kout, keys_out, bytes));
  CHECK(check_disjoint(kin, keys_in, bytes, vout, values_out, bytes2));
  CHECK(check_disjoint(kout, keys_out, bytes, vout, values_out, bytes2));
  if (!lengths) {
    CHECK(check_disjoint("values_in", values_in, bytes2, kout, keys_out, bytes));
    CHECK(check_disjoint("values_in", values_in, bytes2, vout, values_out, bytes2));
  }
  /* the count beside the arrays it counts: a host count inside an output
   * would be overwritten by it (or the other way round) */
  CHECK(check_disjoint("num_runs", num_runs, sizeof(uint64_t), kout, keys_out, bytes));
  CHECK(check_disjoint("num_runs", num_runs, sizeof(uint64_t), vout, values_out, bytes2));
  xpar__call c = call_of(XPAR_OP_RUNS, dtype, n, bytes, keys_in, lengths ? NULL : values_in,
                         keys_out, nowait);
  c.out2 = values_out;
  c.bytes2 = bytes2;
  c.dtype2 = value_dtype;
  c.red = lengths ? XPAR_SUM : op;
  c.result = num_runs;
  c.result_dtype = XPAR_UINT64;
  c.runs_lengths = (unsigned char)(lengths != 0);
  return xpar__dispatch(ctx, &c);
}

XPAR_API xpar_status xpar_run_length_encode(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                            size_t n, void *values_out, uint64_t *lengths_out,
                                            size_t *num_runs) {
  XPAR__OP_THROUGH_CONTEXT(ctx, runs_entered(ctx, 1, dtype, XPAR_UINT64, XPAR_SUM, in, NULL, n,
                                             values_out, lengths_out, num_runs, 0));
}

XPAR_API xpar_status xpar_run_length_encode_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                   const void *in, size_t n, void *values_out,
                                                   uint64_t *lengths_out,
                                                   size_t *device_num_runs) {
  XPAR__OP_THROUGH_CONTEXT(ctx, runs_entered(ctx, 1, dtype, XPAR_UINT64, XPAR_SUM, in, NULL, n,
                                             values_out, lengths_out, device_num_runs, 1));
}

XPAR_API xpar_status xpar_reduce_by_key(xpar_context *ctx, xpar_dtype key_dtype,
                                        xpar_dtype value_dtype, xpar_reduction op,
                                        const void *keys_in, const void *values_in, size_t n,
                                        void *keys_out, void *values_out, size_t *num_runs) {
  XPAR__OP_THROUGH_CONTEXT(ctx, runs_entered(ctx, 0, key_dtype, value_dtype, op, keys_in,
                                             values_in, n, keys_out, values_out, num_runs, 0));
}

XPAR_API xpar_status xpar_reduce_by_key_nowait(xpar_context *ctx, xpar_dtype key_dtype,
                                               xpar_dtype value_dtype, xpar_reduction op,
                                               const void *keys_in, const void *values_in,
                                               size_t n, void *keys_out, void *values_out,
                                               size_t *device_num_runs) {
  XPAR__OP_THROUGH_CONTEXT(ctx, runs_entered(ctx, 0, key_dtype, value_dtype, op, keys_in,
                                             values_in, n, keys_out, values_out, device_num_runs,
                                             1));
}

/* ---- argmin / argmax and segmented reduce and scan ------------------------- */

/* xpar_argmin and xpar_argmax: one segment [0, n); value and index are one
 * element each (arrays to dispatch, which stages them like any output). */
static xpar_status argreduce_entered(xpar_context *ctx, xpar_reduction op, xpar_dtype dtype,
                                     const void *in, size_t n, void *value, int64_t *index,
                                     int nowait) {
  const xpar_op this_op = XPAR_OP_ARGREDUCE;
  size_t bytes = 0;
  CHECK(check_dtype(dtype, n, &bytes));
  CHECK(n == 0 ? xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                            "%s of an empty array (n = 0): there is no extreme to return "
                            "(numpy raises too); nothing written",
                            op == XPAR_MIN ? "argmin" : "argmax")
               : XPAR_OK);
  CHECK(xpar__check_array("in", in, n, bytes, dtype));
  CHECK(xpar__check_array("value", value, 1, xpar__dtype_size(dtype), dtype));
  CHECK(xpar__check_array("index", index, 1, sizeof(int64_t), XPAR_INT64));
  CHECK(check_disjoint("in", in, bytes, "value", value, xpar__dtype_size(dtype)));
  CHECK(check_disjoint("in", in, bytes, "index", index, sizeof(int64_t)));
  CHECK(check_disjoint("value", value, xpar__dtype_size(dtype), "index", index, sizeof(int64_t)));
  xpar__call c = call_of(XPAR_OP_ARGREDUCE, dtype, n, bytes, in, NULL, value, nowait);
  c.red = op;
  c.bytes2 = 0;
  c.out2 = index;
  c.seg_kind = XPAR__SEG_ARGREDUCE;
  c.offset_dtype = XPAR_INT64;
  c.n_segments = 1;
  c.segment_size = n;
  c.out_bytes = xpar__dtype_size(dtype);
  c.out2_bytes = sizeof(int64_t);
  return xpar__dispatch(ctx, &c);
}

XPAR_API xpar_status xpar_argmin(xpar_context *ctx, xpar_dtype dtype, const void *in, size_t n,
                                 void *value, int64_t *index) {
  XPAR__OP_THROUGH_CONTEXT(ctx, argreduce_entered(ctx, XPAR_MIN, dtype, in, n, value, index, 0));
}
XPAR_API xpar_status xpar_argmax(xpar_context *ctx, xpar_dtype dtype, const void *in, size_t n,
                                 void *value, int64_t *index) {
  XPAR__OP_THROUGH_CONTEXT(ctx, argreduce_entered(ctx, XPAR_MAX, dtype, in, n, value, index, 0));
}
XPAR_API xpar_status xpar_argmin_nowait(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                        size_t n, void *value, int64_t *index) {
  XPAR__OP_THROUGH_CONTEXT(ctx, argreduce_entered(ctx, XPAR_MIN, dtype, in, n, value, index, 1));
}
XPAR_API xpar_status xpar_argmax_nowait(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                        size_t n, void *value, int64_t *index) {
  XPAR__OP_THROUGH_CONTEXT(ctx, argreduce_entered(ctx, XPAR_MAX, dtype, in, n, value, index, 1));
}

/* The segmented reduce and scan, offsets or fixed segments (offsets NULL and
 * segment_size given: n = segment_size * n_segments, checked by the caller).
 * The offsets' values are checked by the backend that runs the call (they
 * may be device memory): api/ checks the pointer, dtype and overlaps. */
static xpar_status segmented_arg_entered(xpar_context *ctx, xpar__seg_kind kind,
                                         xpar_dtype dtype, xpar_reduction op,
                                         xpar_scan_kind scan_kind, const void *in, void *out,
                                         int64_t *index, size_t n, int fixed,
                                         const void *offsets, xpar_dtype offset_dtype,
                                         size_t segment_size, size_t n_segments, int nowait) {
  const xpar_op this_op = XPAR_OP_SEGMENTED;
  size_t bytes = 0, out_bytes = 0, off_bytes = 0, index_bytes = 0;
  CHECK(check_dtype(dtype, n, &bytes));
  CHECK(check_reduction(op));
  CHECK(kind != XPAR__SEG_SCAN || (unsigned)scan_kind < XPAR_SCAN_KIND_COUNT_
            ? XPAR_OK
            : xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown scan kind %d", (int)scan_kind));
  if (!fixed) {
    CHECK(offset_dtype == XPAR_INT32 || offset_dtype == XPAR_INT64
              ? XPAR_OK
              : xpar__dtype_valid(offset_dtype)
                    ? xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                                 "offset dtype %s: offsets are int32 or int64",
                                 xpar_dtype_name(offset_dtype))
                    : xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown offset dtype %d",
                                 (int)offset_dtype));
    CHECK(n_segments == SIZE_MAX
              ? xpar__fail(XPAR_ERR_SIZE_OVERFLOW, "n_segments + 1 overflows size_t")
              : XPAR_OK);
    if (n_segments > 0) CHECK(check_dtype(offset_dtype, n_segments + 1, &off_bytes));
    CHECK(xpar__check_array("offsets", offsets, n_segments ? n_segments + 1 : 0, off_bytes,
                            offset_dtype));
  }
  if (kind == XPAR__SEG_SCAN) {
    out_bytes = bytes;
    CHECK(xpar__check_array("out", out, n_segments ? n : 0, out_bytes, dtype));
    CHECK(check_alias("in", in, "out", out, bytes));
  } else {
    CHECK(check_dtype(dtype, n_segments, &out_bytes));
    CHECK(xpar__check_array("out", out, n_segments, out_bytes, dtype));
    CHECK(check_disjoint("in", in, bytes, "out", out, out_bytes));
  }
  CHECK(xpar__check_array("in", in, n_segments ? n : 0, bytes, dtype));
  CHECK(check_disjoint("offsets", offsets, off_bytes, "out", out, out_bytes));
  if (kind == XPAR__SEG_ARGREDUCE) { /* the indices: n_segments int64 */
    CHECK(check_dtype(XPAR_INT64, n_segments, &index_bytes));
    CHECK(xpar__check_array("indices", index, n_segments, index_bytes, XPAR_INT64));
    CHECK(check_disjoint("in", in, bytes, "indices", index, index_bytes));
    CHECK(check_disjoint("offsets", offsets, off_bytes, "indices", index, index_bytes));
    CHECK(check_disjoint("values", out, out_bytes, "indices", index, index_bytes));
  }
  if (n_segments == 0) { /* nothing to read or write: no array takes part */
    in = NULL;
    out = NULL;
    index = NULL;
    offsets = NULL;
    bytes = out_bytes = off_bytes = index_bytes = 0;
  }
  xpar__call c = call_of(XPAR_OP_SEGMENTED, dtype, n_segments ? n : 0, bytes, in,
                         fixed ? NULL : offsets, out, nowait);
  c.red = op;
  c.kind = kind == XPAR__SEG_SCAN ? scan_kind : XPAR_INCLUSIVE;
  c.bytes2 = off_bytes;
  c.seg_kind = (unsigned char)kind;
  c.offset_dtype = fixed ? XPAR_INT64 : offset_dtype;
  c.n_segments = n_segments;
  c.segment_size = fixed ? segment_size : 0;
  c.out_bytes = out_bytes;
  c.out2 = index;
  c.out2_bytes = index_bytes;
  return xpar__dispatch(ctx, &c);
}

static xpar_status segmented_entered(xpar_context *ctx, xpar__seg_kind kind, xpar_dtype dtype,
                                     xpar_reduction op, xpar_scan_kind scan_kind,
                                     const void *in, void *out, size_t n, int fixed,
                                     const void *offsets, xpar_dtype offset_dtype,
                                     size_t segment_size, size_t n_segments, int nowait) {
  return segmented_arg_entered(ctx, kind, dtype, op, scan_kind, in, out, NULL, n, fixed, offsets,
                               offset_dtype, segment_size, n_segments, nowait);
}

/* Fixed segments: the input's size, checked (the refusal's record names the
 * op with n = 0: the size it would have had does not exist). */
static xpar_status fixed_n(xpar_context *ctx, xpar_dtype dtype, size_t segment_size,
                           size_t n_segments, size_t *n) {
  if (segment_size && n_segments > SIZE_MAX / segment_size)
    return refused(ctx, XPAR_OP_SEGMENTED, dtype, 0,
                   xpar__fail(XPAR_ERR_SIZE_OVERFLOW,
                              "segment_size * n_segments overflows size_t (%zu * %zu)",
                              segment_size, n_segments));
  *n = segment_size * n_segments;
  return XPAR_OK;
}

#define XPAR__SEG_FIXED_(call)                                       \
  do {                                                               \
    size_t n_ = 0;                                                   \
    xpar_status st_ = fixed_n(ctx, dtype, segment_size, n_segments, &n_); \
    if (st_ != XPAR_OK) return st_;                                  \
    return (call);                                                   \
  } while (0)

static xpar_status seg_reduce_fixed_entered(xpar_context *ctx, xpar_dtype dtype,
                                            xpar_reduction op, const void *in,
                                            size_t segment_size, size_t n_segments, void *out,
                                            int nowait) {
  XPAR__SEG_FIXED_(segmented_entered(ctx, XPAR__SEG_REDUCE, dtype, op, XPAR_INCLUSIVE, in, out,
                                     n_, 1, NULL, XPAR_INT64, segment_size, n_segments, nowait));
}
static xpar_status seg_scan_fixed_entered(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                          xpar_scan_kind kind, const void *in, void *out,
                                          size_t segment_size, size_t n_segments, int nowait) {
  XPAR__SEG_FIXED_(segmented_entered(ctx, XPAR__SEG_SCAN, dtype, op, kind, in, out, n_, 1, NULL,
                                     XPAR_INT64, segment_size, n_segments, nowait));
}
#undef XPAR__SEG_FIXED_

XPAR_API xpar_status xpar_segmented_reduce(xpar_context *ctx, xpar_dtype dtype,
                                           xpar_reduction op, const void *in, size_t n,
                                           const void *offsets, xpar_dtype offset_dtype,
                                           size_t n_segments, void *out) {
  XPAR__OP_THROUGH_CONTEXT(ctx, segmented_entered(ctx, XPAR__SEG_REDUCE, dtype, op,
                                                  XPAR_INCLUSIVE, in, out, n, 0, offsets,
                                                  offset_dtype, 0, n_segments, 0));
}
XPAR_API xpar_status xpar_segmented_reduce_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                  xpar_reduction op, const void *in, size_t n,
                                                  const void *offsets, xpar_dtype offset_dtype,
                                                  size_t n_segments, void *out) {
  XPAR__OP_THROUGH_CONTEXT(ctx, segmented_entered(ctx, XPAR__SEG_REDUCE, dtype, op,
                                                  XPAR_INCLUSIVE, in, out, n, 0, offsets,
                                                  offset_dtype, 0, n_segments, 1));
}
XPAR_API xpar_status xpar_segmented_reduce_fixed(xpar_context *ctx, xpar_dtype dtype,
                                                 xpar_reduction op, const void *in,
                                                 size_t segment_size, size_t n_segments,
                                                 void *out) {
  XPAR__OP_THROUGH_CONTEXT(
      ctx, seg_reduce_fixed_entered(ctx, dtype, op, in, segment_size, n_segments, out, 0));
}
XPAR_API xpar_status xpar_segmented_reduce_fixed_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                        xpar_reduction op, const void *in,
                                                        size_t segment_size, size_t n_segments,
                                                        void *out) {
  XPAR__OP_THROUGH_CONTEXT(
      ctx, seg_reduce_fixed_entered(ctx, dtype, op, in, segment_size, n_segments, out, 1));
}
XPAR_API xpar_status xpar_segmented_scan(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                         xpar_scan_kind kind, const void *in, void *out,
                                         size_t n, const void *offsets, xpar_dtype offset_dtype,
                                         size_t n_segments) {
  XPAR__OP_THROUGH_CONTEXT(ctx, segmented_entered(ctx, XPAR__SEG_SCAN, dtype, op, kind, in, out,
                                                  n, 0, offsets, offset_dtype, 0, n_segments,
                                                  0));
}
XPAR_API xpar_status xpar_segmented_scan_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                xpar_reduction op, xpar_scan_kind kind,
                                                const void *in, void *out, size_t n,
                                                const void *offsets, xpar_dtype offset_dtype,
                                                size_t n_segments) {
  XPAR__OP_THROUGH_CONTEXT(ctx, segmented_entered(ctx, XPAR__SEG_SCAN, dtype, op, kind, in, out,
                                                  n, 0, offsets, offset_dtype, 0, n_segments,
                                                  1));
}
XPAR_API xpar_status xpar_segmented_scan_fixed(xpar_context *ctx, xpar_dtype dtype,
                                               xpar_reduction op, xpar_scan_kind kind,
                                               const void *in, void *out, size_t segment_size,
                                               size_t n_segments) {
  XPAR__OP_THROUGH_CONTEXT(ctx, seg_scan_fixed_entered(ctx, dtype, op, kind, in, out,
                                                       segment_size, n_segments, 0));
}
XPAR_API xpar_status xpar_segmented_scan_fixed_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                      xpar_reduction op, xpar_scan_kind kind,
                                                      const void *in, void *out,
                                                      size_t segment_size, size_t n_segments) {
  XPAR__OP_THROUGH_CONTEXT(ctx, seg_scan_fixed_entered(ctx, dtype, op, kind, in, out,
                                                       segment_size, n_segments, 1));
}

/* argmin / argmax per segment: values and absolute indices, -1 for an empty
 * segment (its value the identity of min / max). */
#define XPAR__SEG_ARG_API_(NAME, OP, NOWAIT)                                                      \
  XPAR_API xpar_status NAME(xpar_context *ctx, xpar_dtype dtype, const void *in, size_t n,       \
                            const void *offsets, xpar_dtype offset_dtype, size_t n_segments,     \
                            void *values, int64_t *indices) {                                    \
    XPAR__OP_THROUGH_CONTEXT(ctx, segmented_arg_entered(ctx, XPAR__SEG_ARGREDUCE, dtype, OP,     \
                                                        XPAR_INCLUSIVE, in, values, indices, n,  \
                                                        0, offsets, offset_dtype, 0, n_segments, \
                                                        NOWAIT));                                \
  }
XPAR__SEG_ARG_API_(xpar_segmented_argmin, XPAR_MIN, 0)
XPAR__SEG_ARG_API_(xpar_segmented_argmax, XPAR_MAX, 0)
XPAR__SEG_ARG_API_(xpar_segmented_argmin_nowait, XPAR_MIN, 1)
XPAR__SEG_ARG_API_(xpar_segmented_argmax_nowait, XPAR_MAX, 1)
#undef XPAR__SEG_ARG_API_

/* ---- histogram ------------------------------------------------------------- */

/* Whether a float bound (lo, hi, a boundary) of dtype at p is NaN, or not finite. */
static void float_class(xpar_dtype dtype, const void *p, int *nan, int *finite, double *v) {
  double d;
  if (dtype == XPAR_FLOAT) {
    float f;
    memcpy(&f, p, sizeof f);
    d = f;
  } else {
    memcpy(&d, p, sizeof d);
  }
  *nan = d != d;
  *finite = !*nan && d - d == 0;
  *v = d;
}

/* a < b in dtype (a, b host scalars); for floats with C's comparison. */
static int scalar_less(xpar_dtype dtype, const void *a, const void *b) {
  switch (dtype) {
#define XPAR__HIST_LESS_(e, ctype, name, size) \
  case XPAR_##e: {                             \
    ctype x, y;                                \
    memcpy(&x, a, sizeof x);                   \
    memcpy(&y, b, sizeof y);                   \
    return x < y;                              \
  }
    XPAR_DTYPE_MAP(XPAR__HIST_LESS_)
#undef XPAR__HIST_LESS_
    default: return 0;
  }
}

/* The first i where boundaries[i + 1] < boundaries[i] or a float boundary is NaN:
 * num_bins compares. */
static xpar_status check_boundaries(xpar_dtype dtype, const void *boundaries, size_t num_bins) {
  const size_t size = xpar__dtype_size(dtype);
  const unsigned char *b = (const unsigned char *)boundaries;
  const int is_fp = dtype == XPAR_FLOAT || dtype == XPAR_DOUBLE;
  for (size_t i = 0; i <= num_bins; i++) {
    if (is_fp) {
      int nan, finite;
      double v;
      float_class(dtype, b + i * size, &nan, &finite, &v);
      XPAR__RETURN_IF(nan, XPAR_ERR_INVALID_ARGUMENT, "boundaries[%zu] is NaN", i);
    }
    XPAR__RETURN_IF(i > 0 && scalar_less(dtype, b + i * size, b + (i - 1) * size),
                    XPAR_ERR_INVALID_ARGUMENT,
                    "boundaries decrease at index %zu (boundaries[%zu] < boundaries[%zu]); "
                    "they must not decrease",
                    i, i, i - 1);
  }
  return XPAR_OK;
}

/* xpar_histogram_even (boundaries NULL, lo and hi) and xpar_histogram_range: one
 * path.  The counts are the call's out2 (num_bins * 8 bytes, all written);
 * the boundaries stay a host array the backends read (dispatch.h). */
static xpar_status histogram_entered(xpar_context *ctx, int range, xpar_dtype dtype,
                                     const void *samples, size_t n, const void *lo,
                                     const void *hi, const void *boundaries, size_t num_bins,
                                     uint64_t *counts, int nowait) {
  const xpar_op this_op = XPAR_OP_HISTOGRAM;
  size_t bytes = 0, count_bytes = 0;
  CHECK(check_dtype(dtype, n, &bytes));
  CHECK(num_bins == 0 || num_bins > XPAR_HISTOGRAM_MAX_BINS
            ? xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                         "num_bins = %zu: a histogram has 1 to %zu bins", num_bins,
                         (size_t)XPAR_HISTOGRAM_MAX_BINS)
            : XPAR_OK);
  CHECK(check_dtype(XPAR_UINT64, num_bins, &count_bytes));
  const size_t size = xpar__dtype_size(dtype);
  const size_t bound_bytes = (num_bins + 1) * size; /* <= 2^31 + 1 elements: no overflow */
  CHECK(!counts ? xpar__fail(XPAR_ERR_NULL_POINTER, "counts is NULL") : XPAR_OK);
  CHECK(xpar__check_array("samples", samples, n, bytes, dtype));
  CHECK(xpar__check_array("counts", counts, num_bins, count_bytes, XPAR_UINT64));
  CHECK(check_disjoint("samples", samples, bytes, "counts", counts, count_bytes));
  if (range) {
    CHECK(n > 0 && !boundaries
              ? xpar__fail(XPAR_ERR_NULL_POINTER, "boundaries is NULL (n = %zu)", n)
              : XPAR_OK);
    if (boundaries) {
      CHECK(xpar__check_host_scalar(ctx, "boundaries", boundaries, bound_bytes));
      CHECK(check_disjoint("boundaries", boundaries, bound_bytes, "counts", counts,
                           count_bytes));
      CHECK(check_boundaries(dtype, boundaries, num_bins));
    }
  } else {
    CHECK(n > 0 && !lo ? xpar__fail(XPAR_ERR_NULL_POINTER, "lo is NULL (n = %zu)", n) : XPAR_OK);
    CHECK(n > 0 && !hi ? xpar__fail(XPAR_ERR_NULL_POINTER, "hi is NULL (n = %zu)", n) : XPAR_OK);
    if (lo && hi) {
      CHECK(xpar__check_host_scalar(ctx, "lo", lo, size));
      CHECK(xpar__check_host_scalar(ctx, "hi", hi, size));
      if (dtype == XPAR_FLOAT || dtype == XPAR_DOUBLE) {
        int nan_lo, fin_lo, nan_hi, fin_hi;
        double vl, vh;
        float_class(dtype, lo, &nan_lo, &fin_lo, &vl);
        float_class(dtype, hi, &nan_hi, &fin_hi, &vh);
        CHECK(!fin_lo || !fin_hi
                  ? xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                               "lo = %g, hi = %g: the bounds of an even histogram must be finite",
                               vl, vh)
                  : XPAR_OK);
      }
      CHECK(!scalar_less(dtype, lo, hi)
                ? xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                             "lo >= hi: an even histogram needs lo < hi")
                : XPAR_OK);
    }
  }
  /* n = 0: no sample is read, and a samples pointer equal to counts must not
   * become one operand of 0 bytes (counts would go unclassified). */
  xpar__call c = call_of(XPAR_OP_HISTOGRAM, dtype, n, bytes, n ? samples : NULL, NULL, NULL, nowait);
  c.out2 = counts;
  c.bytes2 = count_bytes;
  c.dtype2 = XPAR_UINT64;
  c.hist_bins = num_bins;
  /* n = 0 reads nothing: the backends only zero the counts */
  c.hist_bounds = range && n > 0 ? boundaries : NULL;
  memset(&c.hist_even, 0, sizeof c.hist_even);
  c.hist_even.num_bins = (uint32_t)num_bins;
  if (!range && n > 0) xpar__hist_even_prepare(dtype, lo, hi, num_bins, &c.hist_even);
  return xpar__dispatch(ctx, &c);
}

XPAR_API xpar_status xpar_histogram_even(xpar_context *ctx, xpar_dtype dtype, const void *samples,
                                         size_t n, const void *lo, const void *hi,
                                         size_t num_bins, uint64_t *counts) {
  XPAR__OP_THROUGH_CONTEXT(ctx, histogram_entered(ctx, 0, dtype, samples, n, lo, hi, NULL,
                                                  num_bins, counts, 0));
}

XPAR_API xpar_status xpar_histogram_even_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                const void *samples, size_t n, const void *lo,
                                                const void *hi, size_t num_bins,
                                                uint64_t *counts) {
  XPAR__OP_THROUGH_CONTEXT(ctx, histogram_entered(ctx, 0, dtype, samples, n, lo, hi, NULL,
                                                  num_bins, counts, 1));
}

XPAR_API xpar_status xpar_histogram_range(xpar_context *ctx, xpar_dtype dtype,
                                          const void *samples, size_t n, const void *boundaries,
                                          size_t num_bins, uint64_t *counts) {
  XPAR__OP_THROUGH_CONTEXT(ctx, histogram_entered(ctx, 1, dtype, samples, n, NULL, NULL,
                                                  boundaries, num_bins, counts, 0));
}

XPAR_API xpar_status xpar_histogram_range_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                 const void *samples, size_t n,
                                                 const void *boundaries, size_t num_bins,
                                                 uint64_t *counts) {
  XPAR__OP_THROUGH_CONTEXT(ctx, histogram_entered(ctx, 1, dtype, samples, n, NULL, NULL,
                                                  boundaries, num_bins, counts, 1));
}
