/*
 * probe_threads: host threads and contexts (xpar.h:35-41).
 *  - 8 threads, each with its own context (backends cuda, auto, auto with GPU
 *    thresholds 0, cuda-serial), each running random ops / dtypes on its own
 *    device, pinned, pageable and managed arrays, synchronous and nowait,
 *    concurrently: every result right, never XPAR_ERR_CONTEXT_BUSY;
 *  - 4 threads sharing one forced-cuda context: each call either succeeds
 *    with the right result or returns XPAR_ERR_CONTEXT_BUSY having written
 *    nothing (device output and host scalar poisoned before); the context
 *    works afterwards.
 */
#define PROBE_NAME "threads"
#include <pthread.h>
#include "probe_ops.h"

#define N ((size_t)65537)
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

struct worker {
  int id;
  xpar_context *shared;
  int iters;
  long ok, busy, fails, notes;
  char first[400], first_note[400];
};
/* Sharing a context is "not supported" and the BUSY check "cannot catch every
 * interleaving" (xpar.h:36-40): a wrong result there is a NOTE; a BUSY refusal
 * that wrote something is a failure. */
static void wnote(worker *w, const char *msg) {
  if (!w->notes++) snprintf(w->first_note, sizeof w->first_note, "%s", msg);
}

static void wfail(worker *w, const char *msg) {
  if (!w->fails++) snprintf(w->first, sizeof w->first, "%s", msg);
}

/* The checker prints through FAILF, which touches globals: serialize it. */
static int locked_check(xpar_dtype dt, int op, size_t n, const void *hx, const void *hy, const scal_t *sc,
                        const void *got, const char *label) {
  pthread_mutex_lock(&g_lock);
  int ok = check_op(dt, op, n, hx, hy, sc, got, label);
  pthread_mutex_unlock(&g_lock);
  return ok;
}

static void *own_context(void *arg) {
  worker *w = (worker *)arg;
  const xpar_backend bs[4] = {XPAR_BACKEND_CUDA, XPAR_BACKEND_AUTO, XPAR_BACKEND_AUTO, XPAR_BACKEND_CUDA_SERIAL};
  const int bi = w->id % 4;
  xpar_context *ctx = NULL;
  if (xpar_context_create(&ctx) != XPAR_OK) {
    wfail(w, "context_create failed");
    return NULL;
  }
  xpar_context_set_backend(ctx, bs[bi]);
  if (bi == 2) ctx_gpu_thresholds(ctx, 0);
  const size_t n = bi == 3 ? 3001 : N;
  unsigned char *dx, *dy, *dout, *dres, *px, *mx, *hx = (unsigned char *)malloc(n * 8),
                *hy = (unsigned char *)malloc(n * 8), *back = (unsigned char *)malloc(n * 8),
                *gx = (unsigned char *)malloc(n * 8);
  cudaMalloc((void **)&dx, n * 8);
  cudaMalloc((void **)&dy, n * 8);
  cudaMalloc((void **)&dout, n * 8);
  cudaMalloc((void **)&dres, 16);
  cudaMallocHost((void **)&px, n * 8);
  cudaMallocManaged((void **)&mx, n * 8, cudaMemAttachGlobal);
  rng_t r = rng_make(1000 + w->id);
  for (int it = 0; it < w->iters; it++) {
    const xpar_dtype dt = ALL_DTYPES[rng_next(&r) % N_DTYPES];
    int op = (int)(rng_next(&r) % OP_ID_COUNT);
    const int nowait = (rng_next(&r) % 3 == 0) && op != OP_WIDE;
    const int xk = (int)(rng_next(&r) % 4); /* x: device, pinned, pageable, managed */
    const size_t es = dsize(dt), bytes = n * es;
    fill_random(dt, hx, n, &r);
    fill_random(dt, hy, n, &r);
    scal_t sc;
    rand_scalar(dt, &sc, &r);
    const char wr = op_writes(op);
    int xkind = xk;
    if (nowait && wr == 'x' && (xk == 1 || xk == 2)) xkind = 0; /* nowait outputs on the device */
    unsigned char *x = xkind == 0 ? dx : xkind == 1 ? px : xkind == 2 ? gx : mx;
    cudaDeviceSynchronize();
    if (xkind == 0) cudaMemcpy(dx, hx, bytes, cudaMemcpyHostToDevice);
    else memcpy(x, hx, bytes);
    cudaMemcpy(dy, hy, bytes, cudaMemcpyHostToDevice);
    cudaMemset(dout, POISON_BYTE, bytes);
    scal_t hres;
    memset(&hres, POISON_BYTE, sizeof hres);
    xpar_status st = run_op(ctx, dt, op, x, dy, dout, n, &sc, nowait ? (void *)dres : (void *)&hres, nowait);
    char label[256];
    snprintf(label, sizeof label, "thread %d (own context, backend %s%s) iter %d dtype=%s op=%s%s x=%s", w->id,
             xpar_backend_name(bs[bi]), bi == 2 ? " gpu0" : "", it, xpar_dtype_name(dt), op_id_name[op],
             nowait ? " nowait" : "", xkind == 0 ? "device" : xkind == 1 ? "pinned" : xkind == 2 ? "pageable" : "managed");
    if (st != XPAR_OK) {
      char m[400];
      snprintf(m, sizeof m, "%s: status %s (%s)", label, xpar_status_name(st), xpar_last_error_detail());
      wfail(w, m);
      if (st == XPAR_ERR_CONTEXT_BUSY) w->busy++;
      continue;
    }
    if (nowait && xpar_wait(ctx) != XPAR_OK) wfail(w, "xpar_wait failed");
    const void *got;
    if (op_scalar(op)) {
      if (nowait) {
        cudaMemcpy(&hres, dres, 16, cudaMemcpyDeviceToHost);
      }
      got = &hres;
    } else {
      const unsigned char *src = wr == 'o' ? dout : wr == 'y' ? dy : x;
      cudaDeviceSynchronize();
      cudaMemcpy(back, src, bytes, cudaMemcpyDefault);
      got = back;
    }
    if (locked_check(dt, op, n, hx, hy, &sc, got, label)) w->ok++;
    else w->fails++;
  }
  xpar_context_destroy(ctx);
  cudaFree(dx); cudaFree(dy); cudaFree(dout); cudaFree(dres); cudaFreeHost(px); cudaFree(mx);
  free(hx); free(hy); free(back); free(gx);
  return NULL;
}

static void *shared_context(void *arg) {
  worker *w = (worker *)arg;
  xpar_context *ctx = w->shared;
  const size_t n = N;
  double *dx, *dout, *hx = (double *)malloc(n * 8), *back = (double *)malloc(n * 8);
  cudaMalloc((void **)&dx, n * 8);
  cudaMalloc((void **)&dout, n * 8);
  for (size_t i = 0; i < n; i++) hx[i] = (double)((int)((i * 7 + w->id) % 23) - 11);
  cudaMemcpy(dx, hx, n * 8, cudaMemcpyHostToDevice);
  double want_sum = 0;
  for (size_t i = 0; i < n; i++) want_sum += hx[i];
  for (int it = 0; it < w->iters; it++) {
    double res = -12345.5;
    xpar_status st = xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, dx, n, &res);
    char m[300];
    if (st == XPAR_OK) {
      w->ok++;
      if (res != want_sum) {
        snprintf(m, sizeof m, "shared context thread %d: reduce %.17g, expected %.17g", w->id, res, want_sum);
        wnote(w, m);
      }
    } else if (st == XPAR_ERR_CONTEXT_BUSY) {
      w->busy++;
      if (res != -12345.5) {
        snprintf(m, sizeof m, "shared context thread %d: BUSY reduce wrote its result (%.17g)", w->id, res);
        wfail(w, m);
      }
    } else {
      snprintf(m, sizeof m, "shared context thread %d: reduce status %s (%s)", w->id, xpar_status_name(st), xpar_last_error_detail());
      wnote(w, m);
    }
    cudaMemsetAsync(dout, POISON_BYTE, n * 8, cudaStreamPerThread);
    cudaStreamSynchronize(cudaStreamPerThread);
    st = xpar_scan(ctx, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, dx, dout, n);
    cudaMemcpy(back, dout, n * 8, cudaMemcpyDeviceToHost);
    if (st == XPAR_OK) {
      w->ok++;
      double acc = 0;
      for (size_t i = 0; i < n; i++) {
        acc += hx[i];
        if (back[i] != acc) {
          snprintf(m, sizeof m, "shared context thread %d: scan[%zu] = %.17g, expected %.17g", w->id, i, back[i], acc);
          wnote(w, m);
          break;
        }
      }
    } else if (st == XPAR_ERR_CONTEXT_BUSY) {
      w->busy++;
      unsigned char *b = (unsigned char *)back;
      for (size_t i = 0; i < n * 8; i++)
        if (b[i] != POISON_BYTE) {
          snprintf(m, sizeof m, "shared context thread %d: BUSY scan wrote its output (byte %zu)", w->id, i);
          wfail(w, m);
          break;
        }
    } else {
      snprintf(m, sizeof m, "shared context thread %d: scan status %s (%s)", w->id, xpar_status_name(st), xpar_last_error_detail());
      wnote(w, m);
    }
  }
  cudaFree(dx);
  cudaFree(dout);
  free(hx);
  free(back);
  return NULL;
}

int main(void) {
  probe_require_gpu();
  {
    enum { T = 8 };
    worker w[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
      memset(&w[i], 0, sizeof w[i]);
      w[i].id = i;
      w[i].iters = 60;
      pthread_create(&th[i], NULL, own_context, &w[i]);
    }
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) {
      g_checks += w[i].ok + w[i].fails;
      if (w[i].fails) {
        g_fails++; /* check_op failures were already counted and printed */
        printf("FAIL %s: own-context thread %d: %ld failures; first: %s\n", PROBE_NAME, i, w[i].fails,
               w[i].first[0] ? w[i].first : "(a result check, printed above)");
      }
      CHECK(w[i].busy == 0, "own-context thread %d got XPAR_ERR_CONTEXT_BUSY %ld times", i, w[i].busy);
    }
  }
  {
    enum { T = 4 };
    xpar_context *ctx = ctx_new(XPAR_BACKEND_CUDA);
    worker w[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
      memset(&w[i], 0, sizeof w[i]);
      w[i].id = i;
      w[i].iters = 40;
      w[i].shared = ctx;
      pthread_create(&th[i], NULL, shared_context, &w[i]);
    }
    long busy = 0, ok = 0;
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) {
      busy += w[i].busy;
      ok += w[i].ok;
      g_checks += w[i].ok + w[i].busy;
      if (w[i].fails) {
        g_fails += w[i].fails;
        printf("FAIL %s: shared-context thread %d: %ld failures; first: %s\n", PROBE_NAME, i, w[i].fails, w[i].first);
      }
      if (w[i].notes) {
        g_notes += w[i].notes;
        printf("NOTE %s: shared-context thread %d: %ld wrong results / statuses (sharing is unsupported); first: %s\n",
               PROBE_NAME, i, w[i].notes, w[i].first_note);
      }
    }
    printf("# threads: shared context: %ld calls succeeded, %ld refused with CONTEXT_BUSY\n", ok, busy);
    double v[4] = {1, 2, 3, 4}, s = 0;
    XOK(xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, v, 4, &s));
    CHECK(s == 10, "shared context after contention: sum %g", s);
    XOK(xpar_context_destroy(ctx));
  }
  return probe_summary();
}
