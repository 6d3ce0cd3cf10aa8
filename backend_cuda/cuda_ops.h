/*
 * The C-callable entry points of the CUDA backend, as the backend table
 * (cuda_backend_table.c) references them.  Implemented in the .cu files of
 * this folder with extern "C" linkage; no C++ type crosses this header.
 */
#ifndef XPAR_BACKEND_CUDA_OPS_H
#define XPAR_BACKEND_CUDA_OPS_H

#include "base/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* operations (device_reduce.cu, device_scan.cu, device_elementwise.cu) */
xpar_status xpar__cuda_reduce(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                              const void *in, size_t n, void *result);
xpar_status xpar__cuda_reduce_sum_wide(const xpar__exec *ex, xpar_dtype t, const void *in,
                                       size_t n, void *result);
xpar_status xpar__cuda_dot(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y,
                           size_t n, void *result);
xpar_status xpar__cuda_scan(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                            xpar_scan_kind kind, const xpar__scalar *init, const void *in,
                            void *out, size_t n);
xpar_status xpar__cuda_axpy(const xpar__exec *ex, xpar_dtype t, const void *alpha, const void *x,
                            void *y, size_t n);
xpar_status xpar__cuda_add(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y,
                           void *z, size_t n);
xpar_status xpar__cuda_fill(const xpar__exec *ex, xpar_dtype t, const void *value, void *out,
                            size_t n);

/* stable sort (device_sort.cu, device_sort64.cu) */
xpar_status xpar__cuda_sort(const xpar__exec *ex, const xpar__sort_spec *s);

/* compaction: select, select_flagged, partition, unique (device_select.cu) */
xpar_status xpar__cuda_select(const xpar__exec *ex, const xpar__select_spec *s);
xpar_status xpar__cuda_op_select(const xpar__exec *ex, const struct xpar_predicate_op *pred,
                                 int partition, size_t n, const void *in, void *out,
                                 uint64_t *count);

/* runs: run-length encode, reduce by key (device_runs.cu) */
xpar_status xpar__cuda_runs(const xpar__exec *ex, const xpar__runs_spec *s);

/* argmin / argmax, segmented reduce and scan (device_segmented.cu) */
xpar_status xpar__cuda_segmented(const xpar__exec *ex, const xpar__seg_spec *s);
/* histogram: even or range bins (device_histogram.cu) */
xpar_status xpar__cuda_histogram(const xpar__exec *ex, const xpar__histogram_spec *s);

/* application kernels (device_kernel.cu) */
xpar_status xpar__cuda_launch(const xpar__exec *ex, const struct xpar_kernel *k, size_t n,
                              const struct xpar_kernel_args *args);
xpar_status xpar__cuda_op_reduce(const xpar__exec *ex, const struct xpar_operator *op, size_t n,
                                 const void *in, void *result);
xpar_status xpar__cuda_op_scan(const xpar__exec *ex, const struct xpar_operator *op,
                               xpar_scan_kind kind, size_t n, const void *in, void *out);

/* reproducible mode (device_repro.cu; docs/reproducible.md) */
xpar_status xpar__cuda_repro_reduce(const xpar__exec *ex, xpar__repro_kind kind, xpar_dtype t,
                                    const void *x, const void *y, size_t n, void *result);
xpar_status xpar__cuda_repro_scan(const xpar__exec *ex, xpar_dtype t, xpar_scan_kind kind,
                                  const xpar__scalar *init, const void *in, void *out, size_t n);

/* device management (cuda_query.cu, cuda_state.cu) */
xpar_status xpar__cuda_query(int device, xpar_device_info *out);
xpar_status xpar__cuda_state_create(int device, void *stream, struct xpar__cuda_state **out);
void xpar__cuda_state_destroy(struct xpar__cuda_state *st);
xpar_status xpar__cuda_set_stream(struct xpar__cuda_state *st, void *stream);
int xpar__cuda_stream_device(void *stream);
xpar_status xpar__cuda_pointer_kind(const void *p, xpar__ptr_kind *out);
int xpar__cuda_pointer_range(const void *p, uintptr_t *start, size_t *size);
int xpar__cuda_device_of(const void *p);
int xpar__cuda_device_can_access(struct xpar__cuda_state *st, const void *p);
void xpar__cuda_restore_caller(void);
xpar_status xpar__cuda_host_alloc(struct xpar__cuda_state *st, size_t bytes, void **out);
void xpar__cuda_host_free(struct xpar__cuda_state *st, void *p);
xpar_status xpar__cuda_alloc(struct xpar__cuda_state *st, size_t bytes, void **out);
void xpar__cuda_free(struct xpar__cuda_state *st, void *p);
xpar_status xpar__cuda_staging(struct xpar__cuda_state *st, int slot, size_t bytes, void **out);
xpar_status xpar__cuda_copy(struct xpar__cuda_state *st, void *dst, const void *src, size_t bytes,
                            xpar__copy_dir dir);
xpar_status xpar__cuda_wait(struct xpar__cuda_state *st);
int xpar__cuda_capturing(struct xpar__cuda_state *st);
xpar_status xpar__cuda_release_cache(struct xpar__cuda_state *st);

/* Kernel launches made by this state so far (tests, bench); 0 for NULL. */
unsigned long long xpar__cuda_launch_count(const struct xpar__cuda_state *st);

#ifdef __cplusplus
}
#endif

#endif /* XPAR_BACKEND_CUDA_OPS_H */
