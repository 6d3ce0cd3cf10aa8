/* The MPI component's test helpers: see mpt.h. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpt.h"

#ifdef XT_HAVE_CUDART
#include <cuda_runtime_api.h>
#endif

int mpt_rank, mpt_size;

void mpt_init(const char *program, int argc, char **argv) {
  MPI_Comm_rank(MPI_COMM_WORLD, &mpt_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpt_size);
  /* One seed for all: rank 0's choice, so that every rank draws the same
   * global arrays and layouts. */
  unsigned long long seed = 0;
  if (mpt_rank == 0) {
    const char *s = getenv("XPAR_TEST_SEED");
    if (s && *s) {
      char *end = NULL;
      seed = strtoull(s, &end, 0);
      if (!end || *end) {
        fprintf(stderr, "%s: XPAR_TEST_SEED=\"%s\" is not a number\n", program, s);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    } else {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      seed = ((unsigned long long)ts.tv_sec * 1000003ull + (unsigned long long)ts.tv_nsec) %
             1000000000000ull;
    }
  }
  MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  char text[32];
  snprintf(text, sizeof text, "%llu", seed);
  setenv("XPAR_TEST_SEED", text, 1);
  if (mpt_rank != 0 && !freopen("/dev/null", "w", stdout)) {
    fprintf(stderr, "%s: rank %d: cannot silence stdout\n", program, mpt_rank);
  }
  if (mpt_rank == 0) printf("[xpar-test] %s: %d ranks\n", program, mpt_size);
  xt_init(program, argc, argv);
}

int mpt_all(int ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

/* ---- cases ----------------------------------------------------------------------- */

void mpt_case_begin(mpt_case *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->label, sizeof c->label, fmt, ap);
  va_end(ap);
  c->failures = 0;
  c->first[0] = '\0';
}

void mpt_fail(mpt_case *c, const char *fmt, ...) {
  if (c->failures++ > 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->first, sizeof c->first, fmt, ap);
  va_end(ap);
}

void mpt_case_end(mpt_case *c) {
  int *failed = (int *)malloc((size_t)mpt_size * sizeof(int));
  if (!failed) MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Allgather(&c->failures, 1, MPI_INT, failed, 1, MPI_INT, MPI_COMM_WORLD);
  char ranks[256] = "";
  size_t len = 0;
  for (int r = 0; r < mpt_size; r++)
    if (failed[r] && len < sizeof ranks - 16)
      len += (size_t)snprintf(ranks + len, sizeof ranks - len, "%s%d", len ? "," : "", r);
  free(failed);
  if (!len) return;
  if (c->failures) {
    fprintf(stderr, "[rank %d] FAILED [XPAR_TEST_SEED=%" PRIu64 "] %s: %s (%d failed checks)\n",
            mpt_rank, xt_seed(), c->label, c->first, c->failures);
    fflush(stderr);
  }
  /* Every rank leaves the test here, together. */
  fail_msg("%s: failed on rank(s) %s of %d (their reasons are on stderr)", c->label, ranks,
           mpt_size);
}

void mpt_expect_status(mpt_case *c, const char *what, xpar_status got, xpar_status want) {
  if (got != want)
    mpt_fail(c, "%s: status %s, expected %s (detail: \"%s\"; xpar: \"%s\")", what,
             xpar_status_name(got), xpar_status_name(want), xpar_mpi_last_error_detail(),
             xpar_last_error_detail());
}

void mpt_expect_detail(mpt_case *c, const char *what, const char *needle) {
  const char *d = xpar_mpi_last_error_detail();
  if (!strstr(d, needle))
    mpt_fail(c, "%s: the detail \"%s\" does not contain \"%s\"", what, d, needle);
}

static void fmt_value(char *buf, size_t len, xpar_dtype t, long double v) {
  if (xt_is_float(t)) snprintf(buf, len, "%.21Lg (%La)", v, v);
  else snprintf(buf, len, "%.0Lf", v);
}

void mpt_expect_array(mpt_case *c, const char *what, xpar_dtype t, const void *got,
                      const xt_expect *exp, size_t n) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; i++)
    if (!xt_match(t, xt_get(t, got, i), exp[i]) && bad++ == 0) first = i;
  if (bad) {
    char e[96], g[96];
    fmt_value(e, sizeof e, t, exp[first].v);
    fmt_value(g, sizeof g, t, xt_get(t, got, first));
    mpt_fail(c, "%s: %zu of %zu elements wrong; first at local index %zu: expected %s (tol "
             "%.3Lg), got %s", what, bad, n, first, e, exp[first].tol, g);
  }
}

void mpt_expect_scalar(mpt_case *c, const char *what, xpar_dtype t, const void *got,
                       xt_expect e) {
  long double g = xt_get(t, got, 0);
  if (!xt_match(t, g, e)) {
    char es[96], gs[96];
    fmt_value(es, sizeof es, t, e.v);
    fmt_value(gs, sizeof gs, t, g);
    mpt_fail(c, "%s: expected %s (tol %.3Lg, diff %.3Lg), got %s", what, es, e.tol,
             fabsl(g - e.v), gs);
  }
}

void mpt_expect_bytes(mpt_case *c, const char *what, const void *got, const void *want,
                      size_t bytes) {
  if (memcmp(got, want, bytes) == 0) return;
  const unsigned char *g = (const unsigned char *)got, *w = (const unsigned char *)want;
  size_t i = 0;
  while (g[i] == w[i]) i++;
  mpt_fail(c, "%s: byte %zu of %zu differs (expected 0x%02x, got 0x%02x)", what, i, bytes, w[i],
           g[i]);
}

void mpt_expect_guards(mpt_case *c, const char *what, const xt_buf *b) {
  size_t bad = 0;
  if (!xt_buf_guards_intact(b, &bad))
    mpt_fail(c, "%s: byte %ld relative to the array start (n = %zu) was overwritten outside "
             "the array", what, (long)bad - (long)((unsigned char *)b->p - b->base), b->n);
}

void mpt_expect_untouched(mpt_case *c, const char *what, const xt_buf *b) {
  if (!xt_is_poison(b->t, b->base, b->total / xt_size(b->t)))
    mpt_fail(c, "%s: written although the call failed", what);
}

void mpt_expect_same_on_all(mpt_case *c, MPI_Comm comm, const char *what, const void *p,
                            size_t bytes) {
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  unsigned char *all = (unsigned char *)malloc((size_t)size * bytes);
  if (!all) MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Allgather(p, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, comm);
  for (int r = 0; r < size; r++) {
    if (memcmp(all + (size_t)r * bytes, p, bytes) != 0) {
      mpt_fail(c, "%s: rank %d of the communicator has other bits than this rank (%d)", what, r,
               rank);
      break;
    }
  }
  free(all);
}

/* ---- layouts ------------------------------------------------------------------------ */

const char *mpt_layout_name(mpt_layout_kind k) {
  static const char *const names[MPT_NLAYOUTS] = {"empty", "single", "uneven", "ends-empty",
                                                  "large"};
  return (unsigned)k < MPT_NLAYOUTS ? names[k] : "?";
}

void mpt_layout_make(mpt_layout *l, mpt_layout_kind k, int ranks, xt_rng *r) {
  l->ranks = ranks;
  l->n = (size_t *)calloc((size_t)ranks, sizeof(size_t));
  l->start = (size_t *)calloc((size_t)ranks, sizeof(size_t));
  if (!l->n || !l->start) MPI_Abort(MPI_COMM_WORLD, 3);
  const int holder = (int)xt_below(r, (uint64_t)ranks);
  int any = 0;
  for (int i = 0; i < ranks; i++) {
    switch (k) {
      case MPT_LAYOUT_EMPTY: l->n[i] = 0; break;
      case MPT_LAYOUT_SINGLE: l->n[i] = i == holder ? 1 + xt_below(r, 200) : 0; break;
      case MPT_LAYOUT_UNEVEN: l->n[i] = xt_below(r, 3001); break;
      case MPT_LAYOUT_ENDS_EMPTY:
        l->n[i] = (i == 0 || i == ranks - 1) ? 0 : 1 + xt_below(r, 2000);
        break;
      case MPT_LAYOUT_LARGE: l->n[i] = 65536 + xt_below(r, 4097); break;
      default: break;
    }
    any |= l->n[i] != 0;
  }
  /* "uneven" means something to cut: never all empty. */
  if (k == MPT_LAYOUT_UNEVEN && !any) l->n[holder] = 1;
  size_t at = 0;
  for (int i = 0; i < ranks; i++) {
    l->start[i] = at;
    at += l->n[i];
  }
  l->total = at;
}

void mpt_layout_free(mpt_layout *l) {
  free(l->n);
  free(l->start);
  memset(l, 0, sizeof *l);
}

/* ---- memory kinds ------------------------------------------------------------------------ */

const char *mpt_mem_name(mpt_mem m) {
  static const char *const names[MPT_NMEMS] = {"host", "pinned", "mapped", "device", "managed"};
  return (unsigned)m < MPT_NMEMS ? names[m] : "?";
}

int mpt_mem_built(mpt_mem m) {
#ifdef XT_HAVE_CUDART
  (void)m;
  return 1;
#else
  return m == MPT_MEM_HOST || m == MPT_MEM_MAPPED;
#endif
}

void mpt_set_cuda_device(int device) {
#ifdef XT_HAVE_CUDART
  if (device >= 0) cudaSetDevice(device);
#else
  (void)device;
#endif
}

#ifdef XT_HAVE_CUDART
static int cuda_ok(mpt_case *c, cudaError_t e, const char *what) {
  if (e == cudaSuccess) return 1;
  mpt_fail(c, "%s failed: %s", what, cudaGetErrorString(e));
  return 0;
}
#endif

void mpt_slice_alloc(mpt_case *c, mpt_slice *s, xpar_context *ctx, mpt_mem m, xpar_dtype t,
                     size_t n, size_t off) {
  memset(s, 0, sizeof *s);
  xt_buf_alloc(&s->host, t, n, off);
  s->mem = m;
  s->ctx = ctx;
  s->p = s->host.p;
  void *a = NULL;
#ifdef XT_HAVE_CUDART
  const size_t total = s->host.total;
#endif
  switch (m) {
    case MPT_MEM_HOST:
    case MPT_MEM_MAPPED: return;
#ifdef XT_HAVE_CUDART
    case MPT_MEM_PINNED:
      if (!cuda_ok(c, cudaMallocHost(&a, total), "cudaMallocHost")) a = NULL;
      break;
    case MPT_MEM_DEVICE:
      if (!cuda_ok(c, cudaMalloc(&a, total), "cudaMalloc")) a = NULL;
      break;
    case MPT_MEM_MANAGED:
      if (!cuda_ok(c, cudaMallocManaged(&a, total, cudaMemAttachGlobal), "cudaMallocManaged"))
        a = NULL;
      break;
#endif
    default: mpt_fail(c, "memory kind %s is not built in", mpt_mem_name(m)); return;
  }
  s->alloc = (unsigned char *)a;
  /* A failed allocation leaves p NULL: the call then fails on this rank and
   * the case reports the allocation first. */
  s->p = a ? s->alloc + ((unsigned char *)s->host.p - s->host.base) : NULL;
}

void mpt_slice_push(mpt_case *c, mpt_slice *s) {
  if (s->mem == MPT_MEM_HOST) return;
  if (s->mem == MPT_MEM_MAPPED) {
    xpar_status st = xpar_map(s->ctx, s->host.base, s->host.total, XPAR_MAP_TO);
    if (st != XPAR_OK) mpt_fail(c, "xpar_map: %s (%s)", xpar_status_name(st), xpar_last_error_detail());
    s->mapped = st == XPAR_OK;
    return;
  }
#ifdef XT_HAVE_CUDART
  if (s->alloc)
    cuda_ok(c, cudaMemcpy(s->alloc, s->host.base, s->host.total, cudaMemcpyDefault),
            "cudaMemcpy (push)");
#else
  (void)c;
#endif
}

void mpt_slice_pull(mpt_case *c, mpt_slice *s) {
  if (s->mem == MPT_MEM_HOST) return;
  if (s->mem == MPT_MEM_MAPPED) {
    if (!s->mapped) return;
    xpar_status st = xpar_update(s->ctx, s->host.base, XPAR_UPDATE_FROM_DEVICE);
    if (st != XPAR_OK)
      mpt_fail(c, "xpar_update: %s (%s)", xpar_status_name(st), xpar_last_error_detail());
    st = xpar_unmap(s->ctx, s->host.base, XPAR_UNMAP_RELEASE);
    if (st != XPAR_OK)
      mpt_fail(c, "xpar_unmap: %s (%s)", xpar_status_name(st), xpar_last_error_detail());
    s->mapped = 0;
    return;
  }
#ifdef XT_HAVE_CUDART
  if (s->alloc)
    cuda_ok(c, cudaMemcpy(s->host.base, s->alloc, s->host.total, cudaMemcpyDefault),
            "cudaMemcpy (pull)");
#else
  (void)c;
#endif
}

void mpt_slice_free(mpt_slice *s) {
  if (s->mapped) xpar_unmap(s->ctx, s->host.base, XPAR_UNMAP_RELEASE);
#ifdef XT_HAVE_CUDART
  if (s->alloc) {
    if (s->mem == MPT_MEM_PINNED) cudaFreeHost(s->alloc);
    else cudaFree(s->alloc);
  }
#endif
  xt_buf_free(&s->host);
  memset(s, 0, sizeof *s);
}

/* ---- serial references ------------------------------------------------------------------ */

void mpt_float_add(xpar_dtype t, void *acc, const void *x) {
  if (t == XPAR_FLOAT) {
    float a, b;
    memcpy(&a, acc, 4);
    memcpy(&b, x, 4);
    a = a + b;
    memcpy(acc, &a, 4);
  } else {
    double a, b;
    memcpy(&a, acc, 8);
    memcpy(&b, x, 8);
    a = a + b;
    memcpy(acc, &a, 8);
  }
}

void mpt_serial_dot(xpar_dtype t, const void *x, const void *y, size_t n, void *result) {
  if (t == XPAR_FLOAT) {
    const float *a = (const float *)x, *b = (const float *)y;
    float acc = 0.0f;
    for (size_t i = 0; i < n; i++) acc = acc + a[i] * b[i];
    memcpy(result, &acc, 4);
  } else {
    const double *a = (const double *)x, *b = (const double *)y;
    double acc = 0.0;
    for (size_t i = 0; i < n; i++) acc = acc + a[i] * b[i];
    memcpy(result, &acc, 8);
  }
}
