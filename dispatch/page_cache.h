/*
 * The context's cache of host-page classifications: which 4 KiB pages the
 * CUDA runtime last called pinned or pageable host memory, so that a tight
 * loop of small calls on host arrays asks the runtime nothing (one
 * cudaPointerGetAttributes costs about 0.4 us, several times a whole small
 * call).
 *
 * What an entry promises, and what it does not: a cached page is host memory
 * (not device or managed memory: under unified addressing host and device
 * allocations come from disjoint address ranges while the CUDA context lives),
 * but whether it is pinned or pageable is only a hint.  The application can
 * free pinned memory and get the same address back as pageable memory
 * (cudaFreeHost then malloc, cudaHostUnregister), or the other way round,
 * without xpar seeing it.  So the hint is used only where the answer cannot
 * change what runs: a call below the GPU thresholds of both pinned and
 * pageable data runs on the CPU either way.  Every call whose placement
 * depends on it asks the runtime again (dispatch: exact classification), and
 * such a call is large enough (at or above a GPU threshold for host data) that
 * the query is noise.
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
  uint32_t pinned;         /* the hint: 1 pinned, 0 pageable */
} xpar__page_cache_way;

typedef struct xpar__page_cache {
  xpar__page_cache_way sets[1u << XPAR__PAGE_CACHE_SET_BITS][XPAR__PAGE_CACHE_WAYS];
  uint32_t clock;
} xpar__page_cache;

static inline xpar__page_cache_way *xpar__page_cache_set(xpar__page_cache *c, uintptr_t page) {
  const uint64_t h = (uint64_t)page * UINT64_C(0x9E3779B97F4A7C15);
  return c->sets[h >> (64 - XPAR__PAGE_CACHE_SET_BITS)];
}

/** 1 and the pinned hint in *pinned when p's page is cached as host memory. */
static inline int xpar__page_cache_lookup(xpar__page_cache *c, const void *p, int *pinned) {
  const uintptr_t page = (uintptr_t)p >> 12;
  xpar__page_cache_way *set = xpar__page_cache_set(c, page);
  for (int w = 0; w < XPAR__PAGE_CACHE_WAYS; w++)
    if (set[w].page_plus_one == page + 1) {
      set[w].used = ++c->clock;
      *pinned = (int)set[w].pinned;
      return 1;
    }
  return 0;
}

/** Record (or refresh) p's page as pinned or pageable host memory. */
static inline void xpar__page_cache_store(xpar__page_cache *c, const void *p, int pinned) {
  const uintptr_t page = (uintptr_t)p >> 12;
  xpar__page_cache_way *set = xpar__page_cache_set(c, page);
  xpar__page_cache_way *victim = &set[0];
  for (int w = 0; w < XPAR__PAGE_CACHE_WAYS; w++) {
    if (set[w].page_plus_one == page + 1) {
      victim = &set[w];
      break;
    }
    /* Empty ways have used = 0 and go first; the clock wraps after 2^32
     * lookups, which costs at most one early eviction. */
    if (set[w].used < victim->used) victim = &set[w];
  }
  victim->page_plus_one = page + 1;
  victim->used = ++c->clock;
  victim->pinned = (uint32_t)(pinned != 0);
}

static inline void xpar__page_cache_clear(xpar__page_cache *c) { memset(c, 0, sizeof *c); }

#endif /* XPAR_DISPATCH_PAGE_CACHE_H */
