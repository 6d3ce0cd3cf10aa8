/* An application of the installed xpar: sum, scan and dot on the host,
 * checked exactly; prints the tier that ran. */
#include <stdio.h>

#include <xpar/xpar.h>

int main(void) {
  xpar_context *ctx = NULL;
  xpar_status st = xpar_context_create(&ctx);
  if (st != XPAR_OK) {
    fprintf(stderr, "xpar_context_create: %s (%s)\n", xpar_status_name(st), xpar_last_error_detail());
    return 1;
  }
  enum { N = 1000 };
  static int64_t v[N], pre[N];
  for (int i = 0; i < N; i++) v[i] = i + 1;
  int64_t sum = 0, dot = 0;
  int bad = 0;
  if (xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, v, N, &sum) != XPAR_OK || sum != (int64_t)N * (N + 1) / 2) bad = 1;
  if (xpar_scan(ctx, XPAR_INT64, XPAR_SUM, XPAR_INCLUSIVE, v, pre, N) != XPAR_OK || pre[N - 1] != sum) bad = 1;
  if (xpar_dot(ctx, XPAR_INT64, v, v, N, &dot) != XPAR_OK || dot != (int64_t)N * (N + 1) * (2 * N + 1) / 6) bad = 1;
  xpar_decision d;
  xpar_last_decision(ctx, &d);
  printf("consumer_c: xpar %d.%d.%d, sum %lld, dot %lld, last call on %s: %s\n", XPAR_VERSION_MAJOR,
         XPAR_VERSION_MINOR, XPAR_VERSION_PATCH, (long long)sum, (long long)dot, xpar_tier_name(d.tier),
         bad ? "WRONG" : "ok");
  xpar_context_destroy(ctx);
  return bad;
}
