/**
 * @file
 * xpar kernels: a loop body written once, run on the GPU or the CPU per call.
 *
 * A kernel is an element body over an index i (a grid-stride loop on the GPU,
 * a serial or OpenMP loop on the CPU).  Its source file (say saxpy.xk.c) is
 * compiled twice by xpar_add_kernels() (cmake/xpar_kernels.cmake, shipped
 * with the package): once as C11 with OpenMP, which defines the kernel object
 * and its CPU loop, and once by nvcc, which defines the __global__ kernel and
 * the host code that launches it.  A build without CUDA compiles the C side
 * only; the kernel then has no GPU variant.
 *
 * @code{.c}
 *   #include <xpar/xpar_kernel.h>
 *
 *   XPAR_KERNEL(saxpy, i) {              // args: 0 = a (scalar), 1 = x, 2 = y
 *     const float a = XPAR_SCALAR(float, 0);
 *     const float *x = XPAR_ARRAY(const float, 1);
 *     float *y = XPAR_ARRAY(float, 2);
 *     y[i] = a * x[i] + y[i];
 *   }
 * @endcode
 *
 * and, in any C or C++ file of the application:
 *
 * @code{.c}
 *   XPAR_KERNEL_DECLARE(saxpy);
 *   xpar_arg args[] = {XPAR_ARG_SCALAR_OF(XPAR_FLOAT, &a),
 *                      XPAR_ARG_IN(XPAR_FLOAT, x, n),
 *                      XPAR_ARG_INOUT(XPAR_FLOAT, y, n)};
 *   xpar_status st = xpar_launch(ctx, &saxpy, n, args, 3);
 * @endcode
 *
 * xpar_launch goes through the same path as the built-in operations: the
 * arguments are validated (nothing runs on bad input), every array is
 * classified (pageable, pinned, mapped, device, managed) and staged for the
 * side that runs it, the tier is decided from the kernel's own thresholds
 * (below), mapped arrays the kernel writes are marked valid on the side that
 * wrote them, and the decision record (xpar_last_decision, XPAR_VERBOSE)
 * names the kernel.  Forced CPU, cpu-serial, cuda, cuda-serial (the same
 * __global__ kernel with grid = block = 1: device printf comes out in index
 * order) and XPAR_OFFLOAD behave as for the built-in operations.
 *
 * The file is compiled as C11 and as CUDA C++: write in their common subset
 * (no compound literals or out-of-order designated initializers, no C++
 * features outside `#ifdef __CUDACC__`).
 *
 * The body must be correct whatever the launch shape and whatever order the
 * indices run in (each index is one independent piece of work, as in any
 * grid-stride loop): no index may read what another writes.  It may call
 * functions that are __host__ __device__ under nvcc (XPAR_KERNEL_FN marks
 * them) and printf.  Arrays are accessed only inside [0, count) of their
 * xpar_arg: that is what xpar stages.
 */
#ifndef XPAR_XPAR_KERNEL_H
#define XPAR_XPAR_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "xpar.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup kernels Application kernels
 * A loop body written once (XPAR_KERNEL), launched with xpar_launch() on the
 * tier the context's policy picks, with thresholds of its own.
 * @{
 */

/** Arguments of one kernel, at most. */
#define XPAR_KERNEL_MAX_ARGS 8
/** Bytes of one scalar argument, at most (a double complex, two int64s). */
#define XPAR_KERNEL_SCALAR_BYTES 16
/** Layout version of xpar_kernel, xpar_kernel_args, xpar_operator and
 *  xpar_operator_gpu_call: an object built against another layout is refused
 *  (XPAR_ERR_INVALID_ARGUMENT).  2: xpar_operator_gpu_call.ticket.
 *  3: xpar_operator_gpu_call.status_tiles / status / status_epoch.
 *  4: xpar_kernel_gpu_fn takes the call's done signal (xpar_kernel_done);
 *  xpar_kernel.gpu_handle.  5: xpar_operator_gpu_call.done (the operators'
 *  kernels raise the call's done signal too). */
#define XPAR_KERNEL_ABI 5

/** What a kernel does with an argument. */
typedef enum xpar_arg_role {
  XPAR_ARG_READ = 1,       /**< an array the kernel reads only                 */
  XPAR_ARG_WRITE = 2,      /**< an array the kernel writes (contents not read)  */
  XPAR_ARG_READ_WRITE = 3, /**< an array the kernel reads and writes            */
  XPAR_ARG_SCALAR = 4      /**< a host value, copied into the launch by value   */
} xpar_arg_role;

/**
 * One argument of a launch.  Arrays: `ptr` to `count` elements of `dtype`,
 * anywhere xpar's operations accept arrays (host, pinned, mapped, device,
 * managed), aligned to the element size; NULL only when count is 0.
 * Scalars: `ptr` to `count` host elements of `dtype` (count * size at most
 * XPAR_KERNEL_SCALAR_BYTES), read during the call only.
 * Two array arguments may be the same array (the same pointer and the same
 * size in bytes, count x the dtype's size: one array with both roles) or
 * disjoint; a partial overlap is XPAR_ERR_OVERLAP.
 */
typedef struct xpar_arg {
  xpar_arg_role role; /**< what the kernel does with it */
  xpar_dtype dtype;   /**< its element type */
  size_t count;       /**< its elements */
  const void *ptr;    /**< the array, or the scalar's host address */
} xpar_arg;

/** An array of `count` elements that the kernel reads (XPAR_ARG_READ). */
#define XPAR_ARG_IN(dtype, p, count) {XPAR_ARG_READ, (dtype), (count), (p)}
/** An array that the kernel writes without reading (XPAR_ARG_WRITE). */
#define XPAR_ARG_OUT(dtype, p, count) {XPAR_ARG_WRITE, (dtype), (count), (p)}
/** An array that the kernel reads and writes (XPAR_ARG_READ_WRITE). */
#define XPAR_ARG_INOUT(dtype, p, count) {XPAR_ARG_READ_WRITE, (dtype), (count), (p)}
/** One host scalar of dtype at p, passed by value (XPAR_ARG_SCALAR). */
#define XPAR_ARG_SCALAR_OF(dtype, p) {XPAR_ARG_SCALAR, (dtype), 1, (p)}

/* ---- what the macros below generate (not written by hand) ----------------- */

/* The most threads a kernel's or operator's CPU region opens: the cap of the
 * built-in ops' regions (xpar_context_set_num_threads). */
#define XPAR__KERNEL_MAX_THREADS_ 256

/** A scalar argument's bytes, aligned for any scalar type. */
typedef union xpar_kernel_scalar {
  unsigned char bytes[XPAR_KERNEL_SCALAR_BYTES]; /**< the value */
  double align_;
  int64_t align64_;
} xpar_kernel_scalar;

/** The arguments as the body sees them: array pointers the running side can
 *  dereference (device copies on the GPU, host copies on the CPU), scalars by
 *  value.  Passed to the __global__ kernel by value (192 bytes). */
typedef struct xpar_kernel_args {
  void *ptr[XPAR_KERNEL_MAX_ARGS];                 /**< argument k's array */
  xpar_kernel_scalar scalar[XPAR_KERNEL_MAX_ARGS]; /**< argument k's scalar */
} xpar_kernel_args;

/** Runs the body for i in [0, n): num_threads 1 is a plain loop in index
 *  order, 0 an OpenMP loop with the runtime's thread count, k > 1 with k. */
typedef void (*xpar_kernel_cpu_fn)(size_t n, const xpar_kernel_args *args, int num_threads);
/** A synchronous launch's done signal: at its end every block of the kernel takes
 *  part in raising *flag to seq, in pinned memory the host spins on, once every store
 *  of the grid is done (xpar/detail/cuda_done_signal.cuh), so that the call returns
 *  without synchronising the stream; flag NULL: none (a queued call). */
typedef struct xpar_kernel_done {
  unsigned int *ticket;        /**< a device word, 0 between launches */
  volatile unsigned int *flag; /**< as the device sees it */
  unsigned int seq;            /**< the value the flag is raised to */
} xpar_kernel_done;

/** Queues the grid-stride kernel on `stream` (a cudaStream_t), with the call's done
 *  signal; returns the launch's cudaError_t as an int. */
typedef int (*xpar_kernel_gpu_fn)(size_t n, const xpar_kernel_args *args, unsigned grid,
                                  unsigned block, void *stream, const xpar_kernel_done *done);
/** cudaOccupancyMaxActiveBlocksPerMultiprocessor for the kernel, asked in the
 *  kernel's own translation unit (the CUDA runtime that registered it). */
typedef int (*xpar_kernel_gpu_occupancy_fn)(unsigned block, int *blocks_per_sm);
/** The __global__ kernel's context-independent handle (cudaGetKernel, a CUkernel),
 *  asked once in its own translation unit and kept there (a module unloaded and loaded
 *  again asks afresh; xpar keeps no handle of its own), or NULL: xpar launches a
 *  latency-bound call through the driver with it (cuLaunchKernel, 0.3-0.5 us sooner
 *  than the runtime's launch), else through xpar_kernel_gpu_fn.  The kernel's
 *  parameters: (size_t n, xpar_kernel_args args, xpar_kernel_done done). */
typedef const void *(*xpar_kernel_gpu_handle_fn)(void);

/** A kernel object, defined by XPAR_KERNEL.  cpu or gpu is NULL when that
 *  side was not compiled in this build. */
typedef struct xpar_kernel {
  unsigned abi;                               /**< XPAR_KERNEL_ABI */
  const char *name;                           /**< the kernel's name */
  xpar_kernel_cpu_fn cpu;                     /**< the CPU loop */
  xpar_kernel_gpu_fn gpu;                     /**< the GPU launcher */
  xpar_kernel_gpu_occupancy_fn gpu_occupancy; /**< the GPU kernel's occupancy */
  xpar_kernel_gpu_handle_fn gpu_handle;       /**< the GPU kernel's handle */
} xpar_kernel;

/* ---- launching -------------------------------------------------------------- */

/**
 * Run `kernel` for every i in [0, n) with `args` (nargs of them, at most
 * XPAR_KERNEL_MAX_ARGS), on the tier the context's policy picks for it.
 * Synchronous: the arrays hold their results when it returns.
 *
 * Statuses: XPAR_ERR_NULL_CONTEXT, XPAR_ERR_NULL_POINTER (kernel, args with
 * nargs > 0, an array with count > 0, a scalar), XPAR_ERR_INVALID_ENUM (a
 * role or dtype), XPAR_ERR_INVALID_ARGUMENT (nargs out of range, another
 * XPAR_KERNEL_ABI, a misaligned array, a scalar larger than
 * XPAR_KERNEL_SCALAR_BYTES), XPAR_ERR_SIZE_OVERFLOW, XPAR_ERR_OVERLAP,
 * XPAR_ERR_NOT_SUPPORTED (the kernel has no variant for the side the policy
 * demands: a GPU backend or mandatory offload for a kernel built without
 * CUDA, the CPU for one without a CPU variant; AUTO picks the side that
 * exists and the decision record says why), XPAR_ERR_NO_DEVICE (no usable
 * GPU where offload is mandatory, or for a kernel without a CPU variant), device
 * errors as the built-in operations.  On any failure before the kernel ran
 * nothing is written.  A kernel that faults on the GPU reports
 * XPAR_ERR_DEVICE_STICKY, as any CUDA kernel would.
 */
XPAR_API xpar_status xpar_launch(xpar_context *ctx, const xpar_kernel *kernel, size_t n,
                                 const xpar_arg *args, int nargs);

/** As xpar_launch, but a launch that runs on the GPU returns once queued
 *  (xpar_wait waits), under the nowait rules of xpar.h: arrays it writes
 *  must live on the device (device, managed or mapped) to stay queued. */
XPAR_API xpar_status xpar_launch_nowait(xpar_context *ctx, const xpar_kernel *kernel, size_t n,
                                        const xpar_arg *args, int nargs);

/**
 * Thresholds per kernel, as xpar_context_set_threshold per op: n at or above
 * `which` switches to the faster-for-large-n side.  A kernel's thresholds,
 * lowest precedence first: the built-in kernel defaults (dispatch/kernel.c,
 * with their provenance: OpenMP from 2^15 elements, the GPU from 2^19 for
 * device data, never for host data, always for data valid only on the
 * device -- the elementwise add's of an earlier calibration, as a kernel's
 * cost is the application's), the calibration profile (`kernel <name> <kind> <n>`
 * lines, by kernel name: docs/profile.md; xpar_profile_save writes the ones
 * set by this function or a profile), `XPAR_ALL_<KIND>_THRESHOLD`,
 * `XPAR_KERNEL_<NAME>_<KIND>_THRESHOLD` (NAME: the kernel's name in upper case,
 * e.g. XPAR_KERNEL_SAXPY_GPU_THRESHOLD=2^20), then this function.  The
 * profile and environment of a kernel are applied when the context first
 * meets the kernel (its first launch or threshold call): an invalid value
 * fails that call with XPAR_ERR_INVALID_ENV; xpar_profile_load replaces the
 * thresholds of kernels already met, as it does the built-in ops'.
 */
XPAR_API xpar_status xpar_context_set_kernel_threshold(xpar_context *ctx,
                                                       const xpar_kernel *kernel,
                                                       xpar_threshold which, size_t n);
/** A kernel's threshold `which`, in *out (the kernel's profile and
 *  environment applied first, as above). */
XPAR_API xpar_status xpar_context_get_kernel_threshold(xpar_context *ctx,
                                                       const xpar_kernel *kernel,
                                                       xpar_threshold which, size_t *out);

/** Sizes xpar_kernel_calibrate measures: n = 2^e for e up to this. */
#define XPAR_KERNEL_CALIBRATION_MAX_EXP 47

/** What xpar_kernel_calibrate measured and chose. */
typedef struct xpar_kernel_calibration {
  int lo_exp;         /**< n = 2^lo_exp .. 2^hi_exp were measured           */
  int hi_exp;         /**< the largest size measured: 2^hi_exp              */
  int rounds;         /**< interleaved rounds; each time is their median      */
  /** Tiers timed, indexed by xpar_tier: CPU_SERIAL (the CPU backend's
   *  one-thread loop, AUTO's choice below the OpenMP threshold), CPU_OPENMP
   *  and CUDA (the context's stream, with the staging the arguments need). */
  int tier_measured[XPAR_TIER_COUNT_];
  /** Median seconds per call of tier t at n = 2^e; NAN where not measured. */
  double seconds[XPAR_TIER_COUNT_][XPAR_KERNEL_CALIBRATION_MAX_EXP + 1];
  /** The GPU threshold these arguments select (where their data lives:
   *  GPU_DEVICE_DATA, _PINNED_DATA, _PAGEABLE_DATA or _DEVICE_ONLY_DATA);
   *  meaningful when CUDA was timed. */
  xpar_threshold gpu_threshold;
  /** Thresholds set in the context (1) and their values (XPAR_NEVER: the
   *  faster-for-large-n side never paid off up to 2^hi_exp). */
  int threshold_set[XPAR_THRESHOLD_COUNT_];
  size_t threshold[XPAR_THRESHOLD_COUNT_]; /**< the values (see threshold_set) */
  /** AUTO's worst ratio over the sweep with each threshold set (the chosen
   *  side's time over the faster side's), and the exponent where it is. */
  double worst_ratio[XPAR_THRESHOLD_COUNT_];
  int worst_at[XPAR_THRESHOLD_COUNT_]; /**< the exponent of worst_ratio */
} xpar_kernel_calibration;

/**
 * Measure `kernel`'s thresholds on this machine with the application's own
 * arguments, and set them in `ctx` (as xpar_context_set_kernel_threshold:
 * xpar_profile_save then writes them as `kernel <name> <kind> <n>` lines,
 * docs/profile.md).  What xpar-bench calibrate does for the built-in ops:
 *
 *  - args are the arguments of a launch of n_max elements (n_max >= 1); each
 *    size n = 2^e (from 2^4, or 1 when n_max < 16, up to the largest power
 *    of two <= n_max) is launched with every array whose count is n_max cut
 *    to n; arrays of another count (a table the body indexes by value) and
 *    scalars are passed as they are;
 *  - each tier of this build and context runs at every size, forced as the
 *    backend (cpu-serial: the one-thread loop AUTO runs below the OpenMP
 *    threshold; cpu-openmp; cuda when the kernel has a GPU variant, the GPU
 *    is usable and the context's offload is not disabled), with staging as
 *    the arguments' memory needs, in 5 interleaved rounds of batches of at
 *    least 200 us, each batch after one untimed launch on its tier (so data
 *    another tier wrote moves once, not in every sample); each time is the
 *    median of the rounds;
 *  - the OpenMP threshold is read off cpu-serial against cpu-openmp, then
 *    the GPU threshold the arguments' memory selects (report->gpu_threshold)
 *    off AUTO's CPU choice against cuda, by the calibrate rule: the
 *    threshold (2^e or never) that minimises AUTO's worst ratio over the
 *    sweep, near-ties going to the crossing.  A side that was not timed
 *    sets nothing.
 *
 * The kernel runs many times on the given arrays: a kernel that writes in
 * place (y += a x) accumulates, so the arrays' contents afterwards are
 * unspecified (and a body whose time depends on its data, e.g. a loop to
 * convergence, is measured on whatever that data has become).  The
 * context's backend, offload and other thresholds are as before; its last
 * decision record is the last timed call's.  report may be NULL.
 *
 * Statuses: as xpar_launch for the kernel and its arguments at n_max
 * (checked before anything runs: on bad input nothing runs and nothing is
 * set), XPAR_ERR_INVALID_ARGUMENT for n_max 0; a failing timed launch stops
 * the calibration with that launch's status, nothing set.
 */
XPAR_API xpar_status xpar_kernel_calibrate(xpar_context *ctx, const xpar_kernel *kernel,
                                           size_t n_max, const xpar_arg *args, int nargs,
                                           xpar_kernel_calibration *report);

/** @} */

/* ---- custom reduce and scan operators ---------------------------------------- */
/**
 * @defgroup operators Custom reduce and scan operators
 * An associative operator written once (XPAR_OPERATOR), run by
 * xpar_reduce_op() and xpar_scan_op() on every tier.
 * @{
 */

/** The largest accumulator an operator may have, in bytes. */
#define XPAR_OPERATOR_MAX_ACC 32

/** One GPU reduce or scan of an operator, as the CUDA backend hands it to the
 *  operator's device code (xpar_operator.cuh).  With scratch NULL the call
 *  only stores the scratch it needs in *scratch_bytes (CUB's idiom). */
typedef struct xpar_operator_gpu_call {
  size_t n;            /**< elements                                         */
  const void *in;      /**< n input elements (device-accessible)              */
  void *out;           /**< scan: n accumulators; reduce: one (device memory) */
  int exclusive;       /**< scan                                               */
  int serial;          /**< grid = block = 1                                   */
  unsigned grid;       /**< override, 0 = the operator code decides          */
  unsigned block;      /**< override, 0 = the operator code decides          */
  int multiprocessors; /**< the device's multiprocessors                     */
  void *scratch;       /**< device scratch, or NULL: a shape call             */
  size_t *scratch_bytes; /**< the scratch's size (a shape call stores it)    */
  void *stream;        /**< cudaStream_t                                       */
  unsigned *ticket;    /**< reduce: a zeroed device counter, to be left zeroed
                          (the context's, shared with the built-in reduce on
                          the same stream: no per-call memset)               */
  /* scan, 4- and 8-byte accumulators: the context's tile status words, the
   * built-in scan's (same layout, same stream), which need no clearing: */
  size_t *status_tiles; /**< shape call: the tiles needing a status word there
                           (0: none, or the operator keeps its own)        */
  void *status;         /**< launch: that many words (NULL: keep its own)     */
  unsigned status_epoch; /**< tags this call's words; older ones never match  */
  xpar_kernel_done done; /**< launch: every block of the kernel ends by taking
                            part in it (flag NULL: none) */
} xpar_operator_gpu_call;

/**
 * An associative operator over an accumulator type (a scalar or a struct of
 * at most XPAR_OPERATOR_MAX_ACC bytes), with its identity and a transform
 * from (input array, index) to an accumulator; defined by XPAR_OPERATOR.
 * combine need not be commutative: every tier combines in index order
 * (only the grouping differs between tiers, which associativity allows).
 */
typedef struct xpar_operator {
  unsigned abi; /**< XPAR_KERNEL_ABI */
  const char *name; /**< the operator's name */
  size_t in_size;   /**< the input element: size */
  size_t in_align;  /**< the input element: alignment */
  size_t acc_size;  /**< the accumulator (scan's output): size */
  size_t acc_align; /**< the accumulator (scan's output): alignment */
  /** The CPU reduce (num_threads as xpar_kernel_cpu_fn). */
  void (*cpu_reduce)(size_t n, const void *in, void *result, int num_threads);
  /** The CPU scan (num_threads as xpar_kernel_cpu_fn). */
  void (*cpu_scan)(size_t n, const void *in, void *out, int exclusive, int num_threads);
  int (*gpu_reduce)(const xpar_operator_gpu_call *call); /**< the GPU reduce; a cudaError_t */
  int (*gpu_scan)(const xpar_operator_gpu_call *call);   /**< the GPU scan; a cudaError_t */
} xpar_operator;

/**
 * *result = transform(in, 0) combine ... combine transform(in, n - 1), or the
 * identity for n = 0.  `in` holds n input elements anywhere xpar accepts
 * arrays; `result` is an accumulator in host or device memory (written there
 * before the call returns; xpar_reduce_op_nowait's in device-accessible memory),
 * aligned to the accumulator.  Tiers, thresholds (per operator,
 * as for kernels: `XPAR_KERNEL_<NAME>_<KIND>_THRESHOLD` and
 * xpar_context_set_operator_threshold), statuses and the decision record as
 * xpar_launch.
 */
XPAR_API xpar_status xpar_reduce_op(xpar_context *ctx, const xpar_operator *op, const void *in,
                                    size_t n, void *result);

/**
 * Scan with an operator: inclusive out[i] = transform(in, 0) combine ...
 * combine transform(in, i); exclusive out[0] = identity, out[i] = the
 * inclusive out[i - 1].  out holds n accumulators; in and out must not
 * overlap (XPAR_ERR_OVERLAP: their element types differ in general).
 */
XPAR_API xpar_status xpar_scan_op(xpar_context *ctx, const xpar_operator *op,
                                  xpar_scan_kind kind, const void *in, void *out, size_t n);

/**
 * As xpar_reduce_op and xpar_scan_op, under the nowait rules of xpar.h (as
 * xpar_reduce_nowait / xpar_scan_nowait): a call that runs on the GPU returns
 * once queued (xpar_wait waits) when its outputs live on the device -- the
 * scan's out, and the reduce's result, which may then be device, managed or
 * mapped memory (aligned to the accumulator); with a host output the call
 * completes before it returns, and on the CPU it always does.  Inputs must
 * not change until the work is complete.  Statuses as the synchronous calls.
 */
XPAR_API xpar_status xpar_reduce_op_nowait(xpar_context *ctx, const xpar_operator *op,
                                           const void *in, size_t n, void *result);
/** xpar_scan_op(), nowait: see xpar_reduce_op_nowait(). */
XPAR_API xpar_status xpar_scan_op_nowait(xpar_context *ctx, const xpar_operator *op,
                                         xpar_scan_kind kind, const void *in, void *out,
                                         size_t n);

/** Set an operator's threshold, as xpar_context_set_kernel_threshold. */
XPAR_API xpar_status xpar_context_set_operator_threshold(xpar_context *ctx,
                                                         const xpar_operator *op,
                                                         xpar_threshold which, size_t n);
/** Get an operator's threshold, as xpar_context_get_kernel_threshold. */
XPAR_API xpar_status xpar_context_get_operator_threshold(xpar_context *ctx,
                                                         const xpar_operator *op,
                                                         xpar_threshold which, size_t *out);
/** @} */

/* ---- custom select and partition predicates ----------------------------------- */
/**
 * @defgroup predicates Custom select and partition predicates
 * A test the application writes once (XPAR_PREDICATE), run by xpar_select_op()
 * and xpar_partition_op() on every tier.
 * @{
 */

/** One GPU evaluation of a predicate, as the CUDA backend hands it to the
 *  predicate's device code (xpar_predicate.cuh): flags[i] = test(in, i) != 0
 *  for every i in [0, n), queued on stream. */
typedef struct xpar_predicate_gpu_call {
  size_t n;              /**< elements                                  */
  const void *in;        /**< n input elements (device-accessible)      */
  unsigned char *flags;  /**< n flags (device memory)                   */
  int serial;            /**< grid = block = 1                          */
  unsigned grid;         /**< override, 0 = the predicate code decides  */
  unsigned block;        /**< override, 0 = the predicate code decides  */
  int multiprocessors;   /**< the device's multiprocessors              */
  void *stream;          /**< cudaStream_t                              */
} xpar_predicate_gpu_call;

/**
 * A test of element i of an input array of the application's type, defined
 * by XPAR_PREDICATE.  The test sees the whole array (in, i), so it may look
 * at an element's neighbours; it must not write anything.
 */
typedef struct xpar_predicate_op {
  unsigned abi;     /**< XPAR_KERNEL_ABI */
  const char *name; /**< the predicate's name */
  size_t in_size;   /**< the input element: size */
  size_t in_align;  /**< the input element: alignment */
  /** The number of i in [lo, hi) the test keeps. */
  size_t (*cpu_count)(const void *in, size_t lo, size_t hi);
  /** The kept elements of [lo, hi) copied in order to kept[0, 1, ...] and, with
   *  rest not NULL, the others in order to rest[0, 1, ...]; returns how many
   *  were kept. */
  size_t (*cpu_scatter)(const void *in, size_t lo, size_t hi, void *kept, void *rest);
  int (*gpu_flags)(const xpar_predicate_gpu_call *call); /**< the GPU test; a cudaError_t */
} xpar_predicate_op;

/**
 * Keep in[i] where the predicate's test(in, i) is not 0: out[0 .. *count)
 * are the kept elements in input order, and out past *count is not written.
 * in and out are arrays of the predicate's element type, anywhere xpar
 * accepts arrays, aligned to it, and must not overlap (XPAR_ERR_OVERLAP; no
 * in place).  The GPU tiers take elements of 4 or 8 bytes (larger or smaller
 * ones run on the CPU under AUTO; forced onto the GPU they are
 * XPAR_ERR_NOT_SUPPORTED); there the test fills a flag per element, then the
 * built-in select by flags compacts: read n elements twice, n flags twice,
 * write n flags and the kept elements.  Not in a CUDA graph capture
 * (XPAR_ERR_NOT_SUPPORTED).  Tiers, thresholds (per predicate, as for
 * kernels: `XPAR_KERNEL_<NAME>_<KIND>_THRESHOLD`), statuses and the decision
 * record as xpar_launch.
 */
XPAR_API xpar_status xpar_select_op(xpar_context *ctx, const xpar_predicate_op *pred,
                                    const void *in, void *out, size_t n, size_t *count);

/** Stable partition with a predicate: the elements the test keeps first, in
 *  input order, then the others, in input order (all n written); *count is
 *  the number kept.  Otherwise as xpar_select_op(). */
XPAR_API xpar_status xpar_partition_op(xpar_context *ctx, const xpar_predicate_op *pred,
                                       const void *in, void *out, size_t n, size_t *count);

/** xpar_select_op(), under the nowait rules of xpar.h: *device_count may be
 *  device memory (8-byte aligned), left there for a following GPU call. */
XPAR_API xpar_status xpar_select_op_nowait(xpar_context *ctx, const xpar_predicate_op *pred,
                                           const void *in, void *out, size_t n,
                                           size_t *device_count);
/** xpar_partition_op(), nowait: see xpar_select_op_nowait(). */
XPAR_API xpar_status xpar_partition_op_nowait(xpar_context *ctx, const xpar_predicate_op *pred,
                                              const void *in, void *out, size_t n,
                                              size_t *device_count);
/** @} */
#ifdef __cplusplus
}
#endif

/* ---- defining a kernel ------------------------------------------------------ */
/** @addtogroup kernels
 *  @{ */

/** Inside a body: argument k as an array of T. */
#define XPAR_ARRAY(T, k) ((T *)xpar_kargs_->ptr[(k)])
/** Inside a body: the scalar argument k as a T. */
#define XPAR_SCALAR(T, k) (*(const T *)(const void *)xpar_kargs_->scalar[(k)].bytes)

/** Declare a kernel object defined in another file (C or C++). */
#ifdef __cplusplus
#define XPAR_KERNEL_DECLARE(name) extern "C" const xpar_kernel name
#else
#define XPAR_KERNEL_DECLARE(name) extern const xpar_kernel name
#endif

/** Functions a body calls must exist on both sides: XPAR_KERNEL_FN marks
 *  them (__host__ __device__ under nvcc). */
#if defined(__CUDACC__)
#define XPAR_KERNEL_FN __host__ __device__
#else
#define XPAR_KERNEL_FN
#endif

/**
 * XPAR_KERNEL(name, i) { body }: the body runs once per index i (a size_t).
 * Under nvcc it becomes a __global__ grid-stride kernel and two extern "C"
 * host functions (launch, occupancy); under a C compiler the CPU loop and
 * the kernel object `name`, which points at the nvcc side's functions when
 * XPAR_KERNEL_WITH_CUDA is defined (xpar_add_kernels defines it when it
 * compiles the nvcc side too).
 */
#define XPAR_KERNEL(name, i)                                                                \
  static XPAR_KERNEL_FN inline void name##__xpar_body(size_t i,                             \
                                                      const xpar_kernel_args *xpar_kargs_); \
  XPAR__KERNEL_SIDE_(name)                                                                  \
  static XPAR_KERNEL_FN inline void name##__xpar_body(                                      \
      size_t i, const xpar_kernel_args *xpar_kargs_ XPAR__KERNEL_UNUSED_)

#if defined(__GNUC__) || defined(__clang__)
#define XPAR__KERNEL_UNUSED_ __attribute__((unused))
#else
#define XPAR__KERNEL_UNUSED_
#endif

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#include "detail/cuda_done_signal.cuh"
namespace xpar_cuda {
/* A __global__ function's context-independent handle (CUDA 12's cudaGetKernel, asked of
 * the runtime that registered it), or NULL (an older runtime: xpar launches it through
 * the kernel's launch function). */
inline const void *kernel_handle(const void *global_fn) {
#if CUDART_VERSION >= 12000
  cudaKernel_t k = NULL;
  if (cudaGetKernel(&k, global_fn) == cudaSuccess) return (const void *)k;
  (void)cudaGetLastError();
#else
  (void)global_fn;
#endif
  return NULL;
}
} // namespace xpar_cuda
/* The grid-stride loop: correct for any grid and block, 1 x 1 included
 * (cuda-serial), which is what makes the serial debug mode the same kernel;
 * then the block's part of a synchronous call's done signal. */
#define XPAR__KERNEL_SIDE_(name)                                                          \
  __global__ void name##__xpar_grid(size_t n, xpar_kernel_args a, xpar_kernel_done d) {   \
    const size_t stride = (size_t)gridDim.x * blockDim.x;                                 \
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride)    \
      name##__xpar_body(j, &a);                                                           \
    xpar_cuda::signal_block_done(d);                                                      \
  }                                                                                       \
  extern "C" int name##__xpar_gpu_launch(size_t n, const xpar_kernel_args *a,             \
                                         unsigned grid, unsigned block, void *stream,     \
                                         const xpar_kernel_done *done) {                  \
    name##__xpar_grid<<<grid, block, 0, (cudaStream_t)stream>>>(n, *a, *done);            \
    return (int)cudaGetLastError();                                                       \
  }                                                                                       \
  extern "C" int name##__xpar_gpu_occupancy(unsigned block, int *blocks_per_sm) {         \
    return (int)cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm,              \
                                                              name##__xpar_grid,          \
                                                              (int)block, 0);             \
  }                                                                                       \
  extern "C" const void *name##__xpar_gpu_handle(void) {                                  \
    static const void *const handle =                                                     \
        xpar_cuda::kernel_handle((const void *)name##__xpar_grid);                        \
    return handle;                                                                        \
  }
#else
#if defined(_OPENMP)
#include <omp.h>
/* One static schedule: each thread takes one contiguous block of indices.
 * num_threads 0 is the runtime's default, held to the cap of xpar's own
 * regions. */
#define XPAR__KERNEL_OMP_LOOP_(name, n, a, num_threads)                          \
  {                                                                              \
    int xpar_nt_ = (num_threads) > 0 ? (num_threads) : omp_get_max_threads();     \
    if (xpar_nt_ > XPAR__KERNEL_MAX_THREADS_) xpar_nt_ = XPAR__KERNEL_MAX_THREADS_; \
    _Pragma("omp parallel for schedule(static) num_threads(xpar_nt_)")           \
    for (size_t j = 0; j < (n); j++) name##__xpar_body(j, (a));                  \
  }
#else
#define XPAR__KERNEL_OMP_LOOP_(name, n, a, num_threads) \
  for (size_t j = 0; j < (n); j++) name##__xpar_body(j, (a));
#endif
#if defined(XPAR_KERNEL_WITH_CUDA)
#define XPAR__KERNEL_GPU_(name)                                                          \
  extern int name##__xpar_gpu_launch(size_t n, const xpar_kernel_args *a, unsigned grid, \
                                     unsigned block, void *stream,                       \
                                     const xpar_kernel_done *done);                      \
  extern int name##__xpar_gpu_occupancy(unsigned block, int *blocks_per_sm);             \
  extern const void *name##__xpar_gpu_handle(void);
#define XPAR__KERNEL_GPU_FNS_(name) \
  name##__xpar_gpu_launch, name##__xpar_gpu_occupancy, name##__xpar_gpu_handle
#else
#define XPAR__KERNEL_GPU_(name)
#define XPAR__KERNEL_GPU_FNS_(name) NULL, NULL, NULL
#endif
#define XPAR__KERNEL_SIDE_(name)                                                  \
  static void name##__xpar_cpu(size_t n, const xpar_kernel_args *a, int num_threads) { \
    if (num_threads == 1) {                                                       \
      for (size_t j = 0; j < n; j++) name##__xpar_body(j, a);                     \
      return;                                                                     \
    }                                                                             \
    XPAR__KERNEL_OMP_LOOP_(name, n, a, num_threads)                               \
  }                                                                               \
  XPAR__KERNEL_GPU_(name)                                                         \
  extern const xpar_kernel name;                                                  \
  const xpar_kernel name = {XPAR_KERNEL_ABI, #name, name##__xpar_cpu,             \
                            XPAR__KERNEL_GPU_FNS_(name)};
#endif


/** @} */

/* ---- defining an operator ----------------------------------------------------- */
/** @addtogroup operators
 *  @{ */

/**
 * @def XPAR_OPERATOR(name, Acc, In, identity, combine, transform)
 * XPAR_OPERATOR(name, Acc, In, identity, combine, transform) defines the
 * operator object `name` from three functions the application writes with
 * XPAR_KERNEL_FN (so that they exist on both sides):
 * @code{.unparsed}
 *   Acc identity(void);
 *   Acc combine(Acc a, Acc b);               associative; a comes first
 *   Acc transform(const In *in, size_t i);   element i of the input
 * @endcode
 * Under nvcc it instantiates the block and decoupled look-back templates of
 * xpar/xpar_operator.cuh for these functions; under a C compiler the serial
 * and OpenMP loops and the object.  Declare it elsewhere with
 * XPAR_OPERATOR_DECLARE(name).
 */

/** Declare an operator object defined in another file (C or C++). */
#ifdef __cplusplus
#define XPAR_OPERATOR_DECLARE(name) extern "C" const xpar_operator name
#else
#define XPAR_OPERATOR_DECLARE(name) extern const xpar_operator name
#endif

#if defined(__CUDACC__)
#include "xpar_operator.cuh"
#define XPAR_OPERATOR(name, Acc, In, identity, combine, transform)                       \
  struct name##__xpar_ops {                                                              \
    typedef Acc acc_type;                                                                \
    typedef In in_type;                                                                  \
    static __device__ __forceinline__ Acc id() { return identity(); }                    \
    static __device__ __forceinline__ Acc op(Acc a, Acc b) { return combine(a, b); }      \
    static __device__ __forceinline__ Acc load(const In *in, size_t i) {                 \
      return transform(in, i);                                                           \
    }                                                                                    \
  };                                                                                     \
  extern "C" int name##__xpar_gpu_reduce(const xpar_operator_gpu_call *c) {              \
    return xpar_operator_cuda::reduce<name##__xpar_ops>(c);                              \
  }                                                                                      \
  extern "C" int name##__xpar_gpu_scan(const xpar_operator_gpu_call *c) {                \
    return xpar_operator_cuda::scan<name##__xpar_ops>(c);                                \
  }
#else
#if defined(_OPENMP)
#define XPAR__OPERATOR_PARTS_(nt) \
  ((nt) > 0 ? (nt) : omp_get_max_threads())
#define XPAR__OPERATOR_PARALLEL_FOR_ _Pragma("omp parallel for schedule(static) num_threads(xpar_team_)")
#else
#define XPAR__OPERATOR_PARTS_(nt) 1
#define XPAR__OPERATOR_PARALLEL_FOR_
#endif
#if defined(XPAR_KERNEL_WITH_CUDA)
#define XPAR__OPERATOR_GPU_(name)                                          \
  extern int name##__xpar_gpu_reduce(const xpar_operator_gpu_call *c);     \
  extern int name##__xpar_gpu_scan(const xpar_operator_gpu_call *c);
#define XPAR__OPERATOR_GPU_FNS_(name) name##__xpar_gpu_reduce, name##__xpar_gpu_scan
#else
#define XPAR__OPERATOR_GPU_(name)
#define XPAR__OPERATOR_GPU_FNS_(name) NULL, NULL
#endif
/* The OpenMP tier cuts [0, n) into at most 256 contiguous parts, one per
 * thread, and combines their results in part order: the operator need not be
 * commutative.  The team has the context's size whatever n (fewer parts than
 * threads leave threads idle), as xpar's own regions, so that libgomp's pool
 * is never resized.  The scan is two passes (reduce each part, then scan each
 * part from the combined results of the parts before it). */
#define XPAR_OPERATOR(name, Acc, In, identity, combine, transform)                         \
  static Acc name##__xpar_range(const In *in, size_t lo, size_t hi) {                      \
    Acc acc = identity();                                                                  \
    for (size_t j = lo; j < hi; j++) acc = combine(acc, transform(in, j));                 \
    return acc;                                                                            \
  }                                                                                        \
  static void name##__xpar_scan_range(const In *in, Acc *out, size_t lo, size_t hi,        \
                                      Acc acc, int exclusive) {                            \
    for (size_t j = lo; j < hi; j++) {                                                     \
      const Acc v = transform(in, j);                                                      \
      if (exclusive) {                                                                     \
        out[j] = acc;                                                                      \
        acc = combine(acc, v);                                                             \
      } else {                                                                             \
        acc = combine(acc, v);                                                             \
        out[j] = acc;                                                                      \
      }                                                                                    \
    }                                                                                      \
  }                                                                                        \
  static int name##__xpar_team(int num_threads) {                                          \
    int t = num_threads == 1 ? 1 : XPAR__OPERATOR_PARTS_(num_threads);                     \
    if (t > XPAR__KERNEL_MAX_THREADS_) t = XPAR__KERNEL_MAX_THREADS_;                      \
    return t < 1 ? 1 : t;                                                                  \
  }                                                                                        \
  static int name##__xpar_parts(size_t n, int team) {                                      \
    return (size_t)team > n ? (n ? (int)n : 1) : team;                                     \
  }                                                                                        \
  static void name##__xpar_cpu_reduce(size_t n, const void *in_, void *result,             \
                                      int num_threads) {                                   \
    const In *in = (const In *)in_;                                                        \
    const int xpar_team_ = name##__xpar_team(num_threads);                                 \
    const int xpar_parts_ = name##__xpar_parts(n, xpar_team_);                             \
    (void)xpar_team_;                                                                      \
    Acc part[XPAR__KERNEL_MAX_THREADS_];                                                   \
    XPAR__OPERATOR_PARALLEL_FOR_                                                           \
    for (int p = 0; p < xpar_parts_; p++)                                                  \
      part[p] = name##__xpar_range(in, n * (size_t)p / (size_t)xpar_parts_,                \
                                   n * (size_t)(p + 1) / (size_t)xpar_parts_);             \
    Acc acc = part[0];                                                                     \
    for (int p = 1; p < xpar_parts_; p++) acc = combine(acc, part[p]);                     \
    *(Acc *)result = acc;                                                                  \
  }                                                                                        \
  static void name##__xpar_cpu_scan(size_t n, const void *in_, void *out_, int exclusive,  \
                                    int num_threads) {                                     \
    const In *in = (const In *)in_;                                                        \
    Acc *out = (Acc *)out_;                                                                \
    const int xpar_team_ = name##__xpar_team(num_threads);                                 \
    const int xpar_parts_ = name##__xpar_parts(n, xpar_team_);                             \
    (void)xpar_team_;                                                                      \
    if (xpar_parts_ == 1) {                                                                \
      name##__xpar_scan_range(in, out, 0, n, identity(), exclusive);                       \
      return;                                                                              \
    }                                                                                      \
    Acc carry[XPAR__KERNEL_MAX_THREADS_];                                                  \
    XPAR__OPERATOR_PARALLEL_FOR_                                                           \
    for (int p = 0; p < xpar_parts_; p++)                                                  \
      carry[p] = name##__xpar_range(in, n * (size_t)p / (size_t)xpar_parts_,               \
                                    n * (size_t)(p + 1) / (size_t)xpar_parts_);            \
    Acc acc = identity();                                                                  \
    for (int p = 0; p < xpar_parts_; p++) {                                                \
      const Acc sum = carry[p];                                                            \
      carry[p] = acc;                                                                      \
      acc = combine(acc, sum);                                                             \
    }                                                                                      \
    XPAR__OPERATOR_PARALLEL_FOR_                                                           \
    for (int p = 0; p < xpar_parts_; p++)                                                  \
      name##__xpar_scan_range(in, out, n * (size_t)p / (size_t)xpar_parts_,                \
                              n * (size_t)(p + 1) / (size_t)xpar_parts_, carry[p],         \
                              exclusive);                                                  \
  }                                                                                        \
  XPAR__OPERATOR_GPU_(name)                                                                \
  extern const xpar_operator name;                                                         \
  const xpar_operator name = {XPAR_KERNEL_ABI, #name, sizeof(In), _Alignof(In),            \
                              sizeof(Acc), _Alignof(Acc), name##__xpar_cpu_reduce,         \
                              name##__xpar_cpu_scan, XPAR__OPERATOR_GPU_FNS_(name)};       \
  _Static_assert(sizeof(Acc) <= XPAR_OPERATOR_MAX_ACC,                                     \
                 "an operator's accumulator has at most XPAR_OPERATOR_MAX_ACC bytes")
#endif

/** @} */

/* ---- defining a predicate ----------------------------------------------------- */
/** @addtogroup predicates
 *  @{ */

/**
 * @def XPAR_PREDICATE(name, In, test)
 * XPAR_PREDICATE(name, In, test) defines the predicate object `name` from a
 * function the application writes with XPAR_KERNEL_FN:
 * @code{.unparsed}
 *   int test(const In *in, size_t i);   not 0: keep element i
 * @endcode
 * Under nvcc it instantiates the flag kernel of xpar/xpar_predicate.cuh; under
 * a C compiler the CPU loops and the object.  Declare it elsewhere with
 * XPAR_PREDICATE_DECLARE(name).
 */

/** Declare a predicate object defined in another file (C or C++). */
#ifdef __cplusplus
#define XPAR_PREDICATE_DECLARE(name) extern "C" const xpar_predicate_op name
#else
#define XPAR_PREDICATE_DECLARE(name) extern const xpar_predicate_op name
#endif

#if defined(__CUDACC__)
#include "xpar_predicate.cuh"
#define XPAR_PREDICATE(name, In, test)                                                 \
  struct name##__xpar_pred {                                                           \
    typedef In in_type;                                                                \
    static __device__ __forceinline__ bool keep(const In *in, size_t i) {              \
      return test(in, i) != 0;                                                         \
    }                                                                                  \
  };                                                                                   \
  extern "C" int name##__xpar_gpu_flags(const xpar_predicate_gpu_call *c) {            \
    return xpar_predicate_cuda::flags<name##__xpar_pred>(c);                           \
  }
#else
#if defined(XPAR_KERNEL_WITH_CUDA)
#define XPAR__PREDICATE_GPU_(name) \
  extern int name##__xpar_gpu_flags(const xpar_predicate_gpu_call *c);
#define XPAR__PREDICATE_GPU_FN_(name) name##__xpar_gpu_flags
#else
#define XPAR__PREDICATE_GPU_(name)
#define XPAR__PREDICATE_GPU_FN_(name) NULL
#endif
/* The CPU side: one loop that counts, one that copies (xpar's CPU backend runs
 * them per thread over contiguous ranges, counting first where it must know
 * where a range's elements go). */
#define XPAR_PREDICATE(name, In, test)                                                   \
  static size_t name##__xpar_count(const void *in_, size_t lo, size_t hi) {              \
    const In *in = (const In *)in_;                                                      \
    size_t k = 0;                                                                        \
    for (size_t i = lo; i < hi; i++) k += test(in, i) != 0;                              \
    return k;                                                                            \
  }                                                                                      \
  static size_t name##__xpar_scatter(const void *in_, size_t lo, size_t hi, void *kept_, \
                                     void *rest_) {                                      \
    const In *in = (const In *)in_;                                                      \
    In *kept = (In *)kept_, *rest = (In *)rest_;                                         \
    size_t k = 0, r = 0;                                                                 \
    for (size_t i = lo; i < hi; i++) {                                                   \
      if (test(in, i))                                                                   \
        kept[k++] = in[i];                                                               \
      else if (rest)                                                                     \
        rest[r++] = in[i];                                                               \
    }                                                                                    \
    return k;                                                                            \
  }                                                                                      \
  XPAR__PREDICATE_GPU_(name)                                                             \
  extern const xpar_predicate_op name;                                                   \
  const xpar_predicate_op name = {XPAR_KERNEL_ABI, #name, sizeof(In), _Alignof(In),      \
                                  name##__xpar_count, name##__xpar_scatter,              \
                                  XPAR__PREDICATE_GPU_FN_(name)}
#endif

/** @} */

#endif /* XPAR_XPAR_KERNEL_H */
