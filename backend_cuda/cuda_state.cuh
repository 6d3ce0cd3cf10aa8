/*
 * The per-context GPU state and the helpers every .cu file of the backend
 * shares: CUDA error -> xpar status, the sticky-error latch, cached scratch.
 * C++ only; nothing here crosses into C (the C side sees an opaque pointer).
 */
#ifndef XPAR_BACKEND_CUDA_STATE_CUH
#define XPAR_BACKEND_CUDA_STATE_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "base/backend.h"
#include "done_signal.cuh"

/* A device or pinned buffer that only grows; never freed per call. */
struct xpar__cuda_buffer {
  void *ptr;
  size_t bytes;
};

/* Kernel launches, for tests and the bench (and the staging stamps). */
struct xpar__cuda_counters {
  unsigned long long launches;
};

struct xpar__cuda_state {
  int device;
  /* The device's primary context (a CUcontext), retained for the process and current
   * after the switch at creation; NULL where the driver could not say
   * (xpar__cuda_begin). */
  void *primary_context;
  int multiprocessors;
  size_t l2_bytes; /* the device's L2 size; 0 when unknown (reduce_kernel.cuh: read path) */
  /* Whether a synchronous call may return on its kernel's flag (done_signal.cuh, the
   * reduce's stamped result) while the stream still retires the kernel: not on a device
   * without concurrent managed access, where the host touching managed memory while any
   * kernel runs faults (Windows, some Jetsons). */
  bool flag_waits;
  /* Whether the device has the stream-ordered allocator (cudaMallocAsync): a stateful
   * call captured into a CUDA graph takes its scratch from it, owned by the graph
   * (GraphScratch). */
  bool memory_pools;
  cudaStream_t own_stream; /* a blocking stream, created by state_create   */
  cudaStream_t stream;     /* own_stream or the application's (set_stream) */

  /* Small control block in device memory, zeroed once when allocated:
   * the reduce last-block ticket (reset to 0 by the last block of each
   * reduce), the scan's 64-bit monotonically increasing tile counter and the
   * done signal's ticket (done_signal.cuh; reset by the last block). */
  unsigned int *reduce_ticket;
  unsigned long long *scan_tile_counter;
  unsigned int *done_ticket;
  void *control_block;

  struct xpar__cuda_buffer reduce_partials; /* one accumulator per block  */
  struct xpar__cuda_buffer scan_status;     /* 8-byte words, then 16-byte words, per tile */
  size_t scan_status_tiles;                 /* tiles the status buffer holds */
  uint32_t scan_epoch;             /* tags this call's status flags         */
  unsigned long long scan_tile_base; /* counter value at the start of a call */

  /* The sort's scratch (device_sort.cu): control words and the passes' key and value
   * buffers; and its per-(tile, digit) status words, tagged by sort_epoch (advanced by
   * each call's passes) and cleared once after each growth (sort_status_cleared). */
  struct xpar__cuda_buffer sort_scratch;
  struct xpar__cuda_buffer sort_status;
  uint32_t sort_epoch;
  bool sort_status_cleared;

  /* Argmin / argmax and the segmented ops (device_segmented.cu): the offsets'
   * check word, argmin's ticket and per-block partials. */
  struct xpar__cuda_buffer seg_scratch;

  /* Dispatch's operand staging slots, and for each the launch count + 1 at
   * which it was last handed out: equal to launches + 1 while the call that
   * asked for it has not launched its kernel yet (it is in use). */
  struct xpar__cuda_buffer staging[XPAR__OPERAND_SLOTS];
  unsigned long long staging_stamp[XPAR__OPERAND_SLOTS];

  /* Pinned, host-mapped result slot (kResultSlotBytes): the reduce's last block
   * writes the result straight into host memory (offset 0, or stamped at
   * kResultStampedOffset on a small call), and a synchronous call's kernel raises
   * the done flag (kResultFlagOffset, done_signal.cuh) to the call's sequence
   * number; the host reads results after the flag or the sync. */
  void *result_host;
  void *result_device; /* the same memory as seen from the device */
  unsigned int result_seq; /* the last sequence number handed to a kernel */

  struct xpar__cuda_counters counters;
};

/* ---- errors ---------------------------------------------------------------- */

/*
 * Turn a CUDA error into an xpar status with the error's name and a
 * printf-style description of where it happened:
 *   "cudaErrorMemoryAllocation in scan scratch (requested 1048576 bytes)".
 * Out of memory -> XPAR_ERR_DEVICE_OUT_OF_MEMORY; context-corrupting errors ->
 * XPAR_ERR_DEVICE_STICKY, latched process-wide; anything else XPAR_ERR_DEVICE.
 * Clears the runtime's last-error slot of non-sticky errors so they do not
 * resurface in a later, unrelated call.
 */
xpar_status xpar__cuda_error(cudaError_t err, const char *where_fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* XPAR_ERR_DEVICE_STICKY if an earlier call saw a context-corrupting error,
 * else XPAR_OK.  Every entry point that touches the GPU starts with it. */
xpar_status xpar__cuda_check_sticky(void);

/* 1 if err leaves the CUDA context unusable for the rest of the process. */
int xpar__cuda_error_is_sticky(cudaError_t err);

#define XPAR_CUDA_TRY(call, ...)                              \
  do {                                                        \
    cudaError_t xpar_cuda_err_ = (call);                      \
    if (xpar_cuda_err_ != cudaSuccess)                        \
      return xpar__cuda_error(xpar_cuda_err_, __VA_ARGS__);   \
  } while (0)

/* ---- per-call helpers (cuda_state.cu) -------------------------------------- */

/* Make the state's device current for this host thread and check the sticky
 * latch; every operation starts with it.  The thread's own context goes back when
 * the public call leaves (cuda_state.cu: "the caller's driver context"). */
xpar_status xpar__cuda_begin(xpar__cuda_state *st, const char *op_name);

/* Make device's primary context current, remembering the caller's as begin does
 * (for the device probe, which has no state). */
cudaError_t xpar__cuda_select_device(int device);

/* XPAR_ERR_NOT_SUPPORTED naming op_name and why it cannot be captured into a CUDA graph
 * (`why`), for a call made while the context's stream captures. */
xpar_status xpar__cuda_refuse_capture(const char *op_name, const char *why);

/* Scratch for one call captured into a CUDA graph (ex->captured): take() gets `bytes` of
 * device memory from the stream-ordered allocator on the state's stream -- an allocation
 * node of the graph, so each replay has its own, aligned to 256 bytes -- its first
 * `zero_bytes` zeroed by a memset node; free() gives it back (a free node) after the
 * call's last kernel, and so does the destructor on any earlier return (a failed launch,
 * a refusal).  On a device without the stream-ordered allocator take() refuses the call
 * (XPAR_ERR_NOT_SUPPORTED); every caller takes its scratch before it queues anything, so
 * the refusal writes nothing, and captured calls that need no scratch (a built-in
 * one-block scan, n = 0) still run there.  `what` names the operation in the messages.
 * A capture that stays valid must not keep an allocation node without its free node (its
 * graph could not be launched again while the block is outstanding, and the application
 * never learns its address). */
class GraphScratch {
 public:
  explicit GraphScratch(xpar__cuda_state *st) : st_(st) {}
  GraphScratch(const GraphScratch &) = delete;
  GraphScratch &operator=(const GraphScratch &) = delete;
  ~GraphScratch();
  xpar_status take(size_t bytes, size_t zero_bytes, const char *what);
  void *get() const { return ptr_; }
  xpar_status free(const char *what);

 private:
  xpar__cuda_state *st_;
  void *ptr_ = nullptr;
};

/* XPAR_ERR_NOT_SUPPORTED while st's stream captures a CUDA graph (xpar__cuda_capturing),
 * asked before a step that sets up the context's own state with queued work -- the
 * control block's zeroing, a tile-status buffer grown or cleared -- which a capture
 * would record instead of running (a synchronous call made during a capture is
 * captured up to its wait, which then fails): the state would be believed ready and
 * never be.  Rare steps, so the query (14-25 ns) costs the hot path nothing. */
xpar_status xpar__cuda_refuse_if_capturing(xpar__cuda_state *st, const char *what);

/* Grow `buf` to at least `bytes` of device memory (1.5x what is asked, so
 * that a slowly rising n does not reallocate every call; never shrunk).
 * Waits for the stream first (queued work may still use the old buffer).
 * When the allocation fails it retries at the exact size, then once more
 * after freeing the cached buffers the call in progress does not use, and
 * only then reports out of memory.  `what` names it in errors.  Sets *grown
 * when it reallocated. */
xpar_status xpar__cuda_grow_device(xpar__cuda_state *st, xpar__cuda_buffer *buf, size_t bytes,
                                   const char *what, int *grown);

/* The control block and pinned result slot, allocated on first use. */
xpar_status xpar__cuda_ensure_control(xpar__cuda_state *st);

/* The pinned result slot (kResultSlotBytes): a plain result at 0 (read after a stream
 * synchronisation), the two stamped result words of a spinning reduce at 16
 * (device_reduce.cu), the done flag of a synchronous call (done_signal.cuh) at 32, an operator's result (up to
 * XPAR_OPERATOR_MAX_ACC bytes, device_kernel.cu) at 64. */
constexpr size_t kResultStampedOffset = 16;
constexpr size_t kResultFlagOffset = 32;
constexpr size_t kResultOperatorOffset = 64;
constexpr size_t kResultSlotBytes = 128;

/* The stamped result words of the next spinning reduce (as the device sees them) and
 * their sequence number; xpar__cuda_ensure_control first. */
unsigned long long *xpar__cuda_next_stamped_result(xpar__cuda_state *st, unsigned int *seq);
/* Spin (at most tuning::spin_limit_ns) until both stamped words carry `seq`, then copy
 * the `bytes` (4 or 8) of the result to `out`: true.  false: the caller synchronises the
 * stream and then calls xpar__cuda_read_stamped. */
bool xpar__cuda_spin_for_stamped(xpar__cuda_state *st, unsigned int seq, void *out, size_t bytes);
void xpar__cuda_read_stamped(xpar__cuda_state *st, void *out, size_t bytes);

/* The done signal (done_signal.cuh) for the next launch: where `wait` (a synchronous call
 * that will wait for it), the control block's ticket and the pinned flag with a new
 * sequence number; otherwise none (flag NULL), and the kernel skips it. */
xpar_status xpar__cuda_done_signal(xpar__cuda_state *st, bool wait, DoneSignal *out);
/* After the launch of a synchronous call: wait for its done signal, spinning on host
 * memory for at most tuning::spin_limit_ns, and where the flag did not come (a slow or
 * failed kernel; no signal) for the stream, whose synchronisation reports the error.
 * When the flag came the stream may still be retiring the kernel: later work on it is
 * ordered after it anyway, and every output is visible (done_signal.cuh). */
xpar_status xpar__cuda_finish(xpar__cuda_state *st, const DoneSignal &done, const char *what);

/* Resource figures of the tuned scan kernel for `element_bytes` (4: int32 sum, 8: double
 * sum; xpar-gpu-bench prints them): registers per thread, local (spill) bytes per thread,
 * block size and resident blocks per SM from the occupancy calculator.  Returns 0 on
 * success. */
int xpar__cuda_scan_resources(int element_bytes, int *regs, int *local_bytes, int *block,
                              int *blocks_per_sm);

/* After a launch: report a launch error (bad configuration, no image, ...). */
xpar_status xpar__cuda_check_launch(xpar__cuda_state *st, const char *what);

/*
 * Launch `kernel` (a __global__ function's address) on the state's stream with `args`
 * (one pointer per kernel parameter, as cudaLaunchKernel takes them) and `shared_bytes` of
 * dynamic shared memory, counted in st->counters.launches.  Where the launch is much of
 * the call (the spinning reduce and one-block scan, the elementwise kernels) the caller
 * passes the kernel's context-independent handle (xpar_cuda::kernel_handle,
 * xpar/xpar_kernel.h, resolved once per kernel) and the launch goes through the driver's
 * cuLaunchKernel, reached through the runtime (cudaGetDriverEntryPointByVersion, resolved
 * once per process: libxpar does not link libcuda).  Measured on the H100
 * host (2026-11-25): cuLaunchKernel returns 0.3-0.5 us sooner than
 * cudaLaunchKernel, and the stamp floor (1-thread kernel writing a pinned word the host
 * spins on) drops 7.4 -> 6.7 us.  With a NULL handle, or where the
 * driver path is unavailable or refuses the launch, the runtime's cudaLaunchKernel
 * launches it and its error, if any, is reported as `what`'s launch failure.
 */
xpar_status xpar__cuda_launch(xpar__cuda_state *st, const void *kernel, const void *handle,
                              unsigned grid, unsigned block, size_t shared_bytes, void **args,
                              const char *what);
/* The driver's launch alone, for a kernel whose runtime launch lives in another runtime (an
 * application's kernel, launched by its own k->gpu otherwise): true when queued; false
 * where there is no handle or driver entry point or the driver refused it, and nothing was
 * queued.  Not counted (the caller's xpar__cuda_check_launch counts). */
bool xpar__cuda_driver_launch(xpar__cuda_state *st, const void *handle, unsigned grid,
                              unsigned block, void **args);

/* Wait for the state's stream and map any error raised by queued work. */
xpar_status xpar__cuda_sync(xpar__cuda_state *st, const char *what);

#endif /* XPAR_BACKEND_CUDA_STATE_CUH */
