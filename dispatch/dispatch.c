/*
 * The one place backends are called from.  For each call: classify where
 * each operand's valid copy lives, decide the tier (policy below), stage
 * operands the chosen side cannot reach, run, mark which copies are now
 * valid, and keep the raw decision record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "policy.h"
#include "split.h"
#include "trace.h"

enum { ROLE_READ = 1, ROLE_WRITE = 2 };

typedef struct operand {
  xpar__operand where;
  int role;
} operand;

typedef struct plan {
  operand ops[XPAR__OPERAND_SLOTS];
  int count;
  operand result;   /* nowait reduce/dot: where the scalar result goes */
  int has_result_operand;
  /* A synchronous result written into a mapped array's host copy: that copy
   * is brought up to date first and is the only valid one afterwards. */
  xpar__mapping *host_result_map;
  int exact; /* host pages' pinned/pageable kind asked of the runtime, not
                taken from the page cache (page_cache.h) */
} plan;

/* ---- operands ------------------------------------------------------------- */

static int classify_mode(const plan *p) {
  return p->exact ? XPAR__CLASSIFY_EXACT : XPAR__CLASSIFY_CACHED;
}

static xpar_status add_operand(xpar_context *ctx, plan *p, const void *ptr, size_t bytes, int role) {
  for (int i = 0; i < p->count; i++)
    if (p->ops[i].where.ptr == ptr) { /* exact aliasing: one operand, both roles */
      p->ops[i].role |= role;
      return XPAR_OK;
    }
  operand *o = &p->ops[p->count++];
  o->role = role;
  if (bytes == 0) { /* n = 0: the pointer may be NULL and is never touched */
    o->where.ptr = ptr;
    o->where.bytes = 0;
    o->where.loc = XPAR__LOC_HOST_PAGEABLE;
    o->where.map = NULL;
    o->where.kind_hinted = 0;
    return XPAR_OK;
  }
  return xpar__classify(ctx, ptr, bytes, classify_mode(p), &o->where);
}

/* The call's thresholds and their sources: the op's for its dtype, or the
 * kernel's (dispatch/kernel.c). */
static const size_t *call_thresholds(const xpar_context *ctx, const xpar__call *c) {
  return c->kernel ? c->kernel->entry->thresholds : ctx->thresholds[c->op][c->dtype];
}
static const unsigned char *call_sources(const xpar_context *ctx, const xpar__call *c) {
  return c->kernel ? c->kernel->entry->sources : ctx->threshold_source[c->op][c->dtype];
}

/* Below this n, AUTO runs a call on host data on the CPU whatever kind of host
 * memory it is: the GPU thresholds for host data and, for the ops the split
 * covers, the split's `from`. */
static inline size_t host_limit(const xpar_context *ctx, const xpar__call *c,
                                const size_t *thresholds) {
  size_t t = xpar__host_gpu_threshold(thresholds);
  if (!c->kernel && xpar__op_splits(c->op)) {
    const size_t *from = ctx->split_from[c->op][c->dtype];
    if (from[XPAR_SPLIT_PINNED] < t) t = from[XPAR_SPLIT_PINNED];
    if (from[XPAR_SPLIT_PAGEABLE] < t) t = from[XPAR_SPLIT_PAGEABLE];
  }
  return t;
}

/* A kernel's arrays, each with its own size and role (scalars travel by
 * value in the kernel call and are no operands). */
static xpar_status add_kernel_operands(xpar_context *ctx, const xpar__kernel_call *k, plan *p) {
  for (int j = 0; j < k->nargs; j++) {
    const xpar_arg *a = &k->args[j];
    if (a->role == XPAR_ARG_SCALAR) continue;
    int role = (a->role & XPAR_ARG_READ ? ROLE_READ : 0) | (a->role & XPAR_ARG_WRITE ? ROLE_WRITE : 0);
    XPAR__FORWARD(add_operand(ctx, p, a->ptr, k->bytes[j], role));
  }
  return XPAR_OK;
}

/* A reduce's or dot's scalar result as the call's operand.  A nowait call's always
 * (wherever the device can write it).  A synchronous call's only when it lies outside
 * every mapping in device memory (the GPU tier writes it there and waits; the CPU tier
 * copies it there), aligned to its type as a nowait call's must be (a kernel's misaligned
 * store would leave the CUDA context unusable); host and managed memory stay what the
 * call writes directly, and so does a result the driver cannot classify (as before
 * results were classified: a host-only call does not fail for it). */
static xpar_status add_result(xpar_context *ctx, const xpar__call *c, plan *p, void *result,
                              size_t bytes, size_t align) {
  xpar__operand w;
  if (c->nowait) {
    XPAR__FORWARD(xpar__classify(ctx, result, bytes, classify_mode(p), &w));
  } else {
    /* A result inside a mapping (p->host_result_map) is classified MAPPED, and
     * with offload disabled every pointer is host memory: neither is device. */
    const int device = xpar__classified_device(ctx, result, bytes, &w);
    if (device < 0) return XPAR_ERR_INVALID_ARGUMENT;
    if (!device) return XPAR_OK;
    XPAR__RETURN_IF((uintptr_t)result % align != 0, XPAR_ERR_INVALID_ARGUMENT,
                    "result (%p) is device memory not aligned to its %zu-byte type", result,
                    align);
  }
  p->result.where = w;
  p->result.role = ROLE_WRITE;
  p->has_result_operand = 1;
  return XPAR_OK;
}

/* The size of a kernel call's result: an operator's accumulator, a predicate's
 * count; 0 for a launch. */
static size_t kernel_result_bytes(const xpar__kernel_call *k) {
  if (k->kind == XPAR__KERNEL_REDUCE) return k->op->acc_size;
  if (k->kind == XPAR__KERNEL_SELECT) return sizeof(uint64_t);
  return 0;
}

static xpar_status build_plan(xpar_context *ctx, const xpar__call *c, plan *p) {
  const size_t bytes = c->bytes;
  p->count = 0;
  p->has_result_operand = 0;
  p->host_result_map = NULL;
  /* A synchronous reduce's result is host memory the call writes: when it
   * lies inside a mapping, that mapping's host copy changes. */
  void *const sync_result = c->nowait ? NULL : c->kernel ? c->kernel->result : c->result;
  if (sync_result && ctx->n_maps) {
    const size_t rb = c->kernel ? kernel_result_bytes(c->kernel) : xpar__dtype_size(c->result_dtype);
    XPAR__RETURN_IF(xpar__mapping_holding(ctx, sync_result, rb, &p->host_result_map) < 0,
                    XPAR_ERR_INVALID_ARGUMENT,
                    "result (%p, %zu bytes) straddles the edge of a mapping", sync_result, rb);
  }
  /* Only AUTO's choice between the CPU and the GPU depends on whether host
   * memory is pinned (forced tiers and mandatory offload go where they are
   * told; the copy routines check pinning themselves). */
  p->exact = (ctx->backend == XPAR_BACKEND_AUTO && ctx->offload == XPAR_OFFLOAD_DEFAULT &&
              c->n >= host_limit(ctx, c, call_thresholds(ctx, c))) ||
             ctx->backend == XPAR_BACKEND_CPU_CUDA; /* the split stages pageable arrays */
  if (c->kernel) {
    XPAR__FORWARD(add_kernel_operands(ctx, c->kernel, p));
    /* An operator's reduce: its accumulator result. */
    if (c->kernel->kind == XPAR__KERNEL_REDUCE)
      XPAR__FORWARD(add_result(ctx, c, p, c->kernel->result, c->kernel->op->acc_size,
                               c->kernel->op->acc_align));
    /* A predicate's count. */
    if (c->kernel->kind == XPAR__KERNEL_SELECT)
      XPAR__FORWARD(add_result(ctx, c, p, c->kernel->result, sizeof(uint64_t), sizeof(uint64_t)));
    return XPAR_OK;
  }
  /* Argmin / argmax and the segmented ops: out and out2 have sizes of their
   * own (the values, the indices); the offsets (y) are read. */
  if (c->op == XPAR_OP_ARGREDUCE || c->op == XPAR_OP_SEGMENTED) {
    if (c->x) XPAR__FORWARD(add_operand(ctx, p, c->x, bytes, ROLE_READ));
    if (c->y) XPAR__FORWARD(add_operand(ctx, p, c->y, c->bytes2, ROLE_READ));
    /* A scan writes out only inside the segments: the rest comes back as it was.
     * With offsets, the outputs are read too: bad offsets (found by the backend,
     * on the GPU by a kernel) leave them unwritten, and a staged copy must then
     * bring back what was there. */
    const int out_role =
        c->seg_kind == XPAR__SEG_SCAN || c->y ? ROLE_READ | ROLE_WRITE : ROLE_WRITE;
    if (c->out) XPAR__FORWARD(add_operand(ctx, p, c->out, c->out_bytes, out_role));
    if (c->out2)
      XPAR__FORWARD(add_operand(ctx, p, c->out2, c->out2_bytes,
                                c->y ? ROLE_READ | ROLE_WRITE : ROLE_WRITE));
    return XPAR_OK;
  }
  /* y and out2 have bytes2 bytes (a sort's values, a compaction's flags);
   * in place, an input and its output are one operand with both roles. */
  if (c->x) XPAR__FORWARD(add_operand(ctx, p, c->x, bytes, ROLE_READ));
  if (c->y) XPAR__FORWARD(add_operand(ctx, p, c->y, c->bytes2, ROLE_READ));
  /* axpy reads its y; a compaction writes out only up to its count, so the
   * rest must come back as it was: out is read too (a partition writes all). */
  const int out_read = c->op == XPAR_OP_AXPY || c->op == XPAR_OP_RUNS ||
                       (c->op == XPAR_OP_SELECT && c->select_kind != XPAR__PARTITION);
  if (c->out)
    XPAR__FORWARD(add_operand(ctx, p, c->out, bytes, out_read ? ROLE_READ | ROLE_WRITE : ROLE_WRITE));
  /* runs write out and out2 only up to the number of runs: both are read too */
  const int out2_read = c->op == XPAR_OP_RUNS;
  if (c->out2)
    XPAR__FORWARD(add_operand(ctx, p, c->out2, c->bytes2,
                              out2_read ? ROLE_READ | ROLE_WRITE : ROLE_WRITE));
  if (c->result) {
    const size_t rb = xpar__dtype_size(c->result_dtype);
    XPAR__FORWARD(add_result(ctx, c, p, c->result, rb, rb));
  }
  return XPAR_OK;
}

static int on_device_only(const xpar__operand *w) {
  return w->loc == XPAR__LOC_DEVICE ||
         (w->loc == XPAR__LOC_MAPPED && w->map->valid == XPAR__VALID_DEVICE);
}

/* Whether the operand's current contents matter: inputs, and outputs that
 * cover only part of their mapping (the rest must stay valid).  An output
 * that covers its whole mapping is simply overwritten, wherever it runs. */
static int needs_contents(const operand *o) {
  if (o->role & ROLE_READ) return 1;
  const xpar__operand *w = &o->where;
  return w->loc == XPAR__LOC_MAPPED &&
         !((const unsigned char *)w->ptr == w->map->host && w->bytes == w->map->bytes);
}

/* The CPU backend's settings for a CPU tier.  Below the OpenMP threshold the
 * call runs on one thread, with the parallel tier's vectorised kernels; only
 * the serial backends (debug modes) promise strict element order. */
static xpar__exec cpu_exec(xpar_context *ctx, xpar_tier tier) {
  xpar__exec ex = {
      .serial = ctx->backend == XPAR_BACKEND_CPU_SERIAL ||
                ctx->backend == XPAR_BACKEND_CUDA_SERIAL,
      .num_threads = tier == XPAR_TIER_CPU_SERIAL ? 1 : ctx->num_threads,
      .reproducible = ctx->reproducible,
      .host_scratch = &ctx->host_scratch};
  return ex;
}

static int is_host_memory(xpar__loc loc);

/* ---- policy: the facts for xpar__decide (policy.h) ------------------------- */

static int context_gpu_usable(void *ctx, const char **why_not) {
  return xpar__gpu_usable((xpar_context *)ctx, why_not);
}

/* The facts of a call before its operands are classified (each path adds
 * those), built in place: the host fast path calls it too, and a 128-element
 * call's whole cost is that path (a struct built and copied cost ~20 of its
 * ~550 instructions). */
static inline void call_facts(xpar__policy_facts *f, xpar_context *ctx, const xpar__call *c,
                              const size_t *thresholds, const unsigned char *sources) {
  *f = (xpar__policy_facts){.backend = ctx->backend,
                            .offload = ctx->offload,
                            .op = c->op,
                            .dtype = c->dtype,
                            .n = c->n,
                            .nowait = c->nowait,
                            .host = !c->n, /* nothing moves: priced as host data */
                            .pageable = !c->n,
                            .host_kind_exact = 1,
                            .thresholds = thresholds,
                            .sources = sources,
                            .gpu_usable = context_gpu_usable,
                            .gpu_usable_arg = ctx};
}

/* A kernel may lack one side in this build (built without CUDA, or a kernel
 * object without a CPU loop): a policy that demands the missing side fails
 * with a status naming it; AUTO takes the side that exists, and says so. */
static xpar_status decide_kernel(xpar_context *ctx, const xpar__kernel_call *k,
                                 const xpar__policy_facts *f, xpar__decision_raw *d,
                                 xpar_tier *tier) {
  const int forced_cpu = ctx->backend == XPAR_BACKEND_CPU || ctx->backend == XPAR_BACKEND_CPU_SERIAL;
  const char *what = k->kind == XPAR__KERNEL_LAUNCH   ? "kernel"
                     : k->kind == XPAR__KERNEL_SELECT ? "predicate"
                                                      : "operator";
  if (!k->has_gpu) {
    XPAR__RETURN_IF(ctx->offload == XPAR_OFFLOAD_MANDATORY, XPAR_ERR_NOT_SUPPORTED,
                    "%s %s has no GPU variant in this build (its source was not compiled "
                    "by nvcc), and offload is mandatory",
                    what, k->name);
    XPAR__RETURN_IF(ctx->backend == XPAR_BACKEND_CUDA || ctx->backend == XPAR_BACKEND_CUDA_SERIAL ||
                        ctx->backend == XPAR_BACKEND_CPU_CUDA,
                    XPAR_ERR_NOT_SUPPORTED,
                    "%s %s has no GPU variant in this build (its source was not compiled "
                    "by nvcc), and the backend is %s",
                    what, k->name, xpar__backend_name(ctx->backend));
    d->gpu_rule = forced_cpu || ctx->offload == XPAR_OFFLOAD_DISABLED ? XPAR__GPU_NOT_CONSIDERED
                                                                       : XPAR__GPU_NO_GPU_VARIANT;
    *tier = xpar__policy_cpu_tier(f, d);
    return XPAR_OK;
  }
  if (!k->has_cpu) {
    XPAR__RETURN_IF(forced_cpu || ctx->offload == XPAR_OFFLOAD_DISABLED, XPAR_ERR_NOT_SUPPORTED,
                    "%s %s has no CPU variant, and the %s", what, k->name,
                    forced_cpu ? "backend is a CPU one" : "offload is disabled");
    const char *why = NULL;
    XPAR__RETURN_IF(!xpar__gpu_usable(ctx, &why), XPAR_ERR_NO_DEVICE,
                    "%s %s has no CPU variant, and the GPU is not usable: %s", what, k->name,
                    why ? why : "unknown");
    d->gpu_rule = XPAR__GPU_NO_CPU_VARIANT;
    *tier = xpar__policy_gpu_tier(f);
    return XPAR_OK;
  }
  return xpar__decide(f, d, tier);
}

/* A histogram's counts (out2: 8 bytes a bin) never cross PCIe in bulk -- the
 * GPU tier copies a few KiB back, the split sums both sides' counts from its
 * own pinned staging -- so their memory kind does not make the call pageable:
 * the samples' does. */
static inline int counts_operand(const xpar__call *c, const xpar__operand *w) {
  return c->op == XPAR_OP_HISTOGRAM && w->ptr == c->out2;
}

/* Decide the tier of a planned call, and where AUTO may move it (*alt,
 * adapt.h); XPAR_ERR_NO_DEVICE when offload is mandatory and the GPU is not
 * usable. */
static xpar_status decide(xpar_context *ctx, const xpar__call *c, const plan *p,
                          xpar__decision_raw *d, xpar_tier *tier, xpar__adapt_alt *alt) {
  xpar__policy_facts f;
  call_facts(&f, ctx, c, call_thresholds(ctx, c), call_sources(ctx, c));
  /* Without a usable GPU (or with offload disabled) every host array is
   * pageable by definition: nothing is a hint then.  Otherwise a host kind
   * is a hint where the page cache gave it, exact where the runtime was
   * asked (as the fast path records it). */
  f.host_kind_exact = 1;
  /* The split takes calls whose every array and result are host memory. */
  f.all_host = !p->host_result_map &&
               (!p->has_result_operand || is_host_memory(p->result.where.loc));
  if (!c->kernel && xpar__op_splits(c->op)) {
    f.split_from = ctx->split_from[c->op][c->dtype];
    f.split_from_source = ctx->split_from_source[c->op][c->dtype];
  }
  for (int i = 0; i < p->count; i++) {
    const xpar__operand *w = &p->ops[i].where;
    f.host_kind_exact &= !w->kind_hinted;
    f.all_host &= is_host_memory(w->loc) || !w->bytes;
    f.device_only |= on_device_only(w) && (w->loc == XPAR__LOC_DEVICE || needs_contents(&p->ops[i]));
    f.pageable |= w->loc == XPAR__LOC_HOST_PAGEABLE && w->bytes && !counts_operand(c, w);
    f.pinned |= w->loc == XPAR__LOC_HOST_PINNED;
    f.host |= (w->loc == XPAR__LOC_HOST_PAGEABLE || w->loc == XPAR__LOC_HOST_PINNED) && w->bytes;
    /* A mapped array whose device copy is stale costs the GPU a host-to-device
     * copy of the whole mapping: price it as host data (pageable: xpar does
     * not know how the application allocated it). */
    f.pageable |= w->loc == XPAR__LOC_MAPPED && w->map->valid == XPAR__VALID_HOST &&
                  needs_contents(&p->ops[i]);
  }
  XPAR__FORWARD(c->kernel ? decide_kernel(ctx, c->kernel, &f, d, tier) : xpar__decide(&f, d, tier));
  *alt = xpar__adapt_alternative(&f, d, *tier);
  return XPAR_OK;
}

/* ---- adaptation: AUTO corrects its choice (adapt.h) ------------------------- */

/* The site of a call AUTO may move from `chosen` to alt->tier, its row made
 * on first use; NULL when the row cannot be allocated (the call then runs as
 * decided: adaptation speeds calls up, it never fails one).  A site last used
 * for another pair of tiers (a threshold moved since) starts again. */
static xpar__adapt_site *adapt_site(xpar_context *ctx, const xpar__call *c, xpar_tier chosen,
                                    const xpar__adapt_alt *alt) {
  /* A kernel's entry is the context's (kernel.c); the call holds it const
   * because nothing else of the call may change it. */
  xpar__adapt_site **row = c->kernel ? &((xpar__kernel_entry *)c->kernel->entry)->adapt
                                     : &ctx->adapt_rows[c->op][c->dtype];
  if (!*row && !(*row = xpar__adapt_row_new())) return NULL;
  xpar__adapt_site *s = &(*row)[(int)alt->where * XPAR__ADAPT_BUCKETS + xpar__adapt_bucket(c->n)];
  if (s->static_tier != (unsigned char)chosen || s->alt_tier != (unsigned char)alt->tier)
    xpar__adapt_site_init(s, chosen, alt->tier, alt->prior_factor);
  return s;
}

/* A timed call: started at t0; probe when it times the tier not chosen now. */
typedef struct adapt_timing {
  int on, probe;
  uint64_t t0;
} adapt_timing;

static inline uint64_t adapt_clock(const xpar_context *ctx) {
#ifdef XPAR_TEST_HOOKS
  if (ctx->adapt_fake) return ctx->adapt_fake_clock_ns;
#endif
  (void)ctx;
  return xpar__adapt_now_ns();
}

/* The record's account of what adaptation did to this call. */
static void adapt_note(const xpar__adapt_site *s, int probe, xpar__decision_raw *d) {
  d->adapt_note = probe       ? (s->adapted ? XPAR__ADAPT_NOTE_RETRIED : XPAR__ADAPT_NOTE_TIMED)
                  : s->adapted ? XPAR__ADAPT_NOTE_ADAPTED
                               : XPAR__ADAPT_NOTE_NONE;
  d->adapt_static = (xpar_tier)s->static_tier;
  d->adapt_alt = (xpar_tier)s->alt_tier;
  d->adapt_static_ns = s->est[XPAR__ADAPT_STATIC].recent_ns;
  d->adapt_alt_ns = s->est[XPAR__ADAPT_ALT].recent_ns;
}

/* Whether the machine has room for site s's static tier now (adapt.h): -1
 * where it would not decide the call (not read), else 1 or 0.  Read before
 * the call's clock starts (a /proc read at most once a ms): it is not the
 * call's time. */
static int adapt_room(const xpar_context *ctx, const xpar__adapt_site *s) {
  if (!xpar__adapt_wants_room(s)) return -1;
#ifdef XPAR_TEST_HOOKS
  if (ctx->adapt_fake) return ctx->adapt_fake_room; /* the fake times' machine */
#endif
  const xpar__exec ex = {.num_threads = ctx->num_threads};
  return xpar__adapt_cpu_room(xpar__cpu_backend.team_size(&ex), adapt_clock(ctx));
}

/* A timed call of site s: the tier xpar__adapt_choose gives, the clock started. */
static xpar_tier adapt_timed(xpar_context *ctx, xpar__adapt_site *s, xpar__decision_raw *d,
                             adapt_timing *tm) {
  tm->on = 1;
  const int room = adapt_room(ctx, s);
  tm->t0 = adapt_clock(ctx);
  const xpar__adapt_choice ch = xpar__adapt_choose(s, tm->t0, room);
  tm->probe = ch.probe;
  adapt_note(s, ch.probe, d);
  return ch.tier;
}

/* Before a call of site s: the tier it runs -- the site's choice between
 * timed calls, which pay only the countdown. */
static xpar_tier adapt_before(xpar_context *ctx, xpar__adapt_site *s, xpar__decision_raw *d,
                              adapt_timing *tm) {
  if (--s->sample_in > 0) {
    tm->on = tm->probe = 0;
    adapt_note(s, 0, d);
    return xpar__adapt_running(s);
  }
  return adapt_timed(ctx, s, d, tm);
}

/* After a call of site s that ran `tier` and succeeded: a timed one's time
 * folded into the site. */
static void adapt_after(xpar_context *ctx, xpar__adapt_site *s, xpar_tier tier,
                        const adapt_timing *tm) {
  if (!tm->on) return;
#ifdef XPAR_TEST_HOOKS
  if (ctx->adapt_fake) {
    const double ns = ctx->adapt_fake_ns[tier];
    ctx->adapt_fake_clock_ns += (uint64_t)ns;
    xpar__adapt_observe(s, tier, tm->probe, ns, ctx->adapt_fake_clock_ns);
    return;
  }
#endif
  (void)ctx;
  const uint64_t now = xpar__adapt_now_ns();
  if (tier == XPAR_TIER_CPU_OPENMP) xpar__adapt_openmp_ran(now);
  xpar__adapt_observe(s, tier, tm->probe, (double)(now - tm->t0), now);
}

/* ---- running on a backend ------------------------------------------------- */

/* The pointer each side uses for each call argument, resolved from the plan. */
static const void *resolved(const plan *p, void *const *ptrs, const void *arg) {
  for (int i = 0; i < p->count; i++)
    if (p->ops[i].where.ptr == arg) return ptrs[i];
  return arg; /* NULL or unused */
}

/* A kernel launch: its arrays as the running side reaches them, beside the
 * scalars api/ already placed. */
static xpar_status run_kernel(const xpar__backend *b, const xpar__exec *ex, const xpar__call *c,
                              const plan *p, void *const *ptrs, void *result) {
  const xpar__kernel_call *k = c->kernel;
  switch (k->kind) {
    case XPAR__KERNEL_REDUCE:
      return b->op_reduce(ex, k->op, c->n, resolved(p, ptrs, k->args[0].ptr), result);
    case XPAR__KERNEL_SCAN:
      return b->op_scan(ex, k->op, k->scan_kind, c->n, resolved(p, ptrs, k->args[0].ptr),
                        (void *)resolved(p, ptrs, k->args[1].ptr));
    case XPAR__KERNEL_SELECT:
      return b->op_select(ex, k->pred, k->partition, c->n, resolved(p, ptrs, k->args[0].ptr),
                          (void *)resolved(p, ptrs, k->args[1].ptr), (uint64_t *)result);
    case XPAR__KERNEL_LAUNCH:
    default: break;
  }
  xpar_kernel_args a = k->values;
  for (int j = 0; j < k->nargs; j++)
    if (k->args[j].role != XPAR_ARG_SCALAR) a.ptr[j] = (void *)resolved(p, ptrs, k->args[j].ptr);
  return b->launch(ex, k->kernel, c->n, &a);
}

/* The host copy of device operand `slot`: pinned memory where the GPU
 * backend can give it (a device-to-host copy into pageable memory goes
 * through the driver's own staging and took 2-4 us more per small call on
 * the H100 host than one into pinned memory, which is what decides whether
 * a tiny device-resident call pays on the CPU: docs/design.md, "Where data
 * lives"),
 * else malloc.  Grown when needed, kept until the context is destroyed or
 * its memory released (xpar__host_staging_free). */

static xpar_status run_on_cpu(xpar_context *ctx, const xpar__call *c, const plan *p,
                              xpar_tier tier, xpar__decision_raw *d) {
  const xpar__backend *g = xpar__gpu_backend();
  void *ptrs[XPAR__OPERAND_SLOTS];
  XPAR__FORWARD(xpar__gpu_drain(ctx));
  /* Device operands are copied through the context's GPU state: make sure
   * it exists (a call forced onto the CPU may be the context's first). */
  int touches_device = p->has_result_operand && p->result.where.loc == XPAR__LOC_DEVICE;
  for (int i = 0; i < p->count; i++) touches_device |= p->ops[i].where.loc == XPAR__LOC_DEVICE;
  if (touches_device) {
    struct xpar__cuda_state *st;
    XPAR__FORWARD(xpar__gpu_state(ctx, &st));
    /* A nowait call, asked before any staging is allocated or copied: nothing
     * written, the capture left valid.  (A synchronous one fails at its first wait
     * with the runtime's capture error, backend_cuda/cuda_state.cu.) */
    XPAR__RETURN_IF(c->nowait && g->capturing(st), XPAR_ERR_NOT_SUPPORTED,
                    "the context's CUDA stream is capturing a CUDA graph: this call runs on "
                    "the CPU and would copy device data through the stream, which a capture "
                    "does not run; set the CUDA backend for the capture (xpar.h, "
                    "xpar_context_set_stream)");
  }
  for (int i = 0; i < p->count; i++) {
    const operand *o = &p->ops[i];
    const xpar__operand *w = &o->where;
    ptrs[i] = (void *)w->ptr;
    if (w->loc == XPAR__LOC_MAPPED) {
      if (needs_contents(o)) XPAR__FORWARD(xpar__mapping_sync_host(ctx, w->map, &d->bytes_to_host));
    } else if (w->loc == XPAR__LOC_DEVICE) {
      /* Never dereference device memory on the host: work on a copy. */
      XPAR__FORWARD(xpar__host_staging(ctx, i, w->bytes, &ptrs[i]));
      if (o->role & ROLE_READ) {
        XPAR__FORWARD(g->copy(ctx->cuda, ptrs[i], w->ptr, w->bytes, XPAR__DEVICE_TO_HOST));
        d->bytes_to_host += w->bytes;
      }
    }
  }
  xpar__exec ex = cpu_exec(ctx, tier);
  /* A nowait result in device memory: computed here, then copied there (an
   * operator's accumulator is up to XPAR_OPERATOR_MAX_ACC bytes). */
  union {
    xpar__scalar scalar;
    unsigned char acc[XPAR_OPERATOR_MAX_ACC];
  } local_result;
  void *const caller_result = c->kernel ? c->kernel->result : c->result;
  const size_t result_bytes =
      c->kernel ? kernel_result_bytes(c->kernel) : xpar__dtype_size(c->result_dtype);
  int result_on_device = p->has_result_operand && p->result.where.loc == XPAR__LOC_DEVICE;
  void *result = result_on_device ? (void *)&local_result : caller_result;
  if (p->has_result_operand && p->result.where.loc == XPAR__LOC_MAPPED)
    XPAR__FORWARD(xpar__mapping_sync_host(ctx, p->result.where.map, &d->bytes_to_host));
  if (p->host_result_map)
    XPAR__FORWARD(xpar__mapping_sync_host(ctx, p->host_result_map, &d->bytes_to_host));
  if (c->kernel)
    XPAR__FORWARD(run_kernel(&xpar__cpu_backend, &ex, c, p, ptrs, result));
  else
    XPAR__FORWARD(xpar__run_op(&xpar__cpu_backend, &ex, c, resolved(p, ptrs, c->x),
                               resolved(p, ptrs, c->y), (void *)resolved(p, ptrs, c->out),
                               (void *)resolved(p, ptrs, c->out2), result));
  for (int i = 0; i < p->count; i++) {
    const operand *o = &p->ops[i];
    if (!(o->role & ROLE_WRITE) || !o->where.bytes) continue;
    if (o->where.loc == XPAR__LOC_MAPPED) {
      o->where.map->valid = XPAR__VALID_HOST;
    } else if (o->where.loc == XPAR__LOC_DEVICE) {
      XPAR__FORWARD(g->copy(ctx->cuda, (void *)o->where.ptr, ptrs[i], o->where.bytes,
                            XPAR__HOST_TO_DEVICE_WRITTEN));
      XPAR__FORWARD(g->wait(ctx->cuda));
      d->bytes_to_device += o->where.bytes;
    }
  }
  if (p->has_result_operand) {
    if (result_on_device) {
      XPAR__FORWARD(g->copy(ctx->cuda, caller_result, &local_result, result_bytes,
                            XPAR__HOST_TO_DEVICE_WRITTEN));
      XPAR__FORWARD(g->wait(ctx->cuda));
      d->bytes_to_device += result_bytes;
    } else if (p->result.where.loc == XPAR__LOC_MAPPED) {
      p->result.where.map->valid = XPAR__VALID_HOST;
    }
  }
  if (p->host_result_map) p->host_result_map->valid = XPAR__VALID_HOST;
  return XPAR_OK;
}

static int is_host_memory(xpar__loc loc) {
  return loc == XPAR__LOC_HOST_PAGEABLE || loc == XPAR__LOC_HOST_PINNED;
}

static int stale_on_device(const xpar__operand *w) {
  return w->loc == XPAR__LOC_MAPPED && !(w->map->valid & XPAR__VALID_DEVICE);
}

/* Why a nowait GPU call could not be captured into a CUDA graph as it stands, or NULL.
 * Host arrays and a host result go through the context's staging buffers and pinned
 * result slot, which later calls reuse or regrow: a graph would replay into them (and a
 * copy to the host waits, which a capture refuses).  A mapped array whose device copy
 * is stale is brought up to date by a copy that the graph would repeat at every replay,
 * over what the previous replay wrote. */
static const char *uncapturable(const plan *p) {
  static const char host[] =
      "its host arrays or result would go through the context's staging memory, which a "
      "graph's replays would share with later calls; pass device, managed or mapped memory";
  static const char stale[] =
      "a mapped array's device copy is stale, and the copy that brings it up to date would "
      "run again at every replay; xpar_update it to the device before the capture";
  if (p->host_result_map) return host;
  if (p->has_result_operand) {
    if (is_host_memory(p->result.where.loc)) return host;
    if (stale_on_device(&p->result.where)) return stale;
  }
  for (int i = 0; i < p->count; i++) {
    const operand *o = &p->ops[i];
    if (!o->where.bytes) continue;
    if (is_host_memory(o->where.loc)) return host;
    if (needs_contents(o) && stale_on_device(&o->where)) return stale;
  }
  return NULL;
}

static xpar_status run_on_gpu(xpar_context *ctx, const xpar__call *c, const plan *p,
                              xpar_tier tier, xpar__decision_raw *d) {
  const xpar__backend *g = xpar__gpu_backend();
  struct xpar__cuda_state *st;
  XPAR__FORWARD(xpar__gpu_state(ctx, &st));
  int capturing = -1; /* whether the stream captures a CUDA graph; -1: not asked yet */
  if (c->nowait) {
    /* Refused before anything is queued, the capture left valid; asked only of nowait
     * calls that need it (a synchronous call fails at its wait). */
    const char *why = uncapturable(p);
    if (why) capturing = g->capturing(st);
    XPAR__RETURN_IF(why && capturing, XPAR_ERR_NOT_SUPPORTED,
                    "the context's CUDA stream is capturing a CUDA graph, and this call cannot "
                    "be captured: %s (xpar.h, xpar_context_set_stream)",
                    why);
  }
  void *ptrs[XPAR__OPERAND_SLOTS];
  int host_outputs = 0;
  for (int i = 0; i < p->count; i++) {
    const operand *o = &p->ops[i];
    const xpar__operand *w = &o->where;
    ptrs[i] = (void *)w->ptr;
    if (!w->bytes) continue;
    switch (w->loc) {
      case XPAR__LOC_MAPPED:
        if (needs_contents(o))
          XPAR__FORWARD(xpar__mapping_sync_device(ctx, w->map, &d->bytes_to_device));
        ptrs[i] = w->map->device + ((const unsigned char *)w->ptr - w->map->host);
        break;
      case XPAR__LOC_HOST_PAGEABLE:
      case XPAR__LOC_HOST_PINNED:
        XPAR__FORWARD(g->staging(st, i, w->bytes, &ptrs[i]));
        if (o->role & ROLE_READ) {
          XPAR__FORWARD(g->copy(st, ptrs[i], w->ptr, w->bytes, XPAR__HOST_TO_DEVICE));
          d->bytes_to_device += w->bytes;
        }
        if (o->role & ROLE_WRITE) host_outputs = 1;
        break;
      default: break; /* device and managed memory are used in place */
    }
  }
  void *result = c->kernel ? c->kernel->result : c->result;
  int result_on_device = 0;
  if (p->has_result_operand) {
    const xpar__operand *w = &p->result.where;
    if (w->loc == XPAR__LOC_MAPPED) {
      XPAR__FORWARD(xpar__mapping_sync_device(ctx, w->map, &d->bytes_to_device));
      result = w->map->device + ((const unsigned char *)w->ptr - w->map->host);
      result_on_device = 1;
    } else if (w->loc == XPAR__LOC_DEVICE || w->loc == XPAR__LOC_MANAGED) {
      result_on_device = 1;
    }
  }
  /* The backend may skip its own synchronisation when a device-to-host copy
   * follows (that copy waits), or when the caller asked for nowait and every
   * output stays on the device. */
  /* A synchronous result inside a mapping: the rest of that host copy must be
   * current before the result lands in it (the copy would overwrite it). */
  if (p->host_result_map)
    XPAR__FORWARD(xpar__mapping_sync_host(ctx, p->host_result_map, &d->bytes_to_host));
  const int has_result = c->result || (c->kernel && kernel_result_bytes(c->kernel) > 0);
  int returns_early = c->nowait && !host_outputs && (!has_result || result_on_device);
  const int nowait = host_outputs || returns_early;
  /* Asked once per call, for the call and for what follows it: a captured call queues
   * nothing (xpar.h, xpar_context_set_stream). */
  if (nowait && capturing < 0) capturing = g->capturing(st);
  const int captured = nowait && capturing;
  xpar__exec ex = {.serial = tier == XPAR_TIER_CUDA_SERIAL,
                   .cuda = st,
                   .grid = ctx->launch_grid,
                   .block = ctx->launch_block,
                   .nowait = nowait,
                   .captured = captured,
                   .result_on_device = result_on_device,
                   .reproducible = ctx->reproducible};
  if (c->kernel)
    XPAR__FORWARD(run_kernel(g, &ex, c, p, ptrs, result));
  else
    XPAR__FORWARD(xpar__run_op(g, &ex, c, resolved(p, ptrs, c->x), resolved(p, ptrs, c->y),
                               (void *)resolved(p, ptrs, c->out),
                               (void *)resolved(p, ptrs, c->out2), result));
  for (int i = 0; i < p->count; i++) {
    const operand *o = &p->ops[i];
    if (!(o->role & ROLE_WRITE) || !o->where.bytes) continue;
    if (o->where.loc == XPAR__LOC_MAPPED) {
      o->where.map->valid = XPAR__VALID_DEVICE;
    } else if (o->where.loc == XPAR__LOC_HOST_PAGEABLE || o->where.loc == XPAR__LOC_HOST_PINNED) {
      XPAR__FORWARD(g->copy(st, (void *)o->where.ptr, ptrs[i], o->where.bytes,
                            XPAR__DEVICE_TO_HOST));
      d->bytes_to_host += o->where.bytes;
    }
  }
  if (p->has_result_operand && p->result.where.loc == XPAR__LOC_MAPPED)
    p->result.where.map->valid = XPAR__VALID_DEVICE;
  if (p->host_result_map) p->host_result_map->valid = XPAR__VALID_HOST;
  /* A nowait call captured into a CUDA graph queued nothing: later calls have no
   * work of it to wait for (and could not wait during the capture). */
  if (returns_early && !captured) ctx->gpu_pending = 1;
  return XPAR_OK;
}

/* The split tier on the call's own arrays: which are pinned, from the plan. */
static xpar_status run_split_call(xpar_context *ctx, const xpar__call *c, const plan *p,
                                  xpar__decision_raw *d) {
  XPAR__FORWARD(xpar__gpu_drain(ctx));
  unsigned pinned = 0;
  int pageable = 0;
  const void *arrays[3] = {c->x, c->y, c->out};
  for (int i = 0; i < p->count; i++) {
    const xpar__operand *w = &p->ops[i].where;
    pageable |= w->loc == XPAR__LOC_HOST_PAGEABLE && w->bytes && !counts_operand(c, w);
    for (int a = 0; a < 3; a++)
      if (arrays[a] && w->ptr == arrays[a] && w->loc == XPAR__LOC_HOST_PINNED) pinned |= 1u << a;
  }
  const int recover = ctx->backend == XPAR_BACKEND_AUTO && ctx->offload == XPAR_OFFLOAD_DEFAULT;
  return xpar__run_split(ctx, c, c->x, c->y, c->out, c->out2, c->result, pinned,
                         pageable ? XPAR_SPLIT_PAGEABLE : XPAR_SPLIT_PINNED, recover, d);
}

/* Every operand reachable from the host without a GPU (for the OOM fallback). */
static int host_reachable(const plan *p) {
  for (int i = 0; i < p->count; i++)
    if (on_device_only(&p->ops[i].where)) return 0;
  return !p->has_result_operand || p->result.where.loc != XPAR__LOC_DEVICE;
}

/* Array i of a call's {x, y, out}. */
static inline const void *call_array(const xpar__call *c, int i) {
  return i == 0 ? c->x : i == 1 ? c->y : c->out;
}

/* Array i is an earlier one passed again (x == y, an in-place scan's
 * out == x): one operand, asked once, as the general path asks it (a second
 * question would find the answer the first cached, and record a hint). */
static inline int repeats_earlier(const xpar__call *c, int i) {
  return (i >= 1 && call_array(c, i) == c->x) || (i == 2 && c->out == c->y);
}

/* A pointer's kind on the host fast path: a page in the cache is pageable host memory
 * (FAST_KIND_CACHED); any other pointer is asked of the driver (FAST_KIND_ASKED), and a
 * pageable answer cached; FAST_KIND_UNKNOWN when the driver could not say. */
enum { FAST_KIND_UNKNOWN, FAST_KIND_CACHED, FAST_KIND_ASKED };
static inline int fast_pointer_kind(xpar_context *ctx, const void *p, xpar__ptr_kind *kind) {
  if (xpar__page_cache_lookup(&ctx->page_cache, p)) {
    *kind = XPAR__PTR_HOST_PAGEABLE;
    return FAST_KIND_CACHED;
  }
  if (xpar__gpu_backend()->pointer_kind(p, kind) != XPAR_OK) {
    xpar__clear_error();
    return FAST_KIND_UNKNOWN;
  }
  if (*kind == XPAR__PTR_HOST_PAGEABLE)
    xpar__page_cache_store(&ctx->page_cache, p);
  else
    xpar__note_driver_memory(ctx, p);
  return FAST_KIND_ASKED;
}

/* The host kind of one operand of the host fast path: 1 when p is host
 * memory (`bit`, p's array, added to *pinned when it is pinned), 0 when the
 * general path must take the call.  A page in the
 * cache is pageable host memory (page_cache.h); any other pointer is asked of
 * the runtime -- one driver look-up -- every call, because a pinned answer
 * cannot be cached (freed pinned memory comes back as device memory): pinned
 * host memory stays on the fast path, exactly classified; a pageable answer
 * is cached; device or managed memory, or an error, goes to the general
 * path, which classifies again and reports.  (Arrays of one pinned
 * allocation sharing one look-up that also asks the allocation's range cost
 * separate allocations ~23 ns per call more on the H100 host, 2026-11-26.) */
static int fast_host_operand(xpar_context *ctx, const void *p, unsigned bit,
                             xpar__policy_facts *f, unsigned *pinned) {
  xpar__ptr_kind kind;
  const int how = fast_pointer_kind(ctx, p, &kind);
  if (how == FAST_KIND_UNKNOWN) return 0;
  if (kind == XPAR__PTR_HOST_PAGEABLE) {
    f->pageable = 1;
    if (how == FAST_KIND_CACHED) f->host_kind_exact = 0; /* a hint: see page_cache.h */
    return 1;
  }
  if (kind != XPAR__PTR_HOST_PINNED) return 0;
  *pinned |= bit;
  return 1;
}

/* A synchronous call's result on the host fast path: 1 when the CPU may write it (a
 * cached page; else asked: pageable, then cached; pinned, with *pinned set, asked again
 * by a repeat as pinned arrays are; managed, with *managed set, never repeated), 0 when
 * it is device memory or the driver could not say: the general path takes the call. */
static int fast_host_result(xpar_context *ctx, const void *p, int *pinned, int *managed) {
  xpar__ptr_kind kind;
  if (fast_pointer_kind(ctx, p, &kind) == FAST_KIND_UNKNOWN) return 0;
  *pinned = kind == XPAR__PTR_HOST_PINNED;
  *managed = kind == XPAR__PTR_MANAGED;
  return kind != XPAR__PTR_DEVICE;
}

/* The facts of a call on a context with mappings, as decide() would find
 * them in a plan: each array lies inside a mapping whose host copy is valid,
 * or clear of every mapping in host memory (fast_host_operand when gpu_asked,
 * else pageable by definition).  maps: each array's mapping (NULL: none);
 * the output's, maps[2], is left valid on the host only.  0: the general path
 * must take the call (a mapping valid only on the device needs a copy, an
 * array straddling a mapping's edge is refused there, device memory). */
static int fast_mapped_facts(xpar_context *ctx, const xpar__call *c, int gpu_asked,
                             xpar__policy_facts *f, xpar__mapping *maps[3], unsigned *pinned) {
  /* A result variable inside a mapping changes that mapping's host copy: the
   * general path keeps the mapping right (build_plan). */
  if (c->result &&
      xpar__mapping_holding(ctx, c->result, xpar__dtype_size(c->result_dtype), &maps[0]) != 0)
    return 0;
  /* Every mapping first, so that a call a mapping sends to the general path
   * leaves no page-cache entry here (one would make its record say "host
   * data", a hint, where the runtime was asked).  A host array found to be
   * device or managed memory after an earlier one was cached still does. */
  for (int i = 0; i < 3; i++) {
    maps[i] = NULL;
    const void *p = call_array(c, i);
    if (!p) continue;
    const int held = xpar__mapping_holding(ctx, p, c->bytes, &maps[i]);
    if (held < 0 || (held && !(maps[i]->valid & XPAR__VALID_HOST))) return 0;
  }
  f->host = 0;
  for (int i = 0; i < 3; i++) {
    const void *p = call_array(c, i);
    if (!p) continue;
    const xpar__mapping *m = maps[i];
    if (m) {
      /* needs_contents(): inputs (x, y, axpy's y, an in-place scan's array),
       * and outputs that cover only part of their mapping.  A host-only copy
       * that must be read costs the GPU a copy in: priced as host data. */
      const int reads = i < 2 || c->op == XPAR_OP_AXPY || p == c->x || p == c->y;
      const int needs = reads || !((const unsigned char *)p == m->host && c->bytes == m->bytes);
      f->pageable |= m->valid == XPAR__VALID_HOST && needs;
      continue;
    }
    f->host = 1;
    if (!gpu_asked)
      f->pageable = 1;
    else if (!repeats_earlier(c, i) && !fast_host_operand(ctx, p, 1u << i, f, pinned))
      return 0;
  }
  return 1;
}

/* ---- repeats: the same call again ------------------------------------------ */

/* Whether each array of `mask` (bit i: array i; bit 3: the result) is still pinned host
 * memory: asked of the driver, as every call with a pinned array asks. */
int xpar__still_pinned(const xpar__call *c, unsigned mask) {
  for (int i = 0; i < 4; i++) {
    if (!(mask >> i & 1)) continue;
    xpar__ptr_kind kind;
    if (xpar__gpu_backend()->pointer_kind(i < 3 ? call_array(c, i) : c->result, &kind) !=
        XPAR_OK) {
      xpar__clear_error();
      return 0;
    }
    if (kind != XPAR__PTR_HOST_PINNED) return 0;
  }
  return 1;
}

/* Remember a call the fast path just decided (before it runs: the mappings'
 * states are the ones it was decided from). */
static void remember_repeat(xpar_context *ctx, const xpar__call *c, xpar__mapping *const maps[3],
                            unsigned pinned, xpar_tier tier, const xpar__exec *ex,
                            xpar__adapt_site *site) {
  xpar__repeat *r = &ctx->repeats[c->op];
  r->pinned = pinned;
  r->settings_generation = ctx->settings_generation;
  r->page_generation = ctx->page_cache.generation;
  r->dtype = c->dtype;
  r->red = c->red;
  r->kind = c->kind;
  r->wide = c->wide;
  r->has_init = c->has_init;
  r->n = c->n;
  r->x = c->x;
  r->y = c->y;
  r->out = c->out;
  r->result = c->result;
  r->scalar = c->scalar;
  r->has_maps = 0;
  for (int i = 0; i < 3; i++) {
    r->maps[i] = maps[i];
    r->map_valid[i] = maps[i] ? maps[i]->valid : 0;
    r->has_maps |= maps[i] != NULL;
  }
  r->tier = tier;
  r->ex = *ex;
  r->record = ctx->last;
  r->site = site;
}

/* Run a call on the CPU tier the fast path chose; the record in ctx->last
 * says tier NONE until the run succeeds. */
static xpar_status run_fast(xpar_context *ctx, const xpar__call *c, xpar_tier tier,
                            const xpar__exec *ex, xpar__mapping *out_map) {
  const xpar_status st =
      xpar__run_op(&xpar__cpu_backend, ex, c, c->x, c->y, c->out, NULL, c->result);
  ctx->calls_run = 1; /* the record is this call's, run or failed */
  if (st == XPAR_OK) {
    if (out_map) out_map->valid = XPAR__VALID_HOST; /* written here: the device copy is stale */
#ifdef XPAR_TEST_HOOKS
    ctx->fast_path_calls++;
#endif
    ctx->last.tier = tier;
    if (ctx->verbose) xpar__decision_log(&ctx->last);
  }
  return st;
}

/*
 * The common case in a tight loop: arrays in host memory or inside mappings
 * valid on the host, nothing queued, and a call that stays on the CPU.  The decision is xpar__decide's
 * (policy.h), fed the facts the page cache and the runtime give, without
 * building a plan: a cached page is pageable host memory, or was when it was
 * cached (whether it has been pinned since does not matter below both GPU
 * thresholds for host data, see page_cache.h); a pointer not cached is
 * classified here (fast_host_operand), so pinned arrays stay on this path.
 * A call decided from page-cache answers alone is remembered, and its
 * repeats skip it and the argument checks (xpar__dispatch_repeat).  Nothing queued, no nowait call, no
 * kernel launch (xpar__dispatch_primary checks).  Returns 0 (nothing done)
 * when the general path must take the call.
 * Written for the 128-element call, whose whole cost is this path: the
 * threshold row is looked up once and the facts are built in place
 * (callgrind: each saved ~20 instructions of ~550).
 */
XPAR__OUT_OF_LINE int host_fast_path(xpar_context *ctx, const xpar__call *c, xpar_status *st) {
  const xpar_backend b = ctx->backend;
  const xpar_offload off = ctx->offload;
  if (off == XPAR_OFFLOAD_MANDATORY || b == XPAR_BACKEND_CUDA || b == XPAR_BACKEND_CUDA_SERIAL ||
      b == XPAR_BACKEND_CPU_CUDA)
    return 0;
  const size_t *thresholds = ctx->thresholds[c->op][c->dtype];
  const unsigned long page_generation = ctx->page_cache.generation;
  /* Host data whose kind the branches below fill in. */
  xpar__policy_facts f;
  call_facts(&f, ctx, c, thresholds, ctx->threshold_source[c->op][c->dtype]);
  f.host = 1;
  xpar__mapping *maps[3] = {NULL, NULL, NULL};
  unsigned pinned = 0; /* bit i: array i is pinned host memory */
  if (c->n && ctx->n_maps) {
    const int asks = off != XPAR_OFFLOAD_DISABLED && xpar__gpu_usable(ctx, NULL);
    if (asks && b == XPAR_BACKEND_AUTO && c->n >= host_limit(ctx, c, thresholds)) return 0;
    if (!fast_mapped_facts(ctx, c, asks, &f, maps, &pinned)) return 0;
  } else if (c->n) {
    /* The facts the general path would classify: without a usable GPU (or
     * with offload disabled) every array is pageable host memory; with one,
     * each operand is cached pageable or asked (fast_host_operand), which is
     * enough only below both GPU thresholds for host data (plan.exact
     * otherwise). */
    if (off != XPAR_OFFLOAD_DISABLED && xpar__gpu_usable(ctx, NULL)) {
      if (b == XPAR_BACKEND_AUTO && c->n >= host_limit(ctx, c, thresholds)) return 0;
      /* Written out, not a loop over i: the 128-element add's path, where
       * the loop cost ~40 of ~730 instructions (callgrind). */
      if (!((!c->x || fast_host_operand(ctx, c->x, 1u, &f, &pinned)) &&
            (!c->y || repeats_earlier(c, 1) || fast_host_operand(ctx, c->y, 2u, &f, &pinned)) &&
            (!c->out || repeats_earlier(c, 2) ||
             fast_host_operand(ctx, c->out, 4u, &f, &pinned))))
        return 0;
    } else {
      f.pageable = 1;
    }
  }
  /* The result (a reduce's, a dot's) must be memory the CPU tier may write: device
   * memory takes the general path, which writes it there (build_plan), and so does a
   * result inside a mapping (its state; fast_mapped_facts asks when n > 0, the arrays'
   * checks above are skipped at n = 0).  A pinned result does not count as pinned data
   * for the decision; a repeat asks it again (bit 3 of the repeat's mask). */
  int result_pinned = 0, result_managed = 0;
  if (c->result) {
    xpar__mapping *m;
    if (!c->n && ctx->n_maps &&
        xpar__mapping_holding(ctx, c->result, xpar__dtype_size(c->result_dtype), &m) != 0)
      return 0;
    if (off != XPAR_OFFLOAD_DISABLED && xpar__gpu_usable(ctx, NULL) &&
        !fast_host_result(ctx, c->result, &result_pinned, &result_managed))
      return 0;
  }
  f.pinned = pinned != 0;
  /* The whole record, as the general path writes it: a repeat copies it. */
  xpar__decision_raw *d = &ctx->last;
  memset(d, 0, sizeof *d);
  d->op = c->op;
  d->dtype = c->dtype;
  d->n = c->n;
  d->reproducible = ctx->reproducible;
  xpar_tier tier = XPAR_TIER_NONE;
  if (xpar__decide(&f, d, &tier) != XPAR_OK || tier == XPAR_TIER_CUDA ||
      tier == XPAR_TIER_CUDA_SERIAL || tier == XPAR_TIER_CPU_CUDA)
    return 0;
  /* Only an OpenMP choice may move on the CPU: the serial tier's calls pay
   * this one comparison. */
  xpar__adapt_site *site = NULL;
  adapt_timing tm = {0, 0, 0};
  if (tier == XPAR_TIER_CPU_OPENMP && ctx->adapt) {
    const xpar__adapt_alt alt = xpar__adapt_alternative(&f, d, tier);
    if (alt.tier != XPAR_TIER_NONE && (site = adapt_site(ctx, c, tier, &alt)))
      tier = adapt_before(ctx, site, d, &tm);
  }
  const xpar__exec ex = cpu_exec(ctx, tier);
  /* Remembered only when no array's kind was added to the page cache: a
   * repeat's record then says what this call's says (a hint where the cache
   * answered).  One that stored a pageable answer (and moved the
   * generation) is remembered at its next call. */
  /* A repeat does not check its alpha or fill value again (api/ did, once): one
   * that is not a page the cache holds as pageable (pinned memory, freed, can
   * come back as device memory) leaves the call unremembered. */
  const int scalar_stays = !c->scalar || off == XPAR_OFFLOAD_DISABLED ||
                           !xpar__gpu_usable(ctx, NULL) ||
                           xpar__page_cache_lookup(&ctx->page_cache, c->scalar);
  /* A probe (adapt.h) runs the tier not chosen once: its repeats keep the choice. */
  if (page_generation == ctx->page_cache.generation && !result_managed && scalar_stays &&
      !tm.probe)
    remember_repeat(ctx, c, maps, pinned | (result_pinned ? 8u : 0u), tier, &ex, site);
  *st = run_fast(ctx, c, tier, &ex, maps[2]);
  if (site && *st == XPAR_OK) adapt_after(ctx, site, tier, &tm);
  return 1;
}

#ifdef XPAR_TEST_HOOKS
/* The test build's objects only (not in any header): tests link them and call
 * it to run a context's calls through the general path only
 * (tests/test_policy.c compares the two paths' decisions and effects). */
void xpar__dispatch_fast_path_off(xpar_context *ctx, int off);
void xpar__dispatch_fast_path_off(xpar_context *ctx, int off) { ctx->fast_path_off = off != 0; }
/* Timed calls (adapt.h) take their time from ns[tier] (the count of
 * XPAR_TIER_COUNT_) instead of the clock, which advances by it: the
 * adaptation under any load a test describes, without load or timing.  NULL:
 * the clock again. */
void xpar__dispatch_adapt_fake_times(xpar_context *ctx, const double *ns);
void xpar__dispatch_adapt_fake_times(xpar_context *ctx, const double *ns) {
  ctx->adapt_fake = ns != NULL;
  for (int t = 0; t < XPAR_TIER_COUNT_; t++) ctx->adapt_fake_ns[t] = ns ? ns[t] : 0.0;
}

/* The room the fake times' machine has (adapt.h; 0 until set). */
void xpar__dispatch_adapt_fake_room(xpar_context *ctx, int room);
void xpar__dispatch_adapt_fake_room(xpar_context *ctx, int room) { ctx->adapt_fake_room = room; }
#endif

xpar_status xpar__run_repeat(xpar_context *ctx, const xpar__call *c, const xpar__repeat *r) {
  ctx->last = r->record; /* tier NONE until the run succeeds */
#ifdef XPAR_TEST_HOOKS
  ctx->repeat_calls++;
#endif
  return run_fast(ctx, c, r->tier, &r->ex, r->maps[2]);
}

xpar_status xpar__run_repeat_timed(xpar_context *ctx, const xpar__call *c) {
  xpar__repeat *r = &ctx->repeats[c->op];
  xpar__adapt_site *s = r->site;
  ctx->last = r->record;
#ifdef XPAR_TEST_HOOKS
  ctx->repeat_calls++;
#endif
  adapt_timing tm;
  const xpar_tier tier = adapt_timed(ctx, s, &ctx->last, &tm);
  const xpar__exec ex = tier == r->tier ? r->ex : cpu_exec(ctx, tier);
  /* The site's choice (not a probe's) becomes the repeat's, with its note. */
  if (!tm.probe) {
    r->tier = tier;
    r->ex = ex;
    r->record = ctx->last;
  }
  const xpar_status st = run_fast(ctx, c, tier, &ex, r->maps[2]);
  if (st == XPAR_OK) adapt_after(ctx, s, tier, &tm);
  return st;
}

XPAR__OUT_OF_LINE xpar_status dispatch_general(xpar_context *ctx, const xpar__call *c);

/* The host fast path, else the general path (repeats were tried before the
 * call's checks: xpar__dispatch_repeat).  Queued work, kernel launches, sorts
 * compactions and histograms take the general path (their arrays are not
 * x/y/out of one size, or their result is a count beside an array). */
xpar_status xpar__dispatch_primary(xpar_context *ctx, const xpar__call *c) {
  if (!(ctx->gpu_pending | ctx->fast_path_off | c->nowait) && !c->kernel &&
      c->op != XPAR_OP_SORT && c->op != XPAR_OP_SELECT && c->op != XPAR_OP_RUNS &&
      c->op != XPAR_OP_ARGREDUCE && c->op != XPAR_OP_SEGMENTED && c->op != XPAR_OP_HISTOGRAM) {
    xpar_status st;
    if (host_fast_path(ctx, c, &st)) return st;
  }
  return dispatch_general(ctx, c);
}

XPAR__OUT_OF_LINE xpar_status dispatch_general(xpar_context *ctx, const xpar__call *c) {
  xpar_status st;
  xpar__decision_raw *d = &ctx->last;
  memset(d, 0, sizeof *d);
  d->reproducible = ctx->reproducible;
  d->op = c->op;
  d->dtype = c->dtype;
  d->n = c->n;
  d->tier = XPAR_TIER_NONE;
  if (c->kernel) {
    d->kernel = c->kernel->name;
    d->kernel_from = xpar__kernel_default_from();
  }
  /* From here the record is this call's: one that fails reads back as "the last call
   * failed before running", the first call of a context too. */
  ctx->calls_run = 1;

  plan p;
  XPAR__FORWARD(build_plan(ctx, c, &p));
  xpar_tier tier = XPAR_TIER_NONE;
  xpar__adapt_alt alt;
  XPAR__FORWARD(decide(ctx, c, &p, d, &tier, &alt));
  xpar__adapt_site *site = NULL;
  adapt_timing tm = {0, 0, 0};
  if (alt.tier != XPAR_TIER_NONE && ctx->adapt && (site = adapt_site(ctx, c, tier, &alt))) {
    const xpar_tier chosen = tier;
    tier = adapt_before(ctx, site, d, &tm);
    if (chosen == XPAR_TIER_CUDA && tier != XPAR_TIER_CUDA) {
      /* The CPU replaces the GPU: the record quotes the CPU tier's rule. */
      d->cpu_rule = alt.cpu_rule;
      d->openmp_threshold = alt.openmp_threshold;
      d->openmp_source = alt.openmp_source;
    }
  }

  if (tier == XPAR_TIER_CUDA || tier == XPAR_TIER_CUDA_SERIAL || tier == XPAR_TIER_CPU_CUDA) {
    xpar__trace_push(c, tier);
    st = tier == XPAR_TIER_CPU_CUDA ? run_split_call(ctx, c, &p, d)
                                    : run_on_gpu(ctx, c, &p, tier, d);
    xpar__trace_pop();
    /* Out of GPU memory is a normal condition for AUTO: run on the CPU and
     * say why, unless the application made offload mandatory or forced the
     * GPU.  Nothing was written before the failure. */
    if (st == XPAR_ERR_DEVICE_OUT_OF_MEMORY && ctx->backend == XPAR_BACKEND_AUTO &&
        ctx->offload == XPAR_OFFLOAD_DEFAULT && host_reachable(&p) &&
        (!c->kernel || c->kernel->has_cpu)) {
      snprintf(ctx->fallback_why, sizeof ctx->fallback_why, "%s", xpar__error_detail());
      xpar__clear_error();
      xpar__policy_facts f;
      call_facts(&f, ctx, c, call_thresholds(ctx, c), call_sources(ctx, c));
      f.gpu_failed = ctx->fallback_why;
      XPAR__FORWARD(xpar__decide(&f, d, &tier));
      d->split_gpu_share = 0.0;
      site = NULL; /* the time is the failure's and the fallback's: not the GPU's */
      st = run_on_cpu(ctx, c, &p, tier, d);
    } else if (st == XPAR_OK && tier == XPAR_TIER_CPU_CUDA &&
               d->gpu_rule == XPAR__GPU_FAILED_FALLBACK) {
      tier = XPAR_TIER_CPU_OPENMP; /* the split's GPU failed; the CPU ran its part too */
      site = NULL;
    }
  } else if (!host_reachable(&p)) {
    xpar__trace_push(c, tier); /* the CPU call stages device data */
    st = run_on_cpu(ctx, c, &p, tier, d);
    xpar__trace_pop();
  } else {
    st = run_on_cpu(ctx, c, &p, tier, d);
  }
  if (st != XPAR_OK) return st;
  if (site) adapt_after(ctx, site, tier, &tm);
  d->tier = tier;
  if (ctx->verbose) xpar__decision_log(d);
  return XPAR_OK;
}
