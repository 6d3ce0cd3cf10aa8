/**
 * @file
 * xpar — data-parallel primitives (reduce, scan, elementwise, dot) that run on
 * an NVIDIA GPU or on the CPU behind one C API, choosing the place per call.
 *
 * Conventions used by every function in this header:
 *  - Every function returns an xpar_status; results travel through
 *    out-parameters.  XPAR_OK is 0.
 *  - On any status other than XPAR_OK nothing has been written to any output
 *    (array or scalar), and xpar_last_error_detail() says exactly what was
 *    wrong.  The detail message is thread-local.  The one exception is
 *    XPAR_ERR_SHADOW_MISMATCH (shadow mode, asked for): the call completed
 *    and its outputs hold the primary tier's result.
 *  - n = 0 is valid for every operation and reads and writes no element:
 *    array pointers (and axpy's alpha, fill's value, a scan's init) are then
 *    not checked and may be NULL or unaligned.  A reduce or dot still
 *    writes its result (the identity), so `result` must be valid even for
 *    n = 0.
 *  - Arrays are passed as plain pointers: host memory (pageable or pinned),
 *    host arrays mapped with xpar_map(), raw device pointers from cudaMalloc,
 *    or managed memory.  xpar classifies each pointer itself (see
 *    "Where data lives" below); device pointers are never dereferenced on the
 *    host.
 *  - Arrays must be aligned to their element size (XPAR_ERR_INVALID_ARGUMENT
 *    otherwise); any element offset inside an array is fine.  Host scalars
 *    (a synchronous result, axpy's alpha, fill's value, a scan's init) need
 *    no alignment: xpar copies them.
 *  - Integer sums, scans, axpy and dot wrap modulo 2^bits, identically on
 *    every backend (no signed-overflow undefined behaviour anywhere).
 *  - Floats are accumulated in their own type, except for
 *    xpar_reduce_sum_wide().  Parallel tiers combine partial results in a
 *    different order than the serial tiers, so float results differ from the
 *    serial result by rounding; the serial tiers (cpu-serial and cuda-serial)
 *    agree with each other bit for bit.  In reproducible mode
 *    (xpar_context_set_reproducible, XPAR_REPRODUCIBLE=1) float sums, wide
 *    sums, dots and sum scans follow one documented order on every tier, thread
 *    count and launch shape: the same bits everywhere (docs/reproducible.md).
 *
 * Thread safety: a context may be used by one thread at a time.  Use one
 * context per thread for concurrent work (each has its own CUDA stream,
 * scratch and staging).  Sharing a context between threads is not supported:
 * xpar detects most such overlapping calls and refuses them with
 * XPAR_ERR_CONTEXT_BUSY (nothing is written), but the check is deliberately
 * lock-free and cannot catch every interleaving.  Functions that take no
 * context are thread-safe.
 */
#ifndef XPAR_XPAR_H
#define XPAR_XPAR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(XPAR_STATIC_DEFINE)
#define XPAR_API
#elif defined(_WIN32)
#if defined(XPAR_BUILDING)
#define XPAR_API __declspec(dllexport)
#else
#define XPAR_API __declspec(dllimport)
#endif
#else
#define XPAR_API __attribute__((visibility("default")))
#endif

#define XPAR_VERSION_MAJOR 0 /**< this header's version: major */
#define XPAR_VERSION_MINOR 1 /**< this header's version: minor */
#define XPAR_VERSION_PATCH 0 /**< this header's version: patch */

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */
/**
 * @defgroup status Status codes and errors
 * Every function returns an xpar_status; xpar_last_error_detail() says why a
 * call failed.
 * @{
 */

/**
 * The status codes.  X(name, value, description).  Grouped by range:
 * @code{.unparsed}
 *   1xx  bad arguments          2xx  environment and configuration
 *   3xx  device (GPU) problems  4xx  not supported    5xx  host resources
 *   6xx  checks (shadow mode)
 * @endcode
 */
#define XPAR_STATUS_MAP(X)                                                      \
  X(OK, 0, "success")                                                           \
  X(ERR_NULL_CONTEXT, 100, "the context is NULL")                               \
  X(ERR_NULL_POINTER, 101, "a required pointer is NULL")                        \
  X(ERR_INVALID_ENUM, 102, "an enum argument has an unknown value")             \
  X(ERR_SIZE_OVERFLOW, 103, "the array size in bytes overflows size_t")         \
  X(ERR_OVERLAP, 104, "input and output ranges partially overlap")              \
  X(ERR_INVALID_ARGUMENT, 105, "an argument is invalid")                        \
  X(ERR_NOT_MAPPED, 106, "the pointer is not inside a mapped range")            \
  X(ERR_ALREADY_MAPPED, 107, "the range overlaps an existing mapping")          \
  X(ERR_CONTEXT_BUSY, 108, "the context is in use by another thread")           \
  X(ERR_INVALID_ENV, 200, "an environment variable has an invalid value")       \
  X(ERR_PROFILE, 201, "the calibration profile is invalid")                     \
  X(ERR_IO, 202, "a file could not be read or written")                         \
  X(ERR_NO_DEVICE, 300, "no usable GPU, and offload is mandatory")              \
  X(ERR_DEVICE, 301, "the CUDA runtime reported an error")                      \
  X(ERR_DEVICE_OUT_OF_MEMORY, 302, "the GPU is out of memory")                  \
  X(ERR_DEVICE_STICKY, 303, "an earlier CUDA error corrupted the GPU context")  \
  X(ERR_NOT_SUPPORTED, 400, "the operation is not supported by this backend")   \
  X(ERR_OUT_OF_MEMORY, 500, "host memory allocation failed")                    \
  X(ERR_SHADOW_MISMATCH, 600, "shadow mode: the second tier's result differs")   \
  X(ERR_INTERNAL, 900, "internal error")

/** What a call returns: XPAR_OK (0) or an error; one value per row of
 *  XPAR_STATUS_MAP, prefixed XPAR_. */
typedef enum xpar_status {
#define XPAR_STATUS_ENUM_(name, value, text) XPAR_##name = value,
  XPAR_STATUS_MAP(XPAR_STATUS_ENUM_)
#undef XPAR_STATUS_ENUM_
} xpar_status;

/** Static text describing a status ("the context is NULL"); never NULL. */
XPAR_API const char *xpar_status_string(xpar_status status);
/** The status's name without prefix ("ERR_NULL_CONTEXT"); never NULL. */
XPAR_API const char *xpar_status_name(xpar_status status);
/**
 * The detail message of the last failed call on this thread, for example
 * "n * sizeof(double) overflows size_t (n = 2305843009213693952)".  Empty
 * string when the last call succeeded.  Valid until the next xpar call on
 * this thread.  Never NULL.
 */
XPAR_API const char *xpar_last_error_detail(void);

/** @} */

/* ------------------------------------------------------------------------ */
/* Enumerations                                                              */
/* ------------------------------------------------------------------------ */
/**
 * @defgroup enums Enumerations
 * Element types, operations, backends, offload policies, tiers and
 * thresholds, with their names.
 * @{
 */

/** Element types.  X(ENUM, c type, short name, size in bytes). */
#define XPAR_DTYPE_MAP(X)                \
  X(INT32, int32_t, "int32", 4)          \
  X(INT64, int64_t, "int64", 8)          \
  X(UINT32, uint32_t, "uint32", 4)       \
  X(UINT64, uint64_t, "uint64", 8)       \
  X(FLOAT, float, "float", 4)            \
  X(DOUBLE, double, "double", 8)

/** An element type; one value per row of XPAR_DTYPE_MAP. */
typedef enum xpar_dtype {
#define XPAR_DTYPE_ENUM_(e, ctype, name, size) XPAR_##e,
  XPAR_DTYPE_MAP(XPAR_DTYPE_ENUM_)
#undef XPAR_DTYPE_ENUM_
  XPAR_DTYPE_COUNT_
} xpar_dtype;

/** The combining operator of a reduce or scan. */
typedef enum xpar_reduction {
  XPAR_SUM = 0, /**< sum */
  XPAR_MIN = 1, /**< minimum */
  XPAR_MAX = 2, /**< maximum */
  XPAR_REDUCTION_COUNT_
} xpar_reduction;

/** Inclusive or exclusive scan. */
typedef enum xpar_scan_kind {
  XPAR_INCLUSIVE = 0, /**< out[i] = in[0] op ... op in[i]                     */
  XPAR_EXCLUSIVE = 1, /**< out[0] = identity, out[i] = in[0] op ... in[i-1]   */
  XPAR_SCAN_KIND_COUNT_
} xpar_scan_kind;

/** The order of a sort (xpar_sort).  Both are stable. */
typedef enum xpar_sort_order {
  XPAR_ASCENDING = 0,  /**< smallest first; NaNs last                        */
  XPAR_DESCENDING = 1, /**< largest first; NaNs first; equal keys in input order */
  XPAR_SORT_ORDER_COUNT_
} xpar_sort_order;

/** The built-in predicate of xpar_select and xpar_partition: keep x[i] where
 *  `x[i] <op> value` holds, or, for XPAR_IN_RANGE, value <= x[i] < hi.  A NaN
 *  satisfies only XPAR_NE (as C's comparisons). */
typedef enum xpar_predicate {
  XPAR_LT = 0,       /**< x <  value */
  XPAR_LE = 1,       /**< x <= value */
  XPAR_EQ = 2,       /**< x == value */
  XPAR_NE = 3,       /**< x != value */
  XPAR_GE = 4,       /**< x >= value */
  XPAR_GT = 5,       /**< x >  value */
  XPAR_IN_RANGE = 6, /**< value <= x < hi */
  XPAR_PREDICATE_COUNT_
} xpar_predicate;

/*
 * The enumerations below are generated from one map each (libuv's
 * UV_HANDLE_TYPE_MAP style), so that every spelling of a value -- its enum,
 * its name, the word XPAR_* environment variables and calibration profiles
 * use -- sits in one row and cannot disagree with the others.  Values count
 * from 0 in row order.
 */

/** Operations, as used in thresholds and decision records.
 *  X(ENUM suffix, name and profile key, `XPAR_<OP>_<KIND>_THRESHOLD` word). */
#define XPAR_OP_MAP(X)            \
  X(REDUCE, "reduce", "REDUCE") /* xpar_reduce and xpar_reduce_sum_wide */ \
  X(SCAN, "scan", "SCAN")         \
  X(AXPY, "axpy", "AXPY")         \
  X(ADD, "add", "ADD")            \
  X(FILL, "fill", "FILL")         \
  X(DOT, "dot", "DOT")            \
  X(SORT, "sort", "SORT") /* xpar_sort, xpar_sort_pairs, xpar_argsort (by key dtype) */ \
  X(SELECT, "select", "SELECT") /* xpar_select, _select_flagged, _partition, _unique */ \
  X(RUNS, "runs", "RUNS") /* xpar_run_length_encode, xpar_reduce_by_key (by key dtype) */ \
  X(ARGREDUCE, "argreduce", "ARGREDUCE") /* xpar_argmin, xpar_argmax (whole arrays) */ \
  X(SEGMENTED, "segmented", "SEGMENTED") /* xpar_segmented_reduce, _scan (+ _fixed) */ \
  X(HISTOGRAM, "histogram", "HISTOGRAM") /* xpar_histogram_even, _range (by sample dtype) */

/** An operation; one value per row of XPAR_OP_MAP, prefixed XPAR_OP_. */
typedef enum xpar_op {
#define XPAR_OP_ENUM_(e, name, env) XPAR_OP_##e,
  XPAR_OP_MAP(XPAR_OP_ENUM_)
#undef XPAR_OP_ENUM_
  XPAR_OP_COUNT_,
  /** An application kernel (xpar_launch, xpar/xpar_kernel.h) in decision
   * records; not an op of the map: kernels have thresholds of their own. */
  XPAR_OP_KERNEL = XPAR_OP_COUNT_
} xpar_op;

/** Where a context runs its calls.  X(ENUM suffix, name and XPAR_BACKEND
 *  value (case-insensitive)).
 *  @code{.unparsed}
 *   AUTO         choose per call (default)
 *   CPU          CPU: serial below its threshold, else OpenMP
 *   CPU_SERIAL   CPU, one thread, strict element order
 *   CUDA         GPU
 *   CUDA_SERIAL  GPU kernels with grid = block = 1
 *   CPU_CUDA     the CPU and the GPU split each call on host data (the split
 *                tier, xpar_context_set_split): reduce, the wide sum, dot,
 *                axpy, add, fill, scan, the histogram and the segmented
 *                ops; other operations,
 *                and calls with data on the device, run as under CUDA
 *  @endcode
 *  Without a usable GPU (or with offload disabled) CUDA, CUDA_SERIAL and
 *  CPU_CUDA run on the CPU (CPU, resp. CPU_SERIAL) and the decision record
 *  says why, unless offload is MANDATORY: then XPAR_ERR_NO_DEVICE. */
#define XPAR_BACKEND_MAP(X)    \
  X(AUTO, "auto")              \
  X(CPU, "cpu")                \
  X(CPU_SERIAL, "serial")      \
  X(CUDA, "cuda")              \
  X(CUDA_SERIAL, "cuda-serial") \
  X(CPU_CUDA, "cpu+cuda")

/** A backend policy; one value per row of XPAR_BACKEND_MAP, prefixed
 *  XPAR_BACKEND_. */
typedef enum xpar_backend {
#define XPAR_BACKEND_ENUM_(e, name) XPAR_BACKEND_##e,
  XPAR_BACKEND_MAP(XPAR_BACKEND_ENUM_)
#undef XPAR_BACKEND_ENUM_
  XPAR_BACKEND_COUNT_
} xpar_backend;

/** OpenMP's OMP_TARGET_OFFLOAD, for xpar.  X(ENUM suffix, XPAR_OFFLOAD value
 *  (case-insensitive)).
 *  @code{.unparsed}
 *   DEFAULT    use the GPU when it pays and is usable
 *   DISABLED   never touch the GPU (no CUDA call at all)
 *   MANDATORY  every call runs on the GPU, or fails with XPAR_ERR_NO_DEVICE:
 *              no silent CPU fallback
 *  @endcode */
#define XPAR_OFFLOAD_MAP(X) \
  X(DEFAULT, "default")     \
  X(DISABLED, "disabled")   \
  X(MANDATORY, "mandatory")

/** An offload policy; one value per row of XPAR_OFFLOAD_MAP, prefixed
 *  XPAR_OFFLOAD_. */
typedef enum xpar_offload {
#define XPAR_OFFLOAD_ENUM_(e, name) XPAR_OFFLOAD_##e,
  XPAR_OFFLOAD_MAP(XPAR_OFFLOAD_ENUM_)
#undef XPAR_OFFLOAD_ENUM_
  XPAR_OFFLOAD_COUNT_
} xpar_offload;

/**
 * The tier that actually ran a call.  CPU_SERIAL is one thread with no
 * parallel region; it follows strict element order (bit-exact with
 * CUDA_SERIAL) when the backend is XPAR_BACKEND_CPU_SERIAL, and otherwise uses
 * the vectorised one-thread kernels of the OpenMP tier.  CPU_CUDA is the
 * split tier: the OpenMP tier ran the first part of the range and the GPU the
 * rest at once (xpar_decision.split_gpu_share says how much).  X(ENUM suffix,
 * name).
 */
#define XPAR_TIER_MAP(X)          \
  X(NONE, "none") /* no call yet, or the last call failed before running */ \
  X(CPU_SERIAL, "cpu-serial")     \
  X(CPU_OPENMP, "cpu-openmp")     \
  X(CUDA, "cuda")                 \
  X(CUDA_SERIAL, "cuda-serial")   \
  X(CPU_CUDA, "cpu+cuda")

/** A tier; one value per row of XPAR_TIER_MAP, prefixed XPAR_TIER_. */
typedef enum xpar_tier {
#define XPAR_TIER_ENUM_(e, name) XPAR_TIER_##e,
  XPAR_TIER_MAP(XPAR_TIER_ENUM_)
#undef XPAR_TIER_ENUM_
  XPAR_TIER_COUNT_
} xpar_tier;

/**
 * Crossover thresholds (in elements).  A call with n >= threshold takes the
 * faster-for-large-n side.
 * @code{.unparsed}
 *  OPENMP            serial loop -> OpenMP, on the CPU.
 *  GPU_DEVICE_DATA   CPU -> GPU when the data is valid on both sides (mapped
 *                    and in sync) or managed: no transfer either way.
 *  GPU_PINNED_DATA   CPU -> GPU for pinned host data (transfers included).
 *  GPU_PAGEABLE_DATA CPU -> GPU for pageable host data (transfers included).
 *  GPU_DEVICE_ONLY_DATA  CPU -> GPU when some operand is valid only on the
 *                    device (raw device pointers, mapped arrays written by
 *                    the GPU since): below it a synchronous AUTO call copies
 *                    the data to the host and back and runs the CPU tier (for
 *                    a tiny call the copies can cost less than a kernel
 *                    launch and its synchronisation); from it on, and for
 *                    every queued (nowait) call, it stays on the GPU.
 *                    0: device-only data always stays on the GPU.
 * @endcode
 * X(ENUM suffix, profile key, `XPAR_<OP>_<KIND>_THRESHOLD` word, the data it
 * applies to as decision records say it).
 */
#define XPAR_THRESHOLD_MAP(X)                                               \
  X(OPENMP, "openmp", "OPENMP", "the CPU")                                  \
  X(GPU_DEVICE_DATA, "gpu", "GPU", "device data")                           \
  X(GPU_PINNED_DATA, "gpu_pinned", "GPU_PINNED", "pinned host data")        \
  X(GPU_PAGEABLE_DATA, "gpu_pageable", "GPU_PAGEABLE", "pageable host data")  \
  X(GPU_DEVICE_ONLY_DATA, "gpu_device_only", "GPU_DEVICE_ONLY",             \
    "data valid only on the device")

/** A crossover threshold; one value per row of XPAR_THRESHOLD_MAP,
 *  prefixed XPAR_THRESHOLD_. */
typedef enum xpar_threshold {
#define XPAR_THRESHOLD_ENUM_(e, key, env, data) XPAR_THRESHOLD_##e,
  XPAR_THRESHOLD_MAP(XPAR_THRESHOLD_ENUM_)
#undef XPAR_THRESHOLD_ENUM_
  XPAR_THRESHOLD_COUNT_
} xpar_threshold;

/** A threshold value meaning "never switch". */
#define XPAR_NEVER SIZE_MAX

/** A dtype's name: "int32", or "?" if unknown. */
XPAR_API const char *xpar_dtype_name(xpar_dtype dtype);
/** A dtype's size in bytes; 0 if unknown. */
XPAR_API size_t xpar_dtype_size(xpar_dtype dtype);
/** An op's name: "reduce". */
XPAR_API const char *xpar_op_name(xpar_op op);
/** A backend's name: "cuda-serial". */
XPAR_API const char *xpar_backend_name(xpar_backend b);
/** A tier's name: "cpu-openmp". */
XPAR_API const char *xpar_tier_name(xpar_tier tier);

/** @} */

/* ------------------------------------------------------------------------ */
/* Context                                                                   */
/* ------------------------------------------------------------------------ */
/**
 * @defgroup context Context and policy
 * A context holds a policy (backend, offload, thresholds, modes), a CUDA
 * stream, scratch, staging and mappings; one thread uses it at a time.
 * @{
 */

/** An opaque context: xpar_context_create() makes one. */
typedef struct xpar_context xpar_context;

/**
 * Create a context.  Reads the environment once, here:
 * @code{.unparsed}
 *   XPAR_BACKEND   auto | cpu | serial | cuda | cuda-serial | cpu+cuda
 *   XPAR_OFFLOAD   default | disabled | mandatory
 *   XPAR_DEVICE    CUDA device ordinal (after CUDA_VISIBLE_DEVICES)
 *   XPAR_VERBOSE   0 | 1   (1: log every decision to stderr)
 *   XPAR_REPRODUCIBLE  0 | 1   (1: reproducible mode, see
 *                  xpar_context_set_reproducible)
 *   XPAR_SHADOW    off | cpu-serial | cpu-openmp | cuda | cuda-serial
 *                  (shadow mode, see xpar_context_set_shadow)
 *   XPAR_SHADOW_FAIL  0 | 1   (1: a shadow mismatch is XPAR_ERR_SHADOW_MISMATCH)
 *   XPAR_ADAPT     on | off (default on; any case): AUTO corrects its choice
 *                  from the call times it measures (xpar_context_set_adapt)
 *   XPAR_<OP>_<KIND>_THRESHOLD, OP in REDUCE SCAN AXPY ADD FILL DOT ALL,
 *       KIND in OPENMP GPU GPU_PINNED GPU_PAGEABLE GPU_DEVICE_ONLY (the
 *       kinds of xpar_threshold, GPU being GPU_DEVICE_DATA): an element count, a
 *       power of two written 2^k, or "never"; sets the threshold for every
 *       dtype of that op (e.g. XPAR_SCAN_GPU_THRESHOLD=65536).
 *   XPAR_<OP>_SPLIT_<MEMORY>="FROM,SHARE", OP in REDUCE SCAN AXPY ADD FILL
 *       DOT HISTOGRAM SEGMENTED ALL, MEMORY in PINNED PAGEABLE: the split tier's
 *       settings for every dtype of that op (xpar_context_set_split; FROM as
 *       a threshold, 0 < SHARE < 1; e.g. XPAR_REDUCE_SPLIT_PINNED=2^26,0.33).
 *   XPAR_KERNEL_<NAME>_<KIND>_THRESHOLD: one application kernel's or
 *       operator's threshold (xpar/xpar_kernel.h), read when the context
 *       first meets it.
 *   OMP_NUM_THREADS is honoured by the OpenMP tier (through the runtime).
 * @endcode
 * An invalid value makes creation fail with XPAR_ERR_INVALID_ENV and a
 * detail naming the variable and value; it is never silently replaced.
 * Creating a context does not initialise CUDA; the GPU is probed on the first
 * call that would run there.
 *
 * @param[out] out  the new context (set to NULL on failure)
 * @return XPAR_OK, XPAR_ERR_NULL_POINTER, XPAR_ERR_INVALID_ENV,
 *         XPAR_ERR_PROFILE (a corrupt or missing profile, see below),
 *         XPAR_ERR_IO (the profile cannot be read), XPAR_ERR_OUT_OF_MEMORY
 */
XPAR_API xpar_status xpar_context_create(xpar_context **out);

/**
 * Destroy a context, releasing its GPU scratch, staging and mappings (the
 * device copies of mapped arrays are released without copying back).  Waits
 * for the context's outstanding GPU work first.  NULL is a no-op (XPAR_OK).
 */
XPAR_API xpar_status xpar_context_destroy(xpar_context *ctx);

/** Set the backend policy (overrides XPAR_BACKEND). */
XPAR_API xpar_status xpar_context_set_backend(xpar_context *ctx, xpar_backend backend);
/** Get the backend policy, in *out. */
XPAR_API xpar_status xpar_context_get_backend(const xpar_context *ctx, xpar_backend *out);

/** Set the offload policy (overrides XPAR_OFFLOAD). */
XPAR_API xpar_status xpar_context_set_offload(xpar_context *ctx, xpar_offload offload);
/** Get the offload policy, in *out. */
XPAR_API xpar_status xpar_context_get_offload(const xpar_context *ctx, xpar_offload *out);

/**
 * Set one crossover threshold for one op and dtype (overrides the
 * built-in default, the calibration profile and the environment).  n is an
 * element count; XPAR_NEVER disables the switch.
 */
XPAR_API xpar_status xpar_context_set_threshold(xpar_context *ctx, xpar_op op, xpar_dtype dtype,
                                                xpar_threshold which, size_t n);
/** Get one crossover threshold for one op and dtype, in *out, whatever set it. */
XPAR_API xpar_status xpar_context_get_threshold(const xpar_context *ctx, xpar_op op,
                                                xpar_dtype dtype, xpar_threshold which,
                                                size_t *out);

/** Host memory a split call's arrays live in (xpar_context_set_split). */
typedef enum xpar_split_memory {
  XPAR_SPLIT_PINNED = 0,   /**< every array pinned (or registered) host memory */
  XPAR_SPLIT_PAGEABLE = 1, /**< some array pageable host memory                */
  XPAR_SPLIT_MEMORY_COUNT_ /**< the number of kinds                           */
} xpar_split_memory;

/**
 * The split tier (XPAR_BACKEND_CPU_CUDA, and AUTO where it pays): one call on
 * host data runs on both sides at once.  Elements [0, m) go to the OpenMP
 * tier, [m, n) to the GPU, which copies its part over PCIe (pageable data
 * through the context's pinned staging), computes it and copies its outputs
 * back while the CPU threads compute theirs; the partial results are
 * combined (a scan's GPU part starts from the CPU part's total; a histogram's
 * counts are the two parts' counts added; the segmented ops split at a segment
 * boundary, each segment computed wholly on one side).
 *
 * For each op, dtype and host memory kind the context keeps two values:
 *  - `from`: AUTO splits a call on host data with n >= from (XPAR_NEVER:
 *    never; the built-in value until xpar-bench calibrate measures it);
 *  - `gpu_share` (0 < share < 1): the GPU's share of the elements, from the
 *    two sides' measured rates on that memory (r_gpu / (r_cpu + r_gpu)); m
 *    is n * (1 - share) rounded to 8,192 elements.
 * The split covers reduce, the wide sum, dot, axpy, add, fill, scan, the
 * histogram (XPAR_OP_HISTOGRAM: split by samples) and the segmented reduce,
 * scan and argmin / argmax (XPAR_OP_SEGMENTED: split at a segment boundary,
 * host offsets checked on the host first); the other ops refuse
 * XPAR_ERR_INVALID_ARGUMENT here (they have no split).
 *
 * Results are what a single tier gives: integers and min/max exact, float
 * sums within the documented bound, in reproducible mode the same bits as
 * every tier (the split then falls where the specification's block tree
 * halves, docs/reproducible.md: the share is ignored).
 * Out of GPU memory before anything is written: AUTO runs the call on the
 * CPU, forced CPU_CUDA fails with nothing written.  A GPU failure found when
 * the GPU part is waited for: AUTO computes the GPU part on the CPU (the
 * output is complete); forced CPU_CUDA returns the error, and the CPU part of
 * an output array may already be written (a histogram's counts are not).
 */
XPAR_API xpar_status xpar_context_set_split(xpar_context *ctx, xpar_op op, xpar_dtype dtype,
                                            xpar_split_memory memory, size_t from,
                                            double gpu_share);
/** A split setting of ctx (xpar_context_set_split); either output may be
 *  NULL, not both. */
XPAR_API xpar_status xpar_context_get_split(const xpar_context *ctx, xpar_op op,
                                            xpar_dtype dtype, xpar_split_memory memory,
                                            size_t *from, double *gpu_share);

/** OpenMP threads for this context's OpenMP tier; 0 = the runtime's default
 *  (OMP_NUM_THREADS or the core count).  Any count >= 0 is accepted; a
 *  region opens at most 256 (the built-in ops' partials live on the stack,
 *  and application kernels and operators get the same cap). */
XPAR_API xpar_status xpar_context_set_num_threads(xpar_context *ctx, int num_threads);

/** Log every decision of this context to stderr (as XPAR_VERBOSE=1). */
XPAR_API xpar_status xpar_context_set_verbose(xpar_context *ctx, int verbose);

/**
 * Reproducible mode (overrides XPAR_REPRODUCIBLE): with `on` non-zero, float
 * and double xpar_reduce(SUM), xpar_reduce_sum_wide, xpar_dot and SUM scans
 * (xpar_scan, xpar_scan_init, inclusive and exclusive, and their nowait
 * variants) add in one specified order -- fixed blocks of 8192 elements by
 * index, 1024 lanes of 8 per block folded in halves, an aligned pairwise tree
 * over the blocks, and for scans carries and quad seeds from aligned trees
 * (docs/reproducible.md states every formula).  The result is the same bits
 * on cpu-serial, cpu-openmp with any thread count, cuda with any launch shape
 * and cuda-serial, whatever AUTO chooses, for any alignment of the arrays, on
 * every run.  No multiply is fused with an add (dot: each product is rounded
 * to the element type, then summed).  Error bound (u = 2^-24 for float,
 * 2^-53 for double, nb = ceil(n / 8192), h as below):
 * @code{.unparsed}
 *   sum, wide sum, dot: |result - exact| <= h u / (1 - h u) * sum |term_i|,
 *       h = 19 + ceil(log2 nb)          (dot: terms are the exact products)
 *   scan, element i:  |out_i - exact_i| <= h u / (1 - h u) *
 *       (|init| + sum_{j <= i} |x_j|),  h = 34 + 2 ceil(log2 nb)
 * @endcode
 * (the default mode's bounds grow with n / threads instead of log n).
 * NaN results are NaN everywhere, but their payload bits may differ between
 * the CPU and the GPU.  Integer ops, min and max are exact already and unchanged.
 * Speed: docs/reproducible.md has the measured ratios.
 */
XPAR_API xpar_status xpar_context_set_reproducible(xpar_context *ctx, int on);
/** Whether reproducible mode is on (1) or off (0), in *out. */
XPAR_API xpar_status xpar_context_get_reproducible(const xpar_context *ctx, int *out);

/**
 * Adaptation (overrides XPAR_ADAPT; on by default): AUTO times a share of the
 * calls it may move -- those its thresholds send to the OpenMP tier or the
 * GPU -- per op or kernel, dtype, where the data lives and power of two of n.
 * When the chosen tier runs far slower than the next best one (OpenMP -> one
 * thread; the GPU -> the CPU tier, data valid only on the device copied as for
 * a tiny call), as on a machine whose cores or GPU other work keeps busy, the
 * next best tier runs; the displaced tier is retried now and then (a bounded
 * share of the time) and takes the calls back when it is fast again.  The
 * decision record says so ("adapted: cpu-openmp measured 9.8 ms against 7 us
 * for cpu-serial; cpu-serial chosen").  With `on` zero every call runs where
 * the thresholds say, as they say (the static choice).
 *
 * Forced backends (xpar_context_set_backend other than AUTO), mandatory
 * offload and queued (nowait) calls are never moved, and disabled offload
 * still keeps every call off the GPU.
 *
 * Results: integers, min, max, axpy, add and fill are the same bits on every
 * tier.  Float and double sums, dots and sum scans outside reproducible mode
 * depend on the tier (its order of additions), and with adaptation on the tier
 * of a call can change from one run to the next, or within a run, with the
 * machine's load: each result stays within the bounds the tiers document, but
 * two runs need not agree bit for bit.  Reproducible mode is unaffected: every
 * tier gives the same bits there (xpar_context_set_reproducible), whichever
 * adaptation picks.
 */
XPAR_API xpar_status xpar_context_set_adapt(xpar_context *ctx, int on);
/** Whether adaptation is on (1) or off (0), in *out. */
XPAR_API xpar_status xpar_context_get_adapt(const xpar_context *ctx, int *out);

/**
 * Shadow mode (overrides XPAR_SHADOW and XPAR_SHADOW_FAIL): every built-in
 * operation of this header also runs on `tier` (XPAR_TIER_NONE turns shadow
 * mode off; xpar_launch's kernels and xpar_reduce_op's operators run once:
 * xpar cannot know which of their results should agree how), on copies of its
 * inputs taken before the call and into buffers of its own, and the two
 * results are compared: integers, min and max, axpy, add and fill bit for
 * bit; float sums, dots and sum scans bit for bit in reproducible mode, else
 * within 2 gamma_n (sum of |terms|) (per element, for scans), gamma_n =
 * n u / (1 - n u); where the sum of |terms| exceeds the type's largest
 * value, partial sums may overflow in one order and not another
 * (xpar_scan_init), and a non-finite result on either side is a match.  The
 * application gets the primary tier's result, and its
 * data stays valid exactly where the primary call left it (the shadow reads
 * device data by copying, never by moving a mapping).  A mismatch is recorded
 * in the decision record (shadow_mismatch, and the reason text), printed to
 * stderr with the first differing index and both values, and, with
 * `fail_on_mismatch`, returned as XPAR_ERR_SHADOW_MISMATCH -- a status whose
 * outputs HAVE been written (the primary's result).  nowait calls complete
 * before they return in shadow mode.  A shadow that cannot run (cuda
 * without a usable GPU; no memory for its copies, or a failure of its own) is
 * noted in the decision record ("shadow <tier>: not run (why)"); the call
 * succeeds with the primary's result.  The scalars a call reads (axpy's
 * alpha, fill's value, a scan's init) are also taken before the call, so one
 * inside the call's own output is no mismatch.
 * Off, shadow mode costs one branch per call.
 * @return XPAR_OK, XPAR_ERR_NULL_CONTEXT, XPAR_ERR_INVALID_ENUM (tier)
 */
XPAR_API xpar_status xpar_context_set_shadow(xpar_context *ctx, xpar_tier tier,
                                             int fail_on_mismatch);
/** The context's shadow tier (XPAR_TIER_NONE: off) in *tier and, unless
 *  fail_on_mismatch is NULL, whether a mismatch fails the call in
 *  *fail_on_mismatch.
 *  @return XPAR_OK, XPAR_ERR_NULL_CONTEXT, XPAR_ERR_NULL_POINTER (tier NULL) */
XPAR_API xpar_status xpar_context_get_shadow(const xpar_context *ctx, xpar_tier *tier,
                                             int *fail_on_mismatch);

/**
 * Choose the CUDA device (an ordinal as CUDA numbers them after
 * CUDA_VISIBLE_DEVICES).  Only allowed while the context has no mappings;
 * releases the context's GPU scratch.
 *
 * Several GPUs in one process: a context runs on its device's primary
 * context whatever device or driver context the calling thread has current,
 * and every call returns with the thread's current device and context as it
 * found them (the application's next cudaMalloc lands where it expects; a
 * thread already on the context's device pays nothing for this, another a
 * context switch there and back per call that reaches the GPU).  xpar
 * switches through the driver alone (the device's primary context, retained
 * once per process, made current with cuCtxSetCurrent) and never calls
 * cudaSetDevice on a call's path, so the runtime's own per-thread device --
 * which a thread with no context current binds on its next runtime call --
 * stays what the application set (device 0 on a fresh thread).  Device
 * memory must be the context's device's, or memory the driver says that
 * device reaches (a peer's cudaMalloc memory after cudaDeviceEnablePeerAccess;
 * a cudaMallocAsync pool's needs cudaMemPoolSetAccess): another device's
 * memory is XPAR_ERR_INVALID_ARGUMENT naming both devices, nothing written --
 * a kernel's load from it would fault and end the process's CUDA context.
 * Device memory of a driver context the application created (cuCtxCreate)
 * on the context's device (cudaMalloc'd while such a context is current,
 * too) is used like any device memory: the primary context reaches it
 * (measured, docs/cuda-applications.md).  Host, pinned and managed memory
 * serve any device.  A context
 * whose stream (xpar_context_set_stream) belongs to another device cannot
 * be: setting such a stream, or moving the context away from its stream's
 * device, is XPAR_ERR_INVALID_ARGUMENT (the legacy and per-thread handles
 * follow the context's device).
 */
XPAR_API xpar_status xpar_context_set_device(xpar_context *ctx, int device);

/**
 * Run this context's GPU work on the application's CUDA stream (a
 * cudaStream_t passed as void *); NULL returns to the context's own stream.
 * The application keeps ownership of its stream, which must belong to the
 * context's device (XPAR_ERR_INVALID_ARGUMENT otherwise, where the driver can
 * say: CUDA 12.8 drivers and up; see xpar_context_set_device).
 *
 * Stream order (the one rule, for synchronous and nowait calls alike):
 *  - Without a stream set, a context queues its GPU work on a stream of its
 *    own that synchronises with the legacy default stream (stream 0), as CUB,
 *    Thrust and cudaMemcpy do on stream 0: a call sees everything the
 *    application queued on stream 0 before it, and whatever the application
 *    queues on stream 0 afterwards sees the call's outputs (for a nowait call
 *    too: stream-0 work queued after it waits for it).  Contexts of different
 *    threads do not wait for each other.
 *  - Work on other streams is not ordered with xpar's: the application
 *    synchronises it (cudaStreamSynchronize, an event) before the call, or
 *    sets its stream here, and xpar's work is then ordered in that stream.
 *  - An application built with --default-stream per-thread (or that uses
 *    cudaStreamPerThread) passes cudaStreamPerThread here: its "stream 0" is
 *    then a per-thread stream that the legacy default stream does not order.
 *    cudaStreamLegacy is accepted too.
 * Host data that xpar copies, and host results, are complete when a
 * synchronous call returns, whatever the stream.  A synchronous GPU call of
 * moderate size returns when its kernel has stored its last result, which it
 * signals through pinned memory, rather than when the stream is idle: every
 * output is then visible to the host and to work on any stream, but
 * cudaStreamQuery on the stream may still report the kernel's retirement for
 * a few microseconds.
 * The rule orders GPU work, xpar's copies from host memory included.  A call
 * that runs on the CPU (AUTO below its thresholds, a forced CPU backend)
 * reads and writes host memory -- pageable, pinned, managed, a mapping's host
 * copy -- when it is made, as the application's own host code would: GPU
 * work that writes such memory (an async copy into a pinned buffer, a kernel
 * writing managed memory) must be complete before the call
 * (cudaStreamSynchronize, cudaEventSynchronize), since AUTO may run it on
 * either side.
 *
 * CUDA graphs: while the stream is capturing (cudaStreamBeginCapture), every
 * nowait call that runs on the GPU with its outputs on the device is captured
 * -- axpy, add, fill, reduce, dot, scans, reproducible sums and scans,
 * operator reduces and scans (xpar_kernel.h), xpar_launch kernels -- and each
 * replay of the graph runs it again on the arrays as they are then.  The
 * calls that keep scratch in the context between calls (reduce partials and
 * tickets, scan tile status and counters) take it, captured, from the
 * stream-ordered allocator inside the graph (cudaMallocAsync, zeroed there
 * where the kernels need it: each replay its own, none of it the context's;
 * a device without that allocator refuses the calls that need such scratch
 * with XPAR_ERR_NOT_SUPPORTED before anything is queued), so the graph holds
 * memory allocation, memset and free nodes, under CUDA's rules for those (for
 * one, cudaGraphAddChildGraphNode will not clone such a graph; the blocks keep
 * their addresses from replay to replay and are zeroed at each).  Captured,
 * they leave nothing queued for xpar_wait or later calls to wait for.  A
 * mapped array (xpar_map) is used through its device copy, which must be
 * current when the call is captured; the context marks that copy as the
 * newer one when the call is captured, so read a replay's results with
 * xpar_update(FROM_DEVICE).  A nowait GPU call with an array or result in
 * pageable or pinned host memory (it would go through the context's staging
 * memory, which later calls reuse) or a mapped input whose device copy is
 * stale (its copy would run again at every replay), and a forced CPU
 * backend's nowait call on device data (copies; AUTO keeps a nowait call on
 * device data on the GPU), return XPAR_ERR_NOT_SUPPORTED before anything is
 * queued or written, and the capture stays valid; so does a synchronous scan
 * or reduce that must first set up the context's scratch (its first, or a
 * scan of more tiles than any before), with work the capture would record
 * instead of running.  Any other synchronous call that
 * touches the GPU, and a call that must first wait for nowait work queued
 * before the capture began (xpar_wait it before beginning), need a wait that
 * a capture cannot hold: the runtime refuses it and ends the capture with an
 * error, as it does any synchronisation inside a capture, and the call
 * returns XPAR_ERR_NOT_SUPPORTED with nothing written.  Calls that run on the
 * CPU on host data do not touch the stream and run as usual.
 */
XPAR_API xpar_status xpar_context_set_stream(xpar_context *ctx, void *cuda_stream);

/**
 * Debugging and testing: launch GPU kernels with this grid and block size
 * (0 = xpar's choice).  Kernels are grid-stride loops, correct at any shape;
 * the cuda-serial backend is grid = block = 1.  A grid larger than a call's
 * work needs (one block per block-sized tile of elements) is clamped to it.
 */
XPAR_API xpar_status xpar_context_set_launch_shape(xpar_context *ctx, unsigned grid,
                                                   unsigned block);

/**
 * Release the memory this context keeps between calls, after waiting for its
 * queued GPU work: the GPU staging buffers that hold host operands of GPU
 * calls, the kernels' scratch (reduce partials, scan look-back state) and the
 * host copies of device operands that ran on the CPU.  Mappings stay.
 *
 * Growth rule: each of these buffers grows to 1.5 times the largest call that
 * needed it (a forced-GPU call on 2^30 host doubles keeps 2 x 8 GiB of
 * staging) and is kept for the next call, until this function or
 * xpar_context_destroy().  When a GPU allocation fails, xpar first frees the
 * cached buffers that the call in progress does not use and retries once
 * before reporting XPAR_ERR_DEVICE_OUT_OF_MEMORY (on which AUTO runs the call
 * on the CPU).  A context that never ran on the GPU releases host memory only.
 */
XPAR_API xpar_status xpar_context_release_memory(xpar_context *ctx);

/** @} */

/* ------------------------------------------------------------------------ */
/* Calibration profiles                                                      */
/* ------------------------------------------------------------------------ */
/**
 * @defgroup profile Calibration profiles
 * A profile is a plain-text file of thresholds measured on one machine by
 * `xpar-bench calibrate` (format: docs/profile.md).  It is keyed by the CPU
 * model, the number of online cores and the GPU name ("none" without one).
 * xpar_context_create() loads the profile at XPAR_PROFILE, or else at the
 * default path ($XDG_CACHE_HOME/xpar/profile.txt, or
 * ~/.cache/xpar/profile.txt) when that file exists.  A profile from another
 * machine is ignored with a notice on stderr; a corrupt one makes creation
 * fail with XPAR_ERR_PROFILE and a detail naming the file and line.  A file
 * named by XPAR_PROFILE that does not exist yet is accepted when its
 * directory exists (the built-in thresholds apply, and one notice per process
 * on stderr names the file: that is where `xpar-bench calibrate` writes);
 * when the directory does not exist either, creation fails with
 * XPAR_ERR_PROFILE.  Precedence at creation, lowest first: built-in
 * defaults, profile, environment.  Afterwards xpar_context_set_threshold() and
 * xpar_profile_load() each replace the values they name, whatever set them
 * (the later call wins), and leave the others as they are.
 * @{
 */

/**
 * Write a profile for this machine at `path` (parent directories are
 * created; the file is replaced whole, never left half written).  It holds
 * ctx's thresholds that were set with xpar_context_set_threshold() or loaded
 * from a profile, and a "written:" line (UTC time, program, xpar version).
 * Built-in defaults are left out, so that a context loading the profile keeps
 * its own; so are values from `XPAR_<OP>_<KIND>_THRESHOLD`, which override any
 * profile at every context creation anyway.
 */
XPAR_API xpar_status xpar_profile_save(xpar_context *ctx, const char *path);

/**
 * Apply the profile at `path` to ctx: each threshold it names replaces ctx's,
 * whether that came from a default, the environment or the API; those it
 * does not name keep their values.  With
 * *applied set to 0 and XPAR_OK when the profile belongs to another machine;
 * applied may be NULL.  A missing file is XPAR_ERR_PROFILE here: only
 * XPAR_PROFILE may name a profile still to be written.
 */
XPAR_API xpar_status xpar_profile_load(xpar_context *ctx, const char *path, int *applied);

/** The default profile path for this user (see above), written to buf with
 *  its terminating NUL; XPAR_ERR_IO when no home or cache directory is
 *  known, XPAR_ERR_NULL_POINTER for a NULL buf, XPAR_ERR_INVALID_ARGUMENT
 *  when size is too small for the path (the detail says how many bytes it
 *  needs); nothing is written on error. */
XPAR_API xpar_status xpar_profile_default_path(char *buf, size_t size);

/** @} */

/* ------------------------------------------------------------------------ */
/* Introspection                                                             */
/* ------------------------------------------------------------------------ */
/**
 * @defgroup introspection Introspection
 * Which tier ran the last call and why; whether a GPU is usable.
 * @{
 */

/** What happened in the last call on a context. */
typedef struct xpar_decision {
  xpar_op op;                /**< the operation                               */
  xpar_dtype dtype;          /**< its element type                            */
  size_t n;                  /**< its element count                           */
  xpar_tier tier;            /**< the tier that ran it (XPAR_TIER_NONE: none) */
  size_t bytes_to_device;    /**< transfers the call made: to the device      */
  size_t bytes_to_host;      /**< transfers the call made: to the host        */
  char reason[256];          /**< why, for example "n=1000 below openmp threshold 16384
                                (default)"; each threshold quoted is followed
                                by where it came from: default, profile, env
                                or api; "; adapted: ..." when AUTO moved
                                the call (xpar_context_set_adapt);
                                "; reproducible mode" and
                                "; shadow <tier>: match|MISMATCH ..." follow
                                when those modes are on, then where the quoted
                                built-in defaults were measured ("; default
                                (H100 host, 2026-11-25)").  A record that
                                would not fit shortens the texts it quotes
                                (a GPU's or the shadow tier's message),
                                marked "[...]", before it drops that origin;
                                its rules and thresholds always stand whole */
  int reproducible;          /**< reproducible mode was on for this call        */
  xpar_tier shadow_tier;     /**< shadow mode's tier (XPAR_TIER_NONE: off)      */
  int shadow_mismatch;       /**< 1: the shadow tier's result differed          */
  const char *kernel;        /**< op XPAR_OP_KERNEL: the kernel's or operator's
                                name (static storage of its object; dtype is
                                then the first array argument's, INT32 for
                                an operator); else NULL                       */
  double split_gpu_share;    /**< tier CPU_CUDA: the share of the n elements
                                the GPU ran (the last ones); else 0          */
} xpar_decision;

/** The decision record of the context's last call. */
XPAR_API xpar_status xpar_last_decision(const xpar_context *ctx, xpar_decision *out);

/** What xpar_device_query() finds. */
typedef struct xpar_device_info {
  int usable;          /**< 1 if xpar can run on the GPU                        */
  int built_with_cuda; /**< 1 if this library contains the CUDA backend         */
  int device_count;    /**< devices visible (after CUDA_VISIBLE_DEVICES)        */
  int device;          /**< ordinal described below (-1 if none)                */
  char name[128];      /**< its name, such as "NVIDIA H100 80GB HBM3"           */
  int compute_major;   /**< compute capability, major                           */
  int compute_minor;   /**< compute capability, minor                           */
  int multiprocessors; /**< streaming multiprocessors                           */
  size_t total_memory; /**< device memory, bytes                                */
  char reason[192];    /**< why not usable: "built without CUDA", "no CUDA
                          driver (cudaErrorInsufficientDriver)", "no device",
                          "no code for sm_80 in this binary (built for 90)" */
} xpar_device_info;

/**
 * Whether a GPU is usable and, if not, why.  Describes XPAR_DEVICE (or device
 * 0).  Never fails for a missing GPU or driver: that is reported in the
 * struct with XPAR_OK.
 */
XPAR_API xpar_status xpar_device_query(xpar_device_info *out);

/** @} */

/* ------------------------------------------------------------------------ */
/* Operations (synchronous: results are complete when the call returns)      */
/* ------------------------------------------------------------------------ */
/**
 * @defgroup ops Operations
 * Synchronous: results are complete when the call returns.
 *
 * A scalar result (reduce, reduce_sum_wide, dot, xpar_reduce_op) is a host
 * variable, or one in device memory (cudaMalloc, aligned to its type: else
 * XPAR_ERR_INVALID_ARGUMENT, nothing written), which the call writes on the
 * device before it returns, whichever tier ran it.  With offload disabled
 * (XPAR_OFFLOAD_DISABLED) every pointer is taken for host memory, results too.
 * @{
 */

/**
 * Reduce n elements of dtype with SUM, MIN or MAX into *result (a scalar
 * of dtype, host or device memory).  Min of nothing is the type's largest value (+infinity
 * for floats), max of nothing the smallest (-infinity); sum of nothing is 0.
 * Min/max of floats ignore NaN only as fmin/fmax do not: a NaN input gives an
 * unspecified choice between NaN and a number, as in CUB.
 */
XPAR_API xpar_status xpar_reduce(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                 const void *in, size_t n, void *result);

/**
 * Sum into a wider accumulator: int32 -> int64, uint32 -> uint64,
 * float -> double; 64-bit types sum in their own type.  *result has the
 * accumulator type.  Integer sums cannot overflow for n < 2^32.
 */
XPAR_API xpar_status xpar_reduce_sum_wide(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                          size_t n, void *result);

/**
 * Inclusive or exclusive scan with SUM, MIN or MAX.  out == in (in place) is
 * allowed; any other overlap of the two ranges is XPAR_ERR_OVERLAP.  The
 * exclusive scan's out[0] is the identity (0, the type's largest value for
 * MIN, its smallest for MAX).
 */
XPAR_API xpar_status xpar_scan(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                               xpar_scan_kind kind, const void *in, void *out, size_t n);

/**
 * Scan with an initial value (a carry-in), as CUB's ExclusiveScan / InclusiveScanInit.
 * @code{.unparsed}
 * inclusive: out[i] = init op in[0] op ... op in[i]
 * exclusive: out[0] = init, out[i] = init op in[0] op ... op in[i-1]
 * @endcode
 * *init is a host scalar of dtype (may be NULL only when n = 0; in device memory:
 * XPAR_ERR_INVALID_ARGUMENT, nothing written).  Everything else as
 * xpar_scan (in place allowed, other overlap refused, statuses, tiers, nowait rules).
 * This is the local step of a distributed scan: each rank reduces its part, the
 * ranks exchange one scalar each, and each scans its part from the fold of the
 * ranks before it.  xpar_scan is this call with init = the identity.  The serial
 * backends (XPAR_BACKEND_CPU_SERIAL, XPAR_BACKEND_CUDA_SERIAL) run
 * `acc = init; acc = acc op in[i]` in element order (they agree bit for bit);
 * the other tiers fold init into the carry of their first block, so float sums
 * round as xpar_scan's do, no more.  Those tiers regroup float and double sums
 * (AUTO's one-thread tier too: each output is the carry plus its prefix within
 * a group of 4-8 elements on the CPU, a block on the GPU), so their rounding
 * differs from the element-order loop's within the same error bound (where
 * partial sums overflow, a grouping may give a finite value or NaN where the
 * element order gives inf, and the other way round).
 */
XPAR_API xpar_status xpar_scan_init(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                    xpar_scan_kind kind, const void *init, const void *in,
                                    void *out, size_t n);

/** y[i] = alpha * x[i] + y[i]; *alpha is a host scalar of dtype (in device memory:
 *  XPAR_ERR_INVALID_ARGUMENT, nothing written).  x == y is
 *  allowed; any other overlap is XPAR_ERR_OVERLAP. */
XPAR_API xpar_status xpar_axpy(xpar_context *ctx, xpar_dtype dtype, const void *alpha,
                               const void *x, void *y, size_t n);

/** z[i] = x[i] + y[i].  z may equal x or y; other overlaps are refused. */
XPAR_API xpar_status xpar_add(xpar_context *ctx, xpar_dtype dtype, const void *x,
                              const void *y, void *z, size_t n);

/** out[i] = *value (a host scalar of dtype; in device memory:
 *  XPAR_ERR_INVALID_ARGUMENT, nothing written). */
XPAR_API xpar_status xpar_fill(xpar_context *ctx, xpar_dtype dtype, const void *value,
                               void *out, size_t n);

/** *result = sum of x[i] * y[i] (a scalar of dtype, host or device memory). */
XPAR_API xpar_status xpar_dot(xpar_context *ctx, xpar_dtype dtype, const void *x,
                              const void *y, size_t n, void *result);

/**
 * Sort n keys of dtype into out, stably (equal keys keep their input order),
 * ascending or descending.  out == in sorts in place; any other overlap is
 * XPAR_ERR_OVERLAP.  n is 64-bit: up to what memory allows.
 *
 * The order, the same on every tier (so every tier gives the same bits):
 * integers numerically; floats numerically, with -0.0 and +0.0 equal (kept in
 * input order, as NumPy and CUB), and every NaN, whatever its sign or payload,
 * equal to every other and after +inf ascending, before it descending (as
 * NumPy and PyTorch).  Keys are moved, never rewritten: -0.0 stays -0.0 and a
 * NaN keeps its bits.
 *
 * Extra memory, kept by the context between calls (xpar_context_release_memory
 * frees it): n keys for xpar_sort, n keys and n values for xpar_sort_pairs, 2n
 * keys and n indices for xpar_argsort; on the CPU in host memory plus up to
 * about 64 KiB of digit counts and write-combining lines per thread; on the
 * GPU in device memory plus 2 KiB per tile of 5,760 - 8,448 keys (about 0.3
 * bytes per key), and the staging of host arrays that every GPU call has.  Sizes up to 4,096 keys sort on the GPU in
 * one block with no extra memory.  Out of memory: AUTO runs the call on the
 * CPU instead; a forced tier fails with nothing written.
 */
XPAR_API xpar_status xpar_sort(xpar_context *ctx, xpar_dtype dtype, xpar_sort_order order,
                               const void *in, void *out, size_t n);

/**
 * Sort n keys and carry n values with them (a stable sort by key): values_out[i]
 * is the value that came with keys_out[i].  Keys and values may be of any two
 * dtypes.  keys_out == keys_in and values_out == values_in (in place) are
 * allowed; any other overlap among the four arrays is XPAR_ERR_OVERLAP.
 * Everything else as xpar_sort.
 */
XPAR_API xpar_status xpar_sort_pairs(xpar_context *ctx, xpar_dtype key_dtype,
                                     xpar_dtype value_dtype, xpar_sort_order order,
                                     const void *keys_in, const void *values_in, void *keys_out,
                                     void *values_out, size_t n);

/**
 * The stable sorting permutation of n keys: indices[i] is the input position
 * of the i-th key in order, as NumPy's stable argsort; the keys are not
 * written.  index_dtype is XPAR_INT32 (for n up to INT32_MAX; more keys are
 * XPAR_ERR_INVALID_ARGUMENT) or XPAR_INT64.  indices must not overlap in:
 * XPAR_ERR_OVERLAP.  Everything else as xpar_sort.
 */
XPAR_API xpar_status xpar_argsort(xpar_context *ctx, xpar_dtype dtype, xpar_dtype index_dtype,
                                  xpar_sort_order order, const void *in, void *indices,
                                  size_t n);

/**
 * Keep the elements of in that satisfy the predicate, in input order: they are
 * out[0 .. *count), and *count their number (a host variable of 8 bytes; the
 * nowait variant's may be device memory).  out beyond *count is not written.
 * *value (and *hi for XPAR_IN_RANGE; else hi may be NULL) are host scalars of
 * dtype.  out == in (in place) is allowed; any other overlap is
 * XPAR_ERR_OVERLAP.
 */
XPAR_API xpar_status xpar_select(xpar_context *ctx, xpar_dtype dtype, xpar_predicate pred,
                                 const void *value, const void *hi, const void *in, void *out,
                                 size_t n, size_t *count);

/** Keep in[i] where flags[i] (one byte each) is not 0; otherwise as
 *  xpar_select.  flags must not overlap out. */
XPAR_API xpar_status xpar_select_flagged(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                         const unsigned char *flags, void *out, size_t n,
                                         size_t *count);

/** Stable partition: the elements that satisfy the predicate first, then the
 *  others, each group in input order (CUB's DevicePartition writes the others
 *  reversed; xpar does not).  All n outputs are written; *count is the number
 *  selected.  out must not overlap in (no in place). */
XPAR_API xpar_status xpar_partition(xpar_context *ctx, xpar_dtype dtype, xpar_predicate pred,
                                    const void *value, const void *hi, const void *in,
                                    void *out, size_t n, size_t *count);

/** Drop consecutive duplicates: out[0 .. *count) is the first element of each
 *  run of equal consecutive elements.  Float equality is the sort's (xpar_sort):
 *  negative and positive zero are equal and every NaN equals every other NaN,
 *  so a sort followed by xpar_unique gives the distinct values, as
 *  numpy.unique.  out == in allowed. */
XPAR_API xpar_status xpar_unique(xpar_context *ctx, xpar_dtype dtype, const void *in, void *out,
                                 size_t n, size_t *count);

/**
 * Run-length encode: for each run of equal consecutive elements of in (run r),
 * values_out[r] is its first element and lengths_out[r] its length (64-bit
 * counts, as NumPy's); *num_runs is the number of runs (a host variable of 8
 * bytes; the nowait variant's may be device memory).  Equality is xpar_unique's:
 * for floats -0.0 == +0.0 and every NaN equals every other NaN (a run of
 * zeros of both signs, or of NaNs of any payload, is one run; its first
 * element is written with its own bits).  values_out and lengths_out beyond
 * *num_runs are not written.  The three arrays must not overlap
 * (XPAR_ERR_OVERLAP): no in place.  Op XPAR_OP_RUNS (its thresholds are keyed by
 * in's dtype).
 */
XPAR_API xpar_status xpar_run_length_encode(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                            size_t n, void *values_out, uint64_t *lengths_out,
                                            size_t *num_runs);

/**
 * Reduce by key: for each run of equal consecutive keys (run r, equality as
 * xpar_run_length_encode), keys_out[r] is its first key and values_out[r] the
 * SUM, MIN or MAX of its values, in value_dtype; *num_runs is the number of
 * runs.  Keys and values may be of any two dtypes.  Integer sums wrap modulo
 * 2^bits; float min and max are xpar_reduce's (a NaN value gives an unspecified
 * choice between NaN and a number).  Float sums add each run's values in the
 * tier's order, within the bound of xpar_reduce over that run's values
 * (2 gamma_len sum |v| apart between tiers).  In reproducible mode
 * (xpar_context_set_reproducible) each run's float or double SUM is, bit for
 * bit, what reproducible xpar_reduce(SUM) gives on that run's values as an
 * array of its own (its blocks, lanes and tree counted from the run's first
 * element: docs/reproducible.md), on every tier and thread count.  No two of
 * the four arrays may overlap (XPAR_ERR_OVERLAP): no in place.  Outputs beyond
 * *num_runs are not written.
 */
XPAR_API xpar_status xpar_reduce_by_key(xpar_context *ctx, xpar_dtype key_dtype,
                                        xpar_dtype value_dtype, xpar_reduction op,
                                        const void *keys_in, const void *values_in, size_t n,
                                        void *keys_out, void *values_out, size_t *num_runs);

/**
 * @name Argmin / argmax and segmented reduce and scan (docs/segmented.md)
 * @{
 */

/**
 * The smallest element of in[0 .. n) and the first index where it occurs, as
 * numpy.argmin: *value (one element of dtype) and *index.  Floats: a NaN is
 * smaller than everything (the first NaN wins, as NumPy); -0.0 and +0.0 are
 * equal (the first of them wins); *value is the element's own bits.  n = 0 is
 * XPAR_ERR_INVALID_ARGUMENT (NumPy raises): nothing is written.  value and
 * index must not overlap in or each other (XPAR_ERR_OVERLAP).
 */
XPAR_API xpar_status xpar_argmin(xpar_context *ctx, xpar_dtype dtype, const void *in, size_t n,
                                 void *value, int64_t *index);
/** The largest element and the first index of it (numpy.argmax); a NaN is
 *  larger than everything (the first NaN wins).  Otherwise as xpar_argmin. */
XPAR_API xpar_status xpar_argmax(xpar_context *ctx, xpar_dtype dtype, const void *in, size_t n,
                                 void *value, int64_t *index);

/**
 * A reduction per segment: out[s] = op over in[offsets[s] .. offsets[s + 1])
 * for s < n_segments (CSR row sums, per-group statistics).  offsets holds
 * n_segments + 1 values of offset_dtype (XPAR_INT32 or XPAR_INT64), non-
 * decreasing, offsets[0] >= 0 (it may be above 0) and offsets[n_segments] <= n,
 * the number of elements of in.  An empty segment gets the identity, as
 * xpar_reduce gives for n = 0 (0, the largest value for min, the lowest for
 * max; +-infinity for floats).  Accumulation, wrapping and NaN handling are
 * xpar_reduce's, per segment; the serial tiers sum each segment in element
 * order.  n_segments = 0 writes nothing (offsets is then not read and may be
 * NULL).
 *
 * Bad offsets (decreasing, negative, past n) are XPAR_ERR_INVALID_ARGUMENT
 * with the first bad position in the detail, and nothing is written.  Checking
 * costs one read of the offsets before the reduction (n_segments + 1 values);
 * on the GPU it runs on the device, beside the reduction (a nowait call's bad
 * offsets write nothing and are not reported: the call has returned).
 * Reproducible mode (xpar_context_set_reproducible): each segment's float or
 * double SUM is, bit for bit, what reproducible xpar_reduce(SUM) gives on that
 * segment's elements as an array of its own (docs/reproducible.md), an empty
 * segment +0, on every tier, thread count and launch shape; min, max and
 * integer sums are exact anyway.  out must not overlap in or offsets
 * (XPAR_ERR_OVERLAP).
 */
XPAR_API xpar_status xpar_segmented_reduce(xpar_context *ctx, xpar_dtype dtype,
                                           xpar_reduction op, const void *in, size_t n,
                                           const void *offsets, xpar_dtype offset_dtype,
                                           size_t n_segments, void *out);
/** Segments of segment_size elements each (the rows of a row-major matrix of
 *  n_segments rows): in holds segment_size * n_segments elements (an overflow
 *  of size_t is XPAR_ERR_SIZE_OVERFLOW).  segment_size = 0 gives every
 *  segment the identity.  Otherwise as xpar_segmented_reduce. */
XPAR_API xpar_status xpar_segmented_reduce_fixed(xpar_context *ctx, xpar_dtype dtype,
                                                 xpar_reduction op, const void *in,
                                                 size_t segment_size, size_t n_segments,
                                                 void *out);

/**
 * A scan per segment: for each segment [offsets[s], offsets[s + 1]) the
 * inclusive or exclusive scan of its elements, starting from the identity,
 * into the same positions of out (out[i] for every i inside a segment; out
 * outside [offsets[0], offsets[n_segments]) is not written).  out has n
 * elements; out == in (in place) is allowed, any other overlap is
 * XPAR_ERR_OVERLAP.  Offsets and refusals as xpar_segmented_reduce.
 * Reproducible mode: each segment's float or double SUM scan is, bit for bit,
 * what reproducible xpar_scan gives on that segment's elements as an array of
 * its own, on every tier; min, max and integer scans are exact anyway.
 */
XPAR_API xpar_status xpar_segmented_scan(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                         xpar_scan_kind kind, const void *in, void *out,
                                         size_t n, const void *offsets, xpar_dtype offset_dtype,
                                         size_t n_segments);
/** xpar_segmented_scan over segments of segment_size elements (in and out
 *  hold segment_size * n_segments elements). */
XPAR_API xpar_status xpar_segmented_scan_fixed(xpar_context *ctx, xpar_dtype dtype,
                                               xpar_reduction op, xpar_scan_kind kind,
                                               const void *in, void *out, size_t segment_size,
                                               size_t n_segments);
/**
 * argmin per segment: values[s] the smallest element of segment s and
 * indices[s] the first position of it, as an index into in (not into the
 * segment), with xpar_argmin's order (the first NaN wins).  An empty segment
 * gets index -1 and the identity of min as its value (+infinity, the largest
 * integer).  values and indices hold n_segments elements each and overlap
 * nothing.  Offsets, refusals as xpar_segmented_reduce.
 */
XPAR_API xpar_status xpar_segmented_argmin(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                           size_t n, const void *offsets,
                                           xpar_dtype offset_dtype, size_t n_segments,
                                           void *values, int64_t *indices);
/** argmax per segment (an empty segment: index -1, the identity of max:
 *  -infinity, the lowest integer).  Otherwise as xpar_segmented_argmin. */
XPAR_API xpar_status xpar_segmented_argmax(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                           size_t n, const void *offsets,
                                           xpar_dtype offset_dtype, size_t n_segments,
                                           void *values, int64_t *indices);
/** @} */
/** The most bins a histogram takes (2^31): counts are 8 bytes each, so the
 *  largest histogram's counts fill 16 GiB. */
#define XPAR_HISTOGRAM_MAX_BINS ((size_t)1 << 31)

/**
 * Count n samples of dtype into num_bins equal-width bins over [*lo, *hi):
 * counts[i] (64-bit) is the number of samples in bin i.  All num_bins counts
 * are written, zeros included.  Samples below lo, at or above hi, and NaN are
 * not counted.  *lo and *hi are host scalars of dtype (as xpar_select's value);
 * lo < hi, and for floats both finite.  1 <= num_bins <=
 * XPAR_HISTOGRAM_MAX_BINS.  counts (8-byte aligned) must not overlap samples.
 * With n = 0 no sample is read and lo and hi may be NULL (given, they are
 * checked); counts is zeroed.
 *
 * The bin of a counted sample x, the same on every tier:
 *  - integers: floor((x - lo) * num_bins / (hi - lo)), exact: x - lo and
 *    hi - lo as unsigned 64-bit differences, their product with num_bins in
 *    128 bits, so ranges that overflow the dtype (INT64_MIN .. INT64_MAX) are
 *    exact too;
 *  - floats, in double (a float converts exactly) with IEEE round-to-nearest
 *    and no fused multiply-add: t = ((x - lo) / (hi - lo)) * num_bins, or,
 *    where hi - lo overflows (doubles only), t = ((x * 0.5 - lo * 0.5) /
 *    (hi * 0.5 - lo * 0.5)) * num_bins; bin = min(floor(t), num_bins - 1).
 *
 * NumPy's np.histogram differs in two ways: its last bin is closed, [lo, hi]
 * (xpar does not count a sample equal to hi), and it places floats by its
 * computed edges (np.linspace(lo, hi, num_bins + 1), in float32 for float32
 * input), so a float within rounding of an edge may land in the neighbouring
 * bin of NumPy's.  Integer samples with integer edges land alike.
 *
 * Bad arguments (NULL, num_bins 0 or above the limit, lo >= hi, a NaN or
 * infinite float bound, counts overlapping samples): a status and detail,
 * nothing written.  Extra memory: on the CPU up to four private copies of
 * the counts per thread (host scratch kept by the context) while they total
 * at most 32 MiB, else shared atomic counts; on the GPU none beyond the
 * staging of host arrays.
 */
XPAR_API xpar_status xpar_histogram_even(xpar_context *ctx, xpar_dtype dtype, const void *samples,
                                         size_t n, const void *lo, const void *hi,
                                         size_t num_bins, uint64_t *counts);

/**
 * Count n samples of dtype into num_bins bins given by num_bins + 1
 * boundaries of dtype (a host array): bin i is [boundaries[i],
 * boundaries[i + 1]), found by binary search with C's comparisons (so -0.0
 * and +0.0 are equal).  Samples below boundaries[0], at or above
 * boundaries[num_bins], and NaN are not counted.  Boundaries must not
 * decrease (an equal pair makes an empty bin, as NumPy allows) and, for
 * floats, hold no NaN: the call checks, num_bins compares on the host,
 * before anything runs (XPAR_ERR_INVALID_ARGUMENT naming the first bad
 * pair, nothing written).  NumPy's last bin is closed, xpar's is not
 * (xpar_histogram_even).  counts must overlap neither samples nor
 * boundaries.  Everything else as xpar_histogram_even.
 */
XPAR_API xpar_status xpar_histogram_range(xpar_context *ctx, xpar_dtype dtype,
                                          const void *samples, size_t n, const void *boundaries,
                                          size_t num_bins, uint64_t *counts);

/** @} */

/* ------------------------------------------------------------------------ */
/* Where data lives (OpenMP "target data", for xpar)                         */
/* ------------------------------------------------------------------------ */
/**
 * @defgroup data Where data lives
 * OpenMP "target data", for xpar.
 *
 * Pointers are classified by xpar on each call, cheaply:
 *  - a host pointer inside a range mapped with xpar_map() on this context
 *    uses the mapping (its device copy, its validity);
 *  - otherwise, when a GPU is usable, the CUDA runtime is asked what the
 *    pointer is (host pageable, host pinned, device, managed).  Pageable
 *    answers are cached per 4 KiB page in the context, so repeated small
 *    calls on the same malloc'd arrays ask nothing; a cached page is asked
 *    again whenever its kind decides where a call runs (AUTO at or above the
 *    smaller GPU threshold for host data), so memory freed and allocated
 *    again as another kind is classified right.  Pinned, device and managed
 *    pointers are asked on every call (freed pinned memory can come back
 *    from cudaMalloc as device memory), and a pageable page inside an
 *    allocation the driver has called its own (the 16 most recent; memory
 *    mapped over a freed pinned range) is not cached either.  Without a usable GPU (none, no driver, no code for its
 *    architecture) or with offload disabled, xpar makes no CUDA call and
 *    every pointer is host memory: passing a device pointer then is an error
 *    xpar cannot detect.
 * A call that repeats its op's last call run on the CPU -- the same arrays,
 * n, dtype and variant, alpha or fill value at the same address, with no
 * other kind of call on the context since (a setter, xpar_map, a
 * profile...), no new page classified in between, and its mapped arrays in
 * the same state -- is not checked, classified or decided again: it runs with
 * that call's decision (its pinned arrays are still asked; a scan with an
 * init is never a repeat).  Its decision record is the one a fresh call
 * would get.
 * An array must lie inside one mapping or outside all of them
 * (XPAR_ERR_INVALID_ARGUMENT for one that straddles a mapping's edge).
 * A device pointer is never dereferenced on the host: when a call on one must
 * run on the CPU (forced CPU, or the GPU failed), xpar copies the data to the
 * host and back.  The context tracks which copy of a mapped array is valid:
 * the GPU writing makes the host copy stale and vice versa, and AUTO counts
 * the transfer each side would need.  Host writes by the application are not
 * seen: after writing a mapped array on the host, call xpar_update().
 * @{
 */

/** How xpar_map() sets up the device copy. */
typedef enum xpar_map_kind {
  XPAR_MAP_TO = 0,    /**< allocate on the device and copy the host data in */
  XPAR_MAP_ALLOC = 1, /**< allocate only; the device copy is not valid yet  */
  XPAR_MAP_KIND_COUNT_
} xpar_map_kind;

/** Which way xpar_update() copies. */
typedef enum xpar_update_dir {
  XPAR_UPDATE_TO_DEVICE = 0,   /**< host copy -> device copy */
  XPAR_UPDATE_FROM_DEVICE = 1, /**< device copy -> host copy */
  XPAR_UPDATE_DIR_COUNT_
} xpar_update_dir;

/** What xpar_unmap() does with the device copy. */
typedef enum xpar_unmap_kind {
  XPAR_UNMAP_FROM = 0,    /**< copy the device copy back, then release it */
  XPAR_UNMAP_RELEASE = 1, /**< release the device copy without copying    */
  XPAR_UNMAP_KIND_COUNT_
} xpar_unmap_kind;

/**
 * Map [host, host + bytes) to the current device of ctx.  Overlapping an
 * existing mapping is XPAR_ERR_ALREADY_MAPPED.  Needs a usable GPU
 * (XPAR_ERR_NO_DEVICE otherwise; with offload disabled too).
 */
XPAR_API xpar_status xpar_map(xpar_context *ctx, void *host, size_t bytes, xpar_map_kind kind);

/**
 * Copy a whole mapping one way; `host` is the pointer given to xpar_map.
 * TO_DEVICE always copies (the application wrote the host array).
 * FROM_DEVICE copies unless the host copy is the newer one, i.e. the last xpar
 * call that wrote the array ran on the CPU: AUTO may have run it there.
 */
XPAR_API xpar_status xpar_update(xpar_context *ctx, void *host, xpar_update_dir dir);

/** Unmap; `host` is the pointer given to xpar_map. */
XPAR_API xpar_status xpar_unmap(xpar_context *ctx, void *host, xpar_unmap_kind kind);

/**
 * The device address of a mapped host pointer (like omp_get_mapped_ptr), for
 * the application's own kernels.  Brings the device copy up to date first.
 * After writing through it, call xpar_update(FROM_DEVICE) before any host or
 * xpar use of the array: xpar does not see the application's kernels.
 */
XPAR_API xpar_status xpar_mapped_device_ptr(xpar_context *ctx, const void *host, void **out);

/** What xpar_memory_query finds at an address. */
typedef enum xpar_memory_kind {
  XPAR_MEMORY_HOST = 0,    /**< ordinary (pageable) host memory */
  XPAR_MEMORY_PINNED = 1,  /**< page-locked host memory (cudaMallocHost, cudaHostRegister) */
  XPAR_MEMORY_DEVICE = 2,  /**< device memory (cudaMalloc, cudaMallocAsync): not for the host */
  XPAR_MEMORY_MANAGED = 3, /**< managed memory (cudaMallocManaged) */
  XPAR_MEMORY_MAPPED = 4,  /**< host memory inside one of the context's xpar_map mappings */
  XPAR_MEMORY_KIND_COUNT_
} xpar_memory_kind;

/**
 * What [ptr, ptr + bytes) is, as the context's next call would classify it
 * (the rules above): inside one of its mappings, MAPPED; else, with a usable
 * GPU and offload not disabled, the driver's answer, asked now (never a cached
 * one); else HOST, asking nothing.  For code beside xpar that must treat a
 * pointer as xpar will, e.g. xpar_mpi writing a result in device memory.
 * XPAR_ERR_INVALID_ARGUMENT, as the context's calls refuse them, for a range
 * that straddles a mapping's edge (bytes 0 is taken as 1) and for device
 * memory the context's device cannot reach (another device's without peer
 * access, a driver context's of the application's own: see
 * xpar_context_set_device); a failing driver query returns its status.
 */
XPAR_API xpar_status xpar_memory_query(xpar_context *ctx, const void *ptr, size_t bytes,
                                       xpar_memory_kind *out);

/** @} */

/* ------------------------------------------------------------------------ */
/* Asynchronous ("nowait") variants                                          */
/* ------------------------------------------------------------------------ */
/**
 * @defgroup nowait Asynchronous (nowait) variants
 * As the synchronous operations, but a call that runs on the GPU returns once
 * the work is queued on the context's stream; xpar_wait() waits for it.  The
 * outputs must live on the device (device pointers, managed memory, or mapped
 * arrays, whose device copy is written): their results stay there.  The
 * reduce and dot variants write their scalar result to a device-accessible
 * pointer, aligned to the result type.  A call that AUTO (or the policy) runs
 * on the CPU completes before it returns.  Inputs must not be modified until
 * the work is complete.
 * @{
 */
/** xpar_reduce(), nowait: *device_result is device-accessible. */
XPAR_API xpar_status xpar_reduce_nowait(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                        const void *in, size_t n, void *device_result);
/** xpar_scan(), nowait. */
XPAR_API xpar_status xpar_scan_nowait(xpar_context *ctx, xpar_dtype dtype, xpar_reduction op,
                                      xpar_scan_kind kind, const void *in, void *out, size_t n);
/** xpar_scan_init(), nowait.  *init is read before the call returns: it may
 *  be a temporary of the caller. */
XPAR_API xpar_status xpar_scan_init_nowait(xpar_context *ctx, xpar_dtype dtype,
                                           xpar_reduction op, xpar_scan_kind kind,
                                           const void *init, const void *in, void *out,
                                           size_t n);
/** xpar_axpy(), nowait. */
XPAR_API xpar_status xpar_axpy_nowait(xpar_context *ctx, xpar_dtype dtype, const void *alpha,
                                      const void *x, void *y, size_t n);
/** xpar_add(), nowait. */
XPAR_API xpar_status xpar_add_nowait(xpar_context *ctx, xpar_dtype dtype, const void *x,
                                     const void *y, void *z, size_t n);
/** xpar_fill(), nowait. */
XPAR_API xpar_status xpar_fill_nowait(xpar_context *ctx, xpar_dtype dtype, const void *value,
                                      void *out, size_t n);
/** xpar_dot(), nowait: *device_result is device-accessible. */
XPAR_API xpar_status xpar_dot_nowait(xpar_context *ctx, xpar_dtype dtype, const void *x,
                                     const void *y, size_t n, void *device_result);

/** xpar_sort(), nowait. */
XPAR_API xpar_status xpar_sort_nowait(xpar_context *ctx, xpar_dtype dtype, xpar_sort_order order,
                                      const void *in, void *out, size_t n);
/** xpar_sort_pairs(), nowait. */
XPAR_API xpar_status xpar_sort_pairs_nowait(xpar_context *ctx, xpar_dtype key_dtype,
                                            xpar_dtype value_dtype, xpar_sort_order order,
                                            const void *keys_in, const void *values_in,
                                            void *keys_out, void *values_out, size_t n);
/** xpar_argsort(), nowait. */
XPAR_API xpar_status xpar_argsort_nowait(xpar_context *ctx, xpar_dtype dtype,
                                         xpar_dtype index_dtype, xpar_sort_order order,
                                         const void *in, void *indices, size_t n);

/** xpar_select(), nowait: *device_count may be device memory (8-byte aligned). */
XPAR_API xpar_status xpar_select_nowait(xpar_context *ctx, xpar_dtype dtype, xpar_predicate pred,
                                        const void *value, const void *hi, const void *in,
                                        void *out, size_t n, size_t *device_count);
/** xpar_select_flagged(), nowait. */
XPAR_API xpar_status xpar_select_flagged_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                const void *in, const unsigned char *flags,
                                                void *out, size_t n, size_t *device_count);
/** xpar_partition(), nowait. */
XPAR_API xpar_status xpar_partition_nowait(xpar_context *ctx, xpar_dtype dtype,
                                           xpar_predicate pred, const void *value,
                                           const void *hi, const void *in, void *out, size_t n,
                                           size_t *device_count);
/** xpar_unique(), nowait. */
XPAR_API xpar_status xpar_unique_nowait(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                        void *out, size_t n, size_t *device_count);
/** xpar_run_length_encode(), nowait: *device_num_runs may be device memory
 *  (8-byte aligned). */
XPAR_API xpar_status xpar_run_length_encode_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                   const void *in, size_t n, void *values_out,
                                                   uint64_t *lengths_out,
                                                   size_t *device_num_runs);
/** xpar_reduce_by_key(), nowait: *device_num_runs may be device memory
 *  (8-byte aligned). */
XPAR_API xpar_status xpar_reduce_by_key_nowait(xpar_context *ctx, xpar_dtype key_dtype,
                                               xpar_dtype value_dtype, xpar_reduction op,
                                               const void *keys_in, const void *values_in,
                                               size_t n, void *keys_out, void *values_out,
                                               size_t *device_num_runs);

/** xpar_argmin(), nowait: value and index may be device memory (aligned). */
XPAR_API xpar_status xpar_argmin_nowait(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                        size_t n, void *value, int64_t *index);
/** xpar_argmax(), nowait. */
XPAR_API xpar_status xpar_argmax_nowait(xpar_context *ctx, xpar_dtype dtype, const void *in,
                                        size_t n, void *value, int64_t *index);
/** xpar_segmented_reduce(), nowait. */
XPAR_API xpar_status xpar_segmented_reduce_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                  xpar_reduction op, const void *in, size_t n,
                                                  const void *offsets, xpar_dtype offset_dtype,
                                                  size_t n_segments, void *out);
/** xpar_segmented_reduce_fixed(), nowait. */
XPAR_API xpar_status xpar_segmented_reduce_fixed_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                        xpar_reduction op, const void *in,
                                                        size_t segment_size, size_t n_segments,
                                                        void *out);
/** xpar_segmented_scan(), nowait. */
XPAR_API xpar_status xpar_segmented_scan_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                xpar_reduction op, xpar_scan_kind kind,
                                                const void *in, void *out, size_t n,
                                                const void *offsets, xpar_dtype offset_dtype,
                                                size_t n_segments);
/** xpar_segmented_argmin(), nowait. */
XPAR_API xpar_status xpar_segmented_argmin_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                  const void *in, size_t n, const void *offsets,
                                                  xpar_dtype offset_dtype, size_t n_segments,
                                                  void *values, int64_t *indices);
/** xpar_segmented_argmax(), nowait. */
XPAR_API xpar_status xpar_segmented_argmax_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                  const void *in, size_t n, const void *offsets,
                                                  xpar_dtype offset_dtype, size_t n_segments,
                                                  void *values, int64_t *indices);
/** xpar_segmented_scan_fixed(), nowait. */
XPAR_API xpar_status xpar_segmented_scan_fixed_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                      xpar_reduction op, xpar_scan_kind kind,
                                                      const void *in, void *out,
                                                      size_t segment_size, size_t n_segments);
/** xpar_histogram_even(), nowait: counts in device memory stay there (a
 *  following GPU call reads them with no host round trip); *lo and *hi are
 *  read before the call returns. */
XPAR_API xpar_status xpar_histogram_even_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                const void *samples, size_t n, const void *lo,
                                                const void *hi, size_t num_bins,
                                                uint64_t *counts);
/** xpar_histogram_range(), nowait: the boundaries are checked on the host
 *  before the call returns, and copied to the GPU in stream order: like the
 *  samples, they must not change until the work is complete.  Not inside a
 *  CUDA graph capture (XPAR_ERR_NOT_SUPPORTED): the copy goes through the
 *  context's staging memory, which the graph's replays would share. */
XPAR_API xpar_status xpar_histogram_range_nowait(xpar_context *ctx, xpar_dtype dtype,
                                                 const void *samples, size_t n,
                                                 const void *boundaries, size_t num_bins,
                                                 uint64_t *counts);

/** Wait for the context's queued GPU work; reports an error it raised. */
XPAR_API xpar_status xpar_wait(xpar_context *ctx);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* XPAR_XPAR_H */
