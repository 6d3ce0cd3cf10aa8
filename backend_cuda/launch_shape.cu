/* The launch-shape decision; tuning data lives in launch_shape.cuh. */
#include "launch_shape.cuh"

#include <stdint.h>

#include <mutex>

using namespace xpar_cuda;

namespace {

struct FamilyTuning {
  unsigned block;
  unsigned max_blocks_per_sm; /* 0: no cap, one block per tile */
};

FamilyTuning family_tuning(xpar__cuda_kernel_family family) {
  switch (family) {
    case XPAR_CUDA_FAMILY_REDUCE:
      return {tuning::reduce_block, tuning::reduce_max_blocks_per_sm};
    case XPAR_CUDA_FAMILY_SCAN4:
      return {tuning::ScanTuning<4>::block, 0};
    case XPAR_CUDA_FAMILY_SCAN8:
      return {tuning::ScanTuning<8>::block, 0};
    case XPAR_CUDA_FAMILY_ELEMENTWISE_CACHED:
      return {tuning::elementwise_block, tuning::elementwise_one_wave_blocks_per_sm};
    case XPAR_CUDA_FAMILY_ELEMENTWISE:
    default:
      return {tuning::elementwise_block, 0};
  }
}

int runtime_occupancy(const void *kernel, unsigned block, int *per_sm) {
  const cudaError_t err =
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kernel, (int)block, 0);
  if (err != cudaSuccess) (void)cudaGetLastError();
  return (int)err;
}

} // namespace

int xpar__cuda_resident_blocks(const void *key, int device, unsigned block,
                               xpar__cuda_occupancy_query query, int *per_sm) {
  struct Entry {
    const void *key;
    int device;
    unsigned block;
    int per_sm;
  };
  constexpr unsigned kEntries = 256;
  static std::mutex mu;
  static Entry table[kEntries]; /* key NULL: empty */
  /* splitmix64's finaliser over key, device and block: every input bit reaches the slot. */
  uint64_t h =
      (uint64_t)(uintptr_t)key ^ ((uint64_t)(unsigned)device << 32) ^ ((uint64_t)block << 48);
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  h ^= h >> 31;
  Entry &slot = table[h % kEntries];
  {
    std::lock_guard<std::mutex> lock(mu);
    if (slot.key == key && slot.device == device && slot.block == block) {
      *per_sm = slot.per_sm;
      return 0;
    }
  }
  *per_sm = 0;
  const int err = query(key, block, per_sm);
  if (err != 0) return err;
  std::lock_guard<std::mutex> lock(mu);
  slot = Entry{key, device, block, *per_sm};
  return 0;
}

xpar_status xpar__cuda_choose_shape(const xpar__exec *ex, const xpar__cuda_state *st,
                                    xpar__cuda_kernel_family family, const void *kernel,
                                    size_t n, unsigned items_per_thread, xpar__cuda_shape *out) {
  if (ex->serial) {
    out->grid = 1;
    out->block = 1;
    return XPAR_OK;
  }
  const FamilyTuning tune = family_tuning(family);
  unsigned block = ex->block ? ex->block : tune.block;
  if (block > tuning::max_block)
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                      "launch block size %u exceeds the %u threads per block of the CUDA backend",
                      block, tuning::max_block);
  if (ex->grid > 0x7fffffffu)
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT, "launch grid size %u exceeds 2^31 - 1", ex->grid);
  out->block = block;

  const size_t per_block = (size_t)block * items_per_thread;
  size_t wanted = n / per_block + (n % per_block != 0);
  if (wanted == 0) wanted = 1;
  if (ex->grid) {
    /* An override is a debugging and tuning aid: blocks beyond the ones that
     * hold work would only spin through empty grid-stride loops (2^31 - 1 of
     * them took minutes) and size the reduce partials and scan look-back
     * state for nothing, so the grid is clamped to the work. */
    out->grid = ex->grid < wanted ? ex->grid : (unsigned)wanted;
    return XPAR_OK;
  }
  const size_t sms = st->multiprocessors > 0 ? (size_t)st->multiprocessors : 1;
  /* Scans and elementwise ops from DRAM: no persistent cap, one block per tile, started
   * as resident blocks finish (CUB's shape; launch_shape.cuh says why for elementwise). */
  const bool uncapped = tune.max_blocks_per_sm == 0;
  if (uncapped && wanted > 0x7fffffffu) wanted = 0x7fffffffu; /* the kernel loops over the rest */
  if (wanted > sms && !uncapped) {
    int resident = 0;
    const int err =
        xpar__cuda_resident_blocks(kernel, st->device, block, runtime_occupancy, &resident);
    if (err != 0)
      return xpar__cuda_error((cudaError_t)err, "occupancy query for a block of %u threads", block);
    if (resident < 1) resident = 1;
    size_t per_sm = (unsigned)resident < tune.max_blocks_per_sm ? (unsigned)resident
                                                                : tune.max_blocks_per_sm;
    size_t cap = sms * per_sm;
    if (wanted > cap) wanted = cap;
  }
  out->grid = (unsigned)wanted;
  return XPAR_OK;
}
