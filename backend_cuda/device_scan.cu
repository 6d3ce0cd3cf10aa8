/*
 * Device layer: inclusive / exclusive scan (sum, min, max), the entry point of the
 * backend table.  The kernel and its layers are in scan_kernel.cuh; this file owns the
 * tile-status buffer and instantiates one tuned and one generic kernel per dtype x
 * operator (ScanTuning<4> / <8>, launch_shape.cuh).
 */
#include "cuda_ops.h"
#include "scan_kernel.cuh"

namespace xpar_cuda {

xpar_status scan_prepare_tile_status(const xpar__exec *ex, size_t num_tiles, size_t word_bytes,
                                     ScanParams *p, GraphScratch *graph_scratch,
                                     const char *op_name) {
  xpar__cuda_state *st = ex->cuda;
  if (ex->captured) {
    /* The counter, then the words (16-byte aligned), all zero at every replay. */
    constexpr size_t kCounterBytes = 16;
    const size_t bytes = kCounterBytes + num_tiles * word_bytes;
    XPAR__FORWARD(graph_scratch->take(bytes, bytes, op_name));
    p->tile_counter = static_cast<unsigned long long *>(graph_scratch->get());
    p->tile_base = 0;
    p->status = static_cast<char *>(graph_scratch->get()) + kCounterBytes;
    p->epoch = 1; /* a zero word never matches */
    return XPAR_OK;
  }
  /* Only the two word sizes the arrays below hold: a wider word would run past
   * its array into the other's (callers with wider words keep their own). */
  XPAR__RETURN_IF(word_bytes != 8 && word_bytes != 16, XPAR_ERR_INTERNAL,
                  "%s: a %zu-byte tile status word has no shared array", op_name, word_bytes);
  XPAR__FORWARD(xpar__cuda_ensure_control(st));
  /* Per tile: an 8-byte word (4-byte types) and a 16-byte word (8-byte types), in two
   * arrays, so that no word is ever read as the other size.  Both are zeroed together
   * on growth and on epoch wrap; an older word never matches a newer epoch. */
  constexpr size_t kPerTile = 24;
  const size_t tiles = (num_tiles + 1) & ~(size_t)1; /* even: the 16-byte array aligned */
  const bool clear = !st->scan_status.ptr || st->scan_status.bytes < tiles * kPerTile ||
                     st->scan_epoch + 1 >= kEpochLimit;
  if (clear) XPAR__FORWARD(xpar__cuda_refuse_if_capturing(st, op_name));
  int grown = 0;
  XPAR__FORWARD(xpar__cuda_grow_device(st, &st->scan_status, tiles * kPerTile,
                                       "scan tile status", &grown));
  if (grown) st->scan_status_tiles = (st->scan_status.bytes / kPerTile) & ~(size_t)1;
  const size_t capacity = st->scan_status_tiles;
  char *base = static_cast<char *>(st->scan_status.ptr);
  if (clear) {
    XPAR_CUDA_TRY(cudaMemsetAsync(base, 0, capacity * kPerTile, st->stream),
                  "clearing the scan tile status (%zu bytes)", capacity * kPerTile);
    st->scan_epoch = 0;
  }
  st->scan_epoch++;
  p->status = word_bytes == 8 ? base : base + capacity * 8;
  p->epoch = st->scan_epoch;
  p->tile_counter = st->scan_tile_counter;
  p->tile_base = st->scan_tile_base;
  return XPAR_OK;
}

void scan_tile_counter_advance(const xpar__exec *ex, const ScanParams &p, unsigned grid) {
  if (!ex->captured && !p.block_index_tiles) ex->cuda->scan_tile_base += p.num_tiles + grid;
}

} // namespace xpar_cuda

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_scan(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                                       xpar_scan_kind kind, const xpar__scalar *init,
                                       const void *in, void *out, size_t n) {
  if (kind != XPAR_INCLUSIVE && kind != XPAR_EXCLUSIVE)
    return xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown scan kind %d", (int)kind);
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    XPAR__FORWARD(xpar__cuda_begin(ex->cuda, "scan"));
    if (n == 0) return XPAR_OK;
    if (!aligned_to(in, sizeof(T)) || !aligned_to(out, sizeof(T)))
      return xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                        "scan pointers %p / %p are not aligned to their %zu-byte elements", in,
                        out, sizeof(T));
    return with_op<T>(op, [&](auto op_tag) -> xpar_status {
      return scan_launch<decltype(op_tag)>(ex, kind == XPAR_EXCLUSIVE, init, in, out, n);
    });
  });
}

int xpar__cuda_scan_resources(int element_bytes, int *regs, int *local_bytes, int *block,
                              int *blocks_per_sm) {
  const void *kernel;
  int b;
  if (element_bytes == 4) {
    kernel = (const void *)scan_kernel<SumOp<int32_t>, tuning::ScanTuning<4>, true>;
    b = (int)tuning::ScanTuning<4>::block;
  } else if (element_bytes == 8) {
    kernel = (const void *)scan_kernel<SumOp<double>, tuning::ScanTuning<8>, true>;
    b = (int)tuning::ScanTuning<8>::block;
  } else {
    return -1;
  }
  cudaFuncAttributes attr;
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  int resident = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, b, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  *regs = attr.numRegs;
  *local_bytes = (int)attr.localSizeBytes;
  *block = b;
  *blocks_per_sm = resident;
  return 0;
}
