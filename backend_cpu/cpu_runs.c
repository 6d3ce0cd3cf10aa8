/*
 * CPU runs (xpar__runs_spec): run-length encode and reduce by key.  A run
 * starts (a "head") at i == 0 and wherever key i differs from key i - 1 by
 * the equality of xpar_unique (-0.0 == +0.0, NaN == NaN: runs_key_f4 / f8);
 * run r's first key goes to keys_out[r], the op of its values (run-length
 * encode: its length) to values_out[r].  Nothing at or past the
 * number of runs is written.
 *
 * One thread (ex->serial, a team of one): one pass over [0, n), the open
 * run's accumulator in a register; each run's key is stored at its head,
 * its value when the next head (or the end) closes it.  Bytes per element:
 * read the key and the value, write one key and one value per run.
 *
 * OpenMP tier: contiguous chunks, one per thread.  Pass 1 counts each
 * chunk's heads (reads the keys; the head test at a chunk's start reads the
 * key before it, another chunk's input, which nobody writes: the arrays are
 * disjoint); one barrier; each thread's first run index is the heads of the
 * chunks before it.  Pass 2 writes the runs whose heads lie in the chunk,
 * each reduced over its part in the chunk, and reduces the chunk's leading
 * elements before its first head (the continuation of a run from an earlier
 * chunk) into a piece of its own.  After a second barrier thread 0 folds the
 * pieces, in chunk order, into the runs they continue (run index = the
 * chunk's first index - 1): a run over several chunks is (head part) op
 * piece op piece ..., in element order of the parts.  Bytes per element:
 * read the key twice and the value once; the second key read of a chunk that
 * fits the caches comes from them.
 *
 * Reproducible mode (float and double SUM, ex->reproducible): a run's sum is
 * reproducible xpar_reduce(SUM) of the run's values as an array of its own
 * (xpar.h), computed by this backend's own reproducible reduce on one thread
 * (cpu_repro.c): the same code, the same bits.  The OpenMP tier gives each
 * run whole to the thread whose chunk holds its head (it reads on past its
 * chunk's end where the run does): no pieces, so the bits cannot depend on
 * the split.
 */
#include "cpu_internal.h"
#include "cpu_repro.h"

/* The head test: key i differs from key i - 1 (i > 0), by these keys, which are
 * only compared for equality: integers by their bits; floats by their bits with
 * -0.0 as +0.0 and every NaN as one NaN (the classes of the sort's radix keys,
 * base/sort_key.h, without their order: no branch, two selects; a reduce by key
 * of 4,096 float keys took about a fifth less time than with the radix key's
 * two branches on the development VM). */
static inline uint32_t runs_key_f4(uint32_t u) {
  const uint32_t a = u & 0x7fffffffu;
  u = a == 0 ? 0u : u;
  return a > 0x7f800000u ? 0x7fc00000u : u;
}
static inline uint64_t runs_key_f8(uint64_t u) {
  const uint64_t a = u & 0x7fffffffffffffffull;
  u = a == 0 ? 0ull : u;
  return a > 0x7ff0000000000000ull ? 0x7ff8000000000000ull : u;
}
#define XPAR__RUNS_KEY_I4(k) (k)
#define XPAR__RUNS_KEY_I8(k) (k)
#define XPAR__RUNS_KEY_F4(k) runs_key_f4(k)
#define XPAR__RUNS_KEY_F8(k) runs_key_f8(k)

/* A chunk's leading piece (the part of a run that began in an earlier chunk). */
typedef struct runs_piece {
  _Alignas(64) size_t heads; /* pass 1: the chunk's heads                */
  size_t first;              /* the chunk's first run index               */
  int has_piece;             /* pass 2: the chunk starts inside a run     */
  xpar__scalar piece;        /* pass 2: its elements before the first head reduced */
} runs_piece;

/* Pass 1: heads in [lo, hi). */
typedef size_t (*runs_count_fn)(const void *keys, size_t lo, size_t hi);
/* Pass 2: the runs with heads in [lo, hi) to keys_out / values_out from run
 * r0 on, each reduced over [its head, hi); the elements of [lo, first head)
 * into *piece (*has_piece = 1) unless lo is a head.  Returns the runs
 * written. */
typedef size_t (*runs_write_fn)(const void *keys, const void *values, size_t lo, size_t hi,
                                void *keys_out, void *values_out, size_t r0, int *has_piece,
                                xpar__scalar *piece);
/* acc = acc op x (the fold of the pieces). */
typedef void (*runs_fold_fn)(void *acc, const xpar__scalar *x);
/* Reproducible mode: the runs with heads in [lo, hi), each summed whole over
 * [head, its end), which may lie past hi (n the array's length). */
typedef size_t (*runs_repro_fn)(const void *keys, const void *values, size_t lo, size_t hi,
                                size_t n, void *keys_out, void *values_out, size_t r0);

#define XPAR__RUNS_COUNT_(KC, utype)                                                     \
  static size_t runs_count_##KC(const void *keys, size_t lo, size_t hi) {                \
    const utype *k = (const utype *)keys;                                                \
    size_t c = 0, i = lo;                                                                \
    if (lo >= hi) return 0;                                                              \
    utype pk;                                                                            \
    if (lo == 0) {                                                                       \
      c = 1;                                                                             \
      pk = XPAR__RUNS_KEY_##KC(k[0]);                                                    \
      i = 1;                                                                             \
    } else {                                                                             \
      pk = XPAR__RUNS_KEY_##KC(k[lo - 1]);                                               \
    }                                                                                    \
    for (; i < hi; ++i) {                                                                \
      const utype vk = XPAR__RUNS_KEY_##KC(k[i]);                                        \
      c += (size_t)(vk != pk);                                                           \
      pk = vk;                                                                           \
    }                                                                                    \
    return c;                                                                            \
  }
XPAR__RUNS_COUNT_(I4, uint32_t)
XPAR__RUNS_COUNT_(I8, uint64_t)
XPAR__RUNS_COUNT_(F4, uint32_t)
XPAR__RUNS_COUNT_(F8, uint64_t)
#undef XPAR__RUNS_COUNT_

/*
 * Pass 2 for key class KC (key bits utype) and values of VT with combine
 * COMBINE(acc, x); VALUE(i) is element i's value (the lengths: 1).
 */
#define XPAR__RUNS_WRITE_(NAME, KC, utype, VT, VALUE, COMBINE)                           \
  static size_t runs_write_##NAME(const void *keys, const void *values, size_t lo,       \
                                  size_t hi, void *keys_out, void *values_out, size_t r0, \
                                  int *has_piece, xpar__scalar *piece) {                 \
    const utype *k = (const utype *)keys;                                                \
    const VT *v = (const VT *)values;                                                    \
    utype *ko = (utype *)keys_out;                                                       \
    VT *vo = (VT *)values_out;                                                           \
    (void)v;                                                                             \
    *has_piece = 0;                                                                      \
    if (lo >= hi) return 0;                                                              \
    size_t i = lo, r = r0;                                                               \
    utype pk = XPAR__RUNS_KEY_##KC(k[lo]);                                               \
    VT acc;                                                                              \
    if (lo > 0 && XPAR__RUNS_KEY_##KC(k[lo - 1]) == pk) {                                \
      /* the continuation of an earlier chunk's run: its piece */                        \
      acc = VALUE(lo);                                                                   \
      for (i = lo + 1; i < hi; ++i) {                                                    \
        const utype vk = XPAR__RUNS_KEY_##KC(k[i]);                                      \
        if (vk != pk) break;                                                             \
        acc = COMBINE(acc, VALUE(i));                                                    \
      }                                                                                  \
      *has_piece = 1;                                                                    \
      memset(piece, 0, sizeof *piece);                                                   \
      memcpy(piece->bytes, &acc, sizeof acc);                                            \
      if (i == hi) return 0;                                                             \
      pk = XPAR__RUNS_KEY_##KC(k[i]);                                                    \
    }                                                                                    \
    /* i is a head */                                                                    \
    ko[r] = k[i];                                                                        \
    acc = VALUE(i);                                                                      \
    for (++i; i < hi; ++i) {                                                             \
      const utype kb = k[i], vk = XPAR__RUNS_KEY_##KC(kb);                               \
      if (vk != pk) {                                                                    \
        vo[r++] = acc;                                                                   \
        ko[r] = kb;                                                                      \
        acc = VALUE(i);                                                                  \
        pk = vk;                                                                         \
      } else {                                                                           \
        acc = COMBINE(acc, VALUE(i));                                                    \
      }                                                                                  \
    }                                                                                    \
    vo[r++] = acc;                                                                       \
    return r - r0;                                                                       \
  }

#define XPAR__RUNS_VAL_(i) v[i]
#define XPAR__RUNS_ONE_(i) ((uint64_t)1)
#define XPAR__RUNS_ADD64_(a, b) ((a) + (b))

/* Lengths, per key class. */
XPAR__RUNS_WRITE_(LEN_I4, I4, uint32_t, uint64_t, XPAR__RUNS_ONE_, XPAR__RUNS_ADD64_)
XPAR__RUNS_WRITE_(LEN_I8, I8, uint64_t, uint64_t, XPAR__RUNS_ONE_, XPAR__RUNS_ADD64_)
XPAR__RUNS_WRITE_(LEN_F4, F4, uint32_t, uint64_t, XPAR__RUNS_ONE_, XPAR__RUNS_ADD64_)
XPAR__RUNS_WRITE_(LEN_F8, F8, uint64_t, uint64_t, XPAR__RUNS_ONE_, XPAR__RUNS_ADD64_)

/* Reduce by key: 4 key classes x 6 value dtypes x 3 ops. */
#define XPAR__RUNS_BY_VALUE_(e, ctype, name, size)                                        \
  XPAR__RUNS_WRITE_(SUM_I4_##e, I4, uint32_t, ctype, XPAR__RUNS_VAL_, xpar__cpu_sum_##e)  \
  XPAR__RUNS_WRITE_(SUM_I8_##e, I8, uint64_t, ctype, XPAR__RUNS_VAL_, xpar__cpu_sum_##e)  \
  XPAR__RUNS_WRITE_(SUM_F4_##e, F4, uint32_t, ctype, XPAR__RUNS_VAL_, xpar__cpu_sum_##e)  \
  XPAR__RUNS_WRITE_(SUM_F8_##e, F8, uint64_t, ctype, XPAR__RUNS_VAL_, xpar__cpu_sum_##e)  \
  XPAR__RUNS_WRITE_(MIN_I4_##e, I4, uint32_t, ctype, XPAR__RUNS_VAL_, xpar__cpu_min_##e)  \
  XPAR__RUNS_WRITE_(MIN_I8_##e, I8, uint64_t, ctype, XPAR__RUNS_VAL_, xpar__cpu_min_##e)  \
  XPAR__RUNS_WRITE_(MIN_F4_##e, F4, uint32_t, ctype, XPAR__RUNS_VAL_, xpar__cpu_min_##e)  \
  XPAR__RUNS_WRITE_(MIN_F8_##e, F8, uint64_t, ctype, XPAR__RUNS_VAL_, xpar__cpu_min_##e)  \
  XPAR__RUNS_WRITE_(MAX_I4_##e, I4, uint32_t, ctype, XPAR__RUNS_VAL_, xpar__cpu_max_##e)  \
  XPAR__RUNS_WRITE_(MAX_I8_##e, I8, uint64_t, ctype, XPAR__RUNS_VAL_, xpar__cpu_max_##e)  \
  XPAR__RUNS_WRITE_(MAX_F4_##e, F4, uint32_t, ctype, XPAR__RUNS_VAL_, xpar__cpu_max_##e)  \
  XPAR__RUNS_WRITE_(MAX_F8_##e, F8, uint64_t, ctype, XPAR__RUNS_VAL_, xpar__cpu_max_##e)  \
  static void runs_fold_SUM_##e(void *acc, const xpar__scalar *x) {                       \
    ctype a, b;                                                                           \
    memcpy(&a, acc, sizeof a);                                                            \
    memcpy(&b, x->bytes, sizeof b);                                                       \
    a = xpar__cpu_sum_##e(a, b);                                                          \
    memcpy(acc, &a, sizeof a);                                                            \
  }                                                                                       \
  static void runs_fold_MIN_##e(void *acc, const xpar__scalar *x) {                       \
    ctype a, b;                                                                           \
    memcpy(&a, acc, sizeof a);                                                            \
    memcpy(&b, x->bytes, sizeof b);                                                       \
    a = xpar__cpu_min_##e(a, b);                                                          \
    memcpy(acc, &a, sizeof a);                                                            \
  }                                                                                       \
  static void runs_fold_MAX_##e(void *acc, const xpar__scalar *x) {                       \
    ctype a, b;                                                                           \
    memcpy(&a, acc, sizeof a);                                                            \
    memcpy(&b, x->bytes, sizeof b);                                                       \
    a = xpar__cpu_max_##e(a, b);                                                          \
    memcpy(acc, &a, sizeof a);                                                            \
  }
XPAR_DTYPE_MAP(XPAR__RUNS_BY_VALUE_)
#undef XPAR__RUNS_BY_VALUE_
#undef XPAR__RUNS_WRITE_

/* [key class][value dtype][op]; classes I4, I8, F4, F8. */
#define XPAR__RUNS_ROW_(e, ctype, name, size)                                              \
  [XPAR_##e] = {{runs_write_SUM_I4_##e, runs_write_MIN_I4_##e, runs_write_MAX_I4_##e},      \
                {runs_write_SUM_I8_##e, runs_write_MIN_I8_##e, runs_write_MAX_I8_##e},      \
                {runs_write_SUM_F4_##e, runs_write_MIN_F4_##e, runs_write_MAX_F4_##e},      \
                {runs_write_SUM_F8_##e, runs_write_MIN_F8_##e, runs_write_MAX_F8_##e}},
static const runs_write_fn runs_write_table[XPAR_DTYPE_COUNT_][4][XPAR_REDUCTION_COUNT_] = {
    XPAR_DTYPE_MAP(XPAR__RUNS_ROW_)};
#undef XPAR__RUNS_ROW_
#define XPAR__RUNS_FOLD_ROW_(e, ctype, name, size) \
  [XPAR_##e] = {runs_fold_SUM_##e, runs_fold_MIN_##e, runs_fold_MAX_##e},
static const runs_fold_fn runs_fold_table[XPAR_DTYPE_COUNT_][XPAR_REDUCTION_COUNT_] = {
    XPAR_DTYPE_MAP(XPAR__RUNS_FOLD_ROW_)};
#undef XPAR__RUNS_FOLD_ROW_
static void runs_fold_len(void *acc, const xpar__scalar *x) {
  uint64_t a, b;
  memcpy(&a, acc, sizeof a);
  memcpy(&b, x->bytes, sizeof b);
  a += b;
  memcpy(acc, &a, sizeof a);
}
static const runs_write_fn runs_write_len[4] = {runs_write_LEN_I4, runs_write_LEN_I8,
                                                runs_write_LEN_F4, runs_write_LEN_F8};
static const runs_count_fn runs_count_table[4] = {runs_count_I4, runs_count_I8, runs_count_F4,
                                                  runs_count_F8};

/* Reproducible sums: each run whole, by cpu_repro.c on one thread. */
static const xpar__exec runs_repro_one_thread = {.serial = 1, .num_threads = 1, .reproducible = 1};

#define XPAR__RUNS_REPRO_(NAME, KC, utype, VT, DT)                                        \
  static size_t runs_repro_##NAME(const void *keys, const void *values, size_t lo,       \
                                  size_t hi, size_t n, void *keys_out, void *values_out,  \
                                  size_t r0) {                                           \
    const utype *k = (const utype *)keys;                                                \
    const VT *v = (const VT *)values;                                                    \
    utype *ko = (utype *)keys_out;                                                       \
    VT *vo = (VT *)values_out;                                                           \
    size_t r = r0, i = lo;                                                               \
    if (lo >= hi) return 0;                                                              \
    if (lo > 0) { /* skip the continuation of an earlier chunk's run */                  \
      const utype pk = XPAR__RUNS_KEY_##KC(k[lo - 1]);                                   \
      while (i < hi && XPAR__RUNS_KEY_##KC(k[i]) == pk) ++i;                             \
    }                                                                                    \
    while (i < hi) { /* i is a head */                                                   \
      const utype hk = XPAR__RUNS_KEY_##KC(k[i]);                                        \
      size_t j = i + 1;                                                                  \
      while (j < n && XPAR__RUNS_KEY_##KC(k[j]) == hk) ++j;                              \
      ko[r] = k[i];                                                                      \
      VT s;                                                                              \
      (void)xpar__cpu_repro_reduce(&runs_repro_one_thread, XPAR__REPRO_SUM, DT, v + i,   \
                                   NULL, j - i, &s);                                     \
      vo[r++] = s;                                                                       \
      i = j;                                                                             \
    }                                                                                    \
    return r - r0;                                                                       \
  }
XPAR__RUNS_REPRO_(I4_F, I4, uint32_t, float, XPAR_FLOAT)
XPAR__RUNS_REPRO_(I8_F, I8, uint64_t, float, XPAR_FLOAT)
XPAR__RUNS_REPRO_(F4_F, F4, uint32_t, float, XPAR_FLOAT)
XPAR__RUNS_REPRO_(F8_F, F8, uint64_t, float, XPAR_FLOAT)
XPAR__RUNS_REPRO_(I4_D, I4, uint32_t, double, XPAR_DOUBLE)
XPAR__RUNS_REPRO_(I8_D, I8, uint64_t, double, XPAR_DOUBLE)
XPAR__RUNS_REPRO_(F4_D, F4, uint32_t, double, XPAR_DOUBLE)
XPAR__RUNS_REPRO_(F8_D, F8, uint64_t, double, XPAR_DOUBLE)
#undef XPAR__RUNS_REPRO_
static const runs_repro_fn runs_repro_table[2][4] = {
    {runs_repro_I4_F, runs_repro_I8_F, runs_repro_F4_F, runs_repro_F8_F},
    {runs_repro_I4_D, runs_repro_I8_D, runs_repro_F4_D, runs_repro_F8_D}};

#undef XPAR__RUNS_VAL_
#undef XPAR__RUNS_ONE_
#undef XPAR__RUNS_ADD64_

/* The key class (runs_key_f4 / f8 for floats): integers compare their bits. */
static int runs_key_class(xpar_dtype t) {
  const int wide = xpar__dtype_size(t) == 8;
  return (t == XPAR_FLOAT || t == XPAR_DOUBLE ? 2 : 0) + wide;
}

xpar_status xpar__cpu_runs(const xpar__exec *ex, const xpar__runs_spec *s) {
  XPAR__RETURN_IF(!xpar__dtype_valid(s->key_dtype) || !xpar__dtype_valid(s->value_dtype) ||
                      (unsigned)s->op >= (unsigned)XPAR_REDUCTION_COUNT_,
                  XPAR_ERR_INTERNAL, "cpu runs: bad key dtype %d, value dtype %d or op %d",
                  (int)s->key_dtype, (int)s->value_dtype, (int)s->op);
  const size_t n = s->n;
  const int kc = runs_key_class(s->key_dtype);
  const int repro = ex->reproducible && !s->lengths && s->op == XPAR_SUM &&
                    (s->value_dtype == XPAR_FLOAT || s->value_dtype == XPAR_DOUBLE);
  const runs_write_fn write =
      s->lengths ? runs_write_len[kc] : runs_write_table[s->value_dtype][kc][s->op];
  const runs_fold_fn fold = s->lengths ? runs_fold_len : runs_fold_table[s->value_dtype][s->op];
  const runs_repro_fn rwrite =
      repro ? runs_repro_table[s->value_dtype == XPAR_DOUBLE][kc] : NULL;
  const runs_count_fn count = runs_count_table[kc];
  const size_t vs = xpar__dtype_size(s->value_dtype);

  size_t total = 0;
  const int team = ex->serial ? 1 : xpar__cpu_team_size(ex, n);
  if (n == 0) {
    total = 0;
  } else if (team <= 1) {
    int has_piece;
    xpar__scalar piece;
    total = repro ? rwrite(s->keys_in, s->values_in, 0, n, n, s->keys_out, s->values_out, 0)
                  : write(s->keys_in, s->values_in, 0, n, s->keys_out, s->values_out, 0,
                          &has_piece, &piece);
  } else {
    runs_piece part[XPAR__CPU_MAX_THREADS];
    const int region = xpar__cpu_region_size(ex);
    int parts = team;
    XPAR__CPU_PRAGMA(omp parallel num_threads(region))
    {
      const int id = xpar__cpu_thread_num(), nt = xpar__cpu_parts_in_region(team);
      size_t lo = n, hi = n;
      if (id < nt) {
        xpar__cpu_split(0, n, id, nt, &lo, &hi);
        part[id].heads = count(s->keys_in, lo, hi);
      }
      XPAR__CPU_PRAGMA(omp barrier)
      size_t r0 = 0, all = 0;
      for (int u = 0; u < nt; ++u) {
        if (u == id) r0 = all;
        all += part[u].heads;
      }
      if (id < nt) {
        if (repro) {
          (void)rwrite(s->keys_in, s->values_in, lo, hi, n, s->keys_out, s->values_out, r0);
          part[id].has_piece = 0;
        } else {
          (void)write(s->keys_in, s->values_in, lo, hi, s->keys_out, s->values_out, r0,
                      &part[id].has_piece, &part[id].piece);
        }
        part[id].first = r0;
      }
      if (id == 0) {
        total = all;
        parts = nt;
      }
    }
    /* The pieces, in chunk order, into the runs they continue (the region's
     * end is the barrier that makes every chunk's writes visible here). */
    for (int u = 1; u < parts; ++u)
      if (part[u].has_piece && part[u].first > 0)
        fold((unsigned char *)s->values_out + (part[u].first - 1) * vs, &part[u].piece);
  }
  *s->count = (uint64_t)total;
  return XPAR_OK;
}
