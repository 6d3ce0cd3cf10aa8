/*
 * probe_ptds: built with nvcc --default-stream per-thread (xpar.h:436-439):
 * the application passes cudaStreamPerThread to xpar_context_set_stream, and
 * its "stream 0" launches (<<<g, b>>> with no stream) go to its per-thread
 * stream.  6 threads, each with its own context and arrays, each: a slow
 * producer kernel on its default stream writes x, an xpar call (sync or
 * nowait, float / double / int64, several ops) reads it, a slow consumer kernel
 * on its default stream copies the output, cudaStreamSynchronize, check.
 * Plus one thread using cudaStreamLegacy explicitly (set_stream(cudaStreamLegacy)).
 */
#define PROBE_NAME "ptds"
#include <pthread.h>
#include "probe_ops.h"

#define N ((size_t)(1 << 19) + 3)
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static const int OPS[] = {OP_RSUM, OP_SCAN_IS, OP_SINIT_E, OP_AXPY, OP_ADD, OP_FILL, OP_DOT, OP_SCAN_INPLACE};

struct worker {
  int id, legacy;
  long errors;
};

static void *run(void *arg) {
  worker *w = (worker *)arg;
  cudaStream_t s = w->legacy ? cudaStreamLegacy : cudaStreamPerThread;
  xpar_context *ctx = NULL;
  if (xpar_context_create(&ctx) != XPAR_OK) { w->errors++; return NULL; }
  xpar_context_set_backend(ctx, w->id % 2 ? XPAR_BACKEND_CUDA : XPAR_BACKEND_AUTO);
  if (w->id % 2 == 0) ctx_gpu_thresholds(ctx, 0);
  xpar_status st0 = xpar_context_set_stream(ctx, (void *)s);
  if (st0 != XPAR_OK) {
    pthread_mutex_lock(&g_lock);
    FAILF("thread %d: set_stream(%s) returned %s", w->id, w->legacy ? "cudaStreamLegacy" : "cudaStreamPerThread", xpar_status_name(st0));
    pthread_mutex_unlock(&g_lock);
  }
  unsigned char *src, *x, *y, *out, *res, *dst;
  cudaMalloc((void **)&src, N * 8); cudaMalloc((void **)&x, N * 8); cudaMalloc((void **)&y, N * 8);
  cudaMalloc((void **)&out, N * 8); cudaMalloc((void **)&res, 16); cudaMalloc((void **)&dst, N * 8);
  unsigned char *hx = (unsigned char *)malloc(N * 8), *hy = (unsigned char *)malloc(N * 8),
                *old = (unsigned char *)malloc(N * 8), *back = (unsigned char *)malloc(N * 8);
  const xpar_dtype dts[3] = {XPAR_FLOAT, XPAR_DOUBLE, XPAR_INT64};
  for (int it = 0; it < 24; it++) {
    const xpar_dtype dt = dts[it % 3];
    const int op = OPS[(it + w->id) % (sizeof OPS / sizeof OPS[0])];
    const int nowait = (it / 3) % 2;
    const size_t bytes = N * dsize(dt);
    rng_t r = rng_make(w->id * 1000 + it);
    fill_random(dt, hx, N, &r);
    fill_random(dt, hy, N, &r);
    fill_random(dt, old, N, &r);
    scal_t sc;
    rand_scalar(dt, &sc, &r);
    cudaMemcpyAsync(x, old, bytes, cudaMemcpyHostToDevice, s);
    cudaMemcpyAsync(src, hx, bytes, cudaMemcpyHostToDevice, s);
    cudaMemcpyAsync(y, hy, bytes, cudaMemcpyHostToDevice, s);
    cudaMemsetAsync(out, POISON_BYTE, bytes, s);
    cudaStreamSynchronize(s);
    /* the producer: "stream 0" of this thread */
    if (w->legacy) gpuaudit_slow_copy<<<132, 256, 0, cudaStreamLegacy>>>(x, src, bytes, 300000);
    else gpuaudit_slow_copy<<<132, 256>>>(x, src, bytes, 300000);
    scal_t hres;
    memset(&hres, POISON_BYTE, sizeof hres);
    xpar_status st = run_op(ctx, dt, op, x, y, out, N, &sc, nowait ? (void *)res : (void *)&hres, nowait);
    const char wr = op_writes(op);
    const unsigned char *rsrc = op_scalar(op) ? (nowait ? res : NULL) : wr == 'o' ? out : wr == 'y' ? y : x;
    size_t rbytes = op_scalar(op) ? op_result_bytes(dt, op) : bytes;
    if (rsrc) {
      if (w->legacy) gpuaudit_slow_copy<<<132, 256, 0, cudaStreamLegacy>>>(dst, rsrc, rbytes, 300000);
      else gpuaudit_slow_copy<<<132, 256>>>(dst, rsrc, rbytes, 300000);
      cudaMemcpyAsync(back, dst, rbytes, cudaMemcpyDeviceToHost, s);
    }
    cudaStreamSynchronize(s);
    char label[200];
    snprintf(label, sizeof label, "thread %d (%s, %s) dtype %s op %s%s", w->id, w->legacy ? "cudaStreamLegacy" : "per-thread stream",
             w->id % 2 ? "cuda" : "auto-gpu0", xpar_dtype_name(dt), op_id_name[op], nowait ? " nowait (checked before xpar_wait)" : "");
    pthread_mutex_lock(&g_lock);
    g_checks++;
    if (st != XPAR_OK) FAILF("%s: status %s (%s)", label, xpar_status_name(st), xpar_last_error_detail());
    else check_op(dt, op, N, hx, hy, &sc, rsrc ? (const void *)back : (const void *)&hres, label);
    pthread_mutex_unlock(&g_lock);
    if (nowait) {
      xpar_status ws = xpar_wait(ctx);
      if (ws != XPAR_OK) {
        pthread_mutex_lock(&g_lock);
        FAILF("%s: xpar_wait %s", label, xpar_status_name(ws));
        pthread_mutex_unlock(&g_lock);
      }
    }
  }
  xpar_context_destroy(ctx);
  cudaFree(src); cudaFree(x); cudaFree(y); cudaFree(out); cudaFree(res); cudaFree(dst);
  free(hx); free(hy); free(old); free(back);
  return NULL;
}

int main(void) {
  probe_require_gpu();
  enum { T = 7 };
  worker w[T];
  pthread_t th[T];
  for (int i = 0; i < T; i++) {
    w[i].id = i;
    w[i].legacy = i == T - 1;
    w[i].errors = 0;
    pthread_create(&th[i], NULL, run, &w[i]);
  }
  for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < T; i++) CHECK(w[i].errors == 0, "thread %d: context_create failed", i);
  return probe_summary();
}
