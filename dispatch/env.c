/*
 * The environment, read once at context creation, in OpenMP's style.  An
 * invalid value is an error naming the variable, never a silent default.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

int xpar__parse_ordinal(const char *s, int *out) {
  if (!s || !*s) return -1;
  int v = 0;
  for (const char *p = s; *p; p++) {
    if (!isdigit((unsigned char)*p)) return -1;
    v = v * 10 + (*p - '0');
    if (v > XPAR__MAX_DEVICE_ORDINAL) return -1;
  }
  *out = v;
  return 0;
}

int xpar__parse_count(const char *s, size_t *out) {
  if (!s || !*s) return -1;
  if (strcasecmp(s, "never") == 0) {
    *out = XPAR_NEVER;
    return 0;
  }
  if (s[0] == '2' && s[1] == '^') {
    const char *e = s + 2;
    if (!isdigit((unsigned char)*e)) return -1;
    unsigned k = 0;
    for (; isdigit((unsigned char)*e); e++) {
      k = k * 10 + (unsigned)(*e - '0');
      if (k > 63) return -1;
    }
    if (*e || k >= sizeof(size_t) * 8) return -1;
    *out = (size_t)1 << k;
    return 0;
  }
  size_t v = 0;
  const char *p = s;
  for (; isdigit((unsigned char)*p); p++) {
    size_t d = (size_t)(*p - '0');
    if (v > (SIZE_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  if (p == s || *p) return -1;
  *out = v;
  return 0;
}

static xpar_status bad_env(const char *name, const char *value, const char *expected) {
  return xpar__fail(XPAR_ERR_INVALID_ENV, "%s=\"%s\" is invalid: expected %s", name, value,
                    expected);
}

/* Threshold variables: XPAR_<OP>_<KIND>_THRESHOLD, spelt from the op and
 * threshold maps (xpar.h).  ALL first, so a specific op's variable overrides
 * it. */
static xpar_status apply_thresholds(xpar_context *ctx) {
  for (int i = 0; i <= XPAR_OP_COUNT_; i++) {
    int op = i == 0 ? XPAR_OP_COUNT_ : i - 1; /* XPAR_OP_COUNT_: ALL */
    for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++) {
      char name[64];
      snprintf(name, sizeof name, "XPAR_%s_%s_THRESHOLD",
               op == XPAR_OP_COUNT_ ? "ALL" : xpar__op_env((xpar_op)op),
               xpar__threshold_env((xpar_threshold)k));
      const char *v = getenv(name);
      if (!v) continue;
      size_t n;
      if (xpar__parse_count(v, &n) != 0)
        return bad_env(name, v, "an element count, 2^k (k < 64) or \"never\"");
      for (int o = 0; o < XPAR_OP_COUNT_; o++) {
        if (op != XPAR_OP_COUNT_ && o != op) continue;
        for (int dt = 0; dt < XPAR_DTYPE_COUNT_; dt++) {
          ctx->thresholds[o][dt][k] = n;
          ctx->threshold_source[o][dt][k] = XPAR__SRC_ENV;
        }
      }
    }
  }
  return XPAR_OK;
}

/* The split tier's settings: XPAR_<OP>_SPLIT_<MEMORY>="FROM,SHARE" (FROM an
 * element count, 2^k or "never"; 0 < SHARE < 1), for the ops that split and
 * ALL (first, so that an op's own variable overrides it). */
static xpar_status apply_splits(xpar_context *ctx) {
  static const char *const memory_env[XPAR_SPLIT_MEMORY_COUNT_] = {"PINNED", "PAGEABLE"};
  for (int i = 0; i <= XPAR_OP_COUNT_; i++) {
    const int op = i == 0 ? XPAR_OP_COUNT_ : i - 1; /* XPAR_OP_COUNT_: ALL */
    if (op != XPAR_OP_COUNT_ && !xpar__op_splits((xpar_op)op)) continue;
    for (int m = 0; m < XPAR_SPLIT_MEMORY_COUNT_; m++) {
      char name[64];
      snprintf(name, sizeof name, "XPAR_%s_SPLIT_%s",
               op == XPAR_OP_COUNT_ ? "ALL" : xpar__op_env((xpar_op)op), memory_env[m]);
      const char *v = getenv(name);
      if (!v) continue;
      const char *comma = strchr(v, ',');
      char from_text[32];
      size_t from = 0;
      char *end = NULL;
      double share = 0.0;
      int ok = comma && (size_t)(comma - v) < sizeof from_text;
      if (ok) {
        memcpy(from_text, v, (size_t)(comma - v));
        from_text[comma - v] = '\0';
        errno = 0;
        share = strtod(comma + 1, &end);
        ok = xpar__parse_count(from_text, &from) == 0 && end != comma + 1 && !*end &&
             errno == 0 && share > 0.0 && share < 1.0;
      }
      if (!ok)
        return bad_env(name, v,
                       "FROM,SHARE: FROM an element count, 2^k or \"never\", 0 < SHARE < 1 "
                       "(e.g. 2^26,0.33)");
      for (int o = 0; o < XPAR_OP_COUNT_; o++) {
        if ((op != XPAR_OP_COUNT_ && o != op) || !xpar__op_splits((xpar_op)o)) continue;
        for (int dt = 0; dt < XPAR_DTYPE_COUNT_; dt++) {
          ctx->split_from[o][dt][m] = from;
          ctx->split_share[o][dt][m] = (float)share;
          ctx->split_from_source[o][dt][m] = XPAR__SRC_ENV;
          ctx->split_share_source[o][dt][m] = XPAR__SRC_ENV;
        }
      }
    }
  }
  return XPAR_OK;
}

/* The accepted words, for the error message: from the maps. */
#define XPAR__WORD_(e, name) " " name
static const char backend_words[] = "one of" XPAR_BACKEND_MAP(XPAR__WORD_);
static const char offload_words[] = "one of" XPAR_OFFLOAD_MAP(XPAR__WORD_);
#undef XPAR__WORD_

xpar_status xpar__env_apply_policy(xpar_context *ctx) {
  const char *v;
  if ((v = getenv("XPAR_BACKEND")) != NULL) {
    int i = xpar__backend_index(v);
    if (i < 0) return bad_env("XPAR_BACKEND", v, backend_words);
    ctx->backend = (xpar_backend)i;
  }
  if ((v = getenv("XPAR_OFFLOAD")) != NULL) {
    int i = xpar__offload_index(v);
    if (i < 0) return bad_env("XPAR_OFFLOAD", v, offload_words);
    ctx->offload = (xpar_offload)i;
  }
  if ((v = getenv("XPAR_VERBOSE")) != NULL) {
    if (strcmp(v, "0") == 0) ctx->verbose = 0;
    else if (strcmp(v, "1") == 0) ctx->verbose = 1;
    else return bad_env("XPAR_VERBOSE", v, "0 or 1");
  }
  if ((v = getenv("XPAR_REPRODUCIBLE")) != NULL) {
    if (strcmp(v, "0") == 0) ctx->reproducible = 0;
    else if (strcmp(v, "1") == 0) ctx->reproducible = 1;
    else return bad_env("XPAR_REPRODUCIBLE", v, "0 or 1");
  }
  if ((v = getenv("XPAR_ADAPT")) != NULL) {
    if (strcasecmp(v, "off") == 0) ctx->adapt = 0;
    else if (strcasecmp(v, "on") == 0) ctx->adapt = 1;
    else return bad_env("XPAR_ADAPT", v, "off or on");
  }
  if ((v = getenv("XPAR_SHADOW")) != NULL) {
    /* The tiers by their xpar_tier_name, "off" for none. */
    if (strcasecmp(v, "off") == 0) {
      ctx->shadow_tier = XPAR_TIER_NONE;
    } else {
      int i = XPAR_TIER_CPU_SERIAL;
      while (i < XPAR_TIER_COUNT_ && strcasecmp(v, xpar__tier_name((xpar_tier)i)) != 0) i++;
      if (i == XPAR_TIER_COUNT_)
        return bad_env("XPAR_SHADOW", v, "off, cpu-serial, cpu-openmp, cuda or cuda-serial");
      ctx->shadow_tier = (xpar_tier)i;
    }
  }
  if ((v = getenv("XPAR_SHADOW_FAIL")) != NULL) {
    if (strcmp(v, "0") == 0) ctx->shadow_fail = 0;
    else if (strcmp(v, "1") == 0) ctx->shadow_fail = 1;
    else return bad_env("XPAR_SHADOW_FAIL", v, "0 or 1");
  }
  if ((v = getenv("XPAR_DEVICE")) != NULL) {
    if (xpar__parse_ordinal(v, &ctx->device) != 0)
      return bad_env("XPAR_DEVICE", v, "a device ordinal in decimal (0, 1, ... 1024)");
  }
  return XPAR_OK;
}

xpar_status xpar__env_apply_thresholds(xpar_context *ctx) {
  XPAR__FORWARD(apply_thresholds(ctx));
  return apply_splits(ctx);
}
