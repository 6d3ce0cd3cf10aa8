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
/* Synchronous reduces of at most this many elements with the result on the
 * host wait for a flag the kernel raises in pinned memory instead of for the
 * stream (device_reduce.cu); the host gives up spinning after spin_limit_ns
 * and synchronises the stream (a kernel of 2^20 int32 takes ~5 us). */
constexpr size_t reduce_spin_max_n = (size_t)1 << 20;
constexpr unsigned long long spin_limit_ns = 200000;
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
 * Occupancy scans (scan_occupancy.cuh, bench/cub/NOTES.md): grid = number of tiles, one
 * tile per block, packed 64-bit tile status for 4-byte types; block-size overrides other
 * than the tuned size run a generic instantiation (__launch_bounds__(1024)).
 *
 * v5 (the default): 256 threads x 6 vectors (24 int32 / 12 double items per thread,
 *   6144-element int32 tiles), __launch_bounds__(256, 4) (64 registers, 4 blocks per SM),
 *   a look-back window of 32 lanes x 2 tiles, tile = blockIdx.x (CUB's order), 1250 ns
 *   before the first poll, 650 between polls.
 *   Sweeps of 2026-11-22 (xpar-gpu-bench --scan-sweep, H100, inclusive sum, GB/s read +
 *   write, CUB 2421-2479 in the same runs), 2^28 / 2^30:
 *     this setting                      int32 2566 / 2584 (1.06 / 1.05x CUB), float 1.04x
 *     same, 3 blocks/SM (80 registers)  int32 2356-2522 / 2557 (delay-sensitive)
 *     same, window 32 x 4 tiles, 3/SM   int32 2316 / 2342 (0.95x), float 0.94x
 *     same, tickets instead of blockIdx int32 2520 / 2522
 *     256 x 4 vectors, window 32 x 2    int32 2288-2324 (0.94-0.96x)
 *     128 x 6 vectors / 6 per SM        int32 2326-2347 (0.96-0.97x)
 *   The window of 2 tiles per lane is what moved it: the 4-tile window's 64-bit status
 *   words pushed the kernel into spills (int32 156 B, float 460 B at 80 registers; with
 *   2 tiles: 8 B / 92 B), and with 1250 ns before the first poll the nearest inclusive
 *   prefix is almost always within 64 tiles.  At v5's 64 registers ptxas still spills
 *   some (stores: int32 sum 76 B, float sum 268 B, min/max 240-248 B, double sum 212 B,
 *   int64 sum 236 B); the 4 resident blocks measured faster than 3 without spills.
 * v4 (the previous default, kept for comparison): 256 threads x 4 vectors, (256, 4), a
 *   window of 32 x 4 tiles, tickets, 500 / 200 ns: 1890-1908 GB/s (0.77x CUB).
 */
constexpr unsigned scan_v5_block = 256;
constexpr unsigned scan_v5_vectors_per_thread = 6;
constexpr unsigned scan_v5_min_blocks = 4;
constexpr int scan_v5_lookback_tiles_per_lane = 2;
constexpr unsigned scan_v5_first_poll_delay_ns = 1250;
constexpr unsigned scan_v5_poll_delay_ns = 650;
constexpr int scan_v5_tile_order = XPAR_CUDA_TILES_BLOCK_INDEX;
/* Below 500 blocks (int32: n < ~3M) the look-back does not sleep at all (CUB's
 * GridThreshold): few warps poll, so there is no contention to avoid, and the 1250 ns
 * sleep was the difference between v5 (16.4 us) and v4 (15.2 us) at 2^13..2^17 in the
 * crossover run of 2026-11-22. */
constexpr unsigned scan_v5_delay_min_grid = 500;

constexpr unsigned scan_v4_block = 256;
constexpr unsigned scan_v4_vectors_per_thread = 4;
constexpr unsigned scan_v4_min_blocks = 4;
constexpr unsigned scan_v4_first_poll_delay_ns = 500;
constexpr unsigned scan_v4_poll_delay_ns = 200;
constexpr int scan_v4_tile_order = XPAR_CUDA_TILES_TICKET;

/* Default scan variant (run-time selectable: XPAR_CUDA_SCAN_VARIANT=v3|v4|v5). */
constexpr int scan_default_variant = XPAR_CUDA_SCAN_V5;

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
  /* occupancy scans: the tuned block, grid = one block per tile (no persistent cap) */
  XPAR_CUDA_FAMILY_SCAN_V4 = 3,
  XPAR_CUDA_FAMILY_SCAN_V5 = 4
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
