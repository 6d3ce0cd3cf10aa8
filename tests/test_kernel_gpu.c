/*
 * Application kernels and operators with data where the GPU keeps it: mapped
 * arrays (validity after a kernel writes them on either side), raw cudaMalloc
 * and managed pointers (AUTO stays on the device; forced CPU stages them and
 * never dereferences device memory on the host), nowait launches on device
 * outputs, and operators on device data.  Needs a usable GPU: the program
 * exits 77 (CTest: skipped) without one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/test_kernels.h"
#include "operators/operators.h"
#include "xt.h"

#if defined(XT_HAVE_CUDART)
#include <cuda_runtime.h>

#define N 4099

#define CUDA_OK(call)                                                                    \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) xt_failf(#call, "CUDA error %s", cudaGetErrorName(e_));       \
  } while (0)

static void fill(const char *label, uint32_t *x, uint32_t *y, uint32_t *a) {
  xt_rng rng;
  xt_rng_for(&rng, label);
  xt_fill_random(&rng, XPAR_UINT32, x, N, XT_DATA_RANDOM, 0);
  xt_fill_random(&rng, XPAR_UINT32, y, N, XT_DATA_RANDOM, 0);
  *a = (uint32_t)xt_next(&rng);
}

static void check_axpy(const char *label, const uint32_t *got, uint32_t a, const uint32_t *x,
                       const uint32_t *y0) {
  for (size_t i = 0; i < N; i++)
    if (got[i] != (uint32_t)(a * x[i] + y0[i]))
      xt_failf(label, "y[%zu] = %u, expected %u", i, got[i], (uint32_t)(a * x[i] + y0[i]));
}

static xpar_decision decision(xpar_context *ctx) {
  xpar_decision d;
  XT_OK(xpar_last_decision(ctx, &d));
  return d;
}

/* Mapped arrays: the GPU writes y (device copy valid), then a forced-CPU
 * launch reads it back and writes the host copy (host copy valid), which an
 * update FROM_DEVICE must not overwrite. */
static void t_mapped(void **state) {
  (void)state;
  static uint32_t x[N], y[N], y0[N], y1[N];
  uint32_t a;
  fill("mapped", x, y, &a);
  memcpy(y0, y, sizeof y);
  xpar_context *ctx = xt_tier_context(XT_AUTO);
  XT_OK(xpar_context_set_kernel_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_GPU_DEVICE_DATA, 0));
  XT_OK(xpar_map(ctx, x, sizeof x, XPAR_MAP_TO));
  XT_OK(xpar_map(ctx, y, sizeof y, XPAR_MAP_TO));
  xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, x, N),
                      XPAR_ARG_INOUT(XPAR_UINT32, y, N)};
  XT_OK(xpar_launch(ctx, &xk_axpy_u32, N, args, 3));
  xpar_decision d = decision(ctx);
  if (d.tier != XPAR_TIER_CUDA) xt_failf("mapped", "ran on %s: %s", xpar_tier_name(d.tier), d.reason);
  if (memcmp(y, y0, sizeof y) != 0) xt_failf("mapped", "the host copy changed before an update");
  XT_OK(xpar_update(ctx, y, XPAR_UPDATE_FROM_DEVICE));
  check_axpy("mapped: GPU result", y, a, x, y0);
  memcpy(y1, y, sizeof y);
  /* The GPU runs it again (device copy newer), then the CPU: it must fetch it first. */
  XT_OK(xpar_launch(ctx, &xk_axpy_u32, N, args, 3));
  XT_OK(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL));
  XT_OK(xpar_launch(ctx, &xk_axpy_u32, N, args, 3));
  d = decision(ctx);
  if (d.tier != XPAR_TIER_CPU_SERIAL || d.bytes_to_host < sizeof y)
    xt_failf("mapped", "forced CPU: tier %s, %zu bytes to the host", xpar_tier_name(d.tier),
             d.bytes_to_host);
  XT_OK(xpar_update(ctx, y, XPAR_UPDATE_FROM_DEVICE)); /* host copy is newer: no copy */
  /* y1 already holds one axpy; the second GPU launch made a*x + y1, and the
   * CPU launch adds a*x to that (check_axpy adds the last one). */
  static uint32_t after_gpu[N];
  for (size_t i = 0; i < N; i++) after_gpu[i] = (uint32_t)(a * x[i] + y1[i]);
  check_axpy("mapped: GPU then CPU", y, a, x, after_gpu);
  XT_OK(xpar_unmap(ctx, x, XPAR_UNMAP_RELEASE));
  XT_OK(xpar_unmap(ctx, y, XPAR_UNMAP_FROM));
  xpar_context_destroy(ctx);
}

/* Raw device and managed pointers: AUTO keeps the work on the GPU; forced
 * serial CPU stages the arrays through the host; nowait on device outputs. */
static void t_device_pointers(void **state) {
  (void)state;
  static uint32_t x[N], y[N], got[N];
  uint32_t a;
  fill("device_pointers", x, y, &a);
  for (int managed = 0; managed < 2; managed++)
    for (int policy = 0; policy < 3; policy++) {
      char label[96];
      snprintf(label, sizeof label, "%s, %s", managed ? "managed" : "cudaMalloc",
               policy == 0 ? "auto" : policy == 1 ? "serial" : "cuda nowait");
      uint32_t *dx, *dy;
      if (managed) {
        CUDA_OK(cudaMallocManaged((void **)&dx, sizeof x, cudaMemAttachGlobal));
        CUDA_OK(cudaMallocManaged((void **)&dy, sizeof y, cudaMemAttachGlobal));
      } else {
        CUDA_OK(cudaMalloc((void **)&dx, sizeof x));
        CUDA_OK(cudaMalloc((void **)&dy, sizeof y));
      }
      CUDA_OK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
      CUDA_OK(cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice));
      xpar_context *ctx = xt_tier_context(policy == 0 ? XT_AUTO
                                          : policy == 1 ? XT_CPU_SERIAL
                                                        : XT_CUDA);
      /* Managed data is priced as device data (valid on both sides): put its
       * GPU threshold below N so that AUTO takes the GPU for both kinds. */
      XT_OK(xpar_context_set_kernel_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_GPU_DEVICE_DATA, 0));
      xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, dx, N),
                          XPAR_ARG_INOUT(XPAR_UINT32, dy, N)};
      if (policy == 2) {
        XT_OK(xpar_launch_nowait(ctx, &xk_axpy_u32, N, args, 3));
        XT_OK(xpar_wait(ctx));
      } else {
        XT_OK(xpar_launch(ctx, &xk_axpy_u32, N, args, 3));
      }
      xpar_decision d = decision(ctx);
      xpar_tier want = policy == 1 ? XPAR_TIER_CPU_SERIAL : XPAR_TIER_CUDA;
      if (d.tier != want) xt_failf(label, "ran on %s: %s", xpar_tier_name(d.tier), d.reason);
      if (policy == 1 && !managed && d.bytes_to_host < 2 * sizeof x)
        xt_failf(label, "forced CPU moved %zu bytes to the host", d.bytes_to_host);
      CUDA_OK(cudaMemcpy(got, dy, sizeof got, cudaMemcpyDeviceToHost));
      check_axpy(label, got, a, x, y);
      /* An operator on the same device data. */
      uint32_t sum = 0, want_sum = 0;
      XT_OK(xpar_reduce_op(ctx, &xk_sum_u32, dx, N, &sum));
      for (size_t i = 0; i < N; i++) want_sum += x[i];
      if (sum != want_sum) xt_failf(label, "operator sum %u, expected %u", sum, want_sum);
      XT_OK(xpar_scan_op(ctx, &xk_sum_u32, XPAR_INCLUSIVE, dx, dy, N));
      CUDA_OK(cudaMemcpy(got, dy, sizeof got, cudaMemcpyDeviceToHost));
      uint32_t acc = 0;
      for (size_t i = 0; i < N; i++) {
        acc += x[i];
        if (got[i] != acc) xt_failf(label, "operator scan out[%zu] = %u, expected %u", i, got[i], acc);
      }
      /* The nowait operator calls with their outputs on the device (the reduce's
       * result too): written once the queue completes (xpar_wait). */
      uint32_t *dsum;
      if (managed)
        CUDA_OK(cudaMallocManaged((void **)&dsum, sizeof *dsum, cudaMemAttachGlobal));
      else
        CUDA_OK(cudaMalloc((void **)&dsum, sizeof *dsum));
      CUDA_OK(cudaMemset(dsum, 0xA5, sizeof *dsum));
      CUDA_OK(cudaMemset(dy, 0xA5, sizeof y));
      XT_OK(xpar_reduce_op_nowait(ctx, &xk_sum_u32, dx, N, dsum));
      XT_OK(xpar_scan_op_nowait(ctx, &xk_sum_u32, XPAR_EXCLUSIVE, dx, dy, N));
      XT_OK(xpar_wait(ctx));
      CUDA_OK(cudaMemcpy(&sum, dsum, sizeof sum, cudaMemcpyDeviceToHost));
      if (sum != want_sum) xt_failf(label, "operator sum nowait %u, expected %u", sum, want_sum);
      CUDA_OK(cudaMemcpy(got, dy, sizeof got, cudaMemcpyDeviceToHost));
      acc = 0;
      for (size_t i = 0; i < N; i++) {
        if (got[i] != acc)
          xt_failf(label, "operator exclusive scan nowait out[%zu] = %u, expected %u", i, got[i], acc);
        acc += x[i];
      }
      CUDA_OK(cudaFree(dsum));
      xpar_context_destroy(ctx);
      CUDA_OK(cudaFree(dx));
      CUDA_OK(cudaFree(dy));
    }
}
#endif

int main(int argc, char **argv) {
  xt_init("test_kernel_gpu", argc, argv);
#if defined(XT_HAVE_CUDART)
  if (!xt_gpu_usable()) {
    printf("test_kernel_gpu: skipped, no usable GPU (%s)\n", xt_gpu_reason());
    return 77;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(t_mapped), cmocka_unit_test(t_device_pointers)};
  return cmocka_run_group_tests_name("kernel_gpu", tests, NULL, NULL);
#else
  printf("test_kernel_gpu: skipped, built without the CUDA runtime\n");
  return 77;
#endif
}
