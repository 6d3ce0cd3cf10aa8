/*
 * The state dispatch keeps per context -- struct xpar_context: policy
 * (backend, offload, thresholds), the GPU state it owns, its mappings and
 * pointer cache, and the record of its last decision -- and the functions of
 * dispatch/'s modules that read and write it.  Only dispatch/ and api/ see
 * this struct; api/ includes it, dispatch never includes anything of api/.
 */
#ifndef XPAR_DISPATCH_STATE_H
#define XPAR_DISPATCH_STATE_H

#include <stdatomic.h>

#include "adapt.h"
#include "base/backend.h"
#include "page_cache.h"

/* Which copies of a mapped array hold its current contents. */
enum { XPAR__VALID_HOST = 1, XPAR__VALID_DEVICE = 2, XPAR__VALID_BOTH = 3 };

typedef struct xpar__mapping {
  unsigned char *host;
  unsigned char *device;
  size_t bytes;
  int valid; /* XPAR__VALID_* */
} xpar__mapping;

/* Why a tier was chosen: the raw facts.  Turned into text only when someone
 * asks (xpar_last_decision, verbose logging), so the hot path formats nothing. */
typedef enum xpar__gpu_rule {
  XPAR__GPU_NOT_CONSIDERED = 0, /* forced CPU backend                        */
  XPAR__GPU_BELOW,              /* n below the GPU threshold                 */
  XPAR__GPU_AT_OR_ABOVE,        /* n at or above it: GPU                     */
  XPAR__GPU_WANTED_UNUSABLE,    /* would go to the GPU, but it is not usable */
  XPAR__GPU_FORCED,             /* backend cuda / cuda-serial                */
  XPAR__GPU_FORCED_UNUSABLE,    /* forced, not usable, offload not mandatory */
  XPAR__GPU_MANDATORY,          /* offload mandatory                         */
  XPAR__GPU_DEVICE_ONLY,        /* data valid only on the device             */
  XPAR__GPU_DISABLED,           /* offload disabled                          */
  XPAR__GPU_FAILED_FALLBACK,    /* tried the GPU, it failed (e.g. OOM): CPU  */
  XPAR__GPU_NO_GPU_VARIANT,     /* a kernel built without CUDA: CPU          */
  XPAR__GPU_NO_CPU_VARIANT,     /* a kernel without a CPU variant: GPU       */
  XPAR__GPU_SPLIT,              /* AUTO: n at or above the split's `from`    */
  XPAR__GPU_SPLIT_FORCED,       /* backend cpu+cuda, a call the split covers */
  XPAR__GPU_SPLIT_NOT_COVERED   /* backend cpu+cuda, a call it does not cover
                                   (op, kernel or data on the device): GPU   */
} xpar__gpu_rule;

typedef enum xpar__cpu_rule {
  XPAR__CPU_NONE = 0,
  XPAR__CPU_BELOW_OPENMP,
  XPAR__CPU_AT_OR_ABOVE_OPENMP,
  XPAR__CPU_FORCED_SERIAL
} xpar__cpu_rule;

/* Where a threshold's value came from (shown in decision records). */
typedef enum xpar__source {
  XPAR__SRC_DEFAULT = 0,
  XPAR__SRC_PROFILE,
  XPAR__SRC_ENV,
  XPAR__SRC_API
} xpar__source;

/* Shadow mode's outcome for one call (shadow.c). */
typedef enum xpar__shadow_state {
  XPAR__SHADOW_OFF = 0,
  XPAR__SHADOW_MATCH,    /* both tiers agree (bitwise, or within the bound) */
  XPAR__SHADOW_MISMATCH, /* they differ: shadow_detail says where           */
  XPAR__SHADOW_NOT_RUN   /* the shadow tier could not run: shadow_detail    */
} xpar__shadow_state;

/* What adaptation (adapt.h) did to a call's tier, for its record. */
typedef enum xpar__adapt_note {
  XPAR__ADAPT_NOTE_NONE = 0, /* the thresholds' choice ran                        */
  XPAR__ADAPT_NOTE_ADAPTED,  /* the alternative ran: the static tier measured slow */
  XPAR__ADAPT_NOTE_RETRIED,  /* adapted, and the displaced tier ran once again    */
  XPAR__ADAPT_NOTE_TIMED     /* the alternative ran once, timed for comparison    */
} xpar__adapt_note;

typedef struct xpar__decision_raw {
  xpar_op op;
  xpar_dtype dtype;
  size_t n;
  xpar_tier tier;
  xpar__gpu_rule gpu_rule;
  xpar_threshold gpu_kind;
  size_t gpu_threshold;
  xpar__source gpu_source;
  xpar__cpu_rule cpu_rule;
  size_t openmp_threshold;
  xpar__source openmp_source;
  int host_kind_hint; /* the host operands' pinned/pageable kind was not asked:
                         n is below the GPU thresholds of both (page_cache.h) */
  size_t bytes_to_device;
  size_t bytes_to_host;
  const char *why; /* static text or ctx->fallback_why; may be NULL */
  /* A kernel launch (dispatch/kernel.c): its name, and where the kernel
   * defaults it quotes came from; NULL for the built-in ops. */
  const char *kernel;
  const struct xpar__provenance *kernel_from;
  int reproducible;         /* the context's reproducible mode was on        */
  xpar_tier shadow_tier;    /* shadow mode: the second tier (NONE: off)      */
  xpar__shadow_state shadow_state;
  const char *shadow_detail; /* ctx->shadow_detail: what differed, or why not run */
  /* Adaptation: the site's two tiers and their estimates when the call ran. */
  xpar__adapt_note adapt_note;
  xpar_tier adapt_static, adapt_alt;
  float adapt_static_ns, adapt_alt_ns;
  /* The split tier (split.c): the settings quoted and the share the GPU ran. */
  xpar_split_memory split_memory;
  size_t split_from;
  float split_share_set;  /* the setting (0: not quoted) */
  xpar__source split_from_source, split_share_source;
  double split_gpu_share; /* what ran: the GPU's elements over n */
  int split_tree;         /* reproducible mode: split where the block tree halves */
} xpar__decision_raw;

/* The host fast path's memory of one op's last call on the CPU (dispatch.c,
 * repeat_of): the same arguments, under the same settings and page-cache
 * contents, with the arrays' mappings in the same state and its pinned
 * arrays still pinned, are classified and decided the same way, so a call
 * that repeats them runs at once with this record.  A pinned array's kind is
 * still asked of the driver on every call (page_cache.h says why). */
typedef struct xpar__repeat {
  unsigned long settings_generation; /* the context's then (0: empty)       */
  unsigned long page_generation;     /* the page cache's then               */
  /* The call: its op is the entry's index. */
  xpar_dtype dtype;
  xpar_reduction red;
  xpar_scan_kind kind;
  int wide, has_init;
  size_t n;
  const void *x, *y, *out, *result;
  const void *scalar;     /* axpy's alpha, fill's value: checked host memory then */
  unsigned pinned;        /* bit i: array i (x, y, out; 3: result) is pinned memory */
  int has_maps;           /* some array lies in a mapping:               */
  xpar__mapping *maps[3]; /* x's, y's and out's mapping (NULL: none)     */
  int map_valid[3];       /* and which of its copies were valid          */
  xpar_tier tier;
  xpar__exec ex;
  xpar__decision_raw record; /* tier NONE: a failed run leaves it so */
  /* The call's adaptation site (adapt.h) when AUTO may move it, else NULL: a
   * repeat counts the site's calls down and, at a timed one, asks the site
   * again (dispatch.c, xpar__run_repeat_timed). */
  xpar__adapt_site *site;
} xpar__repeat;

/* One kernel's (or operator's) thresholds in one context (dispatch/kernel.c),
 * made when the context first meets it. */
typedef struct xpar__kernel_entry {
  const void *key;  /* the xpar_kernel or xpar_operator object */
  const char *name; /* the object's (static) name */
  size_t thresholds[XPAR_THRESHOLD_COUNT_];
  unsigned char sources[XPAR_THRESHOLD_COUNT_];
  xpar__adapt_site *adapt; /* its adaptation sites (adapt.h), made on first use */
} xpar__kernel_entry;

/* A kernel's thresholds from the loaded profiles ("kernel <name> <kind> <n>"
 * lines), by name: applied to the kernel's entry when the context meets it,
 * and written back by xpar_profile_save.  Each value says where it stands
 * against the environment then: a profile loaded at creation lies below
 * XPAR_KERNEL_<NAME>_<KIND>_THRESHOLD, one loaded with xpar_profile_load()
 * afterwards replaces whatever set the value (xpar.h). */
enum { XPAR__PROFILE_NOT_NAMED = 0, XPAR__PROFILE_BELOW_ENV = 1, XPAR__PROFILE_OVER_ENV = 2 };
typedef struct xpar__profile_kernel {
  char *name; /* malloc'd: any length */
  size_t thresholds[XPAR_THRESHOLD_COUNT_];
  unsigned char have[XPAR_THRESHOLD_COUNT_]; /* XPAR__PROFILE_* */
} xpar__profile_kernel;

struct xpar_context {
  atomic_int busy; /* best-effort detection of concurrent use */
  xpar_backend backend;
  xpar_offload offload;
  int verbose;
  int num_threads;
  int reproducible;      /* docs/reproducible.md: XPAR_REPRODUCIBLE, the API */
  int adapt;             /* AUTO corrects its choice (adapt.h): XPAR_ADAPT, the API */
  xpar_tier shadow_tier; /* XPAR_SHADOW: the second tier of every call; NONE = off */
  int shadow_fail;       /* XPAR_SHADOW_FAIL: a mismatch returns XPAR_ERR_SHADOW_MISMATCH */
  int device; /* -1: the default device */
  unsigned launch_grid, launch_block;
  size_t thresholds[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_];
  unsigned char threshold_source[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_];
  /* The split tier's settings (xpar_context_set_split) and where each came
   * from (xpar__source): ops without a split keep XPAR_NEVER. */
  size_t split_from[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_SPLIT_MEMORY_COUNT_];
  float split_share[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_SPLIT_MEMORY_COUNT_];
  unsigned char split_from_source[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_SPLIT_MEMORY_COUNT_];
  unsigned char split_share_source[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_SPLIT_MEMORY_COUNT_];

  /* GPU: probed lazily, on the first call that needs to know. */
  int gpu_known;           /* 0 = not probed yet */
  int gpu_usable;
  int gpu_count;           /* devices visible (the probe's); > 1: device memory's
                              device is checked (residency.c) */
  const char *gpu_why_not; /* NULL, a static text, or gpu_reason */
  char gpu_reason[192];
  struct xpar__cuda_state *cuda;
  void *user_stream;
  int gpu_pending; /* nowait work may be queued */
  /* Set and counted by the test hooks only (XPAR_TEST_HOOKS, dispatch.c); in
   * libxpar they stay 0.  Declared in every build: one layout for all objects. */
  int fast_path_off; /* every call takes the general path, to compare the two */
  unsigned long fast_path_calls; /* calls the host fast path ran */
  /* Bumped by every public call on the context other than the operations
   * (api.h's door): a setting, a threshold, a mapping or the device may have
   * changed, and the repeats below no longer stand.  Starts at 1. */
  unsigned long settings_generation;
  xpar__repeat repeats[XPAR_OP_COUNT_];
  unsigned long repeat_calls; /* calls run from a repeat (test hooks only) */
  /* Adaptation's sites per op and dtype (adapt.h), each row made when a call
   * of it first may move; freed with the context. */
  xpar__adapt_site *adapt_rows[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_];
  /* Set by the test hooks only (dispatch.c): timed calls take their time from
   * adapt_fake_ns[tier] and the clock from adapt_fake_clock_ns, and the
   * machine's room (adapt.h) from adapt_fake_room. */
  int adapt_fake, adapt_fake_room;
  double adapt_fake_ns[XPAR_TIER_COUNT_];
  uint64_t adapt_fake_clock_ns;

  xpar__mapping *maps;
  size_t n_maps, cap_maps;
  xpar__page_cache page_cache; /* host-page classifications (page_cache.h) */

  /* Host copies of device-only operands when a call runs on the CPU:
   * pinned (the GPU backend's host_alloc) or, failing that, malloc'd. */
  void *host_staging[XPAR__OPERAND_SLOTS];
  size_t host_staging_bytes[XPAR__OPERAND_SLOTS];
  unsigned char host_staging_pinned[XPAR__OPERAND_SLOTS];
  /* The CPU backend's working memory (a sort's second buffers): kept between
   * calls, freed by xpar_context_release_memory. */
  xpar__host_scratch host_scratch;

  xpar__kernel_entry *kernels; /* dispatch/kernel.c */
  size_t n_kernels, cap_kernels;
  xpar__profile_kernel *profile_kernels; /* the loaded profile's, dispatch/profile.c */
  size_t n_profile_kernels;

  xpar__decision_raw last;
  int calls_run; /* ctx->last describes a call (run, refused or failed): decision text */
  char fallback_why[192];
  char shadow_detail[256];
};

/* ---- context.c: the context's lifetime, and settings that reach the GPU ---
 * The top of dispatch/: creating, moving and freeing a context calls on every
 * module below (env, profile, gpu, residency, kernel); none of them calls back. */
/** A new context: defaults, then the environment and the profile (in that
 *  precedence); NULL in *out on failure. */
xpar_status xpar__context_new(xpar_context **out);
/** Wait for queued work, release mappings and GPU state, free the context. */
xpar_status xpar__context_free(xpar_context *ctx);
/** Move the context to another device (no mappings allowed). */
xpar_status xpar__context_set_device(xpar_context *ctx, int device);
/** Run GPU work on the application's stream (NULL: the context's own). */
xpar_status xpar__context_set_stream(xpar_context *ctx, void *cuda_stream);
/** Free the cached GPU and host staging memory. */
xpar_status xpar__context_release_memory(xpar_context *ctx);
/** The public decision record of the last call. */
void xpar__context_last_decision(const xpar_context *ctx, xpar_decision *out);
/* The record of a call its argument checks refused: that call's op, dtype, n
 * (and kernel or operator name, NULL for the built-in ops), tier NONE, read
 * back as "the last call failed before running". */
void xpar__context_record_refused(xpar_context *ctx, xpar_op op, xpar_dtype dtype, size_t n,
                                  const char *kernel);

/* ---- thresholds.c --------------------------------------------------------- */
/** Where a threshold value was measured, kept as data beside the value: the
 *  machine, the date (UTC, ISO 8601) and the command that measures it again.
 *  Profiles carry theirs in the `written:` line. */
/* The machine most defaults were measured on: one H100 80GB HBM3 with a 16-core
 * Intel Xeon host. */
#define XPAR__H100_HOST "H100 host"
typedef struct xpar__provenance {
  const char *machine; /* "H100 host" */
  const char *date;    /* "2026-11-25" */
  const char *run;     /* the command that re-measures it; a saved profile's comments quote it */
  const char *brief;   /* NULL, or the few words a decision record quotes instead of
                          machine and date (a kernel's defaults: measured for no kernel) */
} xpar__provenance;
/** Fill the built-in defaults. */
void xpar__thresholds_default(size_t t[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_]);
/** The provenance of a built-in default (valid keys only), and its value in
 *  *value unless NULL.  Read by decision records and the profile writer. */
const xpar__provenance *xpar__threshold_default_from(xpar_op op, xpar_dtype dtype,
                                                     xpar_threshold k, size_t *value);
/** "<date>, <machine>, <run>", as snprintf. */
int xpar__provenance_format(const xpar__provenance *p, char *buf, size_t size);
/** Whether op has a split: reduce, scan, axpy, add, fill, dot (the first six ops
 *  of XPAR_OP_MAP), the histogram and the segmented ops.  Inline: the host fast path asks it on
 *  every call. */
static inline int xpar__op_splits(xpar_op op) {
  return (unsigned)op <= XPAR_OP_DOT || op == XPAR_OP_HISTOGRAM || op == XPAR_OP_SEGMENTED;
}
/** The split's built-in settings for every op, dtype and memory (thresholds.c). */
void xpar__split_default(xpar_context *ctx);
/** Where a built-in split setting was measured. */
const xpar__provenance *xpar__split_default_from(xpar_op op, xpar_dtype dtype,
                                                 xpar_split_memory m);

/* ---- kernel.c: kernels' thresholds per context ------------------------------ */
/** The context's entry for `k`, made (defaults, then the environment) on
 *  first use; XPAR_ERR_INVALID_ENV or XPAR_ERR_OUT_OF_MEMORY. */
xpar_status xpar__kernel_entry_of(xpar_context *ctx, const void *key, const char *name,
                                  xpar__kernel_entry **out);
/** Where the built-in kernel defaults were measured (decision records). */
const xpar__provenance *xpar__kernel_default_from(void);
void xpar__kernels_release(xpar_context *ctx);

/* ---- env.c ---------------------------------------------------------------- */
/** Apply the environment to a fresh context (XPAR_ERR_INVALID_ENV on a bad
 *  value) in two steps around the profile: the policy (backend, offload,
 *  device, verbose) first, since the profile's machine check depends on it;
 *  the thresholds and the split's settings last, since they override the
 *  profile's. */
xpar_status xpar__env_apply_policy(xpar_context *ctx);
xpar_status xpar__env_apply_thresholds(xpar_context *ctx);
/** Parse a threshold value: decimal, 2^k, or "never". 0 on success. */
int xpar__parse_count(const char *s, size_t *out);
/** The largest device ordinal XPAR_DEVICE accepts. */
#define XPAR__MAX_DEVICE_ORDINAL 1024
/** Parse a device ordinal (XPAR_DEVICE): decimal digits only, at most
 *  XPAR__MAX_DEVICE_ORDINAL -- an ordinal is not a count, so neither 2^k nor
 *  "never".  0 on success; *out untouched otherwise. */
int xpar__parse_ordinal(const char *s, int *out);

/* ---- residency.c ---------------------------------------------------------- */
/* p is the driver's memory (pinned, device, managed): its allocation joins the
 * page cache's driver ranges (page_cache.h), where no pageable page is cached. */
void xpar__note_driver_memory(xpar_context *ctx, const void *p);
typedef enum xpar__loc {
  XPAR__LOC_HOST_PAGEABLE = 0,
  XPAR__LOC_HOST_PINNED,
  XPAR__LOC_MAPPED,  /* see .map */
  XPAR__LOC_DEVICE,
  XPAR__LOC_MANAGED
} xpar__loc;

typedef struct xpar__operand {
  const void *ptr;
  size_t bytes;
  xpar__loc loc;
  xpar__mapping *map; /* LOC_MAPPED only */
  int kind_hinted;    /* host pageable by the page cache's word, not asked */
} xpar__operand;

/** The mapping of ctx that holds [ptr, +bytes): 1 and *out when one does,
 *  0 (*out NULL) when the range is clear of every mapping, -1 (*out the
 *  mapping) when it straddles a mapping's edge, which no single valid copy
 *  can serve (xpar__classify refuses it). */
int xpar__mapping_holding(const xpar_context *ctx, const void *ptr, size_t bytes,
                          xpar__mapping **out);
/** 1 when ctx's calls classify [p, +bytes) as device memory (*w the operand);
 *  -1 when it is device memory they refuse (another device's, which ctx's
 *  cannot access: XPAR_ERR_INVALID_ARGUMENT, the detail set); 0 otherwise, a
 *  pointer the driver cannot classify included (taken for host memory: its
 *  error cleared).  A synchronous result's and an input scalar's question. */
int xpar__classified_device(xpar_context *ctx, const void *p, size_t bytes,
                            xpar__operand *w);
/** A scalar the call reads on the host (axpy's alpha, fill's value, a scan's
 *  init: `name` in the detail): XPAR_ERR_INVALID_ARGUMENT when it is device
 *  memory (xpar__classified_device), which the host read would fault on. */
xpar_status xpar__check_host_scalar(xpar_context *ctx, const char *name, const void *p,
                                    size_t size);
/** How xpar__classify may use the page cache (page_cache.h). */
enum {
  XPAR__CLASSIFY_CACHED = 0, /* a cached pageable page is taken (may be stale:
                                page_cache.h says when that is fine) */
  XPAR__CLASSIFY_EXACT = 1,  /* the runtime is asked even for a cached page */
  XPAR__CLASSIFY_QUERY = 2   /* asked, and nothing stored: xpar_memory_query,
                                which must not end the context's repeats */
};
/** Classify ptr (an array of `bytes`) for ctx; `mode` an XPAR__CLASSIFY_*. */
xpar_status xpar__classify(xpar_context *ctx, const void *ptr, size_t bytes, int mode,
                           xpar__operand *out);
/** Make the host (or device) copy of a mapping valid, copying if needed;
 *  adds the bytes moved to *moved. */
xpar_status xpar__mapping_sync_host(xpar_context *ctx, xpar__mapping *m, size_t *moved);
xpar_status xpar__mapping_sync_device(xpar_context *ctx, xpar__mapping *m, size_t *moved);
void xpar__mappings_release_all(xpar_context *ctx);
/** The mapping operations behind xpar_map, xpar_update, xpar_unmap and
 *  xpar_mapped_device_ptr (api/ has checked the arguments themselves). */
xpar_status xpar__mapping_add(xpar_context *ctx, void *host, size_t bytes, xpar_map_kind kind);
xpar_status xpar__mapping_update(xpar_context *ctx, void *host, xpar_update_dir dir);
xpar_status xpar__mapping_remove(xpar_context *ctx, void *host, xpar_unmap_kind kind);
xpar_status xpar__mapping_device_ptr(xpar_context *ctx, const void *host, void **out);
/** Free host staging slot `slot` (pinned or malloc'd); empty afterwards. */
void xpar__host_staging_free(xpar_context *ctx, int slot);
/** Host staging buffer `slot` of the context, at least `bytes` (residency.c):
 *  pinned where the GPU backend can allocate it, else malloc'd; kept and grown. */
xpar_status xpar__host_staging(xpar_context *ctx, int slot, size_t bytes, void **out);

/* ---- profile.c ------------------------------------------------------------ */
/** Load the profile named by XPAR_PROFILE or at the default path, if any. */
xpar_status xpar__profile_load_default(xpar_context *ctx);
/** The default profile path ($XDG_CACHE_HOME/xpar/profile.txt, ...). */
xpar_status xpar__profile_default_path(char *buf, size_t size);
/** Load `path` into ctx; *applied: 0 when written on another machine.
 *  over_env: xpar_profile_load() (its kernel values replace the environment's
 *  when a kernel is met later), else the profile of context creation. */
xpar_status xpar__profile_load(xpar_context *ctx, const char *path, int over_env, int *applied);
/** Write ctx's profile and API thresholds to `path` (atomically). */
xpar_status xpar__profile_save(xpar_context *ctx, const char *path);
/** Free a loaded profile's kernel list (names included). */
void xpar__profile_kernels_free(xpar__profile_kernel *list, size_t count);
/** Apply a profile's thresholds of kernel `name` (if any) in list[0..count) to
 *  entry e: those of precedence `level` (XPAR__PROFILE_*), or all named ones for
 *  XPAR__PROFILE_NOT_NAMED. */
void xpar__profile_apply_kernel(const xpar__profile_kernel *list, size_t count, const char *name,
                                int level, xpar__kernel_entry *e);

/* ---- decision.c ----------------------------------------------------------- */
/** Format a decision's reason ("n=1000 below openmp threshold 16384"). */
void xpar__decision_format(const xpar__decision_raw *d, char *buf, size_t size);
/** Print the decision to stderr ("xpar: reduce int32 n=1000 -> cpu-serial: ..."). */
void xpar__decision_log(const xpar__decision_raw *d);

#endif /* XPAR_DISPATCH_STATE_H */
