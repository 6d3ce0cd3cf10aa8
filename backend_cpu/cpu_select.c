/*
 * CPU compaction (xpar__select_spec): select by predicate, select by flags,
 * stable partition, unique.  Kept elements go to out[0 .. count) in input
 * order; out beyond count is never written (a partition writes all n).
 *
 * One thread (ex->serial, one thread, or n too small for a team):
 *  - select, flagged, unique: a backward scan finds the last kept element L
 *    (about 1 / selectivity elements from the end; the whole array when
 *    nothing is kept, which then is the only pass), then one forward pass
 *    over [0, L] stores every element at out[k] and advances k by the keep
 *    test (no branch on the data).  A rejected element's store lands on
 *    out[k] with k below the final count, overwritten by the next kept
 *    element, and element L is kept, so nothing lands at or past the count.
 *    In place (out == in) holds: k <= i, the element is read before the
 *    store, and unique keeps the original previous element in a register.
 *    Bytes per element: read s, write s x selectivity.
 *  - partition: a count pass, then one pass storing every element either at
 *    out[k] or at out[count + r] (the address is chosen, not the branch).
 *    Read 2s, write s.
 *
 * OpenMP tier (select, flagged, unique): cache-sized blocks of team x
 * XPAR__CPU_SELECT_BLOCK_BYTES of input.  In each block every thread
 * compacts its contiguous slice into its own scratch (from the context's
 * host scratch, XPAR__CPU_SELECT_BLOCK_BYTES per thread, so it stays in
 * L2), publishes its count, and after one barrier copies its kept elements
 * to out at the block's running base plus the counts of the threads before
 * it.  DRAM traffic: read s + write s x selectivity per element, the same as
 * one thread; the extra cost is the copy of the kept elements from L2 and one
 * barrier per block.  In place is safe without a second pass: every thread
 * has read the whole block (into its scratch) before the barrier, the copies
 * of block b land in [base_b, base_b + kept in b), which lies below the end
 * of block b and above every copy of block b - 1, and never reach block
 * b + 1, which faster threads may already be reading.  The counts are
 * double-buffered by block parity (as the scan's partials): a thread rewrites
 * block b's counts only in block b + 2, after the barrier of block b + 1,
 * which every thread reaches only once it has read them.  Unique's slices
 * compare their first element with the one before: inside a block it is a
 * neighbouring slice's input, which nobody writes before the barrier; at a
 * block start it may already be overwritten by the previous block's copies,
 * so every thread reads a block's last element before the block's barrier
 * and carries it.
 *
 * OpenMP partition: contiguous chunks per thread, a count pass, one barrier,
 * then each thread writes its selected elements from their offset among
 * the selected and its rejected ones from the total selected plus the
 * rejected before it.  Read 2s, write s per element.
 */
#include "base/sort_key.h"
#include "cpu_internal.h"

/* Input bytes per thread per block of the OpenMP tier: the thread's scratch
 * (at most as large) stays in its L2 between the compaction and the copy out,
 * and the one barrier per block is noise (2^24 int32 on 2 threads is 128
 * blocks). */
#ifndef XPAR__CPU_SELECT_BLOCK_BYTES
#define XPAR__CPU_SELECT_BLOCK_BYTES (256u * 1024u)
#endif

typedef struct sel_args {
  const void *in;
  const unsigned char *flags;
  xpar__scalar value, hi;
} sel_args;

/* Compact [lo, hi) of a->in into out[0 ..), storing every element at out[k]
 * (k the kept count so far), so out[0 .. hi - lo) may be written; returns k.
 * prev: the element before lo (unique only; NULL: lo starts the array). */
typedef size_t (*sel_compact_fn)(const sel_args *a, size_t lo, size_t hi, void *out,
                                 const xpar__scalar *prev);
/* One past the last kept index in [lo, hi) (lo == 0 for unique), lo if none. */
typedef size_t (*sel_rfind_fn)(const sel_args *a, size_t lo, size_t hi);
/* Kept elements in [lo, hi) (predicates and flags only). */
typedef size_t (*sel_count_fn)(const sel_args *a, size_t lo, size_t hi);
/* Kept elements of [lo, hi) to sel[0 ..), the others to rej[0 ..). */
typedef void (*sel_partition_fn)(const sel_args *a, size_t lo, size_t hi, void *sel, void *rej);

typedef struct sel_kernels {
  sel_compact_fn compact;
  sel_rfind_fn rfind;
  sel_count_fn count;
  sel_partition_fn partition;
} sel_kernels;

/* The kernels of one keep test KEEP (of v = x[i], i, and what SETUP sets up). */
#define XPAR__CPU_SEL_KERNELS_(NAME, ctype, SETUP, KEEP)                                   \
  static size_t sel_compact_##NAME(const sel_args *a, size_t lo, size_t hi, void *out,     \
                                   const xpar__scalar *prev) {                             \
    const ctype *x = (const ctype *)a->in;                                                 \
    ctype *y = (ctype *)out; /* may be x + lo's target: out == in */                       \
    SETUP;                                                                                 \
    (void)prev;                                                                            \
    size_t k = 0;                                                                          \
    for (size_t i = lo; i < hi; ++i) {                                                     \
      const ctype v = x[i];                                                                \
      y[k] = v;                                                                            \
      k += (size_t)(KEEP);                                                                 \
    }                                                                                      \
    return k;                                                                              \
  }                                                                                        \
  static size_t sel_rfind_##NAME(const sel_args *a, size_t lo, size_t hi) {                \
    const ctype *x = (const ctype *)a->in;                                                 \
    SETUP;                                                                                 \
    for (size_t i = hi; i-- > lo;) {                                                       \
      const ctype v = x[i];                                                                \
      (void)v;                                                                             \
      if (KEEP) return i + 1;                                                              \
    }                                                                                      \
    return lo;                                                                             \
  }                                                                                        \
  static size_t sel_count_##NAME(const sel_args *a, size_t lo, size_t hi) {                \
    const ctype *x = (const ctype *)a->in;                                                 \
    SETUP;                                                                                 \
    size_t k = 0;                                                                          \
    for (size_t i = lo; i < hi; ++i) {                                                     \
      const ctype v = x[i];                                                                \
      (void)v; /* unread by the flags' test */                                             \
      k += (size_t)(KEEP);                                                                 \
    }                                                                                      \
    return k;                                                                              \
  }                                                                                        \
  static void sel_partition_##NAME(const sel_args *a, size_t lo, size_t hi, void *sel,     \
                                   void *rej) {                                            \
    const ctype *x = (const ctype *)a->in;                                                 \
    ctype *s = (ctype *)sel, *r = (ctype *)rej;                                            \
    SETUP;                                                                                 \
    for (size_t i = lo; i < hi; ++i) {                                                     \
      const ctype v = x[i];                                                                \
      const int keep = (KEEP);                                                             \
      ctype *d = keep ? s : r; /* a select of the address, not a branch */                 \
      *d = v;                                                                              \
      s += keep;                                                                           \
      r += 1 - keep;                                                                       \
    }                                                                                      \
  }

/* The predicates' keep tests (C comparisons: a NaN satisfies only NE).  The
 * range test uses & so that both compares are evaluated, without a branch. */
#define XPAR__CPU_SEL_SETUP_(ctype)       \
  ctype a0, a1;                           \
  memcpy(&a0, a->value.bytes, sizeof a0); \
  memcpy(&a1, a->hi.bytes, sizeof a1);    \
  (void)a0;                               \
  (void)a1
#define XPAR__CPU_SEL_PREDICATES_(e, ctype, name, size)                                     \
  XPAR__CPU_SEL_KERNELS_(LT_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), v < a0)               \
  XPAR__CPU_SEL_KERNELS_(LE_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), v <= a0)              \
  XPAR__CPU_SEL_KERNELS_(EQ_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), v == a0)              \
  XPAR__CPU_SEL_KERNELS_(NE_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), v != a0)              \
  XPAR__CPU_SEL_KERNELS_(GE_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), v >= a0)              \
  XPAR__CPU_SEL_KERNELS_(GT_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), v > a0)               \
  XPAR__CPU_SEL_KERNELS_(IN_RANGE_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), (v >= a0) & (v < a1))
XPAR_DTYPE_MAP(XPAR__CPU_SEL_PREDICATES_)
#undef XPAR__CPU_SEL_PREDICATES_

/* Flags: the elements only move, so one set per element size. */
#define XPAR__CPU_SEL_FLAGS_SETUP_ const unsigned char *f = a->flags
XPAR__CPU_SEL_KERNELS_(FLAGGED_4, uint32_t, XPAR__CPU_SEL_FLAGS_SETUP_, f[i] != 0)
XPAR__CPU_SEL_KERNELS_(FLAGGED_8, uint64_t, XPAR__CPU_SEL_FLAGS_SETUP_, f[i] != 0)
#undef XPAR__CPU_SEL_FLAGS_SETUP_
#undef XPAR__CPU_SEL_SETUP_
#undef XPAR__CPU_SEL_KERNELS_

/*
 * Unique: element i is kept when i == 0 or its radix key (base/sort_key.h,
 * ascending) differs from element i - 1's.  Integers compare their bits; the
 * float key maps -0.0 to +0.0 and every NaN to one NaN.  The forward loop
 * keeps the previous input element's key in a register (out == in: the
 * element before i may already be overwritten).
 */
#define XPAR__CPU_UNIQUE_KERNELS_(NAME, utype, RADIX, CLASS)                                \
  static size_t sel_compact_##NAME(const sel_args *a, size_t lo, size_t hi, void *out,     \
                                   const xpar__scalar *prev) {                             \
    const utype *x = (const utype *)a->in;                                                 \
    utype *y = (utype *)out;                                                               \
    size_t k = 0, i = lo;                                                                  \
    utype pk;                                                                              \
    if (lo == hi) return 0;                                                                \
    if (prev) {                                                                            \
      utype pb;                                                                            \
      memcpy(&pb, prev->bytes, sizeof pb);                                                 \
      pk = RADIX(pb, CLASS, 0);                                                            \
    } else { /* the array's first element: kept */                                         \
      y[0] = x[lo];                                                                        \
      pk = RADIX(x[lo], CLASS, 0);                                                         \
      k = 1;                                                                               \
      i = lo + 1;                                                                          \
    }                                                                                      \
    for (; i < hi; ++i) {                                                                  \
      const utype v = x[i], vk = RADIX(v, CLASS, 0);                                       \
      y[k] = v;                                                                            \
      k += (size_t)(vk != pk);                                                             \
      pk = vk;                                                                             \
    }                                                                                      \
    return k;                                                                              \
  }                                                                                        \
  static size_t sel_rfind_##NAME(const sel_args *a, size_t lo, size_t hi) {                \
    const utype *x = (const utype *)a->in;                                                 \
    (void)lo; /* 0: element 0 is kept, so the answer is at least 1 */                      \
    if (hi == 0) return 0;                                                                 \
    utype nk = RADIX(x[hi - 1], CLASS, 0);                                                 \
    for (size_t i = hi - 1; i > 0; --i) {                                                  \
      const utype pk = RADIX(x[i - 1], CLASS, 0);                                          \
      if (pk != nk) return i + 1;                                                          \
      nk = pk;                                                                             \
    }                                                                                      \
    return 1;                                                                              \
  }
XPAR__CPU_UNIQUE_KERNELS_(UNIQUE_I4, uint32_t, xpar__sort_radix32, XPAR__SORT_KEY_UNSIGNED)
XPAR__CPU_UNIQUE_KERNELS_(UNIQUE_I8, uint64_t, xpar__sort_radix64, XPAR__SORT_KEY_UNSIGNED)
XPAR__CPU_UNIQUE_KERNELS_(UNIQUE_F4, uint32_t, xpar__sort_radix32, XPAR__SORT_KEY_FLOAT)
XPAR__CPU_UNIQUE_KERNELS_(UNIQUE_F8, uint64_t, xpar__sort_radix64, XPAR__SORT_KEY_FLOAT)
#undef XPAR__CPU_UNIQUE_KERNELS_

#define XPAR__CPU_SEL_SET_(NAME) \
  {sel_compact_##NAME, sel_rfind_##NAME, sel_count_##NAME, sel_partition_##NAME}
#define XPAR__CPU_SEL_ROW_(e, ctype, name, size)                                           \
  [XPAR_##e] = {[XPAR_LT] = XPAR__CPU_SEL_SET_(LT_##e), [XPAR_LE] = XPAR__CPU_SEL_SET_(LE_##e), \
                [XPAR_EQ] = XPAR__CPU_SEL_SET_(EQ_##e), [XPAR_NE] = XPAR__CPU_SEL_SET_(NE_##e), \
                [XPAR_GE] = XPAR__CPU_SEL_SET_(GE_##e), [XPAR_GT] = XPAR__CPU_SEL_SET_(GT_##e), \
                [XPAR_IN_RANGE] = XPAR__CPU_SEL_SET_(IN_RANGE_##e)},
static const sel_kernels sel_table[XPAR_DTYPE_COUNT_][XPAR_PREDICATE_COUNT_] = {
    XPAR_DTYPE_MAP(XPAR__CPU_SEL_ROW_)};
#undef XPAR__CPU_SEL_ROW_
static const sel_kernels sel_flagged[2] = {XPAR__CPU_SEL_SET_(FLAGGED_4),
                                           XPAR__CPU_SEL_SET_(FLAGGED_8)};
#undef XPAR__CPU_SEL_SET_
static const sel_kernels sel_unique[4] = {{sel_compact_UNIQUE_I4, sel_rfind_UNIQUE_I4, NULL, NULL},
                                          {sel_compact_UNIQUE_I8, sel_rfind_UNIQUE_I8, NULL, NULL},
                                          {sel_compact_UNIQUE_F4, sel_rfind_UNIQUE_F4, NULL, NULL},
                                          {sel_compact_UNIQUE_F8, sel_rfind_UNIQUE_F8, NULL, NULL}};

/** A count per thread and block, padded to its own cache line. */
typedef struct sel_part {
  _Alignas(64) size_t k;
} sel_part;

/* The OpenMP tier of select, flagged and unique: see the top of the file. */
static size_t sel_parallel(const sel_kernels *kn, const sel_args *a, int unique, size_t es,
                           void *out, size_t n, int region, int team, unsigned char *scratch) {
  const size_t per_thread = XPAR__CPU_SELECT_BLOCK_BYTES / es;
  sel_part part[2][XPAR__CPU_MAX_THREADS];
  size_t total = 0;
  const unsigned char *in = (const unsigned char *)a->in;

  XPAR__CPU_PRAGMA(omp parallel num_threads(region))
  {
    /* Threads past the parts take empty slices but meet every barrier. */
    int id = xpar__cpu_thread_num(), nt = xpar__cpu_parts_in_region(team);
    unsigned char *mine = scratch + (size_t)id * per_thread * es;
    const size_t block = per_thread * (size_t)nt;
    size_t base = 0;        /* kept before the block */
    xpar__scalar carry;     /* unique: the original element before the block */
    memset(&carry, 0, sizeof carry);
    int parity = 0;
    for (size_t b0 = 0; b0 < n; b0 += block, parity ^= 1) {
      const size_t b1 = (n - b0 < block) ? n : b0 + block;
      size_t lo = b1, hi = b1, k = 0;
      xpar__scalar next;
      if (id < nt) {
        xpar__cpu_split(b0, b1, id, nt, &lo, &hi);
        if (lo < hi) {
          const xpar__scalar *prev = NULL;
          xpar__scalar before;
          if (unique && lo > 0) {
            if (lo == b0) {
              prev = &carry;
            } else { /* a neighbouring slice's input: not written before the barrier */
              memcpy(before.bytes, in + (lo - 1) * es, es);
              prev = &before;
            }
          }
          k = kn->compact(a, lo, hi, mine, prev);
        }
        part[parity][id].k = k;
      }
      if (unique) memcpy(next.bytes, in + (b1 - 1) * es, es); /* before the barrier */
      XPAR__CPU_PRAGMA(omp barrier)
      size_t off = base;
      for (int u = 0; u < nt; ++u) {
        if (u == id) off = base;
        base += part[parity][u].k;
      }
      if (k) memcpy((unsigned char *)out + off * es, mine, k * es);
      if (unique) carry = next;
    }
    if (id == 0) total = base;
  }
  return total;
}

/* The OpenMP tier of partition: see the top of the file. */
static size_t sel_partition_parallel(const sel_kernels *kn, const sel_args *a, size_t es,
                                     void *out, size_t n, int region, int team) {
  sel_part part[XPAR__CPU_MAX_THREADS];
  size_t total = 0;
  XPAR__CPU_PRAGMA(omp parallel num_threads(region))
  {
    int id = xpar__cpu_thread_num(), nt = xpar__cpu_parts_in_region(team);
    size_t lo = n, hi = n;
    if (id < nt) {
      xpar__cpu_split(0, n, id, nt, &lo, &hi);
      part[id].k = kn->count(a, lo, hi);
    }
    XPAR__CPU_PRAGMA(omp barrier)
    size_t sel = 0, all = 0;
    for (int u = 0; u < nt; ++u) {
      if (u == id) sel = all;
      all += part[u].k;
    }
    if (id < nt && lo < hi) {
      unsigned char *o = (unsigned char *)out;
      kn->partition(a, lo, hi, o + sel * es, o + (all + (lo - sel)) * es);
    }
    if (id == 0) total = all;
  }
  return total;
}

xpar_status xpar__cpu_select(const xpar__exec *ex, const xpar__select_spec *s) {
  XPAR__RETURN_IF(!xpar__dtype_valid(s->dtype) || (unsigned)s->kind > (unsigned)XPAR__UNIQUE ||
                      ((s->kind == XPAR__SELECT_IF || s->kind == XPAR__PARTITION) &&
                       (unsigned)s->pred >= (unsigned)XPAR_PREDICATE_COUNT_),
                  XPAR_ERR_INTERNAL, "cpu select: bad kind %d, dtype %d or predicate %d",
                  (int)s->kind, (int)s->dtype, (int)s->pred);
  const size_t n = s->n, es = xpar__dtype_size(s->dtype);
  const int wide = (es == 8);
  const int is_float = (s->dtype == XPAR_FLOAT || s->dtype == XPAR_DOUBLE);
  const sel_kernels *kn;
  switch (s->kind) {
  case XPAR__SELECT_FLAGGED: kn = &sel_flagged[wide]; break;
  case XPAR__UNIQUE: kn = &sel_unique[2 * is_float + wide]; break;
  default: kn = &sel_table[s->dtype][s->pred]; break;
  }
  sel_args a;
  a.in = s->in;
  a.flags = s->flags;
  a.value = s->value;
  a.hi = s->hi;

  size_t count = 0;
  const int team = ex->serial ? 1 : xpar__cpu_team_size(ex, n);
  if (n == 0) {
    count = 0;
  } else if (s->kind == XPAR__PARTITION) {
    if (team <= 1) {
      count = kn->count(&a, 0, n);
      kn->partition(&a, 0, n, s->out, (unsigned char *)s->out + count * es);
    } else {
      count = sel_partition_parallel(kn, &a, es, s->out, n, xpar__cpu_region_size(ex), team);
    }
  } else if (team <= 1) {
    const size_t last = kn->rfind(&a, 0, n);
    count = last ? kn->compact(&a, 0, last, s->out, NULL) : 0;
  } else {
    const int region = xpar__cpu_region_size(ex);
    void *scratch;
    xpar_status st = xpar__host_scratch_get(
        ex->host_scratch, (size_t)region * (XPAR__CPU_SELECT_BLOCK_BYTES / es) * es, "select",
        &scratch);
    if (st != XPAR_OK) return st;
    count = sel_parallel(kn, &a, s->kind == XPAR__UNIQUE, es, s->out, n, region, team,
                         (unsigned char *)scratch);
  }
  *s->count = (uint64_t)count;
  return XPAR_OK;
}
