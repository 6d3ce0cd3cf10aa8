/*
 * Device layer: the stable sort (xpar_sort, xpar_sort_pairs, xpar_argsort), the entry
 * point of the backend table.  The kernels and the algorithm are in sort_kernel.cuh; this
 * file plans the passes, owns the scratch and launches.  4-byte keys are instantiated
 * here, 8-byte keys in device_sort64.cu (two files build in parallel).
 *
 * Paths, by n and tier:
 *  - cuda-serial (ex->serial): serial_sort_kernel, one thread (sort_kernel.cuh says why);
 *  - n <= sort::small_max_n: small_sort_kernel, one block, one launch, no scratch;
 *  - otherwise onesweep: a memset of the control words, histogram_kernel, then one
 *    onesweep_kernel per 8-bit digit (4 for 4-byte keys, 8 for 8-byte keys; no pass is
 *    skipped: that would need the histogram on the host, i.e. a wait).
 * The launch-shape overrides (ex->grid, ex->block) are not used: the kernels' shapes
 * are fixed by their tiles.
 *
 * Buffers of the passes (P even): keys in -> A -> out -> A -> ... -> out; values
 * (values_in or the generated indices) -> VA -> values_out -> ... -> values_out.  In
 * place works as is: pass 0 reads the input whole before pass 1 writes it.  argsort
 * without keys_out: keys in -> A -> B -> A ... and the last pass writes no keys.
 *
 * Scratch, kept in the context (cuda_state.cuh): sort_scratch holds the control words
 * (the histograms of every pass, the tile counters, the histogram's ticket), then A, B
 * and VA; sort_status the status words (num_tiles x 256 x 8 bytes, about 0.3 bytes per
 * key), tagged by epoch (sort_kernel.cuh) and cleared only when grown or when the epoch
 * wraps.  Everything is allocated before anything is queued, so out of memory writes
 * nothing.  A call captured into a CUDA graph takes all of it from GraphScratch instead
 * (zeroed control and status words, epochs from 1), as the scan does.
 *
 * Measured (xpar-gpu-bench --sort, H100 80GB HBM3, d2d copy 2990 GB/s, 2026-12-07;
 * ratio = CUB DeviceRadixSort time / xpar time, random keys, ascending):
 *   keys int32 / uint32 / float: 1.2-1.4 at 2^16-2^20, 0.96-0.99 at 2^24, 0.89-0.91 at
 *     2^28-2^30 (43 Gkeys/s against CUB's 49, 52 % of the bandwidth bound);
 *   keys int64 / double: 1.0-1.26, 0.97-1.0 at 2^28-2^29 (16 Gkeys/s, 73 %);
 *   pairs int32/int32 1.04, float/int32 1.09, int64/int64 1.0, argsort int32 1.15 at 2^30
 *     (2^29 for 8-byte keys), more below;
 *   synchronous 2^10 int32: 13.3 us, 1.52 x the launch-and-flag floor (8.7 us), CUB's
 *     SortKeys + stream sync 19.2 us; the one-block shapes tried (64-1024 threads, 4-6
 *     bit digits) all took 13.3-15.5 us but 1024 x 1 (20.7 us).
 */
#include <string.h>

#include "cuda_ops.h"
#include "sort_kernel.cuh"
#include "thread_load.cuh"

namespace xpar_cuda {
namespace sort {

namespace {

size_t round_up(size_t x) { return (x + 255) & ~(size_t)255; }

/* Grow the sort's two buffers (status first, it is the smaller) to the sizes asked;
 * *status_fresh when the status words are new (not yet cleared). */
xpar_status sort_grow(xpar__cuda_state *st, size_t scratch_bytes, size_t status_bytes,
                      bool *status_fresh) {
  void *before = st->sort_status.ptr;
  if (status_bytes)
    XPAR__FORWARD(xpar__cuda_grow_device(st, &st->sort_status, status_bytes,
                                         "sort tile status", NULL));
  if (scratch_bytes)
    XPAR__FORWARD(xpar__cuda_grow_device(st, &st->sort_scratch, scratch_bytes, "sort scratch",
                                         NULL));
  *status_fresh = status_bytes && st->sort_status.ptr != before;
  return XPAR_OK;
}

} // namespace

template <class U, bool F, class VW>
xpar_status sort_run(const xpar__exec *ex, const xpar__sort_spec *s, unsigned long long mask) {
  constexpr bool HAS_VALUES = !std::is_same<VW, NoValue>::value;
  constexpr int PASSES = (int)sizeof(U); /* 8-bit digits */
  constexpr size_t KB = sizeof(U);
  constexpr size_t VB = HAS_VALUES ? sizeof(VW) : 0;
  xpar__cuda_state *st = ex->cuda;
  const size_t n = s->n;
  const bool keys_out = s->keys_out != NULL;
  const bool spin = !ex->nowait && n <= tuning::flag_wait_max_n;

  /* ---- one block: no scratch ---- */
  if (!ex->serial && n <= small_max_n) {
    SortParams p;
    memset(&p, 0, sizeof p);
    p.keys_in = s->keys_in;
    p.keys_out = s->keys_out;
    p.values_in = s->values_in;
    p.values_out = s->values_out;
    p.n = n;
    p.mask = mask;
    p.is_float = F;
    p.gen_indices = s->values_are_indices;
    XPAR__FORWARD(xpar__cuda_done_signal(st, spin, &p.done));
    const bool one = n <= (size_t)small1_threads * small1_items;
    void (*kernel)(SortParams) = one ? small_sort_kernel<U, VW, small1_threads, small1_items>
                                     : small_sort_kernel<U, VW, small2_threads, small2_items>;
    static const void *const h1 =
        kernel_handle((const void *)small_sort_kernel<U, VW, small1_threads, small1_items>);
    static const void *const h2 =
        kernel_handle((const void *)small_sort_kernel<U, VW, small2_threads, small2_items>);
    void *args[] = {&p};
    XPAR__FORWARD(xpar__cuda_launch(st, (const void *)kernel, spin ? (one ? h1 : h2) : NULL, 1,
                                    one ? small1_threads : small2_threads, 0, args, "sort"));
    if (!ex->nowait) XPAR__FORWARD(xpar__cuda_finish(st, p.done, "sort"));
    return XPAR_OK;
  }

  /* ---- scratch ---- */
  using Tn = OnesweepTuning<KB, VB>;
  constexpr size_t TILE = (size_t)Tn::threads * Tn::items;
  const size_t num_tiles = n / TILE + (n % TILE != 0);
  const bool two_key_buffers = !keys_out;
  const size_t control_bytes = round_up((size_t)PASSES * kDigits * 8 + (PASSES + 1) * 4);
  const size_t status_bytes = ex->serial ? 0 : round_up(num_tiles * kDigits * 8);
  const size_t a_bytes = round_up(n * KB);
  const size_t scratch_bytes = control_bytes + a_bytes * (two_key_buffers ? 2 : 1) +
                               (HAS_VALUES ? round_up(n * VB) : 0);
  GraphScratch graph_scratch(st);
  char *scratch;
  unsigned long long *status = NULL;
  uint32_t epoch0;
  if (ex->captured) {
    XPAR__FORWARD(graph_scratch.take(status_bytes + scratch_bytes, status_bytes + control_bytes,
                                     "sort"));
    status = static_cast<unsigned long long *>(graph_scratch.get());
    scratch = static_cast<char *>(graph_scratch.get()) + status_bytes;
    epoch0 = 0;
  } else {
    bool fresh = false;
    XPAR__FORWARD(sort_grow(st, scratch_bytes, status_bytes, &fresh));
    if (!ex->serial && (!st->sort_status.ptr || st->sort_status.bytes < status_bytes)) {
      /* growing the scratch released the status buffer: once more */
      XPAR__FORWARD(sort_grow(st, scratch_bytes, status_bytes, &fresh));
      fresh = true;
    }
    scratch = static_cast<char *>(st->sort_scratch.ptr);
    if (!ex->serial) {
      status = static_cast<unsigned long long *>(st->sort_status.ptr);
      if (fresh) st->sort_status_cleared = false;
      if (!st->sort_status_cleared || st->sort_epoch + PASSES >= kSortEpochLimit) {
        XPAR__FORWARD(xpar__cuda_refuse_if_capturing(st, "sort"));
        XPAR_CUDA_TRY(cudaMemsetAsync(st->sort_status.ptr, 0, st->sort_status.bytes, st->stream),
                      "clearing the sort tile status (%zu bytes)", st->sort_status.bytes);
        st->sort_status_cleared = true;
        st->sort_epoch = 0;
      }
      epoch0 = st->sort_epoch;
      st->sort_epoch += PASSES;
    } else {
      epoch0 = 0;
    }
  }
  unsigned long long *bins = reinterpret_cast<unsigned long long *>(scratch);
  unsigned int *counters = reinterpret_cast<unsigned int *>(bins + PASSES * kDigits);
  char *a = scratch + control_bytes;
  char *b = two_key_buffers ? a + a_bytes : NULL;
  char *va = scratch + control_bytes + a_bytes * (two_key_buffers ? 2 : 1);

  /* ---- the passes' buffers ---- */
  const void *ksrc[8], *vsrc[8];
  void *kdst[8], *vdst[8];
  for (int pass = 0; pass < PASSES; ++pass) {
    const bool even = pass % 2 == 0;
    ksrc[pass] = pass == 0 ? s->keys_in : kdst[pass - 1];
    if (pass == PASSES - 1)
      kdst[pass] = s->keys_out; /* NULL: not written */
    else if (keys_out)
      kdst[pass] = even ? (void *)a : s->keys_out;
    else
      kdst[pass] = even ? (void *)a : (void *)b;
    vsrc[pass] = pass == 0 ? s->values_in : vdst[pass - 1];
    vdst[pass] = HAS_VALUES ? (even ? (void *)va : s->values_out) : NULL;
  }

  /* ---- cuda-serial: one thread ---- */
  if (ex->serial) {
    SerialPlan plan;
    memset(&plan, 0, sizeof plan);
    for (int pass = 0; pass < PASSES; ++pass) {
      plan.ksrc[pass] = ksrc[pass];
      plan.kdst[pass] = kdst[pass];
      plan.vsrc[pass] = vsrc[pass];
      plan.vdst[pass] = vdst[pass];
    }
    plan.n = n;
    plan.mask = mask;
    plan.passes = PASSES;
    plan.gen_indices = s->values_are_indices;
    DoneSignal done;
    XPAR__FORWARD(xpar__cuda_done_signal(st, spin, &done));
    void *args[] = {&plan, &done};
    XPAR__FORWARD(xpar__cuda_launch(st, (const void *)serial_sort_kernel<U, F, VW>, NULL, 1, 1, 0,
                                    args, "sort (serial)"));
    XPAR__FORWARD(graph_scratch.free("sort"));
    if (!ex->nowait) XPAR__FORWARD(xpar__cuda_finish(st, done, "sort"));
    return XPAR_OK;
  }

  /* ---- onesweep ---- */
  if (!ex->captured)
    XPAR_CUDA_TRY(cudaMemsetAsync(scratch, 0, control_bytes, st->stream),
                  "clearing the sort histograms (%zu bytes)", control_bytes);
  SortParams p;
  memset(&p, 0, sizeof p);
  p.keys_in = s->keys_in;
  p.n = n;
  p.mask = mask;
  p.is_float = F;
  p.bins = bins;
  p.counter = counters + PASSES; /* the histogram's ticket */
  p.passes = PASSES;
  {
    const size_t tiles = (n + histogram_block * 16 - 1) / (histogram_block * 16);
    const size_t cap = (size_t)st->multiprocessors * histogram_blocks_per_sm;
    const unsigned grid = (unsigned)(tiles < cap ? tiles : cap);
    void *args[] = {&p};
    XPAR__FORWARD(xpar__cuda_launch(st, (const void *)histogram_kernel<U, F>, NULL, grid,
                                    histogram_block, 0, args, "sort histogram"));
  }
  DoneSignal done;
  XPAR__FORWARD(xpar__cuda_done_signal(st, spin, &done));
  for (int pass = 0; pass < PASSES; ++pass) {
    SortParams q;
    memset(&q, 0, sizeof q);
    q.keys_in = ksrc[pass];
    q.keys_out = kdst[pass];
    q.values_in = vsrc[pass];
    q.values_out = vdst[pass];
    q.n = n;
    q.mask = mask;
    q.is_float = F;
    q.gen_indices = pass == 0 && s->values_are_indices;
    q.shift = (uint32_t)(pass * kDigitBits);
    q.epoch = epoch0 + 1 + (uint32_t)pass;
    q.bins = bins + pass * kDigits;
    q.status = status;
    q.counter = counters + pass;
    if (pass == PASSES - 1) q.done = done;
    void *args[] = {&q};
    XPAR__FORWARD(xpar__cuda_launch(st, (const void *)onesweep_kernel<U, F, VW, Tn::threads, Tn::items>,
                                    NULL, (unsigned)num_tiles, Tn::threads, 0, args, "sort pass"));
  }
  XPAR__FORWARD(graph_scratch.free("sort"));
  if (!ex->nowait) XPAR__FORWARD(xpar__cuda_finish(st, done, "sort"));
  return XPAR_OK;
}

template <class U, bool F>
xpar_status sort_values(const xpar__exec *ex, const xpar__sort_spec *s, unsigned long long mask,
                        size_t value_bytes) {
  if (value_bytes == 0) return sort_run<U, F, NoValue>(ex, s, mask);
  if (value_bytes == 4) return sort_run<U, F, uint32_t>(ex, s, mask);
  return sort_run<U, F, uint64_t>(ex, s, mask);
}

template <class U>
xpar_status sort_width(const xpar__exec *ex, const xpar__sort_spec *s, int key_class,
                       size_t value_bytes) {
  const unsigned long long mask = radix_mask<U>(key_class, s->descending);
  if (key_class == XPAR__SORT_KEY_FLOAT) return sort_values<U, true>(ex, s, mask, value_bytes);
  return sort_values<U, false>(ex, s, mask, value_bytes);
}

#if !defined(XPAR_SORT_WIDTH_8)
xpar_status sort_width8(const xpar__exec *ex, const xpar__sort_spec *s, int key_class,
                        size_t value_bytes); /* device_sort64.cu */
#else
xpar_status sort_width8(const xpar__exec *ex, const xpar__sort_spec *s, int key_class,
                        size_t value_bytes) {
  return sort_width<uint64_t>(ex, s, key_class, value_bytes);
}
#endif

} // namespace sort
} // namespace xpar_cuda

#if !defined(XPAR_SORT_WIDTH_8)

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_sort(const xpar__exec *ex, const xpar__sort_spec *s) {
  XPAR__FORWARD(xpar__cuda_begin(ex->cuda, "sort"));
  if (s->n == 0) return XPAR_OK;
  int key_class;
  size_t key_bytes;
  switch (s->key_dtype) {
  case XPAR_INT32: key_class = XPAR__SORT_KEY_SIGNED, key_bytes = 4; break;
  case XPAR_INT64: key_class = XPAR__SORT_KEY_SIGNED, key_bytes = 8; break;
  case XPAR_UINT32: key_class = XPAR__SORT_KEY_UNSIGNED, key_bytes = 4; break;
  case XPAR_UINT64: key_class = XPAR__SORT_KEY_UNSIGNED, key_bytes = 8; break;
  case XPAR_FLOAT: key_class = XPAR__SORT_KEY_FLOAT, key_bytes = 4; break;
  case XPAR_DOUBLE: key_class = XPAR__SORT_KEY_FLOAT, key_bytes = 8; break;
  default: return xpar__fail(XPAR_ERR_INVALID_ENUM, "sort: unknown key dtype %d", (int)s->key_dtype);
  }
  const bool has_values = s->values_out != NULL;
  size_t value_bytes = 0;
  if (has_values) {
    value_bytes = xpar__dtype_size(s->value_dtype);
    if (value_bytes != 4 && value_bytes != 8)
      return xpar__fail(XPAR_ERR_INVALID_ENUM, "sort: unknown value dtype %d",
                        (int)s->value_dtype);
  }
  if (s->n >= sort::kMaxN)
    return xpar__fail(XPAR_ERR_NOT_SUPPORTED, "sort: n = %zu keys, the GPU sort takes < 2^40",
                      s->n);
  if (!aligned_to(s->keys_in, key_bytes) || (s->keys_out && !aligned_to(s->keys_out, key_bytes)) ||
      (s->values_in && !aligned_to(s->values_in, value_bytes)) ||
      (has_values && !aligned_to(s->values_out, value_bytes)))
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                      "sort: an array is not aligned to its elements (keys %p -> %p, values %p "
                      "-> %p)",
                      s->keys_in, s->keys_out, s->values_in, s->values_out);
  if (key_bytes == 4) return sort::sort_width<uint32_t>(ex, s, key_class, value_bytes);
  return sort::sort_width8(ex, s, key_class, value_bytes);
}

#endif
