/*
 * Tile status of the single-pass scan (device_scan.cu): the launch parameters, one
 * status word per tile, and the decoupled look-back over them (Merrill & Garland; CUB's
 * ScanTileState and TilePrefixCallbackOp).
 *
 * The status words, their layout and why a reader never sees a state without its value
 * (PTX memory model), and the look-back itself are in xpar/detail/cuda_tile_status.cuh,
 * shared with the application's operators.
 */
#ifndef XPAR_BACKEND_CUDA_SCAN_TILE_STATUS_CUH
#define XPAR_BACKEND_CUDA_SCAN_TILE_STATUS_CUH

#include "cuda_state.cuh"
#include "dtype_ops.cuh"
#include "launch_shape.cuh"
#include "thread_load.cuh"
#include "xpar/detail/cuda_warp_block.cuh" /* shared with the application's operators */
#include "xpar/detail/cuda_tile_status.cuh"

namespace xpar_cuda {

struct ScanParams {
  const void *in;
  void *out;
  size_t n;
  size_t num_tiles;
  int exclusive;
  int vectorized;        /* in and out are both 16-byte aligned */
  void *status;          /* num_tiles words of TileWord<T> (grid > 1) */
  uint32_t epoch;
  /* Tile order.  block_index_tiles: tile = blockIdx.x, one tile per block (the grid
   * covers the tiles; CUB's order: it relies on blocks starting in blockIdx order).
   * Otherwise (a grid override smaller than the tile count) blocks draw tile indices
   * from the state's 64-bit counter and loop, so a tile only waits for tiles that have
   * started; a call draws num_tiles + grid indices and the host advances its base. */
  int block_index_tiles;
  unsigned long long *tile_counter;
  unsigned long long tile_base;
  unsigned first_poll_delay_ns; /* 0: no sleeps (small grids, see ScanTuning) */
  unsigned poll_delay_ns;
  /* The carry-in, the bytes of one T (the identity for xpar_scan): tile 0's prefix and
   * the one-block path's first carry.  has_init = 0 (xpar_scan): tile 0 has no prefix. */
  int has_init;
  xpar__scalar init;
  /* A synchronous call's done signal (done_signal.cuh): every block signals at its end
   * and the host stops waiting once the last has; none for a queued call. */
  DoneSignal done;
};

/* Sets p's tile-status fields (status, epoch, tile_counter, tile_base) for a launch of
 * more than one block over `num_tiles` tiles of `word_bytes`-byte status words:
 * the context's buffer (grown when needed) with a new epoch, so nothing is cleared per
 * call; or, for a call captured into a CUDA graph (ex->captured), words and a counter
 * of the graph's own, zeroed inside the graph (epoch 1), in *graph_scratch, which the
 * caller frees after the launch -- an epoch fixed at capture would let every replay
 * find the words its previous replay left.  op_name names the call in refusals and
 * errors.  device_scan.cu. */
xpar_status scan_prepare_tile_status(const xpar__exec *ex, size_t num_tiles, size_t word_bytes,
                                     ScanParams *p, GraphScratch *graph_scratch,
                                     const char *op_name);
/* Once the launch of `grid` blocks over p's tiles has run (a synchronous call: after its
 * wait, since one made during a capture is recorded, never run): the context's counter
 * base moves past the indices the launch drew (none for a graph's own counter or for
 * block-index tiles). */
void scan_tile_counter_advance(const xpar__exec *ex, const ScanParams &p, unsigned grid);

namespace {

/* Sets p's carry-in from the backend's init (NULL: Op's identity, has_init = 0). */
template <class Op> void scan_params_set_init(ScanParams *p, const xpar__scalar *init) {
  using T = typename Op::Type;
  p->has_init = init != NULL;
  if (init) {
    p->init = *init;
  } else {
    const T identity = Op::identity();
    memcpy(p->init.bytes, &identity, sizeof identity);
  }
}

/* The carry-in as T. */
template <class T> __device__ __forceinline__ T scan_init(const ScanParams &p) {
  T v;
  memcpy(&v, p.init.bytes, sizeof v);
  return v;
}

template <class T>
__device__ __forceinline__ void publish(const ScanParams &p, size_t tile, T value,
                                        uint32_t state) {
  using W = TileWord<T>;
  W::store(p.status, tile, W::make(value, p.epoch, state));
}

/* The look-back over this call's status words (xpar/detail/cuda_tile_status.cuh). */
template <class Op, int M>
__device__ __forceinline__ typename Op::Type look_back(const ScanParams &p, size_t tile,
                                                       unsigned lane, unsigned lanes) {
  const LookBack where = {p.status, p.epoch, p.first_poll_delay_ns, p.poll_delay_ns};
  return look_back_words<Op, M, TileWord<typename Op::Type>>(where, tile, lane, lanes);
}

} // namespace
} // namespace xpar_cuda

#endif /* XPAR_BACKEND_CUDA_SCAN_TILE_STATUS_CUH */
