/*
 * The one backend interface.  Each backend is a const table of function
 * pointers (NULL = not supported / compiled out).  Only dispatch/ calls
 * through these pointers, in one wrapper (dispatch/dispatch.c), which is the
 * place for the decision record, verbose logging and staging of operands.
 *
 * Contract for every operation pointer:
 *  - dispatch has validated everything (non-NULL pointers for n > 0, valid
 *    enums, no size overflow, allowed aliasing only); backends do not
 *    re-validate arguments, but must handle n == 0.
 *  - array pointers are accessible to the backend: host memory for the CPU
 *    backend, device-accessible memory (device, managed or device copies of
 *    mapped arrays) for the CUDA backend.  Dispatch stages anything else.
 *  - scalar inputs (alpha, value) are host pointers to one element of dtype.
 *  - scan's `init` is the carry-in, a host xpar__scalar holding one element of
 *    dtype in its first bytes, or NULL for the identity (xpar_scan): every
 *    output element is init op (its plain scan value), exclusive out[0] = init.
 *    It is valid only during the call: a backend that queues work copies the
 *    value (by value into the launch), never the pointer.
 *  - `result` (reduce, reduce_sum_wide, dot) is a host pointer, except with
 *    exec->result_on_device, where it is device-accessible memory.
 *  - on failure a backend returns a status set through xpar__fail() and
 *    writes no output.
 */
#ifndef XPAR_DISPATCH_BACKEND_H
#define XPAR_DISPATCH_BACKEND_H

#include "base/base.h"
#include "base/host_scratch.h"
#include "base/repro_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

struct xpar__cuda_state; /* per-context GPU state, owned by backend_cuda/ */
struct xpar_kernel;      /* an application kernel (xpar/xpar_kernel.h)   */
struct xpar_kernel_args;
struct xpar_operator;    /* an application operator (xpar/xpar_kernel.h) */
struct xpar_predicate_op; /* an application predicate (xpar/xpar_kernel.h) */

/** Array operands of one call, at most: x, y and out (add: x, y, z), or a
 *  kernel's arrays (xpar_launch).  Each
 *  has its staging slot, on the host (dispatch) and on the device (the
 *  backend's `staging`). */
#define XPAR__OPERAND_SLOTS 8 /* XPAR_KERNEL_MAX_ARGS: a kernel's arrays */

/** Per-call execution settings handed to a backend. */
typedef struct xpar__exec {
  int serial;       /* CPU: one thread, element order.  CUDA: grid = block = 1 */
  int num_threads;  /* CPU OpenMP tier: threads, 0 = the runtime's default     */
  struct xpar__cuda_state *cuda; /* CUDA: the context's state; NULL on CPU     */
  unsigned grid;    /* CUDA: launch override (0 = the backend decides)          */
  unsigned block;
  int nowait;       /* CUDA: return once queued; do not synchronise the stream  */
  int captured;     /* CUDA: nowait, and the stream is capturing a CUDA graph
                     * (dispatch asks the backend's `capturing` once per call)  */
  int result_on_device; /* reduce/dot: `result` is device-accessible memory     */
  int reproducible; /* float sums, dots, sum scans: dispatch calls repro_* instead */
  xpar__host_scratch *host_scratch; /* CPU: the context's kept working memory (sort) */
} xpar__exec;

/** One stable sort (xpar_sort, xpar_sort_pairs, xpar_argsort), in the order
 *  of base/sort_key.h.  Keys are permuted as whole elements (their original
 *  bits); values, when present, move with their keys. */
typedef struct xpar__sort_spec {
  xpar_dtype key_dtype;
  xpar_dtype value_dtype;  /* values' dtype; argsort: XPAR_INT32 or XPAR_INT64 */
  int descending;          /* 0 ascending, 1 descending (still stable)        */
  int values_are_indices;  /* argsort: values_in is NULL, the values are 0..n-1 */
  const void *keys_in;     /* n keys; never written unless keys_out == keys_in */
  void *keys_out;          /* n keys; may equal keys_in; NULL: not written (argsort) */
  const void *values_in;   /* NULL: no values (keys only, or argsort)        */
  void *values_out;        /* NULL: keys only; may equal values_in            */
  size_t n;
} xpar__sort_spec;

/** What a compaction call keeps (xpar_select and its family). */
typedef enum xpar__select_kind {
  XPAR__SELECT_IF = 0,      /* the predicate holds                               */
  XPAR__SELECT_FLAGGED = 1, /* flags[i] != 0                                     */
  XPAR__PARTITION = 2,      /* the predicate holds first, then the rest (all n)  */
  XPAR__UNIQUE = 3,         /* i == 0 or in[i] differs from in[i-1] (the sort's
                               float equality: -0.0 == +0.0, NaN == NaN)         */
  XPAR__PARTITION_FLAGGED = 4 /* flags[i] != 0 first, then the rest (all n); the
                               CUDA backend's, for application predicates  */
} xpar__select_kind;

/** One compaction call.  Kept elements go to out[0 .. count) in input order;
 *  a partition writes the others after them, in input order too.  `count` is a
 *  host pointer, or device-accessible memory with ex->result_on_device (the
 *  CUDA backend); an 8-byte count either way. */
typedef struct xpar__select_spec {
  xpar__select_kind kind;
  xpar_dtype dtype;
  xpar_predicate pred;          /* IF, PARTITION                          */
  xpar__scalar value, hi;       /* IF, PARTITION: the predicate's operands */
  const void *in;
  const unsigned char *flags;   /* FLAGGED                                */
  void *out;                    /* may equal in, except for PARTITION     */
  size_t n;
  uint64_t *count;
} xpar__select_spec;

/** One runs call: xpar_run_length_encode (lengths = 1) or xpar_reduce_by_key.
 *  Run r is a maximal stretch of keys equal by base/sort_key.h's equality
 *  (-0.0 == +0.0, NaN == NaN); keys_out[r] gets its first key (its bits),
 *  values_out[r] its length (uint64, lengths) or the op of its values in
 *  value_dtype.  `count` (the number of runs) is a host pointer, or
 *  device-accessible memory with ex->result_on_device; 8 bytes either way.
 *  No two arrays overlap.  With ex->reproducible, a float or double SUM of a
 *  run is the reproducible sum of the run's values as an array of its own
 *  (xpar.h, xpar_reduce_by_key). */
typedef struct xpar__runs_spec {
  xpar_dtype key_dtype;
  xpar_dtype value_dtype;       /* lengths: XPAR_UINT64                  */
  xpar_reduction op;            /* lengths: XPAR_SUM                     */
  int lengths;                  /* 1: run-length encode, values_in NULL  */
  const void *keys_in;
  const void *values_in;
  void *keys_out;
  void *values_out;
  size_t n;
  uint64_t *count;
} xpar__runs_spec;
/** What a segmented call computes (xpar__seg_spec). */
typedef enum xpar__seg_kind {
  XPAR__SEG_REDUCE = 0,   /* out[s] = op over segment s (empty: the identity)       */
  XPAR__SEG_SCAN = 1,     /* out[i] = the scan of segment s up to i (from the identity) */
  XPAR__SEG_ARGREDUCE = 2 /* out[s] = the min / max of segment s, index[s] its first
                             position (absolute, into in) */
} xpar__seg_kind;

/** One segmented call (xpar_segmented_reduce, _scan, xpar_argmin / argmax: one
 *  segment [0, n)).  Segments are [offsets[s], offsets[s + 1]) of in, or
 *  [s * segment_size, (s + 1) * segment_size) when offsets is NULL.  The
 *  offsets are NOT validated by dispatch (they may live in device memory):
 *  each backend checks them (non-decreasing, offsets[0] >= 0,
 *  offsets[n_segments] <= n) before it writes anything, and refuses with
 *  XPAR_ERR_INVALID_ARGUMENT.  n_segments >= 1 (dispatch handles 0). */
typedef struct xpar__seg_spec {
  xpar__seg_kind kind;
  xpar_dtype dtype;
  xpar_reduction op;       /* SUM, MIN, MAX; ARGREDUCE: MIN or MAX                */
  xpar_scan_kind scan_kind; /* SCAN                                              */
  const void *in;
  size_t n;                /* in's elements                                       */
  const void *offsets;     /* n_segments + 1 of offset_dtype; NULL: fixed segments */
  xpar_dtype offset_dtype; /* XPAR_INT32 or XPAR_INT64                            */
  size_t segment_size;     /* fixed segments                                      */
  size_t n_segments;
  void *out;               /* REDUCE, ARGREDUCE: n_segments values; SCAN: n       */
  int64_t *index;          /* ARGREDUCE: n_segments indices                       */
  int report;              /* the caller waits (not a nowait call): a backend that
                              checks offsets on the device reads its verdict back and
                              refuses bad ones, even where ex->nowait lets it skip its
                              own synchronisation */
} xpar__seg_spec;

/** One histogram call (xpar_histogram_even, xpar_histogram_range): counts[0 ..
 *  num_bins) all written, zeros included; samples outside the bins and NaN not
 *  counted.  Even bins (boundaries NULL): `even` says where each sample goes
 *  (base/hist_bin.h).  Range bins: boundaries is a host array of num_bins + 1
 *  elements of dtype, checked not to decrease (floats: no NaN) by api/; bin i
 *  is [boundaries[i], boundaries[i + 1]).  `counts` is reachable by the
 *  backend (host memory for the CPU, device-accessible for the CUDA backend)
 *  and never overlaps samples or boundaries. */
typedef struct xpar__histogram_spec {
  xpar_dtype dtype;
  const void *samples;
  size_t n;
  size_t num_bins;           /* 1 .. XPAR_HISTOGRAM_MAX_BINS */
  const void *boundaries;    /* range bins: host memory; NULL: even bins */
  const struct xpar__hist_even *even; /* even bins */
  uint64_t *counts;
} xpar__histogram_spec;

/** What a pointer is, as the CUDA runtime sees it. */
typedef enum xpar__ptr_kind {
  XPAR__PTR_HOST_PAGEABLE = 0,
  XPAR__PTR_HOST_PINNED = 1,
  XPAR__PTR_DEVICE = 2,
  XPAR__PTR_MANAGED = 3
} xpar__ptr_kind;

typedef enum xpar__copy_dir {
  XPAR__HOST_TO_DEVICE = 0, /* the application's host memory: read in stream order */
  XPAR__DEVICE_TO_HOST = 1,
  XPAR__DEVICE_TO_DEVICE = 2,
  /* host memory xpar itself has just written (a CPU tier's output on its way
   * back to device memory): complete when the copy is queued, so the driver
   * may read it at once; the caller waits (wait) before it reuses the source,
   * so the copy neither classifies nor waits for it */
  XPAR__HOST_TO_DEVICE_WRITTEN = 3,
  /* into pinned host memory, queued in stream order: the caller waits (wait)
   * before it reads the destination (the split tier's outputs) */
  XPAR__DEVICE_TO_HOST_QUEUED = 4
} xpar__copy_dir;

typedef struct xpar__backend {
  const char *name; /* "cpu", "cuda" */

  /* ---- operations ---- */
  xpar_status (*reduce)(const xpar__exec *ex, xpar_dtype t, xpar_reduction op, const void *in,
                        size_t n, void *result);
  /* result has type xpar__wide_dtype(t) */
  xpar_status (*reduce_sum_wide)(const xpar__exec *ex, xpar_dtype t, const void *in, size_t n,
                                 void *result);
  xpar_status (*scan)(const xpar__exec *ex, xpar_dtype t, xpar_reduction op, xpar_scan_kind kind,
                      const xpar__scalar *init, const void *in, void *out,
                      size_t n); /* out may equal in; init NULL = the identity */
  xpar_status (*axpy)(const xpar__exec *ex, xpar_dtype t, const void *alpha, const void *x,
                      void *y, size_t n); /* x may equal y */
  xpar_status (*add)(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y, void *z,
                     size_t n); /* z may equal x or y */
  xpar_status (*fill)(const xpar__exec *ex, xpar_dtype t, const void *value, void *out, size_t n);
  xpar_status (*dot)(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y, size_t n,
                     void *result);
  /* Stable sort (xpar__sort_spec).  Arrays are disjoint except keys_out ==
   * keys_in and values_out == values_in (in place).  Working memory: the CPU
   * backend's from ex->host_scratch, the CUDA backend's kept in its state
   * (freed by release_cache); out of memory writes nothing.  NULL: the
   * backend has no sort (dispatch refuses with XPAR_ERR_NOT_SUPPORTED). */
  xpar_status (*sort)(const xpar__exec *ex, const xpar__sort_spec *s);
  /* Compaction (xpar__select_spec): select, select by flags, stable
   * partition, unique.  in == out allowed except for a partition; flags never
   * overlap out.  NULL: not supported (dispatch refuses). */
  xpar_status (*select)(const xpar__exec *ex, const xpar__select_spec *s);
  /* Runs (xpar__runs_spec): run-length encode and reduce by key.  Arrays
   * disjoint.  NULL: not supported (dispatch refuses). */
  xpar_status (*runs)(const xpar__exec *ex, const xpar__runs_spec *s);
  /* Segmented reduce / scan and argmin / argmax (xpar__seg_spec): checks the
   * offsets itself before writing anything.  out may equal in for a scan.
   * NULL: not supported (dispatch refuses). */
  xpar_status (*segmented)(const xpar__exec *ex, const xpar__seg_spec *s);
  /* Histogram (xpar__histogram_spec), even or range bins.  NULL: not
   * supported (dispatch refuses). */
  xpar_status (*histogram)(const xpar__exec *ex, const xpar__histogram_spec *s);
  /* An application kernel (xpar/xpar_kernel.h) over [0, n): the CPU backend
   * runs its CPU loop (one thread when ex->serial or ex->num_threads is 1),
   * the CUDA backend its grid-stride kernel in the backend's launch shape
   * (grid = block = 1 when ex->serial).  args' arrays are reachable by the
   * backend; XPAR_ERR_NOT_SUPPORTED when the kernel lacks this side. */
  xpar_status (*launch)(const xpar__exec *ex, const struct xpar_kernel *k, size_t n,
                        const struct xpar_kernel_args *args);
  /* An application operator (XPAR_OPERATOR): reduce into a host accumulator,
   * scan into n accumulators (in and out disjoint); NOT_SUPPORTED as above. */
  xpar_status (*op_reduce)(const xpar__exec *ex, const struct xpar_operator *op, size_t n,
                           const void *in, void *result);
  xpar_status (*op_scan)(const xpar__exec *ex, const struct xpar_operator *op,
                         xpar_scan_kind kind, size_t n, const void *in, void *out);
  /* An application predicate (XPAR_PREDICATE): the kept elements of in to
   * out[0 .. *count) in order; with partition the others after them, in order
   * (in and out disjoint; count as a compaction's, xpar__select_spec);
   * NOT_SUPPORTED where the predicate lacks this side. */
  xpar_status (*op_select)(const xpar__exec *ex, const struct xpar_predicate_op *pred,
                           int partition, size_t n, const void *in, void *out, uint64_t *count);

  /* ---- reproducible mode (docs/reproducible.md): float and double only ----
   * The summation order of the specification, the same bits on every tier
   * and launch shape.  repro_reduce: kind SUM (result of dtype t), WIDE
   * (result double for float, else t) or DOT (y used only by DOT).
   * repro_scan: sum scans only (min/max scans are exact in any order). */
  xpar_status (*repro_reduce)(const xpar__exec *ex, xpar__repro_kind kind, xpar_dtype t,
                              const void *x, const void *y, size_t n, void *result);
  xpar_status (*repro_scan)(const xpar__exec *ex, xpar_dtype t, xpar_scan_kind kind,
                            const xpar__scalar *init, const void *in, void *out, size_t n);

  /* ---- host memory (the CPU backend's; NULL for the CUDA backend) ---- */
  /** Copy bytes between two host buffers that do not overlap, with the
   *  OpenMP tier's team (one thread when ex->serial or num_threads is 1):
   *  the split tier's pass of pageable data through pinned staging. */
  xpar_status (*host_copy)(const xpar__exec *ex, void *dst, const void *src, size_t bytes);
  /** The threads of the OpenMP tier's team for ex (ex->num_threads, else
   *  the OpenMP runtime's default): what adaptation's room counts. */
  int (*team_size)(const xpar__exec *ex);

  /* ---- device management (NULL for the CPU backend) ---- */
  /** Process-wide probe of `device` (-1 = the default device): fills out
   *  (usable + reason on failure) and returns XPAR_OK even when no GPU is
   *  usable.  Cached after the first call per device; cheap afterwards. */
  xpar_status (*query)(int device, xpar_device_info *out);
  /** Create the per-context state on `device`: its own stream, no scratch yet,
   *  its work queued on `stream` (the application's; NULL: its own) -- with
   *  nothing queued yet, nothing to wait for, also inside a graph capture. */
  xpar_status (*state_create)(int device, void *stream, struct xpar__cuda_state **out);
  /** Waits for outstanding work, frees scratch/staging/stream. NULL-safe. */
  void (*state_destroy)(struct xpar__cuda_state *st);
  /** Use the application's stream (cudaStream_t as void *); NULL = own stream. */
  xpar_status (*set_stream)(struct xpar__cuda_state *st, void *stream);
  /** The device an application stream belongs to; -1 for NULL, the legacy
   *  and per-thread handles (they follow the current device), or where the
   *  driver cannot say. */
  int (*stream_device)(void *stream);
  /** Classify a pointer (one driver look-up: cuda_state.cu).  Device memory
   *  of a driver context the application created, which the device's
   *  primary context cannot reach, is XPAR_ERR_INVALID_ARGUMENT with *out
   *  set to XPAR__PTR_DEVICE (one more look-up per device pointer). */
  xpar_status (*pointer_kind)(const void *p, xpar__ptr_kind *out);
  /** The driver allocation holding p (pinned, device or managed memory):
   *  1 with *start and *size set, 0 where the driver cannot say. */
  int (*pointer_range)(const void *p, uintptr_t *start, size_t *size);
  /** The device whose memory p is (p classified XPAR__PTR_DEVICE), -1 where
   *  the driver cannot say.  Asked only with several devices visible. */
  int (*device_of)(const void *p);
  /** Whether st's device reaches device memory p of another device, as the
   *  driver says (peer access the application enabled): 1 yes, 0 no or
   *  unknown. */
  int (*device_can_access)(struct xpar__cuda_state *st, const void *p);
  /** Put back the driver context the calling thread had before the backend
   *  first made its device's context current in this public call (the door
   *  calls it on leaving, while base's xpar__callers_switched is not 0). */
  void (*restore_caller)(void);
  /** Device allocation for mappings (cudaMalloc); not for per-call scratch. */
  xpar_status (*alloc)(struct xpar__cuda_state *st, size_t bytes, void **out);
  void (*free)(struct xpar__cuda_state *st, void *p);
  /** Pinned host memory (cudaMallocHost) for dispatch's host copies of
   *  device operands: device-to-host copies into it run at full speed,
   *  without the driver's own staging through pageable memory, allocated
   *  in st's device's context (st may be NULL: whichever is current).
   *  Optional (NULL: dispatch uses malloc); host_free(st, NULL) does nothing.
   *  host_free frees in st's device's context, as host_alloc allocated (st
   *  NULL: whichever is current), switching as any call does: only inside a
   *  public call, whose door puts the caller's context back. */
  xpar_status (*host_alloc)(struct xpar__cuda_state *st, size_t bytes, void **out);
  void (*host_free)(struct xpar__cuda_state *st, void *p);
  /** Device staging buffer `slot` (< XPAR__OPERAND_SLOTS) of at least `bytes`, cached in the
   *  state and grown when needed (never shrunk or freed per call).  Used by
   *  dispatch to hold host operands of a GPU call. */
  xpar_status (*staging)(struct xpar__cuda_state *st, int slot, size_t bytes, void **out);
  /** Copy on the state's stream; returns when the copy is complete (device
   *  to host, host to device from pageable memory) or queued in stream order
   *  (device to device, host to device from pinned memory: read when the
   *  stream reaches it, after the work queued before it on the stream and on
   *  the legacy stream -- small pinned sources through a kernel, cuda_state.cu). */
  xpar_status (*copy)(struct xpar__cuda_state *st, void *dst, const void *src, size_t bytes,
                      xpar__copy_dir dir);
  /** Wait for the state's stream; reports an error raised by queued work.
   *  XPAR_ERR_NOT_SUPPORTED while the stream is capturing a CUDA graph. */
  xpar_status (*wait)(struct xpar__cuda_state *st);
  /** 1 while the state's stream is capturing a CUDA graph: a nowait call
   *  then goes into the graph, and leaves no work queued to wait for. */
  int (*capturing)(struct xpar__cuda_state *st);
  /** Wait for the state's stream, then free its cached staging and kernel
   *  scratch (regrown by the next call that needs them). */
  xpar_status (*release_cache)(struct xpar__cuda_state *st);
} xpar__backend;

/** The CPU backend (always built). */
extern const xpar__backend xpar__cpu_backend;

#if defined(XPAR_HAVE_CUDA)
/** The CUDA backend (built when the CUDA toolkit was found). */
extern const xpar__backend xpar__cuda_backend;
#endif

#ifdef __cplusplus
}
#endif

#endif /* XPAR_DISPATCH_BACKEND_H */
