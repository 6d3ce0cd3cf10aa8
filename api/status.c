/* Public status and enumeration names: the floor's (base/), behind XPAR_API. */
#include "base/base.h"

XPAR_API const char *xpar_last_error_detail(void) { return xpar__error_detail(); }
XPAR_API const char *xpar_status_string(xpar_status status) { return xpar__status_text(status); }
XPAR_API const char *xpar_status_name(xpar_status status) { return xpar__status_name(status); }
XPAR_API const char *xpar_dtype_name(xpar_dtype dtype) { return xpar__dtype_name(dtype); }
XPAR_API size_t xpar_dtype_size(xpar_dtype dtype) { return xpar__dtype_size(dtype); }
XPAR_API const char *xpar_op_name(xpar_op op) { return xpar__op_name(op); }
XPAR_API const char *xpar_backend_name(xpar_backend b) { return xpar__backend_name(b); }
XPAR_API const char *xpar_tier_name(xpar_tier tier) { return xpar__tier_name(tier); }
