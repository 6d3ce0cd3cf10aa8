/*
 * Distributed reduce, wide sum, dot and scan: local xpar call -> one
 * MPI_Allgather of a 16-byte record per rank (status, what was called, the
 * partial) -> every rank checks the records and folds the partials in rank
 * order itself.  The scan then runs xpar_scan_init with its carry and agrees
 * on the outcome with one MPI_Allreduce of a status word; so do the ranks of
 * a reduce, wide sum or dot when any of them writes its result through xpar
 * (device memory, or inside a mapping: the records say so).
 *
 * Nothing but the records crosses ranks, and they live in host memory: an
 * application pointer (host or device) is never given to MPI.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* ---- scalars of every dtype ---------------------------------------------- */

/* A host scalar of any dtype: a partial, a slice total, a carry, a result. */
typedef union scalar {
  int32_t i32;
  int64_t i64;
  uint32_t u32;
  uint64_t u64;
  float f32;
  double f64;
  unsigned char bytes[8];
} scalar;

/* The unsigned type of an element size, for wrapping integer sums (never
 * signed overflow), as xpar's own backends add. */
#define UINT_OF_4 uint32_t
#define UINT_OF_8 uint64_t
#define UINT_OF(size) UINT_OF_##size

/* acc = acc op x, in the arithmetic of dtype e.  MIN and MAX compare as
 * xpar's CPU tiers do ((x < acc) ? x : acc), so a NaN partial is kept or
 * dropped as it would be inside one rank. */
#define FOLD_ONE_(e, ctype, name, size)                                              \
  static void fold_##e(xpar_reduction op, scalar *acc, const scalar *x) {           \
    ctype a, b;                                                                     \
    memcpy(&a, acc->bytes, sizeof a);                                               \
    memcpy(&b, x->bytes, sizeof b);                                                 \
    switch (op) {                                                                   \
      case XPAR_SUM:                                                                \
        a = _Generic((ctype)0, float: a + b, double: a + b,                         \
                     default: (ctype)((UINT_OF(size))a + (UINT_OF(size))b));        \
        break;                                                                      \
      case XPAR_MIN: a = (b < a) ? b : a; break;                                    \
      case XPAR_MAX: a = (b > a) ? b : a; break;                                    \
      default: break;                                                               \
    }                                                                               \
    memcpy(acc->bytes, &a, sizeof a);                                               \
  }
XPAR_DTYPE_MAP(FOLD_ONE_)
#undef FOLD_ONE_

static void fold(xpar_dtype dtype, xpar_reduction op, scalar *acc, const scalar *x) {
  switch (dtype) {
#define FOLD_CASE_(e, ctype, name, size) \
  case XPAR_##e: fold_##e(op, acc, x); break;
    XPAR_DTYPE_MAP(FOLD_CASE_)
#undef FOLD_CASE_
    default: break;
  }
}

/* The identity of op in dtype: 0, the largest value (MIN), the smallest (MAX);
 * +-infinity for floats, as xpar's reduce of nothing. */
static scalar identity(xpar_dtype dtype, xpar_reduction op) {
  scalar s;
  memset(&s, 0, sizeof s);
  if (op == XPAR_SUM) return s;
  const int is_min = op == XPAR_MIN;
  switch (dtype) {
    case XPAR_INT32: s.i32 = is_min ? INT32_MAX : INT32_MIN; break;
    case XPAR_INT64: s.i64 = is_min ? INT64_MAX : INT64_MIN; break;
    case XPAR_UINT32: s.u32 = is_min ? UINT32_MAX : 0; break;
    case XPAR_UINT64: s.u64 = is_min ? UINT64_MAX : 0; break;
    case XPAR_FLOAT: s.f32 = is_min ? (float)INFINITY : -(float)INFINITY; break;
    case XPAR_DOUBLE: s.f64 = is_min ? (double)INFINITY : -(double)INFINITY; break;
    default: break;
  }
  return s;
}

/* xpar_reduce_sum_wide's accumulator type. */
static xpar_dtype wide_dtype(xpar_dtype dtype) {
  switch (dtype) {
    case XPAR_INT32: return XPAR_INT64;
    case XPAR_UINT32: return XPAR_UINT64;
    case XPAR_FLOAT: return XPAR_DOUBLE;
    default: return dtype;
  }
}

/* ---- the exchange ------------------------------------------------------------ */

typedef enum call_kind {
  CALL_REDUCE = 1,
  CALL_SUM_WIDE = 2,
  CALL_DOT = 3,
  CALL_SCAN = 4,
} call_kind;

static const char *call_name(unsigned call) {
  switch (call) {
    case CALL_REDUCE: return "xpar_mpi_reduce";
    case CALL_SUM_WIDE: return "xpar_mpi_reduce_sum_wide";
    case CALL_DOT: return "xpar_mpi_dot";
    case CALL_SCAN: return "xpar_mpi_scan";
    default: return "?";
  }
}

static const char *reduction_name(unsigned op) {
  return op == XPAR_SUM ? "sum" : op == XPAR_MIN ? "min" : op == XPAR_MAX ? "max" : "?";
}

static const char *kind_name(unsigned kind) {
  return kind == XPAR_INCLUSIVE ? "inclusive" : kind == XPAR_EXCLUSIVE ? "exclusive" : "?";
}

/*
 * One rank's contribution to the exchange.  The status rides with the data,
 * so that success is agreed in the same round trip; call, dtype, op and kind
 * let every rank see a rank that called something else.  Fields a call does
 * not use are 0, so records compare field by field.
 */
typedef struct record {
  int16_t status;  /* this rank's xpar_status before the exchange (all fit) */
  uint8_t writes_through_xpar; /* reduce, wide sum, dot: its result is device memory or
                                  mapped, written by one more xpar call (write_result) */
  uint8_t unused;
  uint8_t call;    /* call_kind */
  uint8_t dtype;   /* meaningful when status is XPAR_OK (a valid dtype fits) */
  uint8_t op;      /* xpar_reduction (reduce, scan) */
  uint8_t kind;    /* xpar_scan_kind (scan) */
  scalar value;    /* the partial or slice total (scan: unused on the last rank) */
} record;
_Static_assert(sizeof(record) == 16, "the exchanged record is 16 bytes on every rank");

/* Records of up to this many ranks are gathered on the stack. */
enum { STACK_RANKS = 64 };

/* One call's state: who we are, what we contributed, what came back. */
typedef struct exchange {
  const char *fn; /* the public function, for details */
  int rank, size;
  record mine;
  record stack_records[STACK_RANKS];
  record *all; /* size records, rank order */
  char local_detail[384]; /* why this rank's local work failed */
} exchange;

/* Note why this rank failed locally (before the exchange), from the detail
 * already set: xpar's (local xpar call) or the component's (its own checks). */
static void note_local_failure(exchange *x, xpar_status st, const char *what, const char *why) {
  x->mine.status = (int16_t)st;
  snprintf(x->local_detail, sizeof x->local_detail, "%s%s%s", what, *what ? ": " : "", why);
}

static void exchange_release(exchange *x) {
  if (x->all && x->all != x->stack_records) free(x->all);
  x->all = NULL;
}

/*
 * Gather every rank's record, then decide, identically on every rank:
 * a failed rank -> its status (this rank's own if it failed, else the
 * lowest failing rank's); a rank that differs from rank 0 in what it called
 * -> XPAR_ERR_INVALID_ARGUMENT; else XPAR_OK and x->all holds the partials.
 */
static xpar_status exchange_run(exchange *x, MPI_Comm comm) {
  x->all = x->size <= STACK_RANKS ? x->stack_records
                                  : (record *)malloc((size_t)x->size * sizeof(record));
  if (!x->all)
    /* This rank cannot take part; the others will wait in MPI_Allgather.
     * 16 bytes x size of host memory is all the exchange ever needs. */
    return xpar__mpi_fail(XPAR_ERR_OUT_OF_MEMORY,
                          "%s: rank %d of %d: no memory for the %zu-byte exchange buffer", x->fn,
                          x->rank, x->size, (size_t)x->size * sizeof(record));
  xpar_status st = xpar__mpi_check(MPI_Allgather(&x->mine, (int)sizeof(record), MPI_BYTE, x->all,
                                                 (int)sizeof(record), MPI_BYTE, comm),
                                   x->fn, "MPI_Allgather (the exchange; nothing was written)");
  if (st != XPAR_OK) return st;

  int first_failed = -1, failed = 0;
  for (int r = 0; r < x->size; r++) {
    if (x->all[r].status != XPAR_OK) {
      if (first_failed < 0) first_failed = r;
      failed++;
    }
  }
  if (first_failed >= 0) {
    const xpar_status first = (xpar_status)x->all[first_failed].status;
    char others[128] = "";
    if (failed > 1)
      snprintf(others, sizeof others, " (%d of %d ranks failed; the first is rank %d)", failed,
               x->size, first_failed);
    if (x->mine.status != XPAR_OK)
      return xpar__mpi_fail((xpar_status)x->mine.status, "%s: rank %d of %d failed: %s: %s%s; "
                            "nothing was written on any rank", x->fn, x->rank, x->size,
                            xpar_status_name((xpar_status)x->mine.status), x->local_detail,
                            others);
    return xpar__mpi_fail(first, "%s: rank %d of %d failed: %s (%s)%s; nothing was written on any "
                          "rank", x->fn, first_failed, x->size, xpar_status_name(first),
                          xpar_status_string(first), others);
  }

  const record *r0 = &x->all[0];
  for (int r = 1; r < x->size; r++) {
    const record *o = &x->all[r];
    if (o->call != r0->call)
      return xpar__mpi_fail(XPAR_ERR_INVALID_ARGUMENT,
                            "%s: rank %d of %d called %s where rank 0 called %s; every rank must "
                            "make the same collective call", x->fn, r, x->size,
                            call_name(o->call), call_name(r0->call));
    if (o->dtype != r0->dtype)
      return xpar__mpi_fail(XPAR_ERR_INVALID_ARGUMENT,
                            "%s: rank %d of %d passed dtype %s where rank 0 passed %s; every rank "
                            "must pass the same dtype", x->fn, r, x->size,
                            xpar_dtype_name((xpar_dtype)o->dtype),
                            xpar_dtype_name((xpar_dtype)r0->dtype));
    if (o->op != r0->op)
      return xpar__mpi_fail(XPAR_ERR_INVALID_ARGUMENT,
                            "%s: rank %d of %d passed op %s where rank 0 passed %s; every rank "
                            "must pass the same op", x->fn, r, x->size, reduction_name(o->op),
                            reduction_name(r0->op));
    if (o->kind != r0->kind)
      return xpar__mpi_fail(XPAR_ERR_INVALID_ARGUMENT,
                            "%s: rank %d of %d passed kind %s where rank 0 passed %s; every rank "
                            "must pass the same kind", x->fn, r, x->size, kind_name(o->kind),
                            kind_name(r0->kind));
  }
  return XPAR_OK;
}

/* Set up an exchange for `fn`: clear the detail and check the communicator
 * (failures here return at once: no collective can be made). */
static xpar_status exchange_begin(exchange *x, const char *fn, call_kind call, MPI_Comm comm) {
  xpar__mpi_clear_error();
  /* Not the whole struct: the stack records are written by MPI_Allgather. */
  memset(&x->mine, 0, sizeof x->mine);
  x->all = NULL;
  x->local_detail[0] = '\0';
  x->fn = fn;
  x->mine.call = (uint8_t)call;
  return xpar__mpi_check_comm(fn, comm, &x->rank, &x->size);
}

/* The fold of ranks [0, count)'s values, left to right (count >= 1). */
static scalar fold_ranks(const exchange *x, int count, xpar_dtype dtype, xpar_reduction op) {
  scalar acc = x->all[0].value;
  for (int r = 1; r < count; r++) fold(dtype, op, &acc, &x->all[r].value);
  return acc;
}

/*
 * After the local work that follows the exchange (a scan's xpar_scan_init, a
 * result written through xpar): every rank learns whether any failed.  MAXLOC
 * over (size - rank if failed else 0, status) picks the lowest failing rank
 * and carries its status; integer-only, so its order does not matter.
 */
static xpar_status agree_after(const exchange *x, MPI_Comm comm, xpar_status local,
                               const char *local_detail) {
  struct {
    int failed_key, status;
  } mine = {local != XPAR_OK ? x->size - x->rank : 0, (int)local}, worst;
  xpar_status st = xpar__mpi_check(
      MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MAXLOC, comm), x->fn,
      "MPI_Allreduce (the agreement after the local writes: this rank's output is written)");
  if (st != XPAR_OK) return st;
  if (worst.failed_key == 0) return XPAR_OK;
  const int failed_rank = x->size - worst.failed_key;
  if (x->mine.call != CALL_SCAN) {
    if (local != XPAR_OK)
      return xpar__mpi_fail(local, "%s: rank %d of %d failed: %s: writing the result, after the "
                            "exchange: %s; the ranks whose writes succeeded hold the result",
                            x->fn, x->rank, x->size, xpar_status_name(local), local_detail);
    return xpar__mpi_fail((xpar_status)worst.status, "%s: rank %d of %d failed writing its "
                          "result, after the exchange: %s (%s); this rank's result was written",
                          x->fn, failed_rank, x->size,
                          xpar_status_name((xpar_status)worst.status),
                          xpar_status_string((xpar_status)worst.status));
  }
  /* A shadow mismatch is the one failure whose outputs were written (xpar.h:
   * the primary tier's result). */
  if (local != XPAR_OK)
    return xpar__mpi_fail(local, "%s: rank %d of %d failed: %s: local xpar_scan_init, after the "
                          "exchange: %s; this rank's output %s, ranks whose scans succeeded "
                          "wrote theirs", x->fn, x->rank, x->size, xpar_status_name(local),
                          local_detail,
                          local == XPAR_ERR_SHADOW_MISMATCH
                              ? "holds the primary tier's result"
                              : "is as xpar left it on failure");
  return xpar__mpi_fail((xpar_status)worst.status, "%s: rank %d of %d failed in its local scan, "
                        "after the exchange: %s (%s); this rank's output was written, rank %d's "
                        "%s", x->fn, failed_rank, x->size,
                        xpar_status_name((xpar_status)worst.status),
                        xpar_status_string((xpar_status)worst.status), failed_rank,
                        worst.status == XPAR_ERR_SHADOW_MISMATCH
                            ? "holds its primary tier's result"
                            : "was not");
}

/* ---- reduce, wide sum, dot ------------------------------------------------------ */

/* Record this rank's local outcome in x->mine (status; on failure the detail
 * the local xpar call left). */
static void take_local(exchange *x, xpar_status st, const char *local_call) {
  if (st != XPAR_OK) note_local_failure(x, st, local_call, xpar_last_error_detail());
}

/*
 * A result pointer is checked here, before the local call (which writes into
 * the component's own scalar), as xpar would check it, so that a bad one
 * fails the call on every rank with nothing written: NULL; a range that
 * straddles a mapping's edge; device memory not aligned to its type.  Whether
 * write_result goes through xpar rides in the record.
 */
static int check_result(exchange *x, xpar_context *ctx, xpar_dtype acc_dtype,
                        const void *result) {
  if (!result) {
    note_local_failure(x, XPAR_ERR_NULL_POINTER, "", "result is NULL");
    return 0;
  }
  const size_t bytes = xpar_dtype_size(acc_dtype);
  if (!ctx || bytes == 0) return 1; /* no context, a bad dtype: the local call reports them */
  xpar_memory_kind kind = XPAR_MEMORY_HOST;
  const xpar_status st = xpar_memory_query(ctx, result, bytes, &kind);
  if (st == XPAR_ERR_INVALID_ARGUMENT || st == XPAR_ERR_SIZE_OVERFLOW) {
    note_local_failure(x, st, "result", xpar_last_error_detail());
    return 0;
  }
  /* Any other failure (the driver's, a busy context): a host result, as
   * xpar_reduce takes a result it cannot classify; the local call reports
   * what is its to report. */
  if (st != XPAR_OK) kind = XPAR_MEMORY_HOST;
  x->mine.writes_through_xpar = kind == XPAR_MEMORY_DEVICE || kind == XPAR_MEMORY_MAPPED;
  if (kind == XPAR_MEMORY_DEVICE && (uintptr_t)result % bytes != 0) {
    char why[128];
    snprintf(why, sizeof why, "result (%p) is device memory not aligned to its %zu-byte type",
             result, bytes);
    note_local_failure(x, XPAR_ERR_INVALID_ARGUMENT, "", why);
    return 0;
  }
  return 1;
}

/*
 * Write the agreed total to *result as xpar_reduce writes its result: host
 * memory (pageable, pinned, managed) directly; device memory, and host memory
 * inside a mapping (whose host copy xpar brings up to date and then holds as
 * the valid one), through xpar itself -- a SUM of one unsigned integer of the
 * total's size, which is the total's bits exactly (0 + x).  After
 * check_result only a device error or host memory running out can fail that
 * write.
 */
static xpar_status write_result(const exchange *x, xpar_context *ctx, xpar_dtype acc_dtype,
                                const scalar *total, void *result) {
  const size_t bytes = xpar_dtype_size(acc_dtype);
  if (!x->mine.writes_through_xpar) {
    memcpy(result, total->bytes, bytes);
    return XPAR_OK;
  }
  return xpar_reduce(ctx, bytes == 4 ? XPAR_UINT32 : XPAR_UINT64, XPAR_SUM, total->bytes, 1,
                     result);
}

/*
 * The common path of the three allreduce-style calls: `local` has run (or
 * failed) into x->mine; exchange, then fold every partial in rank order in
 * `acc_dtype` with `op` and write *result.
 */
static xpar_status finish_allreduce(exchange *x, xpar_context *ctx, MPI_Comm comm,
                                    xpar_dtype acc_dtype, xpar_reduction op, void *result) {
  xpar_status st = exchange_run(x, comm);
  if (st == XPAR_OK) {
    const scalar total = fold_ranks(x, x->size, acc_dtype, op);
    st = write_result(x, ctx, acc_dtype, &total, result);
    /* A write through xpar can fail (a device error) on its rank alone: then
     * the ranks agree, as after a scan, so that every rank returns an error.
     * Every rank sees the same records, so all of them agree or none. */
    int any_through_xpar = 0;
    for (int r = 0; r < x->size; r++) any_through_xpar |= x->all[r].writes_through_xpar;
    if (any_through_xpar)
      st = agree_after(x, comm, st, st != XPAR_OK ? xpar_last_error_detail() : "");
  }
  exchange_release(x);
  return st;
}

XPAR_MPI_API xpar_status xpar_mpi_reduce(xpar_context *ctx, MPI_Comm comm, xpar_dtype dtype,
                                         xpar_reduction op, const void *in, size_t n_local,
                                         void *result) {
  exchange x;
  xpar_status st = exchange_begin(&x, "xpar_mpi_reduce", CALL_REDUCE, comm);
  if (st != XPAR_OK) return st;
  x.mine.dtype = (uint8_t)dtype;
  x.mine.op = (uint8_t)op;
  if (check_result(&x, ctx, dtype, result))
    take_local(&x, xpar_reduce(ctx, dtype, op, in, n_local, &x.mine.value), "local xpar_reduce");
  return finish_allreduce(&x, ctx, comm, dtype, op, result);
}

XPAR_MPI_API xpar_status xpar_mpi_reduce_sum_wide(xpar_context *ctx, MPI_Comm comm,
                                                  xpar_dtype dtype, const void *in,
                                                  size_t n_local, void *result) {
  exchange x;
  xpar_status st = exchange_begin(&x, "xpar_mpi_reduce_sum_wide", CALL_SUM_WIDE, comm);
  if (st != XPAR_OK) return st;
  x.mine.dtype = (uint8_t)dtype;
  if (check_result(&x, ctx, wide_dtype(dtype), result))
    take_local(&x, xpar_reduce_sum_wide(ctx, dtype, in, n_local, &x.mine.value),
               "local xpar_reduce_sum_wide");
  return finish_allreduce(&x, ctx, comm, wide_dtype(dtype), XPAR_SUM, result);
}

XPAR_MPI_API xpar_status xpar_mpi_dot(xpar_context *ctx, MPI_Comm comm, xpar_dtype dtype,
                                      const void *x_in, const void *y_in, size_t n_local,
                                      void *result) {
  exchange x;
  xpar_status st = exchange_begin(&x, "xpar_mpi_dot", CALL_DOT, comm);
  if (st != XPAR_OK) return st;
  x.mine.dtype = (uint8_t)dtype;
  if (check_result(&x, ctx, dtype, result))
    take_local(&x, xpar_dot(ctx, dtype, x_in, y_in, n_local, &x.mine.value), "local xpar_dot");
  return finish_allreduce(&x, ctx, comm, dtype, XPAR_SUM, result);
}

/* ---- scan ------------------------------------------------------------------------- */

/*
 * The checks xpar_scan_init makes on its arguments, made here before the
 * exchange: the last rank runs nothing locally before it, and an argument
 * error found only in the local scan would come after other ranks wrote
 * their outputs.  (xpar still checks again; anything it alone finds is
 * caught by the agreement after the scan.)
 */
static xpar_status check_scan_args(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                   xpar_scan_kind kind, const void *in, const void *out,
                                   size_t n) {
  if (!ctx) return xpar__mpi_fail(XPAR_ERR_NULL_CONTEXT, "the context is NULL");
  const size_t size = xpar_dtype_size(dtype);
  if (size == 0) return xpar__mpi_fail(XPAR_ERR_INVALID_ENUM, "unknown dtype %d", (int)dtype);
  if ((unsigned)op >= XPAR_REDUCTION_COUNT_)
    return xpar__mpi_fail(XPAR_ERR_INVALID_ENUM, "unknown reduction %d", (int)op);
  if ((unsigned)kind >= XPAR_SCAN_KIND_COUNT_)
    return xpar__mpi_fail(XPAR_ERR_INVALID_ENUM, "unknown scan kind %d", (int)kind);
  if (n > SIZE_MAX / size)
    return xpar__mpi_fail(XPAR_ERR_SIZE_OVERFLOW, "n_local * sizeof(%s) overflows size_t "
                          "(n_local = %zu)", xpar_dtype_name(dtype), n);
  const size_t bytes = n * size;
  const void *arrays[2] = {in, out};
  static const char *const names[2] = {"in", "out"};
  /* n = 0 reads and writes no element: any pointer (xpar.h) */
  for (int i = 0; n > 0 && i < 2; i++) {
    const uintptr_t p = (uintptr_t)arrays[i];
    if (!p)
      return xpar__mpi_fail(XPAR_ERR_NULL_POINTER, "%s is NULL (n_local = %zu)", names[i], n);
    if (p & (size - 1))
      return xpar__mpi_fail(XPAR_ERR_INVALID_ARGUMENT, "%s (%p) is not aligned to its %zu-byte "
                            "elements", names[i], arrays[i], size);
    if (p > UINTPTR_MAX - bytes)
      return xpar__mpi_fail(XPAR_ERR_SIZE_OVERFLOW, "%s + %zu bytes overflows the address space",
                            names[i], bytes);
  }
  const uintptr_t pi = (uintptr_t)in, po = (uintptr_t)out;
  if (pi && po && pi != po && bytes && pi < po + bytes && po < pi + bytes)
    return xpar__mpi_fail(XPAR_ERR_OVERLAP, "in [%p, +%zu bytes) partially overlaps out [%p, "
                          "+%zu bytes); only identical or disjoint ranges are allowed", in, bytes,
                          out, bytes);
  return XPAR_OK;
}

/*
 * Where the scan's arrays lie, asked of xpar (xpar_memory_query) before the exchange, as
 * xpar_scan_init would find them: memory the context cannot use -- another device's,
 * or a driver context's of the application's own, or a range across a mapping's edge --
 * is refused here, so that every rank fails together with nothing written, rather than
 * in the local scan after the exchange, when the other ranks have written their outputs
 * (the last rank runs nothing locally before the exchange).  Any other failure of the
 * query (a busy context, a device error) would fail the local scan too: refused here as
 * well.  The reduce, wide sum and dot need no such step: their local call, which checks
 * the same, runs before the exchange, and check_result asks the query for the result.
 */
static xpar_status check_scan_memory(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                     const void *out, size_t n) {
  if (n == 0) return XPAR_OK; /* no element is read or written: any pointer (xpar.h) */
  const void *arrays[2] = {in, out};
  static const char *const names[2] = {"in", "out"};
  for (int i = 0; i < 2; i++) {
    if (i == 1 && out == in) break;
    xpar_memory_kind kind;
    const xpar_status st = xpar_memory_query(ctx, arrays[i], n * xpar_dtype_size(dtype), &kind);
    if (st != XPAR_OK)
      return xpar__mpi_fail(st, "%s (%p, n_local = %zu): %s", names[i], arrays[i], n,
                            xpar_last_error_detail());
  }
  return XPAR_OK;
}

XPAR_MPI_API xpar_status xpar_mpi_scan(xpar_context *ctx, MPI_Comm comm, xpar_dtype dtype,
                                       xpar_reduction op, xpar_scan_kind kind, const void *in,
                                       void *out, size_t n_local) {
  exchange x;
  xpar_status st = exchange_begin(&x, "xpar_mpi_scan", CALL_SCAN, comm);
  if (st != XPAR_OK) return st;
  x.mine.dtype = (uint8_t)dtype;
  x.mine.op = (uint8_t)op;
  x.mine.kind = (uint8_t)kind;
  const int last = x.rank == x.size - 1;
  st = check_scan_args(ctx, dtype, op, kind, in, out, n_local);
  if (st == XPAR_OK) st = check_scan_memory(ctx, dtype, in, out, n_local);
  if (st != XPAR_OK)
    note_local_failure(&x, st, "", xpar_mpi_last_error_detail());
  else if (!last)
    /* The slice total, for the ranks after this one.  The last rank's total
     * would be needed by nobody: it skips the read. */
    take_local(&x, xpar_reduce(ctx, dtype, op, in, n_local, &x.mine.value),
               "local xpar_reduce (slice total)");

  st = exchange_run(&x, comm);
  if (st != XPAR_OK) {
    exchange_release(&x);
    return st;
  }
  const scalar carry = x.rank == 0 ? identity(dtype, op) : fold_ranks(&x, x.rank, dtype, op);
  exchange_release(&x);

  const xpar_status local = xpar_scan_init(ctx, dtype, op, kind, carry.bytes, in, out, n_local);
  char local_detail[384] = "";
  if (local != XPAR_OK) snprintf(local_detail, sizeof local_detail, "%s", xpar_last_error_detail());
  return agree_after(&x, comm, local, local_detail);
}
