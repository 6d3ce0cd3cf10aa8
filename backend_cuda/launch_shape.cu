/* The launch-shape decision; tuning data lives in launch_shape.cuh. */
#include <string.h>

#include "launch_shape.cuh"

using namespace xpar_cuda;

namespace {

struct FamilyTuning {
  unsigned block;
  unsigned max_blocks_per_sm;
};

FamilyTuning family_tuning(xpar__cuda_kernel_family family) {
  switch (family) {
    case XPAR_CUDA_FAMILY_REDUCE:
      return {tuning::reduce_block, tuning::reduce_max_blocks_per_sm};
    case XPAR_CUDA_FAMILY_SCAN:
      return {tuning::scan_block, tuning::scan_max_blocks_per_sm};
    case XPAR_CUDA_FAMILY_SCAN_V4:
      return {tuning::scan_v4_block, tuning::scan_v4_min_blocks};
    case XPAR_CUDA_FAMILY_SCAN_V5:
      return {tuning::scan_v5_block, tuning::scan_v5_min_blocks};
    case XPAR_CUDA_FAMILY_ELEMENTWISE:
    default:
      return {tuning::elementwise_block, tuning::elementwise_max_blocks_per_sm};
  }
}

} // namespace

xpar_status xpar__cuda_choose_shape(const xpar__exec *ex, const xpar__cuda_state *st,
                                    xpar__cuda_kernel_family family, const void *kernel,
                                    size_t n, unsigned items_per_thread, xpar__cuda_shape *out) {
  if (ex->serial) {
    out->grid = 1;
    out->block = 1;
    return XPAR_OK;
  }
  FamilyTuning tune = family_tuning(family);
  if (family == XPAR_CUDA_FAMILY_SCAN && st->scan_tuning.blocks_per_sm)
    tune.max_blocks_per_sm = st->scan_tuning.blocks_per_sm;
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
  /* A scan knob of 1000+ blocks per SM means no persistent cap: one block per
   * tile, started as resident blocks finish (CUB's shape). */
  const bool uncapped = (family == XPAR_CUDA_FAMILY_SCAN && st->scan_tuning.blocks_per_sm >= 1000) ||
                        family == XPAR_CUDA_FAMILY_SCAN_V4 || family == XPAR_CUDA_FAMILY_SCAN_V5;
  if (uncapped && wanted > 0x7fffffffu) wanted = 0x7fffffffu; /* the kernel loops over the rest */
  if (wanted > sms && !uncapped) {
    int resident = 0;
    cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, (int)block, 0);
    if (err != cudaSuccess)
      return xpar__cuda_error(err, "occupancy query for a block of %u threads", block);
    if (resident < 1) resident = 1;
    size_t per_sm = (unsigned)resident < tune.max_blocks_per_sm ? (unsigned)resident
                                                                : tune.max_blocks_per_sm;
    size_t cap = sms * per_sm;
    if (wanted > cap) wanted = cap;
  }
  out->grid = (unsigned)wanted;
  return XPAR_OK;
}

xpar__cuda_scan_tuning xpar__cuda_default_scan_tuning(void) {
  return xpar__cuda_scan_tuning_for(tuning::scan_default_variant);
}

xpar__cuda_scan_tuning xpar__cuda_scan_tuning_for(int variant) {
  xpar__cuda_scan_tuning t;
  t.blocks_per_sm = tuning::scan_max_blocks_per_sm;
  t.first_poll_delay_ns = tuning::scan_first_poll_delay_ns;
  t.poll_delay_ns = tuning::scan_poll_delay_ns;
  t.ticket_draw = tuning::scan_ticket_draw;
  t.variant = variant;
  t.tile_order = XPAR_CUDA_TILES_TICKET;
  t.delay_min_grid = 0;
  if (t.variant == XPAR_CUDA_SCAN_V4) {
    t.first_poll_delay_ns = tuning::scan_v4_first_poll_delay_ns;
    t.poll_delay_ns = tuning::scan_v4_poll_delay_ns;
    t.tile_order = tuning::scan_v4_tile_order;
  } else if (t.variant == XPAR_CUDA_SCAN_V5) {
    t.first_poll_delay_ns = tuning::scan_v5_first_poll_delay_ns;
    t.poll_delay_ns = tuning::scan_v5_poll_delay_ns;
    t.tile_order = tuning::scan_v5_tile_order;
    t.delay_min_grid = tuning::scan_v5_delay_min_grid;
  }
  return t;
}

const char *xpar__cuda_scan_variant_name(int variant) {
  switch (variant) {
    case XPAR_CUDA_SCAN_V3: return "v3";
    case XPAR_CUDA_SCAN_V4: return "v4";
    case XPAR_CUDA_SCAN_V5: return "v5";
    default: return NULL;
  }
}

int xpar__cuda_scan_variant_parse(const char *name) {
  for (int v = 0; v < XPAR_CUDA_SCAN_VARIANTS; v++)
    if (name && !strcmp(name, xpar__cuda_scan_variant_name(v))) return v;
  return -1;
}
