/* Every enumeration's spellings, generated from the public header's maps. */
#include <string.h>
#include <strings.h>

#include "base.h"

/* Column k of every row of a map, as an array indexed by value: every map
 * below counts from 0 in row order (xpar.h). */
#define XPAR__COL1_(e, a, ...) a,
#define XPAR__COL2_(e, a, b, ...) b,
#define XPAR__COL3_(e, a, b, c, ...) c,

static const char *const op_names[] = {XPAR_OP_MAP(XPAR__COL1_)};
static const char *const op_envs[] = {XPAR_OP_MAP(XPAR__COL2_)};
static const char *const backend_names[] = {XPAR_BACKEND_MAP(XPAR__COL1_)};
static const char *const offload_names[] = {XPAR_OFFLOAD_MAP(XPAR__COL1_)};
static const char *const tier_names[] = {XPAR_TIER_MAP(XPAR__COL1_)};
static const char *const threshold_keys[] = {XPAR_THRESHOLD_MAP(XPAR__COL1_)};
static const char *const threshold_envs[] = {XPAR_THRESHOLD_MAP(XPAR__COL2_)};
static const char *const threshold_data[] = {XPAR_THRESHOLD_MAP(XPAR__COL3_)};
static const char *const dtype_names[] = {XPAR_DTYPE_MAP(XPAR__COL2_)};

/* xpar__dtype_size (base.h) packs every dtype's size into four bits of one
 * uint64_t: a new dtype must fit that. */
_Static_assert(XPAR_DTYPE_COUNT_ * 4 <= 64, "xpar__dtype_size packs 16 dtypes at most");
#define XPAR__SIZE_FITS_(e, ctype, name, size) \
  _Static_assert((size) > 0 && (size) < 16, "the size of dtype " name " must fit four bits");
XPAR_DTYPE_MAP(XPAR__SIZE_FITS_)
#undef XPAR__SIZE_FITS_

#define LOOKUP_(table, v) \
  ((unsigned)(v) < sizeof table / sizeof table[0] ? table[(unsigned)(v)] : "?")

const char *xpar__dtype_name(xpar_dtype t) { return LOOKUP_(dtype_names, t); }
const char *xpar__op_name(xpar_op op) {
  return op == XPAR_OP_KERNEL ? "kernel" : LOOKUP_(op_names, op);
}
const char *xpar__op_env(xpar_op op) { return LOOKUP_(op_envs, op); }
const char *xpar__backend_name(xpar_backend b) { return LOOKUP_(backend_names, b); }
const char *xpar__offload_name(xpar_offload o) { return LOOKUP_(offload_names, o); }
const char *xpar__tier_name(xpar_tier tier) { return LOOKUP_(tier_names, tier); }
const char *xpar__threshold_key(xpar_threshold k) { return LOOKUP_(threshold_keys, k); }
const char *xpar__threshold_env(xpar_threshold k) { return LOOKUP_(threshold_envs, k); }
const char *xpar__threshold_data(xpar_threshold k) { return LOOKUP_(threshold_data, k); }

/* Statuses are sparse (ranges of 100): a switch, not a table. */
const char *xpar__status_text(xpar_status s) {
  switch (s) {
#define XPAR__STATUS_TEXT_(name, value, text) \
  case XPAR_##name:                           \
    return text;
    XPAR_STATUS_MAP(XPAR__STATUS_TEXT_)
#undef XPAR__STATUS_TEXT_
  }
  return "unknown status";
}

const char *xpar__status_name(xpar_status s) {
  switch (s) {
#define XPAR__STATUS_NAME_(name, value, text) \
  case XPAR_##name:                           \
    return #name;
    XPAR_STATUS_MAP(XPAR__STATUS_NAME_)
#undef XPAR__STATUS_NAME_
  }
  return "UNKNOWN";
}

static int index_of(const char *word, const char *const *words, int count, int nocase) {
  for (int i = 0; i < count; i++)
    if ((nocase ? strcasecmp(word, words[i]) : strcmp(word, words[i])) == 0) return i;
  return -1;
}

int xpar__dtype_index(const char *name) { return index_of(name, dtype_names, XPAR_DTYPE_COUNT_, 0); }
int xpar__op_index(const char *name) { return index_of(name, op_names, XPAR_OP_COUNT_, 0); }
int xpar__threshold_index(const char *key) {
  return index_of(key, threshold_keys, XPAR_THRESHOLD_COUNT_, 0);
}
int xpar__backend_index(const char *word) {
  return index_of(word, backend_names, XPAR_BACKEND_COUNT_, 1);
}
int xpar__offload_index(const char *word) {
  return index_of(word, offload_names, XPAR_OFFLOAD_COUNT_, 1);
}
