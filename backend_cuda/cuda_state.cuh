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

#include "backend.h"

/* A device or pinned buffer that only grows; never freed per call. */
struct xpar__cuda_buffer {
  void *ptr;
  size_t bytes;
};

/* Kernel launches, for tests and the bench (and the staging stamps). */
struct xpar__cuda_counters {
  unsigned long long launches;
};

/* Run-time knobs of the scan's look-back (defaults in launch_shape.cuh;
 * xpar-gpu-bench sweeps them through the state). */
struct xpar__cuda_scan_tuning {
  unsigned blocks_per_sm;    /* persistent grid: resident blocks per SM, at most */
  unsigned first_poll_delay_ns; /* sleep before the first look at predecessors */
  unsigned poll_delay_ns;    /* sleep between polls of a predecessor's flag */
  int ticket_draw;           /* when a block draws its next tile index (below) */
  int variant;               /* which scan kernel family: XPAR_CUDA_SCAN_* (below) */
  int tile_order;            /* occupancy kernels: XPAR_CUDA_TILES_* (below) */
  unsigned delay_min_grid;   /* occupancy kernels: no sleeps below this many blocks */
};
enum {
  XPAR_CUDA_TILES_TICKET = 0,     /* blocks draw tile indices from a counter, loop */
  XPAR_CUDA_TILES_BLOCK_INDEX = 1 /* tile = blockIdx.x when grid >= tiles (CUB's order) */
};
enum {
  XPAR_CUDA_TICKET_AT_END = 0,         /* after the tile is stored */
  XPAR_CUDA_TICKET_AT_START = 1,       /* as the tile starts (prefetch) */
  XPAR_CUDA_TICKET_AFTER_AGGREGATE = 2 /* once the tile's aggregate is published */
};
/* Scan kernel variants (device_scan.cu; run-time selectable so that one bench run compares
 * them; the environment variable XPAR_CUDA_SCAN_VARIANT=v3|v4|v5, read once when a state
 * is created, overrides the default in launch_shape.cuh).
 *  v3: persistent grid (blocks_per_sm x SMs), 512 threads, separate flag / value arrays,
 *      warp 0 looks back while the block waits at a barrier; ticket_draw applies.
 *  v4: grid = number of tiles (occupancy, not persistence), small blocks with a register
 *      budget for many resident blocks, packed 64-bit tile status for 4-byte types, the
 *      block-local scan done before the wait for the prefix; the delays apply, the
 *      blocks_per_sm and ticket_draw knobs do not.  256 threads x 4 vectors, tickets.
 *  v5: the v4 kernel with 256 threads x 6 vectors, 4 blocks per SM (64 registers), a
 *      32 x 2-tile look-back window, tile = blockIdx.x when grid >= tiles, 1250 / 650 ns
 *      delays from 500 blocks up (the default; launch_shape.cuh has the figures).
 * Calls with grid = 1 (cuda-serial, 1 x N overrides, small n) always run v3's single-block
 * path (CPU-serial bit-exactness). */
enum {
  XPAR_CUDA_SCAN_V3 = 0,
  XPAR_CUDA_SCAN_V4 = 1,
  XPAR_CUDA_SCAN_V5 = 2,
  XPAR_CUDA_SCAN_VARIANTS = 3
};
/* "v3", "v4", "v5" (NULL if out of range) and back (-1 if unknown). */
const char *xpar__cuda_scan_variant_name(int variant);
int xpar__cuda_scan_variant_parse(const char *name);

/* Resource figures of a variant's tuned int32-sum kernel (bench and notes):
 * registers per thread, local (spill) bytes per thread, block size and resident
 * blocks per SM from the occupancy calculator.  Returns 0 on success. */
int xpar__cuda_scan_variant_resources(int variant, int *regs, int *local_bytes, int *block,
                                      int *blocks_per_sm);

struct xpar__cuda_state {
  int device;
  int multiprocessors;
  cudaStream_t own_stream; /* a blocking stream, created by state_create   */
  cudaStream_t stream;     /* own_stream or the application's (set_stream) */

  /* Small control block in device memory, zeroed once when allocated:
   * the reduce last-block ticket (reset to 0 by the last block of each
   * reduce) and the scan's 64-bit monotonically increasing tile counter. */
  unsigned int *reduce_ticket;
  unsigned long long *scan_tile_counter;
  void *control_block;

  struct xpar__cuda_buffer reduce_partials; /* one accumulator per block  */
  struct xpar__cuda_buffer scan_status;     /* flags + packed + aggregate + inclusive */
  size_t scan_status_tiles;                 /* tiles the status buffer holds */
  uint32_t scan_epoch;             /* tags this call's status flags         */
  unsigned long long scan_tile_base; /* counter value at the start of a call */

  /* Dispatch's operand staging slots, and for each the launch count + 1 at
   * which it was last handed out: equal to launches + 1 while the call that
   * asked for it has not launched its kernel yet (it is in use). */
  struct xpar__cuda_buffer staging[XPAR__OPERAND_SLOTS];
  unsigned long long staging_stamp[XPAR__OPERAND_SLOTS];

  /* Pinned, host-mapped result slot (64 bytes): the reduce's last block
   * writes the result straight into host memory (offset 0) and, on a small
   * call, then raises the done flag (offset kResultFlagOffset) to the call's
   * sequence number; the host reads the result after the flag or the sync. */
  void *result_host;
  void *result_device; /* the same memory as seen from the device */
  unsigned int result_seq; /* the last sequence number handed to a kernel */

  struct xpar__cuda_scan_tuning scan_tuning;
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
 * latch; every operation starts with it. */
xpar_status xpar__cuda_begin(xpar__cuda_state *st, const char *op_name);

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

/* Where the done flag lives in the pinned result slot. */
constexpr size_t kResultFlagOffset = 32;

/* Wait for the kernel to raise the result slot's done flag to `seq`, spinning
 * on host memory for at most tuning::spin_limit_ns.  Returns true when the
 * flag came (the result is readable; the stream may still be retiring the
 * kernel, which later work on it is ordered after anyway), false when the
 * caller must synchronise the stream instead (a slow or failed kernel: the
 * synchronisation then reports its error). */
bool xpar__cuda_spin_for_flag(xpar__cuda_state *st, unsigned int seq);

/* After a launch: report a launch error (bad configuration, no image, ...). */
xpar_status xpar__cuda_check_launch(xpar__cuda_state *st, const char *what);

/* Wait for the state's stream and map any error raised by queued work. */
xpar_status xpar__cuda_sync(xpar__cuda_state *st, const char *what);

#endif /* XPAR_BACKEND_CUDA_STATE_CUH */
