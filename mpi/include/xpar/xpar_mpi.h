/**
 * @file
 * xpar_mpi — distributed reduce, dot and scan over an MPI communicator, on top
 * of xpar.  An optional component: its own header, library (libxpar_mpi),
 * CMake target (find_package(xpar COMPONENTS mpi) -> xpar::mpi) and
 * pkg-config file (xpar-mpi).  libxpar itself does not depend on MPI.
 *
 * Model.  Each rank of the communicator holds a slice of one long array and
 * passes it with its own length n_local (slices may differ in length between
 * ranks; 0 is fine).  The array is the concatenation of the slices in rank
 * order of the communicator.  Every function here is a collective on comm:
 * every rank of comm must call it, with the same dtype, op and kind, in the
 * same order as its other collectives on comm (MPI's rules for collectives,
 * including those for threads: see "Threads" below).
 *
 *  - xpar_mpi_reduce, xpar_mpi_reduce_sum_wide, xpar_mpi_dot: the result over
 *    the whole array is written on every rank (allreduce semantics).
 *  - xpar_mpi_scan: each rank's output is its slice of the scan of the whole
 *    array.
 *
 * How it runs.  Each rank's local work is an ordinary xpar call on the
 * context the application passes (AUTO, or whatever policy the context has),
 * so a slice may live anywhere xpar accepts data: host memory (pageable or
 * pinned), an array mapped with xpar_map(), device or managed memory.  Only
 * one scalar per rank crosses ranks, always through host memory: the
 * component never hands an application pointer (let alone a device pointer)
 * to MPI, so any MPI library works, CUDA-aware or not.
 *  - reduce / wide sum / dot: local xpar call -> one MPI_Allgather of a
 *    16-byte record per rank (the local status, what was called, the
 *    partial) -> every rank folds the partials itself, in rank order; when
 *    any rank's result lies in device memory or inside a mapping (see
 *    below), one MPI_Allreduce of a status word after the writes, as for a
 *    scan.
 *  - scan: every rank but the last reduces its slice with xpar_reduce (its
 *    total: the last rank's total is needed by nobody) -> the same
 *    MPI_Allgather -> rank r folds the totals of ranks 0..r-1 in rank order
 *    into its carry -> xpar_scan_init(carry) on its slice -> one
 *    MPI_Allreduce of a status word, so that a rank whose local scan failed
 *    is known to all.
 *
 * The result of a reduce, wide sum or dot may lie where xpar_reduce's may: a
 * host variable (pageable, pinned, managed, or inside a mapping, whose host
 * copy is written as by xpar_reduce) or device memory (cudaMalloc, aligned to
 * its type), which is written on the device through the same context (one
 * more xpar call: a one-element reduce, the total's bits exactly).
 * xpar_last_decision(ctx) afterwards describes the last local call: the
 * local reduce, dot or wide sum (or that one-element write, for a result in
 * device memory or inside a mapping), or for a scan the local xpar_scan_init
 * (the local reduce before it is not recorded separately).
 *
 * Determinism.  Integer results are exact (sums, scans and dots wrap modulo
 * 2^bits exactly as in xpar, whatever the rank count).  For floats the
 * cross-rank step is fixed: the partials (or slice totals) are combined in
 * rank order, left to right, in the result's type, by every rank itself:
 * @code{.unparsed}
 *     result = ((p_0 op p_1) op p_2) ... op p_{size-1}
 *     carry of rank r = (p_0 op p_1) ... op p_{r-1}   (rank 0: the identity)
 * @endcode
 * never in an order MPI picks (no MPI_Allreduce or MPI_Exscan on data).  So
 *  - the reduce, wide-sum and dot results are the same bits on every rank;
 *  - a result is the same bits on every run with the same rank count and
 *    slice lengths whenever each rank's local calls are.  xpar's local
 *    reduce, dot and wide sum are, on every tier, for a fixed tier, launch
 *    shape and OpenMP team size (which AUTO chooses from the slice length,
 *    the data's location and the context's thresholds, so the same inputs on
 *    the same machine give the same choice).  The local scan is, except on
 *    the GPU tier for float and double, whose decoupled look-back groups tile
 *    totals by timing: there the carries are still reproducible but the
 *    elements inside a slice may differ in the last bits between runs, as
 *    with cub::DeviceScan.  Force the cpu or cuda-serial tiers where
 *    bitwise-reproducible float scans matter.
 * Float results differ from a single-rank call on the concatenated array by
 * rounding only (the grouping differs); xpar's usual error bounds apply.
 *
 * Errors.  Every function returns an xpar_status, XPAR_OK on every rank or an
 * error on every rank:
 *  - a rank whose local work fails (a bad argument, a device error, ...)
 *    still takes part in the exchange, carrying its status; then every rank
 *    returns an error.  The failing rank returns its own status; every other
 *    rank returns the status of the lowest-numbered failing rank.
 *    xpar_mpi_last_error_detail() names the failing rank and its status
 *    ("rank 2 of 4 failed: ERR_NULL_POINTER (a required pointer is NULL)"),
 *    and on the failing rank its own status name and detail ("rank 2 of 4
 *    failed: ERR_NULL_POINTER: local xpar_reduce: in is NULL (n = 5)").
 *  - ranks that disagree on the function, dtype, op or kind get
 *    XPAR_ERR_INVALID_ARGUMENT on every rank, with a detail naming the first
 *    rank that differs from rank 0 and both values.  A rank's own failure
 *    (the rule above) comes first: where one rank passes an unknown dtype,
 *    op or kind (XPAR_ERR_INVALID_ENUM), or a NULL array, that is what every
 *    rank returns, whatever the others passed.
 *  - nothing is written when any rank fails before the exchange (arguments,
 *    among them a result that straddles a mapping's edge or lies in device
 *    memory not aligned to its type; the local reduce): not the result, not
 *    any output, on no rank.  The exceptions come after the exchange: a
 *    result in device memory or inside a mapping whose write fails on a rank
 *    (a device error, host memory running out; the ranks then agree as after
 *    a scan, every rank
 *    returns an error, and the others have written their results); and a
 *    scan whose local xpar_scan_init fails after the exchange
 *    (any failure of the local call there: out of device memory, a device
 *    error, or a setting of that rank's context -- mandatory offload without
 *    a GPU -- that its earlier local work did not meet; the last rank has no
 *    local work before the exchange): every rank still returns the error, the
 *    failing rank's output is unwritten (with XPAR_ERR_SHADOW_MISMATCH it
 *    holds the primary tier's result, as in xpar.h), but the other ranks have
 *    written theirs.
 *  - checked before any communication, returned at once on the rank that
 *    passes them (such a rank cannot take part, so the others of its
 *    communicator would wait for it: pass every rank a usable communicator):
 *    @code{.unparsed}
 *      XPAR_ERR_INVALID_ARGUMENT  MPI is not initialised (MPI_Initialized)
 *                                 or already finalised; comm is
 *                                 MPI_COMM_NULL; comm is an
 *                                 intercommunicator
 *      XPAR_ERR_NULL_POINTER      comm is a zero (NULL) handle
 *    @endcode
 *  - XPAR_ERR_IO: an MPI call returned an error (only possible when the
 *    application set MPI_ERRORS_RETURN on comm; with MPI's default handler,
 *    MPI_ERRORS_ARE_FATAL, MPI aborts instead).  The detail names the function,
 *    the MPI call and MPI's error string.  Nothing is written when the exchange
 *    itself fails; the one MPI call after it -- the MPI_Allreduce by which the
 *    ranks agree after a scan's local writes or a result written through xpar
 *    -- comes after this rank's output was written, and the detail says so.
 *  - the exchange needs 16 bytes of host memory per rank of comm (on the
 *    stack up to 64 ranks, malloc'd per call above): a rank that cannot get
 *    them returns XPAR_ERR_OUT_OF_MEMORY without taking part, and the others
 *    then wait for it, as in any collective a rank leaves.
 * The detail is kept by this component, thread-local, separately from
 * xpar's: read it with xpar_mpi_last_error_detail().  (xpar_last_error_detail()
 * still holds the detail of the last local xpar call on this thread.)
 *
 * Threads.  A context is used by one thread at a time (as in xpar); calling
 * these functions from several threads needs MPI_THREAD_MULTIPLE (or
 * serialised calls under MPI_THREAD_SERIALIZED), and concurrent collectives
 * on one communicator are not allowed by MPI: use one communicator (e.g. an
 * MPI_Comm_dup) per thread.
 *
 * GPUs.  With several GPUs in a node, give each rank its own:
 * xpar_mpi_context_create() creates a context on the GPU of this rank's
 * node-local rank modulo the visible device count (XPAR_DEVICE, if set,
 * wins); xpar_mpi_local_device() says which device that is, for the
 * application's own cudaSetDevice / cudaMalloc.
 */
#ifndef XPAR_XPAR_MPI_H
#define XPAR_XPAR_MPI_H

#include <mpi.h>
#include <stddef.h>

#include "xpar/xpar.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup mpi MPI component
 * Distributed reduce, wide sum, dot and scan over an MPI communicator
 * (libxpar_mpi, xpar/xpar_mpi.h: see the file's description).
 * @{
 */

#if defined(XPAR_MPI_STATIC_DEFINE)
#define XPAR_MPI_API
#elif defined(_WIN32)
#if defined(XPAR_MPI_BUILDING)
#define XPAR_MPI_API __declspec(dllexport)
#else
#define XPAR_MPI_API __declspec(dllimport)
#endif
#else
#define XPAR_MPI_API __attribute__((visibility("default")))
#endif

/**
 * The detail message of the last failed xpar_mpi_* call on this thread (see
 * "Errors" above); empty when the last call succeeded.  Valid until the next
 * xpar_mpi_* call on this thread.  Never NULL.  Thread-safe.
 */
XPAR_MPI_API const char *xpar_mpi_last_error_detail(void);

/**
 * Distributed reduce: *result = the SUM, MIN or MAX of the concatenation of
 * every rank's slice, on every rank.  Collective on comm.
 *
 * @param ctx      this rank's xpar context (runs the local xpar_reduce)
 * @param comm     any intracommunicator (MPI_COMM_WORLD, a split, a dup...)
 * @param dtype    element type; the same on every rank
 * @param op       XPAR_SUM, XPAR_MIN or XPAR_MAX; the same on every rank
 * @param in       this rank's slice (anywhere xpar accepts data); any pointer,
 *                 NULL or unaligned, when n_local is 0 (nothing is read)
 * @param n_local  this rank's slice length (may differ between ranks; 0 ok)
 * @param[out] result  a scalar of dtype (host, or device memory aligned to its
 *                 type: see "How it runs"), written on every rank on success
 *                 (the identity when every slice is empty)
 * @return XPAR_OK on every rank, or an error on every rank (see "Errors");
 *         the local statuses are xpar_reduce's.
 */
XPAR_MPI_API xpar_status xpar_mpi_reduce(xpar_context *ctx, MPI_Comm comm, xpar_dtype dtype,
                                         xpar_reduction op, const void *in, size_t n_local,
                                         void *result);

/**
 * Distributed wide sum: as xpar_reduce_sum_wide over the concatenation of the
 * slices (int32 -> int64, uint32 -> uint64, float -> double; 64-bit types in
 * their own type).  *result, a scalar of the accumulator type (host or
 * device memory, as xpar_mpi_reduce's), is written on every rank.  The partials are combined in the accumulator type.
 * Collective on comm; parameters and statuses as xpar_mpi_reduce.
 */
XPAR_MPI_API xpar_status xpar_mpi_reduce_sum_wide(xpar_context *ctx, MPI_Comm comm,
                                                  xpar_dtype dtype, const void *in,
                                                  size_t n_local, void *result);

/**
 * Distributed dot product: *result = sum over the concatenated slices of
 * x[i] * y[i] (a scalar of dtype, host or device memory), on every rank.  x and y of a rank
 * have the same length n_local.  Collective on comm; parameters and statuses
 * as xpar_mpi_reduce (the local call is xpar_dot).
 */
XPAR_MPI_API xpar_status xpar_mpi_dot(xpar_context *ctx, MPI_Comm comm, xpar_dtype dtype,
                                      const void *x, const void *y, size_t n_local,
                                      void *result);

/**
 * Distributed scan: out is this rank's slice of the inclusive or exclusive
 * SUM, MIN or MAX scan of the concatenation of every rank's slice.  The
 * exclusive scan's first element overall (rank 0's out[0], or that of the
 * first rank with a non-empty slice) is the identity; a rank's exclusive
 * out[0] is otherwise the reduction of every element before its slice.
 * out == in (in place) is allowed; any other overlap is XPAR_ERR_OVERLAP.
 * Collective on comm.
 *
 * Every rank but the last reduces its slice first (one extra read of it), so
 * a distributed scan reads each slice twice and writes it once.
 *
 * @param ctx, comm, dtype, op  as xpar_mpi_reduce
 * @param kind     XPAR_INCLUSIVE or XPAR_EXCLUSIVE; the same on every rank
 * @param in       this rank's input slice; any pointer (NULL, unaligned) when
 *                 n_local is 0
 * @param out      this rank's output slice; likewise
 * @param n_local  this rank's slice length
 * @return XPAR_OK on every rank, or an error on every rank (see "Errors":
 *         argument errors are found before anything is written on any rank).
 */
XPAR_MPI_API xpar_status xpar_mpi_scan(xpar_context *ctx, MPI_Comm comm, xpar_dtype dtype,
                                       xpar_reduction op, xpar_scan_kind kind, const void *in,
                                       void *out, size_t n_local);

/**
 * The CUDA device this rank should use: XPAR_DEVICE when it is set (as
 * xpar_device_query reads it), otherwise this rank's rank among the ranks of
 * comm on its node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) modulo the
 * number of visible devices (after CUDA_VISIBLE_DEVICES).  *device is -1 when
 * no GPU is usable (xpar_device_query says why).  Collective on comm (the
 * node split and one broadcast on it).  Only the first rank of each node
 * calls xpar_device_query (which initialises CUDA on the device it
 * describes, device 0, that rank's own); the others take the device count
 * from it, so that no rank opens a CUDA context on a GPU it will not use.  A
 * rank with XPAR_DEVICE set queries that device itself.
 *
 * @param comm    any intracommunicator; the ranks sharing a node are counted
 *                among comm's ranks only
 * @param[out] device  the ordinal, or -1
 * @return XPAR_OK; XPAR_ERR_NULL_POINTER (device NULL, or a zero comm
 *         handle); XPAR_ERR_INVALID_ARGUMENT (MPI not initialised or
 *         finalised, MPI_COMM_NULL, an intercommunicator); XPAR_ERR_IO (an
 *         MPI error, with MPI_ERRORS_RETURN).
 */
XPAR_MPI_API xpar_status xpar_mpi_local_device(MPI_Comm comm, int *device);

/**
 * Create an xpar context (xpar_context_create: it reads the XPAR_*
 * environment) on this rank's GPU as chosen by xpar_mpi_local_device(): the
 * node-local rank modulo the visible device count, unless XPAR_DEVICE is set,
 * which wins.  Without a usable GPU the context is created as
 * xpar_context_create would (its calls run on the CPU).  A later
 * xpar_context_set_device() on the context overrides both, as the API always
 * overrides the environment in xpar.  Collective on comm (the node split).
 *
 * @param comm  the communicator whose ranks share the node's GPUs
 * @param[out] out  the new context (NULL on failure); destroy it with
 *              xpar_context_destroy()
 * @return XPAR_OK; the statuses of xpar_mpi_local_device, of
 *         xpar_context_create (XPAR_ERR_INVALID_ENV, ...) and of
 *         xpar_context_set_device.  Failures are local: the other ranks are
 *         not told (no exchange follows the split).
 */
XPAR_MPI_API xpar_status xpar_mpi_context_create(MPI_Comm comm, xpar_context **out);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* XPAR_XPAR_MPI_H */
