/* Decision records as text: built only when asked for, never on the hot path. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "state.h"

static int fmt_count(char *buf, size_t size, size_t v) {
  if (v == XPAR_NEVER) return snprintf(buf, size, "never");
  return snprintf(buf, size, "%zu", v);
}

static const char *const source_names[] = {"default", "profile", "env", "api"};

/* A measured call time, three digits at most: "850 ns", "7.2 us", "9.8 ms". */
static void fmt_time(char *buf, size_t size, float ns) {
  if (ns < 999.5f)
    snprintf(buf, size, "%.0f ns", (double)ns);
  else if (ns < 999.5e3f)
    snprintf(buf, size, "%.3g us", (double)ns * 1e-3);
  else if (ns < 999.5e6f)
    snprintf(buf, size, "%.3g ms", (double)ns * 1e-6);
  else
    snprintf(buf, size, "%.3g s", (double)ns * 1e-9);
}

/* The texts a record quotes from elsewhere, whose length it does not choose:
 * the GPU's reason (why), the shadow tier's detail, a kernel's name. */
enum { QUOTE_WHY, QUOTE_SHADOW, QUOTE_KERNEL, QUOTE_COUNT };

/* What one formatting pass may spend: each quoted text at most cap[q] bytes
 * (a shortened one ends in SHORTENED), and where the quoted built-in
 * defaults were measured, or not. */
typedef struct limits {
  size_t cap[QUOTE_COUNT];
  int provenance;
} limits;

#define SHORTENED "[...]"

typedef struct out {
  char *buf;
  size_t size;
  size_t used; /* bytes the whole record needs, which may exceed size - 1 */
} out;

static void append(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const size_t at = o->used < o->size ? o->used : o->size - 1;
  const int w = vsnprintf(o->buf + at, o->size - at, fmt, ap);
  va_end(ap);
  if (w > 0) o->used += (size_t)w;
}

/* text, or its first bytes and SHORTENED in cap bytes (never a UTF-8
 * sequence cut in two). */
static void append_quote(out *o, const char *text, size_t cap) {
  const size_t len = strlen(text);
  if (len <= cap) {
    append(o, "%s", text);
    return;
  }
  size_t keep = cap > strlen(SHORTENED) ? cap - strlen(SHORTENED) : 0;
  while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80) keep--;
  append(o, "%.*s" SHORTENED, (int)keep, text);
}

/* What a record quotes for a built-in default's origin: the record's own few
 * words where it has them (a kernel's, dispatch/kernel.c), else its machine
 * and date. */
static void origin(const xpar__provenance *p, char *buf, size_t size) {
  if (p->brief)
    snprintf(buf, size, "%s", p->brief);
  else
    snprintf(buf, size, "%s, %s", p->machine, p->date);
}

/* Where the quoted built-in defaults were measured: "; default (H100 host,
 * 2026-11-25)", "; defaults (...)" for two of one origin, "; defaults (H100
 * host; GPU 2026-11-26, openmp 2026-11-25)" for two of one machine, else each
 * named by its threshold. */
static void append_provenance(out *o, const xpar__decision_raw *d) {
  const int gpu_quoted = d->gpu_rule == XPAR__GPU_BELOW || d->gpu_rule == XPAR__GPU_AT_OR_ABOVE ||
                         d->gpu_rule == XPAR__GPU_WANTED_UNUSABLE ||
                         (d->gpu_rule == XPAR__GPU_DEVICE_ONLY && d->gpu_threshold != 0);
  const int openmp_quoted =
      d->cpu_rule == XPAR__CPU_BELOW_OPENMP || d->cpu_rule == XPAR__CPU_AT_OR_ABOVE_OPENMP;
  const xpar__provenance *gpu = NULL, *openmp = NULL;
  /* A kernel's defaults have one provenance (dispatch/kernel.c). */
  if (gpu_quoted && d->gpu_source == XPAR__SRC_DEFAULT)
    gpu = d->kernel ? d->kernel_from
                    : xpar__threshold_default_from(d->op, d->dtype, d->gpu_kind, NULL);
  if (openmp_quoted && d->openmp_source == XPAR__SRC_DEFAULT)
    openmp = d->kernel ? d->kernel_from
                       : xpar__threshold_default_from(d->op, d->dtype, XPAR_THRESHOLD_OPENMP,
                                                      NULL);
  char g[128] = "", c[128] = "";
  if (gpu) origin(gpu, g, sizeof g);
  if (openmp) origin(openmp, c, sizeof c);
  if (gpu && openmp && strcmp(g, c) && !gpu->brief && !openmp->brief &&
      !strcmp(gpu->machine, openmp->machine))
    append(o, "; defaults (%s; GPU %s, openmp %s)", gpu->machine, gpu->date, openmp->date);
  else if (gpu && openmp && strcmp(g, c))
    append(o, "; GPU default (%s), openmp default (%s)", g, c);
  else if (gpu || openmp)
    append(o, "; default%s (%s)", gpu && openmp ? "s" : "", gpu ? g : c);
}

/* What adaptation did (adapt.h): "; adapted: cpu-openmp measured 9.8 ms
 * against 7 us for cpu-serial; cpu-serial chosen", "...; cpu-openmp retried"
 * (the displaced tier run again), or "; cpu-serial timed against cpu-openmp's
 * 9.8 ms" (the alternative run once to compare). */
static void append_adapt(out *o, const xpar__decision_raw *d) {
  char st[24], alt[24];
  fmt_time(st, sizeof st, d->adapt_static_ns);
  fmt_time(alt, sizeof alt, d->adapt_alt_ns);
  const char *sname = xpar__tier_name(d->adapt_static), *aname = xpar__tier_name(d->adapt_alt);
  switch (d->adapt_note) {
    case XPAR__ADAPT_NOTE_NONE: break;
    case XPAR__ADAPT_NOTE_ADAPTED:
    case XPAR__ADAPT_NOTE_RETRIED:
      append(o, "; adapted: %s measured %s against %s for %s; %s %s", sname, st, alt, aname,
             d->adapt_note == XPAR__ADAPT_NOTE_ADAPTED ? aname : sname,
             d->adapt_note == XPAR__ADAPT_NOTE_ADAPTED ? "chosen" : "retried");
      break;
    case XPAR__ADAPT_NOTE_TIMED: append(o, "; %s timed against %s's %s", aname, sname, st); break;
  }
}

/* One pass: the whole record within lim; returns the bytes it needs (without
 * the NUL), written to buf as far as size allows. */
static size_t format_within(const xpar__decision_raw *d, char *buf, size_t size,
                            const limits *lim) {
  out o = {buf, size, 0};
  char thr[32];
  buf[0] = '\0';
  const char *why = d->why ? d->why : "unknown";
  const char *kernel = d->kernel ? d->kernel : "";
  const char *shadow = d->shadow_detail ? d->shadow_detail : "";
  const size_t *cap = lim->cap;
  fmt_count(thr, sizeof thr, d->gpu_threshold);
  /* With a cached (unverified) pinned/pageable kind, n is below both GPU
   * thresholds for host data: the smaller one is quoted, for host data. */
  const char *kind = d->host_kind_hint ? "host data" : xpar__threshold_data(d->gpu_kind);
  const char *gsrc = source_names[d->gpu_source];
  const char *osrc = source_names[d->openmp_source];
  switch (d->gpu_rule) {
    case XPAR__GPU_NOT_CONSIDERED: break;
    case XPAR__GPU_BELOW:
      if (d->gpu_threshold == XPAR_NEVER)
        append(&o, "GPU threshold never (%s) for %s", gsrc, kind);
      else
        append(&o, "n=%zu below GPU threshold %s (%s) for %s", d->n, thr, gsrc, kind);
      break;
    case XPAR__GPU_AT_OR_ABOVE:
      append(&o, "n=%zu at or above GPU threshold %s (%s) for %s", d->n, thr, gsrc, kind);
      break;
    case XPAR__GPU_WANTED_UNUSABLE:
      append(&o, "n=%zu at or above GPU threshold %s (%s) for %s, but the GPU is not usable (",
             d->n, thr, gsrc, kind);
      append_quote(&o, why, cap[QUOTE_WHY]);
      append(&o, ")");
      break;
    case XPAR__GPU_FORCED: append(&o, "backend forced to the GPU"); break;
    case XPAR__GPU_FORCED_UNUSABLE:
      append(&o, "a GPU backend was requested, but the GPU is not usable (");
      append_quote(&o, why, cap[QUOTE_WHY]);
      append(&o, "): ran on the CPU");
      break;
    case XPAR__GPU_MANDATORY: append(&o, "offload mandatory"); break;
    case XPAR__GPU_DEVICE_ONLY:
      if (d->gpu_threshold == 0)
        append(&o, "data valid only on the device");
      else if (d->n < d->gpu_threshold)
        append(&o, "n=%zu below GPU threshold %s (%s) for %s, but a queued (nowait) call "
                   "stays on the GPU", d->n, thr, gsrc, kind);
      else
        append(&o, "n=%zu at or above GPU threshold %s (%s) for %s", d->n, thr, gsrc, kind);
      break;
    case XPAR__GPU_DISABLED: append(&o, "offload disabled"); break;
    case XPAR__GPU_FAILED_FALLBACK:
      append(&o, "the GPU failed (");
      append_quote(&o, why, cap[QUOTE_WHY]);
      append(&o, "): fell back to the CPU");
      break;
    case XPAR__GPU_NO_GPU_VARIANT:
      append(&o, "kernel ");
      append_quote(&o, kernel, cap[QUOTE_KERNEL]);
      append(&o, " has no GPU variant in this build");
      break;
    case XPAR__GPU_NO_CPU_VARIANT:
      append(&o, "kernel ");
      append_quote(&o, kernel, cap[QUOTE_KERNEL]);
      append(&o, " has no CPU variant");
      break;
    case XPAR__GPU_SPLIT:
    case XPAR__GPU_SPLIT_FORCED:
      if (d->gpu_rule == XPAR__GPU_SPLIT) {
        fmt_count(thr, sizeof thr, d->split_from);
        append(&o, "n=%zu at or above split threshold %s (%s) for %s host data", d->n, thr,
               source_names[d->split_from_source],
               d->split_memory == XPAR_SPLIT_PINNED ? "pinned" : "pageable");
      } else {
        append(&o, "backend cpu+cuda, %s host data",
               d->split_memory == XPAR_SPLIT_PINNED ? "pinned" : "pageable");
      }
      if (d->split_gpu_share == 0.0)
        append(&o, ": too small to split, the CPU ran it all");
      else if (d->split_tree)
        append(&o, ": the GPU ran %.1f%% (the reproducible block tree's right half)",
               100.0 * d->split_gpu_share);
      else
        append(&o, ": the GPU ran %.1f%% (share %.3g, %s)", 100.0 * d->split_gpu_share,
               (double)d->split_share_set, source_names[d->split_share_source]);
      break;
    case XPAR__GPU_SPLIT_NOT_COVERED:
      append(&o, "backend cpu+cuda, a call the split does not cover (its operation, or data "
                 "not in host memory): ran on the GPU");
      break;
  }
  fmt_count(thr, sizeof thr, d->openmp_threshold);
  const char *sep = o.used ? "; " : "";
  switch (d->cpu_rule) {
    case XPAR__CPU_NONE: break;
    case XPAR__CPU_BELOW_OPENMP:
      append(&o, "%sn=%zu below openmp threshold %s (%s)", sep, d->n, thr, osrc);
      break;
    case XPAR__CPU_AT_OR_ABOVE_OPENMP:
      append(&o, "%sn=%zu at or above openmp threshold %s (%s)", sep, d->n, thr, osrc);
      break;
    case XPAR__CPU_FORCED_SERIAL: append(&o, "%sbackend forced to serial", sep); break;
  }
  append_adapt(&o, d);
  if (d->bytes_to_device || d->bytes_to_host)
    append(&o, "; moved %zu bytes to the device, %zu to the host", d->bytes_to_device,
           d->bytes_to_host);
  if (d->reproducible) append(&o, "; reproducible mode");
  switch (d->shadow_state) {
    case XPAR__SHADOW_OFF: break;
    case XPAR__SHADOW_MATCH: append(&o, "; shadow %s: match", xpar__tier_name(d->shadow_tier)); break;
    case XPAR__SHADOW_MISMATCH:
      append(&o, "; shadow %s: MISMATCH ", xpar__tier_name(d->shadow_tier));
      append_quote(&o, shadow, cap[QUOTE_SHADOW]);
      break;
    case XPAR__SHADOW_NOT_RUN:
      append(&o, "; shadow %s: not run (", xpar__tier_name(d->shadow_tier));
      append_quote(&o, shadow, cap[QUOTE_SHADOW]);
      append(&o, ")");
      break;
  }
  /* Where the built-in defaults it quoted were measured, last. */
  if (lim->provenance) append_provenance(&o, d);
  if (lim->provenance && (d->gpu_rule == XPAR__GPU_SPLIT || d->gpu_rule == XPAR__GPU_SPLIT_FORCED) &&
      ((d->gpu_rule == XPAR__GPU_SPLIT && d->split_from_source == XPAR__SRC_DEFAULT) ||
       (!d->split_tree && d->split_gpu_share > 0.0 && d->split_share_source == XPAR__SRC_DEFAULT))) {
    char g[128];
    origin(xpar__split_default_from(d->op, d->dtype, d->split_memory), g, sizeof g);
    append(&o, "; split default (%s)", g);
  }
  return o.used;
}

/* The record fits its field whole: where it would not, the quoted texts are
 * shortened, the longest first, down to QUOTE_FLOOR bytes each, then where
 * the defaults were measured is left out and the quoted texts may shrink to
 * QUOTE_MIN.  Only a record that fits none of these (numbers of more than
 * ten digits with every note on) is cut, and ends in "..." (tests/test_policy.c
 * formats the longest of every rule). */
enum { QUOTE_FLOOR = 40, QUOTE_MIN = 12 };

void xpar__decision_format(const xpar__decision_raw *d, char *buf, size_t size) {
  if (!size) return;
  const char *texts[QUOTE_COUNT] = {
      [QUOTE_WHY] = d->gpu_rule == XPAR__GPU_WANTED_UNUSABLE ||
                            d->gpu_rule == XPAR__GPU_FORCED_UNUSABLE ||
                            d->gpu_rule == XPAR__GPU_FAILED_FALLBACK
                        ? (d->why ? d->why : "unknown")
                        : "",
      [QUOTE_SHADOW] = (d->shadow_state == XPAR__SHADOW_MISMATCH ||
                        d->shadow_state == XPAR__SHADOW_NOT_RUN) && d->shadow_detail
                           ? d->shadow_detail
                           : "",
      [QUOTE_KERNEL] = (d->gpu_rule == XPAR__GPU_NO_GPU_VARIANT ||
                        d->gpu_rule == XPAR__GPU_NO_CPU_VARIANT) && d->kernel
                           ? d->kernel
                           : ""};
  size_t len[QUOTE_COUNT], longest = 0, quoted = 0;
  for (int q = 0; q < QUOTE_COUNT; q++) {
    len[q] = strlen(texts[q]);
    quoted += len[q];
    if (len[q] > longest) longest = len[q];
  }
  limits lim = {{SIZE_MAX, SIZE_MAX, SIZE_MAX}, 1};
  for (; lim.provenance >= 0; lim.provenance--) {
    const size_t least = lim.provenance ? QUOTE_FLOOR : QUOTE_MIN;
    for (int q = 0; q < QUOTE_COUNT; q++) lim.cap[q] = SIZE_MAX;
    const size_t need = format_within(d, buf, size, &lim);
    if (need < size) return;
    /* The bytes besides the quoted texts; the largest common cap that fits. */
    const size_t fixed = need - quoted;
    for (size_t c = longest; c-- > least;) {
      size_t total = fixed;
      for (int q = 0; q < QUOTE_COUNT; q++) total += len[q] < c ? len[q] : c;
      if (total < size) {
        for (int q = 0; q < QUOTE_COUNT; q++) lim.cap[q] = c;
        if (format_within(d, buf, size, &lim) < size) return;
        break;
      }
    }
  }
  /* Nothing fitted: the shortest form, cut, says so rather than ending mid-word. */
  lim.provenance = 0;
  for (int q = 0; q < QUOTE_COUNT; q++) lim.cap[q] = QUOTE_MIN;
  if (format_within(d, buf, size, &lim) >= size && size >= 4) memcpy(buf + size - 4, "...", 4);
}

void xpar__decision_log(const xpar__decision_raw *d) {
  char reason[256];
  xpar__decision_format(d, reason, sizeof reason);
  if (d->kernel)
    fprintf(stderr, "xpar: kernel %s n=%zu -> %s: %s\n", d->kernel, d->n,
            xpar__tier_name(d->tier), reason);
  else
    fprintf(stderr, "xpar: %s %s n=%zu -> %s: %s\n", xpar__op_name(d->op),
            xpar__dtype_name(d->dtype), d->n, xpar__tier_name(d->tier), reason);
}
