/*
 * Calibration profiles: plain-text thresholds measured on one machine
 * (format in docs/profile.md), keyed by CPU model, online cores and GPU name.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"

#define PROFILE_MAGIC "xpar-profile 1"
#define XPAR__KEY_(e, key, env, data) " " key
#define THRESHOLD_KEYS XPAR_THRESHOLD_MAP(XPAR__KEY_)

typedef struct machine_id {
  char cpu[128];
  long cores;
  char gpu[128];
} machine_id;

static void trim(char *s) {
  size_t n = strlen(s);
  while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
    s[--n] = '\0';
  size_t lead = strspn(s, " \t");
  if (lead) memmove(s, s + lead, strlen(s + lead) + 1);
}

static void cpu_model(char *buf, size_t size) {
  snprintf(buf, size, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) == 0) {
      char *colon = strchr(line, ':');
      if (colon) {
        trim(colon + 1);
        snprintf(buf, size, "%s", colon + 1);
      }
      break;
    }
  }
  fclose(f);
}

/* This machine's identity.  The GPU part probes CUDA (once per process)
 * unless offload is disabled, in which case only the CPU keys matter. */
static void this_machine(xpar_context *ctx, machine_id *m, int want_gpu) {
  cpu_model(m->cpu, sizeof m->cpu);
  m->cores = sysconf(_SC_NPROCESSORS_ONLN);
  snprintf(m->gpu, sizeof m->gpu, "none");
  if (want_gpu && xpar__gpu_usable(ctx, NULL)) {
    xpar_device_info info;
    if (xpar__gpu_backend()->query(ctx->device, &info) == XPAR_OK && info.usable)
      snprintf(m->gpu, sizeof m->gpu, "%s", info.name);
  }
}

void xpar__profile_kernels_free(xpar__profile_kernel *list, size_t count) {
  for (size_t i = 0; i < count; i++) free(list[i].name);
  free(list);
}

void xpar__profile_apply_kernel(const xpar__profile_kernel *list, size_t count, const char *name,
                                int level, xpar__kernel_entry *e) {
  for (size_t i = 0; i < count; i++) {
    const xpar__profile_kernel *pk = &list[i];
    if (strcmp(pk->name, name) != 0) continue;
    for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++)
      if (pk->have[k] && (level == XPAR__PROFILE_NOT_NAMED || pk->have[k] == level)) {
        e->thresholds[k] = pk->thresholds[k];
        e->sources[k] = XPAR__SRC_PROFILE;
      }
    return;
  }
}

/* A kernel's line, "kernel <name> <threshold> <count|never>", into the list.  The name
 * has any length: a C identifier has no limit, and a profile that xpar_profile_save
 * wrote must load again. */
static xpar_status parse_kernel_line(const char *path, int lineno, const char *name,
                                     const char *kind, const char *value,
                                     xpar__profile_kernel **list, size_t *count) {
  int k = xpar__threshold_index(kind);
  XPAR__RETURN_IF(k < 0, XPAR_ERR_PROFILE,
                  "%s:%d: unknown threshold \"%.40s\" (one of" THRESHOLD_KEYS ")", path, lineno,
                  kind);
  size_t n;
  XPAR__RETURN_IF(xpar__parse_count(value, &n) != 0, XPAR_ERR_PROFILE,
                  "%s:%d: \"%.40s\" is not an element count or \"never\"", path, lineno, value);
  size_t i = 0;
  while (i < *count && strcmp((*list)[i].name, name) != 0) i++;
  if (i == *count) {
    char *copy = strdup(name);
    XPAR__RETURN_IF(!copy, XPAR_ERR_OUT_OF_MEMORY, "profile kernel name (%zu bytes)",
                    strlen(name) + 1);
    xpar__profile_kernel *grown = realloc(*list, (*count + 1) * sizeof *grown);
    if (!grown) free(copy);
    XPAR__RETURN_IF(!grown, XPAR_ERR_OUT_OF_MEMORY, "profile kernel table (%zu)", *count + 1);
    *list = grown;
    memset(&grown[i], 0, sizeof grown[i]);
    grown[i].name = copy;
    (*count)++;
  }
  XPAR__RETURN_IF((*list)[i].have[k], XPAR_ERR_PROFILE, "%s:%d: kernel %.60s %s given twice",
                  path, lineno, name, kind);
  (*list)[i].thresholds[k] = n;
  (*list)[i].have[k] = XPAR__PROFILE_BELOW_ENV; /* xpar__profile_load says which */
  return XPAR_OK;
}

/* The split tier's lines, "split <op> <dtype> <memory> <from|never> <share>"
 * (xpar_context_set_split). */
typedef struct profile_split {
  size_t from[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_SPLIT_MEMORY_COUNT_];
  float share[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_SPLIT_MEMORY_COUNT_];
  unsigned char have[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_SPLIT_MEMORY_COUNT_];
} profile_split;

static const char *const split_memory_names[XPAR_SPLIT_MEMORY_COUNT_] = {"pinned", "pageable"};

static xpar_status parse_split_line(const char *path, int lineno, char **w, profile_split *sp) {
  const int o = xpar__op_index(w[1]), t = xpar__dtype_index(w[2]);
  int m = 0;
  while (m < XPAR_SPLIT_MEMORY_COUNT_ && strcmp(w[3], split_memory_names[m]) != 0) m++;
  XPAR__RETURN_IF(o < 0 || !xpar__op_splits((xpar_op)o), XPAR_ERR_PROFILE,
                  "%s:%d: \"%.40s\" has no split (reduce, scan, axpy, add, fill, dot, "
                  "histogram, segmented)",
                  path, lineno, w[1]);
  XPAR__RETURN_IF(t < 0, XPAR_ERR_PROFILE, "%s:%d: unknown dtype \"%.40s\"", path, lineno, w[2]);
  XPAR__RETURN_IF(m == XPAR_SPLIT_MEMORY_COUNT_, XPAR_ERR_PROFILE,
                  "%s:%d: unknown split memory \"%.40s\" (pinned or pageable)", path, lineno,
                  w[3]);
  size_t from;
  XPAR__RETURN_IF(xpar__parse_count(w[4], &from) != 0, XPAR_ERR_PROFILE,
                  "%s:%d: \"%.40s\" is not an element count or \"never\"", path, lineno, w[4]);
  char *end;
  errno = 0;
  const double share = strtod(w[5], &end);
  XPAR__RETURN_IF(errno || *end || end == w[5] || !(share > 0.0 && share < 1.0), XPAR_ERR_PROFILE,
                  "%s:%d: share \"%.40s\" is not a number between 0 and 1", path, lineno, w[5]);
  XPAR__RETURN_IF(sp->have[o][t][m], XPAR_ERR_PROFILE, "%s:%d: split %s %s %s given twice", path,
                  lineno, w[1], w[2], w[3]);
  sp->from[o][t][m] = from;
  sp->share[o][t][m] = (float)share;
  sp->have[o][t][m] = 1;
  return XPAR_OK;
}

/* What the lines so far have given. */
typedef struct parse_state {
  const char *path;
  int seen_magic, seen_cpu, seen_cores, seen_gpu;
  machine_id *key;
  size_t (*prof)[XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_];
  unsigned char (*have)[XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_];
  xpar__profile_kernel **kernels;
  size_t *n_kernels;
  struct profile_split *split;
} parse_state;

/* Up to `max` words of `line` (split on blanks, in place); the count found, which is
 * max + 1 when there are more. */
static int split_words(char *line, char **words, int max) {
  int count = 0;
  char *save = NULL;
  for (char *w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
    if (count == max) return max + 1;
    words[count++] = w;
  }
  return count;
}

/* One line, trimmed; error names the line. */
static xpar_status parse_line(parse_state *ps, int lineno, char *line) {
  const char *path = ps->path;
  if (!line[0] || line[0] == '#') return XPAR_OK;
  if (!ps->seen_magic) {
    XPAR__RETURN_IF(strcmp(line, PROFILE_MAGIC) != 0, XPAR_ERR_PROFILE,
                    "%s:%d: expected \"" PROFILE_MAGIC "\", found \"%.60s\"", path, lineno, line);
    ps->seen_magic = 1;
    return XPAR_OK;
  }
  char *colon = strchr(line, ':');
  if (colon) {
    *colon = '\0';
    char *value = colon + 1;
    trim(line);
    trim(value);
    machine_id *key = ps->key;
    XPAR__RETURN_IF((strcmp(line, "cpu") == 0 && ps->seen_cpu) ||
                        (strcmp(line, "gpu") == 0 && ps->seen_gpu) ||
                        (strcmp(line, "cores") == 0 && ps->seen_cores),
                    XPAR_ERR_PROFILE, "%s:%d: \"%s\" given twice", path, lineno, line);
    if (strcmp(line, "cpu") == 0) {
      snprintf(key->cpu, sizeof key->cpu, "%s", value);
      ps->seen_cpu = 1;
    } else if (strcmp(line, "gpu") == 0) {
      snprintf(key->gpu, sizeof key->gpu, "%s", value);
      ps->seen_gpu = 1;
    } else if (strcmp(line, "cores") == 0) {
      char *end;
      errno = 0;
      key->cores = strtol(value, &end, 10);
      XPAR__RETURN_IF(errno || *end || end == value || key->cores <= 0, XPAR_ERR_PROFILE,
                      "%s:%d: cores: \"%.40s\" is not a positive count", path, lineno, value);
      ps->seen_cores = 1;
    } else if (strcmp(line, "written") != 0) {
      return xpar__fail(XPAR_ERR_PROFILE, "%s:%d: unknown key \"%.40s\"", path, lineno, line);
    }
    return XPAR_OK;
  }
  char shown[64];
  snprintf(shown, sizeof shown, "%s", line);
  char *w[6];
  const int words = split_words(line, w, 6);
  if (words == 6 && strcmp(w[0], "split") == 0)
    return parse_split_line(path, lineno, w, ps->split);
  XPAR__RETURN_IF(words != 4, XPAR_ERR_PROFILE,
                  "%s:%d: expected \"<op> <dtype> <threshold> <count|never>\", \"kernel "
                  "<name> <threshold> <count|never>\" or \"split <op> <dtype> <memory> "
                  "<count|never> <share>\", found \"%s\"",
                  path, lineno, shown);
  if (strcmp(w[0], "kernel") == 0)
    return parse_kernel_line(path, lineno, w[1], w[2], w[3], ps->kernels, ps->n_kernels);
  int o = xpar__op_index(w[0]), t = xpar__dtype_index(w[1]), k = xpar__threshold_index(w[2]);
  XPAR__RETURN_IF(o < 0, XPAR_ERR_PROFILE, "%s:%d: unknown op \"%.40s\"", path, lineno, w[0]);
  XPAR__RETURN_IF(t < 0, XPAR_ERR_PROFILE, "%s:%d: unknown dtype \"%.40s\"", path, lineno, w[1]);
  XPAR__RETURN_IF(k < 0, XPAR_ERR_PROFILE,
                  "%s:%d: unknown threshold \"%.40s\" (one of" THRESHOLD_KEYS ")",
                  path, lineno, w[2]);
  size_t n;
  XPAR__RETURN_IF(xpar__parse_count(w[3], &n) != 0, XPAR_ERR_PROFILE,
                  "%s:%d: \"%.40s\" is not an element count or \"never\"", path, lineno, w[3]);
  XPAR__RETURN_IF(ps->have[o][t][k], XPAR_ERR_PROFILE, "%s:%d: %s %s %s given twice", path,
                  lineno, w[0], w[1], w[2]);
  ps->prof[o][t][k] = n;
  ps->have[o][t][k] = 1;
  return XPAR_OK;
}

/* Parse the whole file into `prof`, the kernels' list and its machine key; error names the
 * line.  Lines have any length (getline). */
static xpar_status parse(const char *path, FILE *f, machine_id *key,
                         size_t prof[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_],
                         unsigned char have[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_],
                         xpar__profile_kernel **kernels, size_t *n_kernels, profile_split *split) {
  parse_state ps = {path, 0, 0, 0, 0, key, prof, have, kernels, n_kernels, split};
  char *line = NULL;
  size_t cap = 0;
  int lineno = 0;
  xpar_status st = XPAR_OK;
  errno = 0;
  while (st == XPAR_OK && getline(&line, &cap, f) >= 0) {
    trim(line);
    st = parse_line(&ps, ++lineno, line);
  }
  const int read_error = ferror(f);
  const int err = errno;
  free(line);
  XPAR__FORWARD(st);
  XPAR__RETURN_IF(read_error, XPAR_ERR_IO, "%s: read error: %s", path, strerror(err));
  XPAR__RETURN_IF(!ps.seen_magic, XPAR_ERR_PROFILE,
                  "%s: empty file (no \"" PROFILE_MAGIC "\" line)", path);
  XPAR__RETURN_IF(!ps.seen_cpu || !ps.seen_cores || !ps.seen_gpu, XPAR_ERR_PROFILE,
                  "%s: missing machine key (%s%s%s)", path, ps.seen_cpu ? "" : "cpu ",
                  ps.seen_cores ? "" : "cores ", ps.seen_gpu ? "" : "gpu");
  return XPAR_OK;
}

/* One notice per process is enough: every context would repeat it. */
static atomic_int notice_printed;

/* Merge a loaded profile's kernels into the context's list, taking over `from`:
 * a kernel already listed keeps the values this profile does not name. */
static xpar_status merge_profile_kernels(xpar_context *ctx, xpar__profile_kernel *from,
                                         size_t count) {
  xpar_status st = XPAR_OK;
  size_t i = 0;
  for (; i < count && st == XPAR_OK; i++) {
    size_t j = 0;
    while (j < ctx->n_profile_kernels && strcmp(ctx->profile_kernels[j].name, from[i].name) != 0)
      j++;
    if (j < ctx->n_profile_kernels) {
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++)
        if (from[i].have[k]) {
          ctx->profile_kernels[j].thresholds[k] = from[i].thresholds[k];
          ctx->profile_kernels[j].have[k] = from[i].have[k];
        }
      continue;
    }
    xpar__profile_kernel *grown =
        realloc(ctx->profile_kernels, (ctx->n_profile_kernels + 1) * sizeof *grown);
    if (!grown) {
      st = xpar__fail(XPAR_ERR_OUT_OF_MEMORY, "profile kernel table (%zu)",
                      ctx->n_profile_kernels + 1);
      break;
    }
    ctx->profile_kernels = grown;
    grown[ctx->n_profile_kernels++] = from[i];
    from[i].name = NULL; /* taken over */
  }
  xpar__profile_kernels_free(from, count);
  return st;
}

xpar_status xpar__profile_load(xpar_context *ctx, const char *path, int over_env,
                               int *applied) {
  unsigned char have[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_];
  size_t values[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_];
  memset(have, 0, sizeof have);
  machine_id key = {{0}, 0, {0}}, here;
  xpar__profile_kernel *kernels = NULL;
  size_t n_kernels = 0;
  *applied = 0;
  profile_split *split = calloc(1, sizeof *split);
  XPAR__RETURN_IF(!split, XPAR_ERR_OUT_OF_MEMORY, "profile split table (%zu bytes)",
                  sizeof *split);
  FILE *f = fopen(path, "r");
  if (!f) free(split);
  XPAR__RETURN_IF(!f, XPAR_ERR_PROFILE, "%s: cannot open: %s", path, strerror(errno));
  xpar_status st = parse(path, f, &key, values, have, &kernels, &n_kernels, split);
  fclose(f);
  if (st != XPAR_OK) {
    xpar__profile_kernels_free(kernels, n_kernels);
    free(split);
    return st;
  }
  /* A "gpu: none" profile was measured on the CPU alone (no usable GPU, or
   * offload disabled when it was saved): it applies whatever GPU this machine
   * has, and no CUDA call is made to find out (docs/profile.md). */
  int want_gpu = ctx->offload != XPAR_OFFLOAD_DISABLED && strcmp(key.gpu, "none") != 0;
  this_machine(ctx, &here, want_gpu);
  if (strcmp(key.cpu, here.cpu) != 0 || key.cores != here.cores ||
      (want_gpu && strcmp(key.gpu, here.gpu) != 0)) {
    if (!atomic_exchange(&notice_printed, 1))
      fprintf(stderr,
              "xpar: notice: ignoring profile %s, written on another machine (%s, %ld cores, GPU "
              "%s; this one: %s, %ld cores, GPU %s)\n",
              path, key.cpu, key.cores, key.gpu, here.cpu, here.cores, here.gpu);
    xpar__profile_kernels_free(kernels, n_kernels);
    free(split);
    return XPAR_OK;
  }
  for (int o = 0; o < XPAR_OP_COUNT_; o++)
    for (int t = 0; t < XPAR_DTYPE_COUNT_; t++)
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++)
        if (have[o][t][k]) {
          ctx->thresholds[o][t][k] = values[o][t][k];
          ctx->threshold_source[o][t][k] = XPAR__SRC_PROFILE;
        }
  for (int o = 0; o < XPAR_OP_COUNT_; o++)
    for (int t = 0; t < XPAR_DTYPE_COUNT_; t++)
      for (int m = 0; m < XPAR_SPLIT_MEMORY_COUNT_; m++)
        if (split->have[o][t][m]) {
          ctx->split_from[o][t][m] = split->from[o][t][m];
          ctx->split_share[o][t][m] = split->share[o][t][m];
          ctx->split_from_source[o][t][m] = XPAR__SRC_PROFILE;
          ctx->split_share_source[o][t][m] = XPAR__SRC_PROFILE;
        }
  free(split);
  /* The kernels': applied now to those the context has met (replacing their values, as
   * for the built-in ops), and kept by name for kernels it meets later -- a profile
   * loaded after creation then over the environment, as it would have been had the
   * kernel been met first. */
  for (size_t i = 0; i < n_kernels; i++)
    for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++)
      if (over_env && kernels[i].have[k]) kernels[i].have[k] = XPAR__PROFILE_OVER_ENV;
  for (size_t i = 0; i < ctx->n_kernels; i++)
    xpar__profile_apply_kernel(kernels, n_kernels, ctx->kernels[i].name, XPAR__PROFILE_NOT_NAMED,
                               &ctx->kernels[i]);
  *applied = 1;
  return merge_profile_kernels(ctx, kernels, n_kernels);
}

xpar_status xpar__profile_default_path(char *buf, size_t size) {
  const char *cache = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  char path[4096];
  int w;
  if (cache && cache[0] == '/')
    w = snprintf(path, sizeof path, "%s/xpar/profile.txt", cache);
  else if (home && home[0])
    w = snprintf(path, sizeof path, "%s/.cache/xpar/profile.txt", home);
  else
    return xpar__fail(XPAR_ERR_IO, "neither XDG_CACHE_HOME nor HOME is set");
  XPAR__RETURN_IF(w < 0 || (size_t)w >= size || (size_t)w >= sizeof path,
                  XPAR_ERR_INVALID_ARGUMENT, "buffer of %zu bytes is too small for the profile "
                  "path (%d bytes)", size, w + 1);
  memcpy(buf, path, (size_t)w + 1);
  return XPAR_OK;
}

/* One notice per process, as for a profile from another machine. */
static atomic_int missing_notice_printed;

/* XPAR_PROFILE names a file that does not exist.  In a directory that does
 * exist, it is a profile still to be written: `xpar-bench calibrate` writes
 * there, and its own contexts are created with XPAR_PROFILE set like any
 * program's.  The context keeps its built-in thresholds, and a notice says
 * so, so that a misspelt file name does not pass silently.  A missing
 * directory is more likely a mistake than a profile to come:
 * XPAR_ERR_PROFILE. */
static xpar_status profile_not_written_yet(const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else
    slash[slash == dir] = '\0'; /* "/profile.txt" lives in "/" */
  struct stat st;
  XPAR__RETURN_IF(stat(dir, &st) != 0 || !S_ISDIR(st.st_mode), XPAR_ERR_PROFILE,
                  "XPAR_PROFILE=%s: no such file, and no directory %s to write it in", path, dir);
  if (!atomic_exchange(&missing_notice_printed, 1))
    fprintf(stderr,
            "xpar: notice: XPAR_PROFILE=%s does not exist yet; using the built-in thresholds "
            "(xpar-bench calibrate writes it)\n",
            path);
  return XPAR_OK;
}

xpar_status xpar__profile_load_default(xpar_context *ctx) {
  int applied;
  const char *env = getenv("XPAR_PROFILE");
  if (env) {
    XPAR__RETURN_IF(!env[0], XPAR_ERR_INVALID_ENV, "XPAR_PROFILE is empty; expected a file path");
    if (access(env, F_OK) != 0 && errno == ENOENT) return profile_not_written_yet(env);
    return xpar__profile_load(ctx, env, 0, &applied); /* other failures to open: load() says why */
  }
  char path[4096];
  if (xpar__profile_default_path(path, sizeof path) != XPAR_OK) {
    xpar__clear_error(); /* no home: simply no default profile */
    return XPAR_OK;
  }
  if (access(path, F_OK) != 0) return XPAR_OK;
  return xpar__profile_load(ctx, path, 0, &applied);
}

/* mkdir -p of path's parent directory. */
static void make_parent_dirs(const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return;
  *slash = '\0';
  for (char *p = dir + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(dir, 0755);
      *p = '/';
    }
  mkdir(dir, 0755);
}

static void print_count(FILE *f, size_t v) {
  if (v == XPAR_NEVER)
    fprintf(f, "never\n");
  else
    fprintf(f, "%zu\n", v);
}

/* One "kernel" line, the section's comment before the first. */
static void kernel_line(FILE *f, int *lines, const char *name, int k, size_t v) {
  if (!(*lines)++)
    fprintf(f, "# kernel <name> <threshold> <elements|never>: the application's kernels and "
               "operators (their built-in defaults: an earlier calibration's add)\n");
  fprintf(f, "kernel %s %s ", name, xpar__threshold_key((xpar_threshold)k));
  print_count(f, v);
}

/* The kernels' thresholds that came from the API or a profile (as for the ops), then
 * the loaded profile's kernels this context has not met (kept: they are still facts
 * about this machine). */
static void save_kernels(const xpar_context *ctx, FILE *f) {
  int lines = 0;
  for (size_t i = 0; i < ctx->n_kernels; i++) {
    const xpar__kernel_entry *e = &ctx->kernels[i];
    for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++)
      if (e->sources[k] == XPAR__SRC_PROFILE || e->sources[k] == XPAR__SRC_API)
        kernel_line(f, &lines, e->name, k, e->thresholds[k]);
  }
  for (size_t j = 0; j < ctx->n_profile_kernels; j++) {
    const xpar__profile_kernel *pk = &ctx->profile_kernels[j];
    int met = 0;
    for (size_t i = 0; i < ctx->n_kernels && !met; i++)
      met = strcmp(ctx->kernels[i].name, pk->name) == 0;
    for (int k = 0; k < XPAR_THRESHOLD_COUNT_ && !met; k++)
      if (pk->have[k]) kernel_line(f, &lines, pk->name, k, pk->thresholds[k]);
  }
}

/* The split tier's settings set through the API or a profile, each with the
 * built-in values it overrides and where they came from as a comment. */
static void save_split(const xpar_context *ctx, FILE *f) {
  int lines = 0;
  for (int o = 0; o < XPAR_OP_COUNT_; o++)
    for (int t = 0; t < XPAR_DTYPE_COUNT_; t++)
      for (int m = 0; m < XPAR_SPLIT_MEMORY_COUNT_; m++) {
        const unsigned char a = ctx->split_from_source[o][t][m];
        const unsigned char b = ctx->split_share_source[o][t][m];
        if (a != XPAR__SRC_PROFILE && a != XPAR__SRC_API && b != XPAR__SRC_PROFILE &&
            b != XPAR__SRC_API)
          continue;
        if (!lines++)
          fprintf(f, "# split <op> <dtype> <memory> <from|never> <share>: the split tier "
                     "(cpu+cuda) on host data from n >= from, the GPU taking share of it\n");
        char from[256];
        xpar__provenance_format(
            xpar__split_default_from((xpar_op)o, (xpar_dtype)t, (xpar_split_memory)m), from,
            sizeof from);
        fprintf(f, "# built-in default never, share estimated, %s\n", from);
        fprintf(f, "split %s %s %s ", xpar__op_name((xpar_op)o), xpar__dtype_name((xpar_dtype)t),
                split_memory_names[m]);
        if (ctx->split_from[o][t][m] == XPAR_NEVER)
          fprintf(f, "never");
        else
          fprintf(f, "%zu", ctx->split_from[o][t][m]);
        fprintf(f, " %.4g\n", (double)ctx->split_share[o][t][m]);
      }
}

/* A kernel's name as one word of a profile line: not empty, no blank (words are split
 * on them) and no ':' (a key line).  XPAR_KERNEL and XPAR_OPERATOR names are C
 * identifiers; only an object built by hand can miss. */
static int writable_name(const char *name) {
  return name && name[0] && !name[strcspn(name, " \t\n\r\v\f:")];
}

xpar_status xpar__profile_save(xpar_context *ctx, const char *path) {
  /* Refused before anything is written: a line the loader would reject makes the whole
   * file unusable for every later context. */
  for (size_t i = 0; i < ctx->n_kernels; i++) {
    const xpar__kernel_entry *e = &ctx->kernels[i];
    for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++)
      XPAR__RETURN_IF((e->sources[k] == XPAR__SRC_PROFILE || e->sources[k] == XPAR__SRC_API) &&
                          !writable_name(e->name),
                      XPAR_ERR_INVALID_ARGUMENT,
                      "kernel name \"%.60s\" cannot go into a profile: a name there is one "
                      "word without blanks or ':'",
                      e->name ? e->name : "(null)");
  }
  machine_id here;
  this_machine(ctx, &here, ctx->offload != XPAR_OFFLOAD_DISABLED);
  make_parent_dirs(path);
  /* Write a sibling file and rename it, so a reader never sees half a profile. */
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  XPAR__RETURN_IF(!f, XPAR_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
  time_t now = time(NULL);
  struct tm utc;
  char when[32] = "unknown time";
  if (gmtime_r(&now, &utc)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  fprintf(f, "# xpar calibration profile (format: docs/profile.md)\n" PROFILE_MAGIC "\n");
  fprintf(f, "cpu: %s\ncores: %ld\ngpu: %s\n", here.cpu, here.cores, here.gpu);
  /* The profile's provenance: this machine (the keys above), now, and the
   * program that measured it. */
  fprintf(f, "written: %s by %s (xpar %d.%d.%d)\n", when, program_invocation_short_name,
          XPAR_VERSION_MAJOR, XPAR_VERSION_MINOR, XPAR_VERSION_PATCH);
  fprintf(f, "# <op> <dtype> <threshold> <elements|never>: n >= value takes the faster-for-large-n side\n"
             "# thresholds not listed keep the built-in defaults\n");
  for (int o = 0; o < XPAR_OP_COUNT_; o++)
    for (int t = 0; t < XPAR_DTYPE_COUNT_; t++)
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++) {
        /* Built-in defaults stay out (a loading context has its own, perhaps
         * newer ones), and so do environment values: the environment
         * overrides a profile anyway, and is not a fact about this machine. */
        unsigned char source = ctx->threshold_source[o][t][k];
        if (source != XPAR__SRC_PROFILE && source != XPAR__SRC_API) continue;
        size_t v = ctx->thresholds[o][t][k];
        /* What it overrides, and where that was measured (thresholds.c's
         * data), as a comment: a reader of the file sees both sides. */
        char from[256];
        size_t dflt;
        xpar__provenance_format(
            xpar__threshold_default_from((xpar_op)o, (xpar_dtype)t, (xpar_threshold)k, &dflt),
            from, sizeof from);
        if (dflt == XPAR_NEVER)
          fprintf(f, "# built-in default never, measured %s\n", from);
        else
          fprintf(f, "# built-in default %zu, measured %s\n", dflt, from);
        fprintf(f, "%s %s %s ", xpar__op_name((xpar_op)o), xpar__dtype_name((xpar_dtype)t),
                xpar__threshold_key((xpar_threshold)k));
        print_count(f, v);
      }
  save_split(ctx, f);
  save_kernels(ctx, f);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    unlink(tmp);
    return xpar__fail(XPAR_ERR_IO, "%s: write error", tmp);
  }
  if (rename(tmp, path) != 0) {
    xpar_status st = xpar__fail(XPAR_ERR_IO, "%s: cannot rename to %s: %s", tmp, path,
                                strerror(errno));
    unlink(tmp);
    return st;
  }
  return XPAR_OK;
}
