/*
 * xpar mixed with the application's own CUDA kernels on the default stream.
 *
 * The application's kernels and xpar's calls need no synchronisation between
 * them: xpar orders its GPU work after what the application queued on stream 0
 * before a call, and stream-0 work queued after a call sees its outputs
 * (README: "Stream order").  An application built with
 * --default-stream per-thread would call xpar_context_set_stream(ctx,
 * cudaStreamPerThread) first.  Without a usable GPU the example says so and
 * exits 0.
 */
#include <cuda_runtime.h>
#include <stdio.h>

#include <xpar/xpar.h>

__global__ void make_input(int *a, size_t n) { /* the application's producer */
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    a[i] = (int)(i % 10);
}
__global__ void use_prefix(const int *prefix, size_t n, int *last) { /* the consumer */
  if (blockIdx.x == 0 && threadIdx.x == 0) *last = prefix[n - 1];
}

int main(void) {
  xpar_device_info info;
  xpar_device_query(&info);
  if (!info.usable) {
    printf("no usable GPU (%s): nothing to mix\n", info.reason);
    return 0;
  }
  const size_t n = (size_t)1 << 24;
  int *a, *prefix, *last;
  if (cudaMalloc(&a, n * sizeof *a) != cudaSuccess || cudaMalloc(&prefix, n * sizeof *prefix) ||
      cudaMalloc(&last, sizeof *last))
    return 1;
  xpar_context *ctx;
  if (xpar_context_create(&ctx) != XPAR_OK) {
    fprintf(stderr, "xpar: %s\n", xpar_last_error_detail());
    return 1;
  }

  make_input<<<264, 256>>>(a, n);               /* stream 0, no sync needed */
  long long sum = 0;
  xpar_status st = xpar_reduce_sum_wide(ctx, XPAR_INT32, a, n, &sum); /* sees make_input's data */
  if (st == XPAR_OK)                                                  /* queued, returns at once */
    st = xpar_scan_nowait(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, a, prefix, n);
  use_prefix<<<1, 32>>>(prefix, n, last);        /* stream 0: runs after the scan */
  int host_last = 0;
  cudaMemcpy(&host_last, last, sizeof host_last, cudaMemcpyDeviceToHost);
  if (st == XPAR_OK) st = xpar_wait(ctx);
  if (st != XPAR_OK) {
    fprintf(stderr, "xpar: %s: %s\n", xpar_status_name(st), xpar_last_error_detail());
    return 1;
  }
  xpar_decision d;
  xpar_last_decision(ctx, &d);
  printf("sum = %lld, last prefix = %d (%s), scan ran on %s: %s\n", sum, host_last,
         sum == host_last ? "agree" : "DISAGREE", xpar_tier_name(d.tier), d.reason);
  xpar_context_destroy(ctx);
  cudaFree(a), cudaFree(prefix), cudaFree(last);
  return sum == host_last ? 0 : 1;
}
