/*
 * Shared helpers of the gpuaudit probes (outside-tester style: only the public
 * headers xpar/xpar.h and xpar/xpar_kernel.h and the CUDA runtime are used).
 *
 * Each probe prints "FAIL <probe> <file>:<line>: ..." per failed check (the
 * first MAX_PRINT of them, then only counts) and ends with
 *   PROBE <name>: <checks> checks, <failures> failures
 * Without a usable GPU it prints "PROBE <name>: SKIP (...)" and exits 0.
 * Exit status: 0 when no check failed, 1 otherwise, 2 on a setup error.
 */
#ifndef GPUAUDIT_PROBE_COMMON_H
#define GPUAUDIT_PROBE_COMMON_H

#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xpar/xpar.h>

#ifndef PROBE_NAME
#error "define PROBE_NAME before including probe_common.h"
#endif

#define PROBE_SEED 0x9e3779b97f4a7c15ull
#define MAX_PRINT 60

static long g_checks = 0, g_fails = 0, g_notes = 0;
/* While g_soft is set, a failed check is printed as a NOTE (behaviour the
 * headers do not clearly promise) and not counted as a failure. */
static int g_soft = 0;

#define FAILF(...)                                                       \
  do {                                                                   \
    if (g_soft) {                                                        \
      g_notes++;                                                         \
      if (g_notes <= MAX_PRINT) {                                        \
        printf("NOTE %s %s:%d: ", PROBE_NAME, __FILE__, __LINE__);       \
        printf(__VA_ARGS__);                                             \
        printf("\n");                                                    \
        fflush(stdout);                                                  \
      }                                                                  \
      break;                                                             \
    }                                                                    \
    g_fails++;                                                           \
    if (g_fails <= MAX_PRINT) {                                          \
      printf("FAIL %s %s:%d: ", PROBE_NAME, __FILE__, __LINE__);         \
      printf(__VA_ARGS__);                                               \
      printf("\n");                                                      \
      fflush(stdout);                                                    \
    }                                                                    \
  } while (0)

/* One check: counted, and a failure line when cond is false. */
#define CHECK(cond, ...)        \
  do {                          \
    g_checks++;                 \
    if (!(cond)) FAILF(__VA_ARGS__); \
  } while (0)

/* A CUDA call of the probe's own set-up: failing is a set-up error. */
#define CK(call)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      printf("SETUP-ERROR %s %s:%d: %s: %s\n", PROBE_NAME, __FILE__, __LINE__, #call,     \
             cudaGetErrorString(e_));                                                     \
      printf("PROBE %s: %ld checks, %ld failures (aborted: CUDA set-up error)\n",         \
             PROBE_NAME, g_checks, g_fails + 1);                                          \
      exit(2);                                                                            \
    }                                                                                     \
  } while (0)

/* An xpar call that must succeed: counted as a check. */
#define XOK(call)                                                                       \
  do {                                                                                  \
    xpar_status s_ = (call);                                                            \
    g_checks++;                                                                         \
    if (s_ != XPAR_OK)                                                                  \
      FAILF("%s returned %s (%s)", #call, xpar_status_name(s_), xpar_last_error_detail()); \
  } while (0)

/* An xpar call that must return `want`. */
#define XSTATUS(want, call, ...)                                                           \
  do {                                                                                    \
    xpar_status s_ = (call);                                                              \
    g_checks++;                                                                           \
    if (s_ != (want)) {                                                                   \
      char ctx_[256];                                                                     \
      snprintf(ctx_, sizeof ctx_, __VA_ARGS__);                                           \
      FAILF("%s: %s returned %s, expected %s (%s)", ctx_, #call, xpar_status_name(s_),     \
            xpar_status_name(want), xpar_last_error_detail());                            \
    }                                                                                     \
  } while (0)

static inline int probe_summary(void) {
  if (g_notes) printf("# %s: %ld notes (not failures: behaviour the headers leave open)\n", PROBE_NAME, g_notes);
  if (g_fails > MAX_PRINT) printf("# %s: only the first %d failure lines were printed\n", PROBE_NAME, MAX_PRINT);
  printf("PROBE %s: %ld checks, %ld failures\n", PROBE_NAME, g_checks, g_fails);
  fflush(stdout);
  return g_fails ? 1 : 0;
}

/* Skip (exit 0) without a usable GPU, as xpar_device_query reports it. */
static inline void probe_require_gpu(void) {
  xpar_device_info info;
  memset(&info, 0, sizeof info);
  xpar_status s = xpar_device_query(&info);
  if (s != XPAR_OK || !info.usable) {
    printf("PROBE %s: SKIP (no usable GPU: %s%s)\n", PROBE_NAME,
           s != XPAR_OK ? xpar_status_name(s) : "", s != XPAR_OK ? "" : info.reason);
    exit(0);
  }
  printf("# %s: seed 0x%llx, GPU %s (sm_%d%d)\n", PROBE_NAME, (unsigned long long)PROBE_SEED,
         info.name, info.compute_major, info.compute_minor);
  fflush(stdout);
}

/* ---- random numbers (splitmix64) ---------------------------------------------- */
typedef struct {
  uint64_t s;
} rng_t;
static inline uint64_t rng_next(rng_t *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static inline rng_t rng_make(uint64_t salt) {
  rng_t r = {PROBE_SEED ^ (salt * 0xd1b54a32d192ed03ull)};
  rng_next(&r);
  return r;
}
/* A float of mixed sign and magnitude 2^-8 .. 2^8. */
static inline double rng_real(rng_t *r) {
  uint64_t u = rng_next(r);
  double m = (double)(u >> 11) * (1.0 / 9007199254740992.0); /* [0,1) */
  int e = (int)((u >> 3) % 17) - 8;
  double v = ldexp(0.5 + m, e);
  return (u & 1) ? -v : v;
}

/* ---- dtypes ---------------------------------------------------------------------- */
static const xpar_dtype ALL_DTYPES[] = {XPAR_INT32, XPAR_UINT32, XPAR_INT64,
                                        XPAR_UINT64, XPAR_FLOAT, XPAR_DOUBLE};
#define N_DTYPES 6
static inline size_t dsize(xpar_dtype t) { return (t == XPAR_INT32 || t == XPAR_UINT32 || t == XPAR_FLOAT) ? 4 : 8; }
static inline int dfloat(xpar_dtype t) { return t == XPAR_FLOAT || t == XPAR_DOUBLE; }

/* Fill n random elements of dtype t. */
static inline void fill_random(xpar_dtype t, void *p, size_t n, rng_t *r) {
  for (size_t i = 0; i < n; i++) {
    switch (t) {
      case XPAR_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)rng_next(r); break;
      case XPAR_UINT32: ((uint32_t *)p)[i] = (uint32_t)rng_next(r); break;
      case XPAR_INT64: ((int64_t *)p)[i] = (int64_t)rng_next(r); break;
      case XPAR_UINT64: ((uint64_t *)p)[i] = rng_next(r); break;
      case XPAR_FLOAT: ((float *)p)[i] = (float)rng_real(r); break;
      case XPAR_DOUBLE: ((double *)p)[i] = rng_real(r); break;
      default: break;
    }
  }
}

/* Element i as text (for failure lines). */
static inline const char *fmt_elem(xpar_dtype t, const void *p, size_t i, char *buf, size_t cap) {
  switch (t) {
    case XPAR_INT32: snprintf(buf, cap, "%d", ((const int32_t *)p)[i]); break;
    case XPAR_UINT32: snprintf(buf, cap, "%u", ((const uint32_t *)p)[i]); break;
    case XPAR_INT64: snprintf(buf, cap, "%lld", (long long)((const int64_t *)p)[i]); break;
    case XPAR_UINT64: snprintf(buf, cap, "%llu", (unsigned long long)((const uint64_t *)p)[i]); break;
    case XPAR_FLOAT: snprintf(buf, cap, "%.9g", ((const float *)p)[i]); break;
    case XPAR_DOUBLE: snprintf(buf, cap, "%.17g", ((const double *)p)[i]); break;
    default: snprintf(buf, cap, "?"); break;
  }
  return buf;
}

/* ---- double-double accumulation (references for float sums) ------------------------ */
typedef struct {
  double hi, lo;
} dd_t;
static inline void dd_add(dd_t *a, double b) {
  double s = a->hi + b;
  double bb = s - a->hi;
  double err = (a->hi - (s - bb)) + (b - bb);
  a->hi = s;
  a->lo += err;
}
static inline double dd_val(dd_t a) { return a.hi + a.lo; }
/* Exact product of two doubles as hi + lo (fma is exact for the error term). */
static inline void dd_add_prod(dd_t *a, double x, double y) {
  double p = x * y;
  double e = fma(x, y, -p);
  dd_add(a, p);
  dd_add(a, e);
}

/* gamma_k = k u / (1 - k u), u = 2^-24 (float) or 2^-53 (double). */
static inline double gamma_k(xpar_dtype t, double k) {
  double u = t == XPAR_FLOAT ? ldexp(1.0, -24) : ldexp(1.0, -53);
  double ku = k * u;
  return ku < 1 ? ku / (1 - ku) : INFINITY;
}

/* ---- memory kinds -------------------------------------------------------------------- */
enum mem_kind { MK_DEVICE = 0, MK_PINNED, MK_PAGEABLE, MK_MANAGED, MK_MAPPED, MK_COUNT };
static const char *const mk_name[MK_COUNT] = {"device", "pinned", "pageable", "managed", "mapped"};

#define GUARD 256
#define POISON_BYTE 0xA7
#define GUARD_BYTE 0x5C

/* One buffer of a kind: base .. base + GUARD + cap + GUARD; the user pointer is
 * base + GUARD + off (off: a byte offset, a multiple of the element size). */
typedef struct {
  enum mem_kind kind;
  unsigned char *base;
  size_t cap;   /* user bytes available (excluding guards and offset room) */
  size_t total; /* bytes allocated */
  xpar_context *mapped_in; /* MK_MAPPED: the context the whole allocation is mapped in */
} buf_t;

static inline void buf_alloc(buf_t *b, enum mem_kind k, size_t cap) {
  memset(b, 0, sizeof *b);
  b->kind = k;
  b->cap = cap;
  b->total = cap + 2 * GUARD + 64;
  switch (k) {
    case MK_DEVICE: CK(cudaMalloc((void **)&b->base, b->total)); break;
    case MK_PINNED: CK(cudaMallocHost((void **)&b->base, b->total)); break;
    case MK_MANAGED: CK(cudaMallocManaged((void **)&b->base, b->total, cudaMemAttachGlobal)); break;
    default:
      b->base = (unsigned char *)aligned_alloc(4096, (b->total + 4095) / 4096 * 4096);
      if (!b->base) {
        printf("SETUP-ERROR %s: out of host memory\n", PROBE_NAME);
        exit(2);
      }
      break;
  }
}
static inline void buf_free(buf_t *b) {
  if (!b->base) return;
  if (b->mapped_in) xpar_unmap(b->mapped_in, b->base, XPAR_UNMAP_RELEASE);
  switch (b->kind) {
    case MK_DEVICE: cudaFree(b->base); break;
    case MK_PINNED: cudaFreeHost(b->base); break;
    case MK_MANAGED: cudaFree(b->base); break;
    default: free(b->base); break;
  }
  b->base = NULL;
}
static inline void *buf_ptr(const buf_t *b, size_t off) { return b->base + GUARD + off; }

/* Write the whole allocation: guard bytes, then `bytes` of src (or poison when src
 * is NULL) at offset off.  A mapped buffer is then pushed to its device copy. */
static inline void buf_write(buf_t *b, size_t off, const void *src, size_t bytes) {
  unsigned char *img = (unsigned char *)malloc(b->total);
  memset(img, GUARD_BYTE, b->total);
  if (src)
    memcpy(img + GUARD + off, src, bytes);
  else
    memset(img + GUARD + off, POISON_BYTE, bytes);
  if (b->kind == MK_DEVICE) {
    CK(cudaMemcpy(b->base, img, b->total, cudaMemcpyHostToDevice));
  } else {
    if (b->kind == MK_MANAGED) CK(cudaDeviceSynchronize());
    memcpy(b->base, img, b->total);
    if (b->kind == MK_MAPPED && b->mapped_in) {
      xpar_status s = xpar_update(b->mapped_in, b->base, XPAR_UPDATE_TO_DEVICE);
      if (s != XPAR_OK) FAILF("xpar_update(TO_DEVICE) of a mapped buffer: %s (%s)", xpar_status_name(s), xpar_last_error_detail());
    }
  }
  free(img);
}
/* Read the whole allocation into img (b->total bytes); a mapped buffer is first
 * brought up to date with xpar_update(FROM_DEVICE). */
static inline void buf_read(buf_t *b, unsigned char *img) {
  if (b->kind == MK_DEVICE) {
    CK(cudaMemcpy(img, b->base, b->total, cudaMemcpyDeviceToHost));
    return;
  }
  if (b->kind == MK_MAPPED && b->mapped_in) {
    xpar_status s = xpar_update(b->mapped_in, b->base, XPAR_UPDATE_FROM_DEVICE);
    if (s != XPAR_OK) FAILF("xpar_update(FROM_DEVICE) of a mapped buffer: %s (%s)", xpar_status_name(s), xpar_last_error_detail());
  }
  if (b->kind == MK_MANAGED || b->kind == MK_PINNED) CK(cudaDeviceSynchronize());
  memcpy(img, b->base, b->total);
}
/* Map a MK_MAPPED buffer (whole allocation) in ctx. */
static inline void buf_map(buf_t *b, xpar_context *ctx) {
  if (b->kind != MK_MAPPED) return;
  xpar_status s = xpar_map(ctx, b->base, b->total, XPAR_MAP_TO);
  g_checks++;
  if (s != XPAR_OK) {
    FAILF("xpar_map of %zu bytes: %s (%s)", b->total, xpar_status_name(s), xpar_last_error_detail());
    return;
  }
  b->mapped_in = ctx;
}
static inline void buf_unmap(buf_t *b) {
  if (b->kind != MK_MAPPED || !b->mapped_in) return;
  xpar_status s = xpar_unmap(b->mapped_in, b->base, XPAR_UNMAP_RELEASE);
  g_checks++;
  if (s != XPAR_OK) FAILF("xpar_unmap: %s (%s)", xpar_status_name(s), xpar_last_error_detail());
  b->mapped_in = NULL;
}
/* Check the guard bytes of an image read with buf_read: everything outside
 * [GUARD + off, GUARD + off + bytes) must be GUARD_BYTE. */
static inline int guards_ok(const buf_t *b, const unsigned char *img, size_t off, size_t bytes, const char *what) {
  for (size_t i = 0; i < b->total; i++) {
    if (i >= GUARD + off && i < GUARD + off + bytes) continue;
    if (img[i] != GUARD_BYTE) {
      long rel = (long)i - (long)(GUARD + off);
      FAILF("%s: guard byte at %ld bytes from the array start (array of %zu bytes, %s memory) "
            "was overwritten: 0x%02x",
            what, rel, bytes, mk_name[b->kind], img[i]);
      return 0;
    }
  }
  return 1;
}

static inline xpar_context *ctx_new(xpar_backend b) {
  xpar_context *ctx = NULL;
  xpar_status s = xpar_context_create(&ctx);
  if (s != XPAR_OK || !ctx) {
    printf("SETUP-ERROR %s: xpar_context_create: %s (%s)\n", PROBE_NAME, xpar_status_name(s),
           xpar_last_error_detail());
    exit(2);
  }
  s = xpar_context_set_backend(ctx, b);
  if (s != XPAR_OK) {
    printf("SETUP-ERROR %s: set_backend: %s\n", PROBE_NAME, xpar_status_name(s));
    exit(2);
  }
  return ctx;
}

/* Set every op x dtype x GPU threshold of ctx to n (0: AUTO goes to the GPU). */
static inline void ctx_gpu_thresholds(xpar_context *ctx, size_t n) {
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int d = 0; d < N_DTYPES; d++)
      for (int w = XPAR_THRESHOLD_GPU_DEVICE_DATA; w < XPAR_THRESHOLD_COUNT_; w++)
        xpar_context_set_threshold(ctx, (xpar_op)op, ALL_DTYPES[d], (xpar_threshold)w, n);
}

static inline xpar_decision last_decision(xpar_context *ctx) {
  xpar_decision d;
  memset(&d, 0, sizeof d);
  xpar_status s = xpar_last_decision(ctx, &d);
  if (s != XPAR_OK) FAILF("xpar_last_decision: %s", xpar_status_name(s));
  return d;
}

/* ---- an application kernel that spins, then writes: late writes expose missing order */
__device__ inline void gpuaudit_spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
/* dst[i] = src[i] (bytes) after a delay. */
__global__ void gpuaudit_slow_copy(unsigned char *dst, const unsigned char *src, size_t bytes,
                                   unsigned long long delay_ns) {
  if (threadIdx.x == 0) gpuaudit_spin(delay_ns);
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < bytes;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

#endif
