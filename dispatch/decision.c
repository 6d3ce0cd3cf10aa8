/* Decision records as text: built only when asked for, never on the hot path. */
#include <stdio.h>
#include <string.h>

#include "state.h"

static int fmt_count(char *buf, size_t size, size_t v) {
  if (v == XPAR_NEVER) return snprintf(buf, size, "never");
  return snprintf(buf, size, "%zu", v);
}

static const char *const source_names[] = {"default", "profile", "env", "api"};

void xpar__decision_format(const xpar__decision_raw *d, char *buf, size_t size) {
  char thr[32];
  size_t used = 0;
#define XPAR__APPEND_(...)                                                          \
  do {                                                                              \
    if (used < size) {                                                              \
      int w_ = snprintf(buf + used, size - used, __VA_ARGS__);                      \
      if (w_ > 0) used += (size_t)w_;                                               \
    }                                                                               \
  } while (0)
  buf[0] = '\0';
  const char *why = d->why ? d->why : "unknown";
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
        XPAR__APPEND_("GPU threshold never (%s) for %s", gsrc, kind);
      else
        XPAR__APPEND_("n=%zu below GPU threshold %s (%s) for %s", d->n, thr, gsrc, kind);
      break;
    case XPAR__GPU_AT_OR_ABOVE:
      XPAR__APPEND_("n=%zu at or above GPU threshold %s (%s) for %s", d->n, thr, gsrc, kind);
      break;
    case XPAR__GPU_WANTED_UNUSABLE:
      XPAR__APPEND_("n=%zu at or above GPU threshold %s (%s) for %s, but the GPU is not usable "
                    "(%s)", d->n, thr, gsrc, kind, why);
      break;
    case XPAR__GPU_FORCED: XPAR__APPEND_("backend forced to the GPU"); break;
    case XPAR__GPU_FORCED_UNUSABLE:
      XPAR__APPEND_("a GPU backend was requested, but the GPU is not usable (%s): ran on the CPU",
                    why);
      break;
    case XPAR__GPU_MANDATORY: XPAR__APPEND_("offload mandatory"); break;
    case XPAR__GPU_DEVICE_ONLY:
      if (d->gpu_threshold == 0)
        XPAR__APPEND_("data valid only on the device");
      else if (d->n < d->gpu_threshold)
        XPAR__APPEND_("n=%zu below GPU threshold %s (%s) for %s, but a queued (nowait) call "
                      "stays on the GPU", d->n, thr, gsrc, kind);
      else
        XPAR__APPEND_("n=%zu at or above GPU threshold %s (%s) for %s", d->n, thr, gsrc, kind);
      break;
    case XPAR__GPU_DISABLED: XPAR__APPEND_("offload disabled"); break;
    case XPAR__GPU_FAILED_FALLBACK:
      XPAR__APPEND_("the GPU failed (%s): fell back to the CPU", why);
      break;
    case XPAR__GPU_NO_GPU_VARIANT:
      XPAR__APPEND_("kernel %s has no GPU variant in this build", d->kernel);
      break;
    case XPAR__GPU_NO_CPU_VARIANT:
      XPAR__APPEND_("kernel %s has no CPU variant", d->kernel);
      break;
  }
  fmt_count(thr, sizeof thr, d->openmp_threshold);
  const char *sep = used ? "; " : "";
  switch (d->cpu_rule) {
    case XPAR__CPU_NONE: break;
    case XPAR__CPU_BELOW_OPENMP:
      XPAR__APPEND_("%sn=%zu below openmp threshold %s (%s)", sep, d->n, thr, osrc);
      break;
    case XPAR__CPU_AT_OR_ABOVE_OPENMP:
      XPAR__APPEND_("%sn=%zu at or above openmp threshold %s (%s)", sep, d->n, thr, osrc);
      break;
    case XPAR__CPU_FORCED_SERIAL: XPAR__APPEND_("%sbackend forced to serial", sep); break;
  }
  if (d->bytes_to_device || d->bytes_to_host)
    XPAR__APPEND_("; moved %zu bytes to the device, %zu to the host", d->bytes_to_device,
                  d->bytes_to_host);
  if (d->reproducible) XPAR__APPEND_("; reproducible mode");
  switch (d->shadow_state) {
    case XPAR__SHADOW_OFF: break;
    case XPAR__SHADOW_MATCH:
      XPAR__APPEND_("; shadow %s: match", xpar__tier_name(d->shadow_tier));
      break;
    case XPAR__SHADOW_MISMATCH:
      XPAR__APPEND_("; shadow %s: MISMATCH %s", xpar__tier_name(d->shadow_tier),
                    d->shadow_detail ? d->shadow_detail : "");
      break;
    case XPAR__SHADOW_NOT_RUN:
      XPAR__APPEND_("; shadow %s: not run (%s)", xpar__tier_name(d->shadow_tier),
                    d->shadow_detail ? d->shadow_detail : "");
      break;
  }
  /* Where the built-in defaults it quoted were measured (thresholds.c's
   * data), last: a full record loses this first. */
  const xpar__provenance *from[2] = {NULL, NULL};
  int gpu_quoted = d->gpu_rule == XPAR__GPU_BELOW || d->gpu_rule == XPAR__GPU_AT_OR_ABOVE ||
                   d->gpu_rule == XPAR__GPU_WANTED_UNUSABLE;
  int openmp_quoted = d->cpu_rule == XPAR__CPU_BELOW_OPENMP ||
                      d->cpu_rule == XPAR__CPU_AT_OR_ABOVE_OPENMP;
  /* A kernel's defaults have one provenance (dispatch/kernel.c). */
  if (gpu_quoted && d->gpu_source == XPAR__SRC_DEFAULT)
    from[0] = d->kernel ? d->kernel_from
                        : xpar__threshold_default_from(d->op, d->dtype, d->gpu_kind, NULL);
  if (openmp_quoted && d->openmp_source == XPAR__SRC_DEFAULT)
    from[1] = d->kernel ? d->kernel_from
                        : xpar__threshold_default_from(d->op, d->dtype, XPAR_THRESHOLD_OPENMP,
                                                       NULL);
  if (!from[0]) from[0] = from[1], from[1] = NULL;
  /* Two records of one date and machine name them once, the second by what
   * its results folder adds after the last '-' the two share ("...-s8 and
   * -s12"); one that reads the same as the first adds nothing.  The two
   * spelled out in full did not fit the field beside the rule. */
  const int shared = from[1] && !strcmp(from[0]->date, from[1]->date) &&
                     !strcmp(from[0]->machine, from[1]->machine);
  const char *first = from[0] ? xpar__provenance_brief(from[0]) : NULL;
  if (shared && !strcmp(first, xpar__provenance_brief(from[1]))) from[1] = NULL;
  for (int i = 0; i < 2 && from[i]; i++) {
    const xpar__provenance *p = from[i];
    const char *brief = xpar__provenance_brief(p);
    const char *plural = from[1] && shared ? "s" : "";
    if (i == 1 && shared) {
      const char *const folders = "bench/results/";
      size_t k = 0, cut = 0;
      for (; first[k] && first[k] == brief[k]; k++)
        if (first[k] == '-') cut = k;
      XPAR__APPEND_(" and %s",
                    !strncmp(first, folders, strlen(folders)) && cut > strlen(folders)
                        ? brief + cut
                        : brief);
    } else if (strstr(brief, p->date)) { /* a results folder names its date: once is enough */
      XPAR__APPEND_("; default%s measured on %s, %s", plural, p->machine, brief);
    } else {
      XPAR__APPEND_("; default%s measured %s, %s, %s", plural, p->date, p->machine, brief);
    }
  }
  /* A record that did not fit says so rather than ending mid-word. */
  if (used >= size && size >= 4) memcpy(buf + size - 4, "...", 4);
#undef XPAR__APPEND_
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
