/* The CUDA backend's table: what dispatch calls (see dispatch/backend.h). */
#include "backend_cuda/cuda_ops.h"

const xpar__backend xpar__cuda_backend = {
    .name = "cuda",
    .reduce = xpar__cuda_reduce,
    .reduce_sum_wide = xpar__cuda_reduce_sum_wide,
    .scan = xpar__cuda_scan,
    .axpy = xpar__cuda_axpy,
    .add = xpar__cuda_add,
    .fill = xpar__cuda_fill,
    .dot = xpar__cuda_dot,
    .launch = xpar__cuda_launch,
    .op_reduce = xpar__cuda_op_reduce,
    .op_scan = xpar__cuda_op_scan,
    .repro_reduce = xpar__cuda_repro_reduce,
    .repro_scan = xpar__cuda_repro_scan,
    .query = xpar__cuda_query,
    .state_create = xpar__cuda_state_create,
    .state_destroy = xpar__cuda_state_destroy,
    .set_stream = xpar__cuda_set_stream,
    .pointer_kind = xpar__cuda_pointer_kind,
    .alloc = xpar__cuda_alloc,
    .free = xpar__cuda_free,
    .staging = xpar__cuda_staging,
    .copy = xpar__cuda_copy,
    .wait = xpar__cuda_wait,
    .release_cache = xpar__cuda_release_cache,
};
