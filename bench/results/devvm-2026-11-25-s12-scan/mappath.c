/* Instruction count of 128-element host calls on arrays mapped with xpar_map (fake GPU backend:
 * malloc'ed "device" memory, memcpy copies) against the same calls on pageable arrays. */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xpar/xpar.h"
#include "state.h"
static xpar_status fake_query(int device, xpar_device_info *out) {
  memset(out, 0, sizeof *out); out->usable = 1; out->device_count = 1; out->device = device < 0 ? 0 : device;
  snprintf(out->name, sizeof out->name, "fake GPU"); return XPAR_OK; }
static xpar_status fake_pointer_kind(const void *p, xpar__ptr_kind *out) { (void)p; *out = XPAR__PTR_HOST_PAGEABLE; return XPAR_OK; }
static int dummy_state;
static xpar_status fake_state_create(int device, struct xpar__cuda_state **out) { (void)device; *out = (struct xpar__cuda_state *)&dummy_state; return XPAR_OK; }
static void fake_state_destroy(struct xpar__cuda_state *st) { (void)st; }
static xpar_status fake_alloc(struct xpar__cuda_state *st, size_t bytes, void **out) { (void)st; *out = malloc(bytes); return XPAR_OK; }
static void fake_free(struct xpar__cuda_state *st, void *p) { (void)st; free(p); }
static xpar_status fake_copy(struct xpar__cuda_state *st, void *dst, const void *src, size_t bytes, xpar__copy_dir dir) { (void)st; (void)dir; memcpy(dst, src, bytes); return XPAR_OK; }
static xpar_status fake_wait(struct xpar__cuda_state *st) { (void)st; return XPAR_OK; }
static const xpar__backend fake_gpu = {.name = "fake-gpu", .query = fake_query, .pointer_kind = fake_pointer_kind,
  .state_create = fake_state_create, .state_destroy = fake_state_destroy, .alloc = fake_alloc, .free = fake_free,
  .copy = fake_copy, .wait = fake_wait};
__attribute__((noinline)) void run_fill_mapped(xpar_context *c, int32_t *x, long iters) { int32_t v = 7; for (long i = 0; i < iters; i++) xpar_fill(c, XPAR_INT32, &v, x + 2048, 128); }
__attribute__((noinline)) void run_add_mapped(xpar_context *c, int32_t *x, long iters) { for (long i = 0; i < iters; i++) xpar_add(c, XPAR_INT32, x, x + 1024, x + 2048, 128); }
__attribute__((noinline)) void run_scan_mapped(xpar_context *c, int32_t *x, long iters) { for (long i = 0; i < iters; i++) xpar_scan(c, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x, x + 2048, 128); }
__attribute__((noinline)) void run_fill_pageable(xpar_context *c, int32_t *x, long iters) { int32_t v = 7; for (long i = 0; i < iters; i++) xpar_fill(c, XPAR_INT32, &v, x + 2048, 128); }
__attribute__((noinline)) void run_add_pageable(xpar_context *c, int32_t *x, long iters) { for (long i = 0; i < iters; i++) xpar_add(c, XPAR_INT32, x, x + 1024, x + 2048, 128); }
__attribute__((noinline)) void run_scan_pageable(xpar_context *c, int32_t *x, long iters) { for (long i = 0; i < iters; i++) xpar_scan(c, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x, x + 2048, 128); }
int main(int argc, char **argv) {
  xpar__gpu_backend_set_double(&fake_gpu);
  long iters = argc > 1 ? atol(argv[1]) : 1000;
  int32_t *x = aligned_alloc(4096, 3 * 4096), *p = aligned_alloc(4096, 3 * 4096);
  memset(x, 0, 3 * 4096); memset(p, 0, 3 * 4096);
  xpar_context *cm, *cp; xpar_context_create(&cm); xpar_context_create(&cp);
  /* three arrays, three mappings, as the regret bench maps them */
  for (int k = 0; k < 3; k++) if (xpar_map(cm, x + 1024 * k, 4096, XPAR_MAP_TO) != XPAR_OK) { printf("map failed: %s\n", xpar_last_error_detail()); return 1; }
  run_fill_mapped(cm, x, iters); run_add_mapped(cm, x, iters); run_scan_mapped(cm, x, iters);
  run_fill_pageable(cp, p, iters); run_add_pageable(cp, p, iters); run_scan_pageable(cp, p, iters);
  xpar_decision d; xpar_last_decision(cm, &d); printf("mapped: tier %s (%s)\n", xpar_tier_name(d.tier), d.reason);
  return 0;
}
