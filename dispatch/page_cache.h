/*
 * The context's cache of host-page classifications: which 4 KiB pages the
 * CUDA runtime last called pinned or pageable host memory, so that a tight
 * loop of small calls on host arrays asks the runtime nothing (one
 * classification costs about 0.1 us through the driver, 0.16-0.22 us through
 * cudaPointerGetAttributes, on the H100 host: several times a whole small
 * call).
 *
 * What an entry promises: a cached page is pageable host memory that the C
 * library handed out, outside the address ranges the CUDA driver reserves for
 * its own allocations, so no cudaMalloc or cudaMallocManaged can return it
 * while it stays mapped.  Pinned pages are NOT cached: cudaMallocHost memory
 * lives in the driver's unified address range, and after cudaFreeHost the
 * driver hands the same addresses out again for cudaMalloc (the H100 regret
 * run of 2026-11-25 crashed on exactly that: a page cached as pinned host
 * memory came back as device memory, and the host fast path read it on the
 * CPU).  A pinned operand therefore costs one driver look-up per call
 * (about 0.1 us: backend_cuda/cuda_state.cu, pointer_kind), asked by the
 * host fast path itself (dispatch.c, fast_host_operand), the price of never
 * dereferencing device memory on the host.
 *
 * A cached page may still change kind under xpar's feet in harmless ways:
 * cudaHostRegister pins it, or the application unmaps it and maps pageable
 * memory again.  So the entry is used only where pinned and pageable host
 * data run the same way (a call below the GPU thresholds of both runs on the
 * CPU either way); every call whose placement depends on the kind asks the
 * runtime again (dispatch: exact classification), and such a call is large
 * enough (at or above a GPU threshold for host data) that the query is noise.
 *
 * Layout: 64 sets of 4 ways, the set chosen by a multiplicative hash of the
 * page number (separate cudaMallocHost allocations are often 2 MiB-aligned: a
 * plain "page mod sets" index would put them all in one set), least recently
 * used way replaced.  The operands of one call (at most 4 pages) therefore
 * never evict each other.
 */
#ifndef XPAR_DISPATCH_PAGE_CACHE_H
#define XPAR_DISPATCH_PAGE_CACHE_H

#include <stdint.h>
#include <string.h>

#define XPAR__PAGE_CACHE_SET_BITS 6
#define XPAR__PAGE_CACHE_WAYS 4

typedef struct xpar__page_cache_way {
  uintptr_t page_plus_one; /* 0 = empty */
  uint32_t used;           /* the cache's clock at the last hit or fill */
} xpar__page_cache_way;

/* One allocation of the driver's: pages [first, last]. */
typedef struct xpar__driver_range {
  uintptr_t first, last_plus_one; /* last_plus_one = 0: empty */
} xpar__driver_range;
#define XPAR__DRIVER_RANGES 16

typedef struct xpar__page_cache {
  xpar__page_cache_way sets[1u << XPAR__PAGE_CACHE_SET_BITS][XPAR__PAGE_CACHE_WAYS];
  uint32_t clock;
  /* The allocations the driver last called its own (pinned, device or
   * managed memory; the most recent XPAR__DRIVER_RANGES, replaced in turn).
   * A pageable answer inside one is not cached: the application may map
   * pageable memory over a freed pinned range (mmap MAP_FIXED) and unmap it
   * again, and the driver then hands the same addresses out as device memory,
   * which a cached entry would let the host fast path read on the CPU
   * (test_embed_gpu's page reuse crashed so on the H100 host, 2026-12-07). */
  xpar__driver_range driver[XPAR__DRIVER_RANGES];
  unsigned driver_next;
  /* Bumped by every store and clear: only they add or evict entries, so
   * while it stands every page found here since is still here (dispatch.c's
   * repeated calls rely on it instead of looking their pages up again). */
  unsigned long generation;
} xpar__page_cache;

static inline xpar__page_cache_way *xpar__page_cache_set(xpar__page_cache *c, uintptr_t page) {
  const uint64_t h = (uint64_t)page * UINT64_C(0x9E3779B97F4A7C15);
  return c->sets[h >> (64 - XPAR__PAGE_CACHE_SET_BITS)];
}

/** 1 when p's page is cached as pageable host memory. */
static inline int xpar__page_cache_lookup(xpar__page_cache *c, const void *p) {
  const uintptr_t page = (uintptr_t)p >> 12;
  xpar__page_cache_way *set = xpar__page_cache_set(c, page);
  for (int w = 0; w < XPAR__PAGE_CACHE_WAYS; w++)
    if (set[w].page_plus_one == page + 1) {
      set[w].used = ++c->clock;
      return 1;
    }
  return 0;
}

/** 1 when p's page lies in an allocation the driver called its own. */
static inline int xpar__page_cache_in_driver_range(const xpar__page_cache *c, const void *p) {
  const uintptr_t page = (uintptr_t)p >> 12;
  for (int i = 0; i < XPAR__DRIVER_RANGES; i++)
    if (page >= c->driver[i].first && page < c->driver[i].last_plus_one) return 1;
  return 0;
}

/** Record (or refresh) p's page as pageable host memory.  Inside a driver
 *  allocation it is not cached, and the generation moves so that no repeated
 *  call (dispatch.h) trusts the answer either. */
static inline void xpar__page_cache_store(xpar__page_cache *c, const void *p) {
  const uintptr_t page = (uintptr_t)p >> 12;
  if (xpar__page_cache_in_driver_range(c, p)) {
    c->generation++;
    return;
  }
  xpar__page_cache_way *set = xpar__page_cache_set(c, page);
  xpar__page_cache_way *victim = &set[0];
  for (int w = 0; w < XPAR__PAGE_CACHE_WAYS; w++) {
    if (set[w].page_plus_one == page + 1) { /* refreshed: nothing added or evicted */
      set[w].used = ++c->clock;
      return;
    }
    /* Empty ways have used = 0 and go first; the clock wraps after 2^32
     * lookups, which costs at most one early eviction. */
    if (set[w].used < victim->used) victim = &set[w];
  }
  victim->page_plus_one = page + 1;
  victim->used = ++c->clock;
  c->generation++;
}

/** Bytes [start, start + size) are the driver's memory (pinned, device or
 *  managed): remember the range and drop every cached page inside it (256
 *  ways looked at, once per allocation the driver names). */
static inline void xpar__page_cache_note_driver(xpar__page_cache *c, uintptr_t start,
                                                size_t size) {
  xpar__driver_range *r = &c->driver[c->driver_next++ % XPAR__DRIVER_RANGES];
  r->first = start >> 12;
  r->last_plus_one = ((start + (size ? size : 1) - 1) >> 12) + 1;
  int evicted = 0;
  for (unsigned s = 0; s < (1u << XPAR__PAGE_CACHE_SET_BITS); s++)
    for (int w = 0; w < XPAR__PAGE_CACHE_WAYS; w++) {
      const uintptr_t pp = c->sets[s][w].page_plus_one;
      if (pp && pp - 1 >= r->first && pp - 1 < r->last_plus_one) {
        c->sets[s][w].page_plus_one = 0;
        c->sets[s][w].used = 0;
        evicted = 1;
      }
    }
  /* Only an eviction ends the repeats: their pages are the cache's. */
  if (evicted) c->generation++;
}

/** Empty the cache (the driver's ranges are kept: they describe the address
 *  space, not a device). */
static inline void xpar__page_cache_clear(xpar__page_cache *c) {
  const unsigned long generation = c->generation;
  xpar__driver_range driver[XPAR__DRIVER_RANGES];
  memcpy(driver, c->driver, sizeof driver);
  const unsigned next = c->driver_next;
  memset(c, 0, sizeof *c);
  memcpy(c->driver, driver, sizeof driver);
  c->driver_next = next;
  c->generation = generation + 1;
}

#endif /* XPAR_DISPATCH_PAGE_CACHE_H */
