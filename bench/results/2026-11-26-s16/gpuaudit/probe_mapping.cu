/*
 * probe_mapping: xpar_map / xpar_update / xpar_unmap / xpar_mapped_device_ptr
 * on a real GPU (xpar.h:649-727), float / double / uint32:
 *  - MAP_ALLOC: the device copy is not valid, so a forced-GPU read copies the
 *    host data first (result = host data; bytes_to_device = the mapping);
 *  - MAP_TO, GPU write of a sub-range, update(FROM_DEVICE): the host sees the
 *    GPU's values there and its own elsewhere;
 *  - decision bytes follow validity (xpar.h:676-682): in sync -> 0 moved;
 *    after a CPU write a GPU read moves the mapping to the device once; after
 *    a GPU write a CPU read moves it to the host once;
 *  - unmap FROM / RELEASE after a GPU write; unmap FROM after a CPU write;
 *  - a mapping belongs to its context: another context's GPU call on the same
 *    host pointer reads the host copy;
 *  - errors: overlapping map, unmap / update / mapped_device_ptr of pointers
 *    never mapped, unmap of an interior pointer, invalid kinds; a refused call
 *    leaves the mapping working.
 */
#define PROBE_NAME "mapping"
#include "probe_ops.h"

#define N ((size_t)262147)

template <typename T>
static void run_type(xpar_dtype dt) {
  const char *tn = xpar_dtype_name(dt);
  const size_t bytes = N * sizeof(T);
  T *h = (T *)malloc(bytes), *orig = (T *)malloc(bytes);
  rng_t r = rng_make(dt + 100);
  fill_random(dt, orig, N, &r);
  for (size_t i = 0; i < N; i++) orig[i] = (T)((int)(i % 97) - 48); /* exact sums in every type */
  memcpy(h, orig, bytes);
  xpar_context *ctx = ctx_new(XPAR_BACKEND_CUDA);
  xpar_decision d;

  /* MAP_ALLOC then a forced-GPU read: must see the host values */
  XOK(xpar_map(ctx, h, bytes, XPAR_MAP_ALLOC));
  T s = 0, want = 0;
  for (size_t i = 0; i < N; i++) want = wadd(want, orig[i]);
  XOK(xpar_reduce(ctx, dt, XPAR_SUM, h, N, &s));
  d = last_decision(ctx);
  CHECK(s == want, "%s: MAP_ALLOC then forced-cuda reduce: %g, expected the host data's sum %g", tn, (double)s, (double)want);
  CHECK(d.tier == XPAR_TIER_CUDA && d.bytes_to_device == bytes,
        "%s: MAP_ALLOC then forced-cuda reduce: tier %s, %zu bytes to device (expected cuda, %zu)", tn,
        xpar_tier_name(d.tier), d.bytes_to_device, bytes);
  XOK(xpar_reduce(ctx, dt, XPAR_SUM, h, N, &s));
  d = last_decision(ctx);
  CHECK(d.bytes_to_device == 0 && d.bytes_to_host == 0, "%s: second forced-cuda reduce of a synced mapping moved %zu/%zu bytes", tn,
        d.bytes_to_device, d.bytes_to_host);
  /* GPU write of a sub-range, then update(FROM_DEVICE) */
  const T v = (T)7;
  XOK(xpar_fill(ctx, dt, &v, h + 1000, 5000));
  XOK(xpar_update(ctx, h, XPAR_UPDATE_FROM_DEVICE));
  size_t bad = N;
  for (size_t i = 0; i < N && bad == N; i++)
    if (h[i] != ((i >= 1000 && i < 6000) ? v : orig[i])) bad = i;
  CHECK(bad == N, "%s: GPU fill of [1000, 6000), update FROM_DEVICE: h[%zu] = %g, expected %g", tn, bad,
        bad < N ? (double)h[bad] : 0.0, bad < N ? (double)((bad >= 1000 && bad < 6000) ? v : orig[bad]) : 0.0);
  /* a CPU write (forced cpu-serial), then a GPU read moves the mapping once */
  XOK(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL));
  const T v2 = (T)3;
  XOK(xpar_fill(ctx, dt, &v2, h, N));
  d = last_decision(ctx);
  CHECK(d.bytes_to_device == 0, "%s: cpu-serial fill of a synced mapping moved %zu bytes to the device", tn, d.bytes_to_device);
  /* the host copy is the newer one: a forced-cuda write of a sub-range must not
   * lose the host's values elsewhere in the mapping */
  XOK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  {
    const T v5 = (T)5;
    XOK(xpar_fill(ctx, dt, &v5, h + 100, 100));
    XOK(xpar_update(ctx, h, XPAR_UPDATE_FROM_DEVICE));
    size_t b2 = N;
    for (size_t i = 0; i < N && b2 == N; i++)
      if (h[i] != ((i >= 100 && i < 200) ? v5 : v2)) b2 = i;
    CHECK(b2 == N, "%s: CPU fill (3), then forced-cuda fill (5) of [100, 200), update FROM_DEVICE: h[%zu] = %g "
          "(the device copy was not brought up to date before a partial GPU write?)", tn, b2, b2 < N ? (double)h[b2] : 0.0);
    XOK(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL));
    XOK(xpar_fill(ctx, dt, &v2, h, N));
    XOK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  }
  XOK(xpar_reduce(ctx, dt, XPAR_MAX, h, N, &s));
  d = last_decision(ctx);
  CHECK(s == v2, "%s: forced-cuda max after a CPU fill: %g, expected %g (stale device copy?)", tn, (double)s, (double)v2);
  CHECK(d.bytes_to_device == bytes, "%s: forced-cuda read after a CPU write moved %zu bytes to device, expected %zu", tn,
        d.bytes_to_device, bytes);
  XOK(xpar_reduce(ctx, dt, XPAR_MIN, h, N, &s));
  d = last_decision(ctx);
  CHECK(s == v2 && d.bytes_to_device == 0, "%s: second read: min %g, %zu bytes to device (expected %g, 0)", tn, (double)s,
        d.bytes_to_device, (double)v2);
  /* a GPU write (axpy in place: h = 2h + h), then a CPU read moves it to the host once */
  const T two = (T)2;
  XOK(xpar_axpy(ctx, dt, &two, h, h, N));
  XOK(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU));
  XOK(xpar_reduce(ctx, dt, XPAR_MAX, h, N, &s));
  d = last_decision(ctx);
  CHECK(s == (T)9, "%s: CPU read after a GPU axpy: max %g, expected 9 (stale host copy?)", tn, (double)s);
  CHECK(d.bytes_to_host == bytes, "%s: CPU read after a GPU write moved %zu bytes to host, expected %zu", tn, d.bytes_to_host, bytes);
  XOK(xpar_reduce(ctx, dt, XPAR_MIN, h, N, &s));
  d = last_decision(ctx);
  CHECK(s == (T)9 && d.bytes_to_host == 0, "%s: second CPU read: min %g, %zu bytes to host (expected 9, 0)", tn, (double)s, d.bytes_to_host);
  XOK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));

  /* mapped_device_ptr: the device copy is current; the application writes
   * through it (cudaMemcpy), update(FROM_DEVICE), then host and xpar see it */
  void *dp = NULL;
  XOK(xpar_mapped_device_ptr(ctx, h + 10, &dp));
  void *dp0 = NULL;
  XOK(xpar_mapped_device_ptr(ctx, h, &dp0));
  CHECK((char *)dp - (char *)dp0 == (ptrdiff_t)(10 * sizeof(T)), "%s: mapped_device_ptr(h+10) - mapped_device_ptr(h) = %td bytes",
        tn, (char *)dp - (char *)dp0);
  if (dp0) {
    T *back = (T *)malloc(bytes);
    CK(cudaMemcpy(back, dp0, bytes, cudaMemcpyDeviceToHost));
    bad = N;
    for (size_t i = 0; i < N && bad == N; i++)
      if (back[i] != (T)9) bad = i;
    CHECK(bad == N, "%s: device copy via mapped_device_ptr: [%zu] = %g, expected 9", tn, bad, bad < N ? (double)back[bad] : 0.0);
    for (size_t i = 0; i < N; i++) back[i] = (T)(i % 5);
    CK(cudaMemcpy(dp0, back, bytes, cudaMemcpyHostToDevice));
    XOK(xpar_update(ctx, h, XPAR_UPDATE_FROM_DEVICE));
    bad = N;
    for (size_t i = 0; i < N && bad == N; i++)
      if (h[i] != (T)(i % 5)) bad = i;
    CHECK(bad == N, "%s: app wrote via mapped_device_ptr + update FROM_DEVICE: h[%zu] = %g, expected %g", tn, bad,
          bad < N ? (double)h[bad] : 0.0, (double)(bad % 5));
    XOK(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL));
    XOK(xpar_reduce(ctx, dt, XPAR_MAX, h, N, &s));
    CHECK(s == (T)4, "%s: cpu max after the app's device write + update: %g, expected 4", tn, (double)s);
    XOK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
    XOK(xpar_reduce(ctx, dt, XPAR_MAX, h, N, &s));
    CHECK(s == (T)4, "%s: cuda max after the app's device write + update: %g, expected 4", tn, (double)s);
    free(back);
  }

  /* errors: nothing changes, the mapping keeps working */
  T other[64];
  XSTATUS(XPAR_ERR_ALREADY_MAPPED, xpar_map(ctx, h, bytes, XPAR_MAP_TO), "%s: map twice", tn);
  XSTATUS(XPAR_ERR_ALREADY_MAPPED, xpar_map(ctx, h + N / 2, 16, XPAR_MAP_ALLOC), "%s: map inside a mapping", tn);
  XSTATUS(XPAR_ERR_NOT_MAPPED, xpar_unmap(ctx, other, XPAR_UNMAP_FROM), "%s: unmap never mapped", tn);
  XSTATUS(XPAR_ERR_NOT_MAPPED, xpar_update(ctx, other, XPAR_UPDATE_FROM_DEVICE), "%s: update never mapped", tn);
  void *dq = (void *)1;
  XSTATUS(XPAR_ERR_NOT_MAPPED, xpar_mapped_device_ptr(ctx, other, &dq), "%s: mapped_device_ptr never mapped", tn);
  XSTATUS(XPAR_ERR_INVALID_ENUM, xpar_map(ctx, other, sizeof other, XPAR_MAP_KIND_COUNT_), "%s: map kind", tn);
  XSTATUS(XPAR_ERR_INVALID_ENUM, xpar_unmap(ctx, h, XPAR_UNMAP_KIND_COUNT_), "%s: unmap kind", tn);
  XSTATUS(XPAR_ERR_INVALID_ENUM, xpar_update(ctx, h, XPAR_UPDATE_DIR_COUNT_), "%s: update dir", tn);
  {
    /* the header says `host` is the pointer given to xpar_map (xpar.h:710, 717); what
     * an interior pointer does is not stated: a NOTE if it is accepted */
    xpar_status st = xpar_unmap(ctx, h + 1, XPAR_UNMAP_FROM);
    g_soft = 1;
    CHECK(st != XPAR_OK, "%s: unmap of an interior pointer (not the one given to xpar_map) succeeded", tn);
    g_soft = 0;
    if (st == XPAR_OK) XOK(xpar_map(ctx, h, bytes, XPAR_MAP_TO));
  }
  XOK(xpar_reduce(ctx, dt, XPAR_MAX, h, N, &s));
  CHECK(s == (T)4, "%s: mapping after refused calls: max %g, expected 4", tn, (double)s);

  /* another context: the mapping is not its own; it reads the host copy */
  const T v3 = (T)11;
  XOK(xpar_fill(ctx, dt, &v3, h, N)); /* device copy = 11, host copy stale (4 at most) */
  xpar_context *c2 = ctx_new(XPAR_BACKEND_CUDA);
  XOK(xpar_reduce(c2, dt, XPAR_MAX, h, N, &s));
  CHECK(s == (T)4, "%s: another context's GPU read of the host pointer: max %g, expected 4 (the host copy)", tn, (double)s);
  d = last_decision(c2);
  CHECK(d.bytes_to_device == bytes, "%s: another context treated a foreign mapping's host pointer as %zu bytes to device, expected %zu (pageable host)",
        tn, d.bytes_to_device, bytes);
  XOK(xpar_context_destroy(c2));

  /* unmap FROM after a GPU write: host = 11 */
  XOK(xpar_unmap(ctx, h, XPAR_UNMAP_FROM));
  bad = N;
  for (size_t i = 0; i < N && bad == N; i++)
    if (h[i] != v3) bad = i;
  CHECK(bad == N, "%s: unmap FROM after a GPU fill: h[%zu] = %g", tn, bad, bad < N ? (double)h[bad] : 0.0);
  XSTATUS(XPAR_ERR_NOT_MAPPED, xpar_unmap(ctx, h, XPAR_UNMAP_FROM), "%s: unmap twice", tn);
  /* unmap RELEASE after a GPU write: host unchanged */
  memcpy(h, orig, bytes);
  XOK(xpar_map(ctx, h, bytes, XPAR_MAP_TO));
  XOK(xpar_fill(ctx, dt, &v3, h, N));
  XOK(xpar_unmap(ctx, h, XPAR_UNMAP_RELEASE));
  CHECK(!memcmp(h, orig, bytes), "%s: unmap RELEASE after a GPU fill changed the host array", tn);
  /* unmap FROM after a CPU write: the host's newer values stay */
  XOK(xpar_map(ctx, h, bytes, XPAR_MAP_TO));
  XOK(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL));
  XOK(xpar_fill(ctx, dt, &v2, h, N));
  XOK(xpar_unmap(ctx, h, XPAR_UNMAP_FROM));
  bad = N;
  for (size_t i = 0; i < N && bad == N; i++)
    if (h[i] != v2) bad = i;
  CHECK(bad == N, "%s: unmap FROM after a CPU fill: h[%zu] = %g, expected %g", tn, bad, bad < N ? (double)h[bad] : 0.0, (double)v2);
  /* update TO_DEVICE after the application's host writes */
  XOK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  XOK(xpar_map(ctx, h, bytes, XPAR_MAP_TO));
  for (size_t i = 0; i < N; i++) h[i] = (T)(i % 3);
  XOK(xpar_update(ctx, h, XPAR_UPDATE_TO_DEVICE));
  XOK(xpar_reduce(ctx, dt, XPAR_MAX, h, N, &s));
  CHECK(s == (T)2, "%s: forced-cuda read after host writes + update TO_DEVICE: max %g, expected 2", tn, (double)s);
  XOK(xpar_unmap(ctx, h, XPAR_UNMAP_RELEASE));
  XOK(xpar_context_destroy(ctx));
  free(h);
  free(orig);
}

int main(void) {
  probe_require_gpu();
  run_type<float>(XPAR_FLOAT);
  run_type<double>(XPAR_DOUBLE);
  run_type<uint32_t>(XPAR_UINT32);
  run_type<int64_t>(XPAR_INT64);
  return probe_summary();
}
