/*
 * Launch shapes: the one place that decides grid, block and items per thread
 * for every kernel of the backend, and the tuning data behind the choices.
 *
 * Every kernel is a grid-stride (or persistent, tile-fetching) loop that is
 * correct at any grid and block size, including 1 x 1 (cuda-serial) and odd
 * sizes such as 7 x 33; the numbers below only decide speed.
 */
#ifndef XPAR_BACKEND_CUDA_LAUNCH_SHAPE_CUH
#define XPAR_BACKEND_CUDA_LAUNCH_SHAPE_CUH

#include <stddef.h>

#include "cuda_state.cuh"

namespace xpar_cuda {
namespace tuning {

/* Bytes of one vector access: LDG.E.128 / STG.E.128. */
constexpr unsigned vector_bytes = 16;

/*
 * Tuning, as data.  Figures: NVIDIA H100 80GB HBM3 (132 SMs), lent machine,
 * xpar-gpu-bench runs recorded in bench/cub/NOTES.md.
 *
 * reduce: 256 threads, 8 independent 16-byte loads in flight per thread per
 *   iteration (32 int32 / 16 double), up to 8 resident blocks per SM.
 * scan: 512 threads x 4 vectors (16 int32 / 8 double items) per thread per
 *   tile = 32 KiB tiles; 2 resident blocks per SM (persistent grid, the
 *   register limit at 64 registers); the next tile index is drawn at the end
 *   of a tile (a drawn tile must start at once: its successors wait for its
 *   aggregate); sleep 500 ns before the first look-back poll, 200 ns between
 *   polls.  Sweep of 2026-11-22, 2^28 int32, 4 flags per lane: this setting
 *   1683 GB/s; draw after the aggregate 1071; draw at the start 1053; one
 *   tile per block (CUB's shape) 1063; 256 x 4/SM 1441; 128 x 8/SM 1116;
 *   no first-poll delay 1573 (bench/cub/NOTES.md).
 * elementwise: 256 threads, 4 vectors per operand per iteration.
 */
constexpr unsigned reduce_block = 256;
constexpr unsigned reduce_vectors_per_thread = 8;
constexpr unsigned reduce_max_blocks_per_sm = 8;

constexpr unsigned scan_block = 512;
constexpr unsigned scan_vectors_per_thread = 4;
/* Look-back window: each lane of warp 0 polls this many predecessor flags at
 * once, so one round trip to L2 covers 32 x 4 = 128 tiles (with 1 tile per
 * lane the look-back walked ~8 windows of 2 round trips each at 2^28 and
 * capped the scan at 1851 GB/s, bench run of 2026-11-22). */
constexpr int scan_lookback_tiles_per_lane = 4;
/* Defaults of the run-time scan knobs (xpar__cuda_scan_tuning). */
constexpr unsigned scan_max_blocks_per_sm = 2;
constexpr unsigned scan_first_poll_delay_ns = 500;
constexpr unsigned scan_poll_delay_ns = 200;
constexpr int scan_ticket_draw = XPAR_CUDA_TICKET_AT_END;

/*
 * Scan v4 (device_scan.cu, bench/cub/NOTES.md): grid = number of tiles, small blocks,
 * packed 64-bit tile status for 4-byte types.  Blocks of 256 (or 128) threads x 4 vectors
 * (16 int32 / 8 double items per thread), with a register budget of 64 per thread
 * (__launch_bounds__(256, 4) / (128, 8)): 1024 resident threads per SM in 4 / 8 blocks, so
 * while some blocks wait for their prefix others load.  Block-size overrides that are not
 * the tuned size run a generic instantiation (__launch_bounds__(1024)).
 */
constexpr unsigned scan_v4_vectors_per_thread = 4;
constexpr unsigned scan_v4_256_block = 256;
constexpr unsigned scan_v4_256_min_blocks = 4;
constexpr unsigned scan_v4_128_block = 128;
constexpr unsigned scan_v4_128_min_blocks = 8;
/* v4 look-back delays: 500 ns before the first poll, 200 ns between polls.
 * H100, gpu-check of 2026-11-22, int32 inclusive scan 2^30: 1908 GB/s (0.77x CUB)
 * against 1841 GB/s with 0/100 ns; 2^28: 1890 vs 1830. */
constexpr unsigned scan_v4_first_poll_delay_ns = 500;
constexpr unsigned scan_v4_poll_delay_ns = 200;
constexpr int scan_v4_tile_order = XPAR_CUDA_TILES_TICKET;

/* Default scan variant.  Same run: v3 1684 GB/s (0.68x CUB), v4-256 1908 (0.77x),
 * v4-128 1670 (0.68x) at 2^30 int32; float alike.  All variants pass every check. */
constexpr int scan_default_variant = XPAR_CUDA_SCAN_V4_256;

constexpr unsigned elementwise_block = 256;
constexpr unsigned elementwise_vectors_per_thread = 4;
constexpr unsigned elementwise_max_blocks_per_sm = 8;

/* The largest block any kernel is compiled for (__launch_bounds__), so that
 * a launch-shape override up to the hardware limit always launches. */
constexpr unsigned max_block = 1024;

} // namespace tuning
} // namespace xpar_cuda

enum xpar__cuda_kernel_family {
  XPAR_CUDA_FAMILY_REDUCE = 0,
  XPAR_CUDA_FAMILY_SCAN = 1,
  XPAR_CUDA_FAMILY_ELEMENTWISE = 2,
  /* scan v4: the tuned block, grid = one block per tile (no persistent cap) */
  XPAR_CUDA_FAMILY_SCAN_V4_256 = 3,
  XPAR_CUDA_FAMILY_SCAN_V4_128 = 4
};

struct xpar__cuda_shape {
  unsigned grid;
  unsigned block;
};

/*
 * Choose the launch shape of one call.
 *  - exec->serial: grid = block = 1.
 *  - exec->block / exec->grid (0 = choose) override each side.
 *  - otherwise: the family's tuned block; the grid covers the work
 *    (`items_per_block_pass(block)` elements per block per pass) but is
 *    capped at the resident blocks of the device (persistent grid), asked of
 *    the occupancy calculator for `kernel` only when the work would exceed
 *    one block per SM.
 * `items_per_thread` is the number of elements one thread handles in one
 * pass (reduce, elementwise) or one tile (scan).
 */
xpar_status xpar__cuda_choose_shape(const xpar__exec *ex, const xpar__cuda_state *st,
                                    xpar__cuda_kernel_family family, const void *kernel,
                                    size_t n, unsigned items_per_thread, xpar__cuda_shape *out);

/* The scan knobs a new state starts with (the tuning constants above). */
xpar__cuda_scan_tuning xpar__cuda_default_scan_tuning(void);
/* The default knobs of one variant (XPAR_CUDA_SCAN_*): v4 has its own delays. */
xpar__cuda_scan_tuning xpar__cuda_scan_tuning_for(int variant);

#endif /* XPAR_BACKEND_CUDA_LAUNCH_SHAPE_CUH */
