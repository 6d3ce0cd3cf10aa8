// The public header compiles as C++17 with -Wall -Wextra -Wpedantic -Werror,
// its declarations have C linkage (this links against the C library), and
// its enums and X-macros are usable from C++.
#include "xpar/xpar.h"
// The kernel header too: a C++ file declares and launches kernels and
// operators defined in kernel sources (XPAR_KERNEL_DECLARE: C linkage).
#include "xpar/xpar_kernel.h"

#include <cstdio>
#include <cstring>

namespace {
#define XT_COUNT_STATUS_(name, value, text) +1
constexpr int kStatusCount = 0 XPAR_STATUS_MAP(XT_COUNT_STATUS_);
#undef XT_COUNT_STATUS_
static_assert(kStatusCount >= 20, "status map shrank");
static_assert(XPAR_OK == 0, "XPAR_OK is 0");
static_assert(sizeof(xpar_decision) > 0, "decision is a complete type");
static_assert(sizeof(xpar_kernel_args) == 192, "kernel arguments: 8 pointers, 8 x 16-byte scalars");
}  // namespace

int main() {
  int bad = 0;
  if (std::strcmp(xpar_status_name(XPAR_ERR_NULL_CONTEXT), "ERR_NULL_CONTEXT") != 0) {
    std::printf("xpar_status_name(XPAR_ERR_NULL_CONTEXT) = \"%s\"\n",
                xpar_status_name(XPAR_ERR_NULL_CONTEXT));
    bad = 1;
  }
  if (std::strcmp(xpar_dtype_name(XPAR_DOUBLE), "double") != 0 || xpar_dtype_size(XPAR_INT64) != 8) {
    std::printf("xpar_dtype_name / xpar_dtype_size disagree with the header\n");
    bad = 1;
  }
  // A context round trip through the C ABI.
  xpar_context *ctx = nullptr;
  xpar_status st = xpar_context_create(&ctx);
  if (st != XPAR_OK || ctx == nullptr) {
    std::printf("xpar_context_create: %s (%s)\n", xpar_status_name(st), xpar_last_error_detail());
    return 1;
  }
  int32_t v[3] = {1, 2, 3};
  int32_t sum = 0;
  st = xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, v, 3, &sum);
  if (st != XPAR_OK || sum != 6) {
    std::printf("xpar_reduce from C++: %s, sum %d\n", xpar_status_name(st), (int)sum);
    bad = 1;
  }
  xpar_context_destroy(ctx);
  std::printf("test_header_cxx: %s\n", bad ? "FAILED" : "ok");
  return bad;
}
