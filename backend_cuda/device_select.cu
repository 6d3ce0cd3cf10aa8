/*
 * Device layer: compaction -- xpar_select, xpar_select_flagged, xpar_partition,
 * xpar_unique -- the entry point of the backend table.  The kernels and the algorithm are
 * in select_kernel.cuh; this file picks the path, takes the status words and launches.
 *
 * Paths, by n and tier:
 *  - cuda-serial (ex->serial): select_serial_kernel, one thread, element order;
 *  - n <= one tile of the look-back kernel: select_one_block_kernel, one launch, no
 *    scratch (a partition counts, then writes);
 *  - otherwise select_kernel, one block per tile, decoupled look-back on the count, with
 *    32-bit counts below 2^32 elements (8-byte status words), 64-bit above (16-byte);
 *    a partition then runs partition_reverse_kernel over the rejected tail.
 * Launch-shape overrides (ex->grid, ex->block) are not used: the shapes are the tiles'.
 *
 * Bytes per element (T the element): select / unique read T, write T per kept element;
 * select_flagged reads T + 1; partition reads T, writes T, then reads and writes T again
 * per rejected element (select_kernel.cuh says why).
 *
 * The count: with ex->result_on_device written by the kernel into the caller's device
 * word; otherwise into the pinned result slot (offset 0), copied to the caller's host
 * word once the kernel is done -- such a call always waits, nowait or not, as a reduce
 * with a host result does.  A synchronous call of at most tuning::flag_wait_max_n
 * elements returns on the kernel's done flag (done_signal.cuh).
 *
 * Scratch: the look-back's status words are the scan's (scan_prepare_tile_status: the
 * context's buffer, kept and tagged by epoch, freed by release_cache; a call captured
 * into a CUDA graph takes its own from GraphScratch, or is refused before anything is
 * queued).  Out of memory is reported before any launch: nothing is written.
 */
#include <string.h>

#include "cuda_ops.h"
#include "select_kernel.cuh"

namespace xpar_cuda {
namespace select {
namespace {

const char *kind_name(int kind) {
  switch (kind) {
    case XPAR__SELECT_IF: return "select";
    case XPAR__SELECT_FLAGGED: return "select_flagged";
    case XPAR__PARTITION: return "partition";
    case XPAR__PARTITION_FLAGGED: return "partition_flagged";
    default: return "unique";
  }
}

/* The look-back path with C-bit counts. */
template <class T, int KIND, class C>
xpar_status launch_look_back(const xpar__exec *ex, SelectParams &p, const char *name) {
  using Tn = SelectTuning<sizeof(T)>;
  xpar__cuda_state *st = ex->cuda;
  GraphScratch graph_scratch(st); /* a captured call's status words */
  ScanParams sp;
  memset(&sp, 0, sizeof sp);
  XPAR__FORWARD(
      scan_prepare_tile_status(ex, p.num_tiles, TileWord<C>::bytes, &sp, &graph_scratch, name));
  p.status = sp.status;
  p.epoch = sp.epoch;
  if (p.num_tiles >= Tn::delay_min_grid) {
    p.first_poll_delay_ns = Tn::first_poll_delay_ns;
    p.poll_delay_ns = Tn::poll_delay_ns;
  }
  const DoneSignal done = p.done;
  if (is_partition(KIND)) p.done = DoneSignal{nullptr, nullptr, 0}; /* the reversal signals */
  {
    void *args[] = {&p};
    XPAR__FORWARD(xpar__cuda_launch(st, (const void *)select_kernel<T, KIND, C>, NULL,
                                    (unsigned)p.num_tiles, Tn::block, 0, args, name));
  }
  if (is_partition(KIND)) {
    const size_t per_block = (size_t)reverse_block * reverse_unroll;
    const size_t pairs = p.n / 2;
    size_t grid = (pairs + per_block - 1) / per_block;
    const size_t cap = (size_t)(st->multiprocessors > 0 ? st->multiprocessors : 1) *
                       reverse_blocks_per_sm;
    if (grid > cap) grid = cap;
    if (grid == 0) grid = 1;
    T *out = static_cast<T *>(p.out);
    size_t n = p.n;
    const void *status = p.status;
    size_t last = p.num_tiles - 1;
    DoneSignal d = done;
    void *args[] = {&out, &n, &status, &last, &d};
    XPAR__FORWARD(xpar__cuda_launch(st, (const void *)partition_reverse_kernel<T, C>, NULL,
                                    (unsigned)grid, reverse_block, 0, args, "partition (tail)"));
  }
  XPAR__FORWARD(graph_scratch.free(name));
  return XPAR_OK;
}

template <class T, int KIND>
xpar_status select_run(const xpar__exec *ex, const xpar__select_spec *s) {
  xpar__cuda_state *st = ex->cuda;
  const char *name = kind_name(KIND);
  const size_t n = s->n;
  const bool host_count = !ex->result_on_device;
  const bool wait = !ex->nowait || host_count;
  if (host_count) XPAR__FORWARD(xpar__cuda_ensure_control(st)); /* the pinned slot */

  SelectParams p;
  memset(&p, 0, sizeof p);
  p.in = s->in;
  p.flags = s->flags;
  p.out = s->out;
  p.n = n;
  p.pred = (int)s->pred;
  p.value = s->value;
  p.hi = s->hi;
  p.in_place = s->out == s->in;
  p.vectorized = aligned_to(s->in, 16) &&
                 (!uses_flags(KIND) || aligned_to(s->flags, vec_items<T>()));
  p.count = host_count ? static_cast<unsigned long long *>(st->result_device)
                       : reinterpret_cast<unsigned long long *>(s->count);
  const bool spin = wait && n <= tuning::flag_wait_max_n;

  using Tn = SelectTuning<sizeof(T)>;
  constexpr size_t TILE = (size_t)Tn::block * Tn::vectors * vec_items<T>();
  if (ex->serial) {
    p.num_tiles = 1;
    XPAR__FORWARD(xpar__cuda_done_signal(st, spin, &p.done));
    void *args[] = {&p};
    XPAR__FORWARD(xpar__cuda_launch(st, (const void *)select_serial_kernel<T, KIND>, NULL, 1, 1,
                                    0, args, name));
  } else if (n <= TILE) {
    /* one block, no more warps than the elements fill (one vector per thread) */
    constexpr size_t V = (size_t)vec_items<T>();
    const size_t threads = (n + V - 1) / V;
    const size_t warps = (threads + 31) / 32;
    const unsigned block = (unsigned)(warps * 32 < SmallSelectTuning::block
                                          ? warps * 32
                                          : SmallSelectTuning::block);
    const size_t tile_items = (size_t)block * SmallSelectTuning::vectors * V;
    p.num_tiles = (n + tile_items - 1) / tile_items;
    XPAR__FORWARD(xpar__cuda_done_signal(st, spin, &p.done));
    static const void *const handle = kernel_handle((const void *)select_one_block_kernel<T, KIND>);
    void *args[] = {&p};
    XPAR__FORWARD(xpar__cuda_launch(st, (const void *)select_one_block_kernel<T, KIND>,
                                    spin ? handle : NULL, 1, block, 0, args, name));
  } else {
    p.num_tiles = (n + TILE - 1) / TILE;
    XPAR__FORWARD(xpar__cuda_done_signal(st, spin, &p.done));
    if (n < ((size_t)1 << 32))
      XPAR__FORWARD((launch_look_back<T, KIND, uint32_t>(ex, p, name)));
    else
      XPAR__FORWARD((launch_look_back<T, KIND, uint64_t>(ex, p, name)));
  }
  if (!wait) return XPAR_OK;
  XPAR__FORWARD(xpar__cuda_finish(st, p.done, name));
  if (host_count) {
    uint64_t k;
    memcpy(&k, (const void *)st->result_host, sizeof k);
    *s->count = k;
  }
  return XPAR_OK;
}

/* Element types per kind: the predicate needs the dtype; flags and unique's equality of
 * integers only the bits (unique's floats: the sort's equality). */
template <int KIND> xpar_status select_dtype(const xpar__exec *ex, const xpar__select_spec *s) {
  const size_t bytes = xpar__dtype_size(s->dtype);
  if constexpr (uses_flags(KIND)) {
    if (bytes == 4) return select_run<uint32_t, KIND>(ex, s);
    return select_run<uint64_t, KIND>(ex, s);
  } else if constexpr (KIND == XPAR__UNIQUE) {
    if (s->dtype == XPAR_FLOAT) return select_run<float, KIND>(ex, s);
    if (s->dtype == XPAR_DOUBLE) return select_run<double, KIND>(ex, s);
    if (bytes == 4) return select_run<uint32_t, KIND>(ex, s);
    return select_run<uint64_t, KIND>(ex, s);
  } else {
    (void)bytes;
    return with_dtype(s->dtype, [&](auto zero) -> xpar_status {
      return select_run<decltype(zero), KIND>(ex, s);
    });
  }
}

} // namespace
} // namespace select
} // namespace xpar_cuda

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_select(const xpar__exec *ex, const xpar__select_spec *s) {
  const int kind = (int)s->kind;
  if (kind < XPAR__SELECT_IF || kind > XPAR__PARTITION_FLAGGED)
    return xpar__fail(XPAR_ERR_INVALID_ENUM, "select: unknown kind %d", kind);
  const char *name = select::kind_name(kind);
  XPAR__FORWARD(xpar__cuda_begin(ex->cuda, name));
  const size_t bytes = xpar__dtype_size(s->dtype);
  if (bytes != 4 && bytes != 8)
    return xpar__fail(XPAR_ERR_INVALID_ENUM, "%s: unknown dtype %d", name, (int)s->dtype);
  if ((kind == XPAR__SELECT_IF || kind == XPAR__PARTITION) &&
      ((int)s->pred < 0 || (int)s->pred >= (int)XPAR_PREDICATE_COUNT_))
    return xpar__fail(XPAR_ERR_INVALID_ENUM, "%s: unknown predicate %d", name, (int)s->pred);
  /* A host count needs the call to wait, which a capture cannot (nothing queued yet). */
  if (ex->captured && !ex->result_on_device)
    return xpar__cuda_refuse_capture(name, "its count goes to host memory (the call would wait)");
  if (s->n == 0) {
    if (!ex->result_on_device) {
      *s->count = 0;
      return XPAR_OK;
    }
    XPAR_CUDA_TRY(cudaMemsetAsync(s->count, 0, sizeof(uint64_t), ex->cuda->stream),
                  "%s: writing the count", name);
    if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(ex->cuda, name));
    return XPAR_OK;
  }
  if (!aligned_to(s->in, bytes) || !aligned_to(s->out, bytes))
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                      "%s: in %p / out %p are not aligned to their %zu-byte elements", name,
                      s->in, s->out, bytes);
  if (ex->result_on_device && !aligned_to(s->count, 8))
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT, "%s: the device count %p is not 8-byte aligned",
                      name, (void *)s->count);
  switch (kind) {
    case XPAR__SELECT_IF: return select::select_dtype<XPAR__SELECT_IF>(ex, s);
    case XPAR__SELECT_FLAGGED: return select::select_dtype<XPAR__SELECT_FLAGGED>(ex, s);
    case XPAR__PARTITION: return select::select_dtype<XPAR__PARTITION>(ex, s);
    case XPAR__PARTITION_FLAGGED: return select::select_dtype<XPAR__PARTITION_FLAGGED>(ex, s);
    default: return select::select_dtype<XPAR__UNIQUE>(ex, s);
  }
}
