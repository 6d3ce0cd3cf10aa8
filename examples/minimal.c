/* The smallest useful xpar program: sum and prefix-sum an array. */
#include <stdio.h>
#include <stdlib.h>
#include <xpar/xpar.h>

int main(void) {
  enum { N = 1000000 };
  int32_t *a = malloc(N * sizeof *a), *prefix = malloc(N * sizeof *prefix);
  if (!a || !prefix) return 1;
  for (int i = 0; i < N; i++) a[i] = i % 7;

  xpar_context *ctx;
  if (xpar_context_create(&ctx) != XPAR_OK) {
    fprintf(stderr, "xpar: %s\n", xpar_last_error_detail());
    return 1;
  }
  int64_t sum;
  xpar_status st = xpar_reduce_sum_wide(ctx, XPAR_INT32, a, N, &sum);
  if (st == XPAR_OK) st = xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, a, prefix, N);
  if (st != XPAR_OK) {
    fprintf(stderr, "xpar: %s: %s\n", xpar_status_name(st), xpar_last_error_detail());
    return 1;
  }
  xpar_decision d;
  xpar_last_decision(ctx, &d);
  printf("sum = %lld, prefix[N-1] = %d (scan ran on %s: %s)\n", (long long)sum, prefix[N - 1],
         xpar_tier_name(d.tier), d.reason);
  xpar_context_destroy(ctx);
  free(a);
  free(prefix);
  return 0;
}
