// The same from C++: the header's extern "C" makes the C library link.
#include <xpar/xpar.h>

#include <cstdio>
#include <numeric>
#include <vector>

int main() {
  xpar_context *ctx = nullptr;
  if (xpar_context_create(&ctx) != XPAR_OK) {
    std::fprintf(stderr, "xpar_context_create: %s\n", xpar_last_error_detail());
    return 1;
  }
  std::vector<double> v(4097);
  std::iota(v.begin(), v.end(), 1.0);
  double sum = 0;
  xpar_status st = xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, v.data(), v.size(), &sum);
  const double want = 4097.0 * 4098.0 / 2.0;  // exact in double
  const bool ok = st == XPAR_OK && sum == want;
  std::printf("consumer_cxx: sum %.1f (%s): %s\n", sum, xpar_status_name(st), ok ? "ok" : "WRONG");
  xpar_context_destroy(ctx);
  return ok ? 0 : 1;
}
