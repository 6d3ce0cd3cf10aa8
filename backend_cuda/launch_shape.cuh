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
 * Tuning, as data.  Figures: NVIDIA H100 80GB HBM3 (132 SMs) of the H100 host (a
 * 16-core Intel Xeon host), xpar-gpu-bench (bench/cub/) unless said otherwise.
 *
 * reduce: 256 threads, 8 independent 16-byte loads in flight per thread per
 *   iteration (32 int32 / 16 double), up to 8 resident blocks per SM.
 * scan: ScanTuning below, one table per element size.
 * elementwise: 256 threads, 2 vectors per operand per thread, one block per
 *   256 x 2 vectors (no persistent cap, CUB's shape) where the arrays do not fit L2
 *   (elementwise_one_wave_max_l2 below: one wave where they do).  Two vectors, not
 *   four: every elementwise kernel then fits 32 registers (ptxas, sm_90: 28-32, against
 *   56-60 with four and the done signal's epilogue), so 8 blocks of 256 are resident per
 *   SM.  Synchronous calls on device data through the library, x CUB + sync, two runs
 *   (2026-11-26): from DRAM (48-768
 *   MB of arrays) two vectors 0.3-2.5 % faster than four at every size (axpy double 2^22
 *   1.013 / 1.006 -> 0.993 / 0.999, fill double 3 x 2^21 1.031 / 1.025 -> 1.004 / 1.007,
 *   axpy double 2^25 1.016 / 1.015 -> 1.009 / 1.013), as CUDA events had it (U=2
 *   tiles 0.99-1.01 x U=4's time); in one wave (32 MB) 1-3 % slower (axpy float 2^22
 *   0.854 / 0.847 -> 0.868 / 0.868: 1,056 blocks drawing the done signal's ticket against
 *   528), still 11-13 % ahead of CUB.  Why the tile grid: capped at 8 blocks
 *   per SM (a grid-stride loop over 1,056 blocks) axpy and fill ran 0.94-0.97 x
 *   CUB at 2^26 and 0.96-1.03 at 2^24; one block per tile 0.98-1.00 and
 *   0.99-1.04, and 1.04-1.21 at 2^22 (2026-11-25, CUDA events, median of 15).
 */
/* Synchronous calls of at most this many elements wait for a flag the kernel raises in
 * pinned memory instead of for the stream: a reduce with its value on the host (the
 * stamped result, reduce_kernel.cuh), a scan or an elementwise call (the done signal,
 * done_signal.cuh); the host gives up spinning after spin_limit_ns and synchronises the
 * stream (an add of 2^22 int32 takes ~21 us, a reduce ~8).  Above them the ~1 us the
 * flag saves is under 5 % of the call. */
constexpr size_t flag_wait_max_n = (size_t)1 << 22;
constexpr unsigned long long spin_limit_ns = 200000;
constexpr unsigned reduce_block = 256;
constexpr unsigned reduce_vectors_per_thread = 8;
constexpr unsigned reduce_max_blocks_per_sm = 8;

/*
 * Bulk-copy reduce (reduce_kernel.cuh, sm_90+): inputs of at least reduce_bulk_min_bytes
 * are read by the bulk copy engine (cp.async.bulk) into reduce_bulk_stages shared-memory
 * stages of reduce_bulk_stage_bytes per block (all arrays of a dot together), 2 blocks
 * of 256 threads per SM.  Why: at 2^29-2^30 int32 every load-instruction reduce tried
 * (16/8/4 loads in flight, 4 or 8 blocks/SM, grid-stride or one contiguous range per
 * block) read at 0.997-1.006 x CUB, the bulk engine at 1.017-1.021
 * (2026-11-25: 2^29 3117-3121 GB/s against CUB's 3057, 2^30 3129-3136 against 3075).
 * The copies carry an L2 evict-first policy (every byte is read once), and the bulk
 * kernel starts at 1 GiB: there (2026-11-26) a bulk read ran at 1.054 x CUB with the
 * policy, 1.032 without, the load kernel 1.028; through the library, with and without
 * the policy alternated twice on one H100, the 1 GiB rows went from 1.024-1.042 to
 * 1.046-1.074 x CUB, 2-4 GiB gained 0-1 %, and 8 GiB (an 8-byte 2^30) stayed at
 * 1.018-1.025, the read ceiling of every kernel tried (a bulk read of 8 GiB: 1.017-1.018
 * with or without the policy).
 */
constexpr size_t reduce_bulk_min_bytes = (size_t)1 << 30;
constexpr unsigned reduce_bulk_block = 256;
constexpr unsigned reduce_bulk_stages = 4;
constexpr unsigned reduce_bulk_stage_bytes = 16384;
constexpr unsigned reduce_bulk_blocks_per_sm = 2;
constexpr unsigned reduce_bulk_shared_bytes = reduce_bulk_stages * reduce_bulk_stage_bytes;

/*
 * Scan (device_scan.cu): single pass, decoupled look-back, one tile per block, grid =
 * number of tiles.  A tile is block x vectors 16-byte vectors per thread; the kernel is
 * compiled for min_blocks resident blocks per SM (the register budget); the look-back
 * window is 32 lanes x window tiles; first_poll_delay_ns / poll_delay_ns are the
 * look-back's sleeps, used from delay_min_grid blocks up (CUB's GridThreshold: below it
 * few warps poll and the sleep only adds latency).  Block-size overrides other than
 * `block` run a generic instantiation (__launch_bounds__(max_block)).  The search space
 * of these numbers is bench/cub/scan_sweep.cu (xpar-gpu-bench --scan-sweep).
 *
 * Figures: xpar-gpu-bench --scan-sweep (bench/cub/scan_sweep.cu), H100, inclusive sum,
 * GB/s read + write, CUB in the same run, two runs.
 *
 * 4-byte elements, run 2 of 2026-11-25, 2^28 int32 (CUB 2425-2444):
 *     256 x 8 / 3, window 32 x 1, 800 / 400 ns    2716 (1.111 x CUB; 2^26: 1.28)  <- this
 *     same, 500 / 300 ns                           2701 (1.105)
 *     256 x 6 / 4, window 32 x 1, 1250 / 650 ns    2650 (1.084; 2^26: 1.134)
 *     256 x 6 / 4, window 32 x 2, 1250 / 650 ns    2556 (1.053, run 1: the 2026-11-22 v5)
 *     256 x 6 / 4, window 1, warp-transposed       2357 (0.964)
 *     128 x 6 / 8, window 1, warp-transposed       2326 (0.952)
 *   Run 1: 256 x 8 / 3 with window 32 x 2, 800 / 400 ns 1.108; a window of one tile per
 *   lane beat two in every shape (fewer status words live beside the items).  ptxas: 80
 *   registers, 0-4 B of spill stores.  A gpu-check of these kernels (2026-11-25):
 *   int32 1.113-1.123 x CUB at 2^26..2^30, float
 *   1.098-1.104.  Below 500 blocks no sleeps (CUB's GridThreshold; the sleep cost 1.2 us
 *   at 2^13..2^17, crossover run of 2026-11-22).  The warp-transposed rows ran CUB's
 *   blocked layout (one warp scan per tile, two shared-memory round trips; removed).
 * 8-byte elements (int64, uint64, double; 128-bit status words), run 2, 2^28 double (CUB
 *   2562-2590):
 *     256 x 6 / 4, window 32 x 1, 800 / 400 ns     2674 (1.044 x CUB; 2^26: 1.047) <- this
 *     256 x 8 / 3, window 32 x 1, 300 / 200 ns     2656 (1.037)
 *     256 x 6 / 4, window 32 x 2, 800 / 400 ns     2547 (0.980, run 1)
 *     224 x 12 / 2 (CUB's 224 x 24), transposed    2562 (1.000)
 *     256 x 8 / 3, transposed                      2579 (1.007)
 *     256 x 4 / 4 and 128 x 6 / 6, transposed      2317 / 2350 (0.90 / 0.92)
 *   ptxas: 64 registers, 72-104 B of spill stores (78-80 registers at 3 blocks/SM do not
 *   spill but measured slower).  That gpu-check: double 1.031-1.035 x CUB at 2^26..2^29,
 *   int64 0.999-1.008, min / max / exclusive 0.969-1.030 at 2^28.
 * 8-byte, a later sweep (2026-11-25): with
 *   fixed_block (scan_kernel tells the compiler the block size) no 8-byte shape spills;
 *   sweep at 2^26 / 2^28, x CUB, inclusive sum and max of double, 800 / 400 ns:
 *     256 x 7 / 4   sum 1.074 / 1.065, max 1.037 / 1.030   <- this (64 registers)
 *     256 x 6 / 4   sum 1.048 / 1.038, max 1.013 / 0.999   (62-64 registers)
 *     256 x 8 / 3   sum 1.058 / 1.047, max 1.025 / 1.012   (80 registers)
 *     128 x 6 / 8   sum 1.024 / 1.015, max 0.988 / 0.978
 *   (500 / 300 ns: 1-4 % slower in every shape.)  256 x 6 / 4 with fixed_block in that
 *   run's bench: double sum 1.038-1.051, min / max / exclusive 0.995-1.013, int64 /
 *   uint64 sum 0.991-1.005 (rows at 2^26..2^29).  256 x 7 / 4 in a gpu-check
 *   after it: every 8-byte row, sum / min / max, inclusive / exclusive,
 *   int64 / uint64 / double, 2^26..2^29: 1.015-1.077 x CUB.
 * 4-byte with fixed_block, same run: 256 x 8 / 3 at 72 registers 2481 GB/s at 2^28
 *   (without: 2670-2716 in earlier runs), 256 x 8 / 4 (64 registers) 2585, 256 x 10 / 3
 *   2590: all below the 4-byte tuning without it, which stays.
 */
template <size_t ELEMENT_BYTES> struct ScanTuning;
template <> struct ScanTuning<4> {
  static constexpr unsigned block = 256;
  static constexpr int vectors = 8; /* 32 items per thread, 8192-item tiles */
  static constexpr unsigned min_blocks = 3;
  static constexpr int window = 1;
  static constexpr bool fixed_block = false; /* on: 7 % slower (2026-11-25) */
  static constexpr unsigned first_poll_delay_ns = 800;
  static constexpr unsigned poll_delay_ns = 400;
  static constexpr unsigned delay_min_grid = 500;
};
template <> struct ScanTuning<8> {
  static constexpr unsigned block = 256;
  static constexpr int vectors = 7; /* 14 items per thread, 3584-item tiles */
  static constexpr unsigned min_blocks = 4;
  static constexpr int window = 1;
  static constexpr bool fixed_block = true; /* scan_kernel: the compiler knows the block */
  static constexpr unsigned first_poll_delay_ns = 800;
  static constexpr unsigned poll_delay_ns = 400;
  static constexpr unsigned delay_min_grid = 500;
};

/* A one-block scan of at most scan_small_block x one 16-byte vector of elements (2,048
 * 4-byte, 1,024 8-byte) runs a tile of one vector per thread (scan_small_kernel), the
 * smallest block that holds it; a larger one-block scan (up to the look-back's first
 * tile: 8,192 4-byte, 3,584 8-byte) the generic tile of four vectors, in one tile of up
 * to max_block threads rather than several of 256 walked in turn.
 * Why: at small n the scan is one latency chain per thread (the items' loads, the thread's
 * serial scan, the warp's shuffles, the barriers), and four vectors made it ~800 issued
 * instructions a warp at ~8 cycles each (ncu, 2026-11-26: the kernel 4.6-4.8 us against
 * the one-block reduce's 3.1-3.3).  xpar-gpu-bench --small-scan-sweep, H100, synchronous
 * inclusive sums, us (2026-11-26):
 *   two runs, the tile of 4 vectors (256 threads at most) against 1 vector:
 *     int32  n = 32 / 256 / 1024     10.21-10.61 -> 9.11-9.56
 *     double n = 32 / 256            10.73-11.15 -> 9.52-9.99
 *   two runs each, 1 vector up to 1,024 threads and the generic one-block tile up
 *   to max_block, against the 256-thread limits before:
 *     double n = 1024                11.21 / 11.31 -> 10.34 / 10.09  (1 vector, 512 threads)
 *     double n = 2048                11.57 / 11.11 -> 10.86 / 10.77  (1 vector, 1,024)
 *     int32  n = 2048                10.43 / 10.80 -> 10.60 / 10.05  (1 vector, 512)
 *     int32  n = 4096                10.76 / 11.54 -> 11.50 / 11.46  (1 vector, 1,024)
 *     int32  n = 8192                13.25 / 13.91 -> 12.08 / 11.87  (generic, 512: one tile)
 *   (run-to-run spread up to ~0.7 us).  So 512: the 1,024-thread small tile gained at most
 *   the spread (double 2,048) and perhaps lost it (int32 4,096). */
constexpr unsigned scan_small_block = 512;

constexpr unsigned elementwise_block = 256;
constexpr unsigned elementwise_vectors_per_thread = 2;
/* An elementwise call whose arrays together (read and written) take at most this many
 * times the L2 size launches one wave of resident blocks, a grid-stride loop
 * (XPAR_CUDA_FAMILY_ELEMENTWISE_CACHED); larger ones one block per tile, as above.
 * Why: with the data in L2 from its last use the call is latency-bound and the second,
 * partial wave of a one-block-per-tile grid (2,048 blocks over 1,056 resident at 2^22
 * floats) costs more than it saves; from DRAM the tile grid keeps more loads in flight.
 * Synchronous calls on device data, H100 (50 MB L2), host wall clock, through the
 * library (four vectors per thread then: 528 resident blocks) with this bound at 8
 * against one block per tile everywhere, alternated twice, x CUB + sync in the same
 * rounds (2026-11-26): arrays of 24-32 MB (where the grids differ) 1-13 % faster -- axpy
 * float 2^22 0.96-1.00 -> 0.86, axpy double 2^21 0.98-0.99 -> 0.86-0.87, fill double 2^22
 * 1.04-1.05 -> 0.99-1.00; 48 MB mixed (add -1 to 0 %, axpy +1 %, fill +4-5 %); 64-96 MB
 * +0-7 % (fill the worst); 128 MB and over +4-6 %.  With this bound (four vectors): axpy
 * float 2^22 0.984 / 0.967 -> 0.854 / 0.847, double 2^21 1.010 / 0.998 -> 0.860 / 0.855. */
constexpr double elementwise_one_wave_max_l2 = 0.75;
/* Blocks per SM of that one wave (at most; fewer where fewer are resident).  Why 4 when 8
 * of two vectors fit: through the library's launch-shape override (2026-11-26,
 * two runs, x CUB + sync), arrays of 16-32 MB in 528 blocks
 * against 1,024-1,056 (8 per SM) and 792 (6): axpy float 2^22 0.884 / 0.876 -> 0.824 /
 * 0.818 (792: 0.849 / 0.827), axpy double 2^21 0.897 / 0.888 -> 0.828 / 0.822, add float
 * 2^21 1.018 / 0.997 -> 0.942 / 0.952, fill double 2^21 1.012 / 1.022 -> 0.985 / 0.982, every
 * such row faster: half the blocks, each two passes, draw half the done signal's tickets
 * and start half as many blocks. */
constexpr unsigned elementwise_one_wave_blocks_per_sm = 4;
/* Application kernels (xpar_launch, device_kernel.cu): the elementwise block, one index
 * per thread per pass, a grid-stride loop over at most this many resident blocks per SM
 * (their bodies are the application's; the persistent shape was not measured against
 * one block per tile for them). */
constexpr unsigned kernel_max_blocks_per_sm = 8;

/* The largest block any kernel is compiled for (__launch_bounds__), so that
 * a launch-shape override up to the hardware limit always launches. */
constexpr unsigned max_block = 1024;

} // namespace tuning
} // namespace xpar_cuda

enum xpar__cuda_kernel_family {
  XPAR_CUDA_FAMILY_REDUCE = 0,
  XPAR_CUDA_FAMILY_ELEMENTWISE = 1,
  /* scans: ScanTuning<4> / <8>'s block; scans and elementwise: grid = one block per
   * tile (no persistent cap) */
  XPAR_CUDA_FAMILY_SCAN4 = 2,
  XPAR_CUDA_FAMILY_SCAN8 = 3,
  /* elementwise ops on arrays that fit L2 (tuning::elementwise_one_wave_max_l2): the
   * elementwise block, one wave of resident blocks (tuning::
   * elementwise_one_wave_blocks_per_sm per SM at most) */
  XPAR_CUDA_FAMILY_ELEMENTWISE_CACHED = 4
};

struct xpar__cuda_shape {
  unsigned grid;
  unsigned block;
};

/*
 * Choose the launch shape of one call.
 *  - exec->serial: grid = block = 1.
 *  - exec->block / exec->grid (0 = choose) override each side.
 *  - otherwise: the family's tuned block; the grid covers the work (block x
 *    items_per_thread elements per block).  Reduce and cached elementwise calls
 *    cap it at the resident blocks of the device (persistent grid: fewer partials
 *    to combine; one wave), asked of the occupancy calculator for `kernel` only
 *    when the work would exceed one block per SM (xpar__cuda_resident_blocks);
 *    scans and other elementwise calls launch one block per tile.
 * `items_per_thread` is the number of elements one thread handles in one
 * pass (reduce, elementwise) or one tile (scan).
 */
xpar_status xpar__cuda_choose_shape(const xpar__exec *ex, const xpar__cuda_state *st,
                                    xpar__cuda_kernel_family family, const void *kernel,
                                    size_t n, unsigned items_per_thread, xpar__cuda_shape *out);

/* The resident blocks per SM of a kernel at `block` threads on `device`: query(key, block,
 * per_sm) asked once per key, device and block and remembered (a cudaOccupancy... call
 * costs 0.2-0.5 us of host time on the H100 host, 2026-11-26, against calls of a few
 * microseconds).  key: the built-in kernel's address (query: the runtime's occupancy
 * calculator on the current device), or an application kernel object (device_kernel.cu).
 * A direct-mapped table of 256 entries shared by every context and thread; an entry
 * another key takes is asked again.  Returns the query's error (0: none). */
typedef int (*xpar__cuda_occupancy_query)(const void *key, unsigned block, int *per_sm);
int xpar__cuda_resident_blocks(const void *key, int device, unsigned block,
                               xpar__cuda_occupancy_query query, int *per_sm);

#endif /* XPAR_BACKEND_CUDA_LAUNCH_SHAPE_CUH */
