/* session 14: xpar_add AUTO on 128 int32, ns per call: x, y, out carved from one
 * cudaMallocHost block, three cudaMallocHost blocks, malloc'd arrays.
 * Rows interleaved, 9 rounds of 20,000 calls, median; results checked. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "xpar/xpar.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
enum { N = 128, CALLS = 20000, ROUNDS = 9, ROWS = 3 };
int main(void) {
  xpar_context *ctx; if (xpar_context_create(&ctx) != XPAR_OK) return 1;
  int32_t *blk, *p[3], *m[3];
  if (cudaMallocHost((void **)&blk, 3 * N * 4) != cudaSuccess) { printf("no GPU\n"); return 77; }
  for (int i = 0; i < 3; i++) { if (cudaMallocHost((void **)&p[i], N * 4) != cudaSuccess) return 77; m[i] = malloc(N * 4); }
  int32_t *arr[ROWS][3] = {{blk, blk + N, blk + 2 * N}, {p[0], p[1], p[2]}, {m[0], m[1], m[2]}};
  const char *names[ROWS] = {"one pinned block", "three pinned blocks", "pageable (malloc)"};
  double t[ROWS][ROUNDS];
  for (int r = 0; r < ROWS; r++) for (int i = 0; i < N; i++) { arr[r][0][i] = i; arr[r][1][i] = 3 * i; }
  for (int round = 0; round < ROUNDS; round++)
    for (int k = 0; k < ROWS; k++) {
      int r = (k + round) % ROWS;
      double t0 = now();
      for (int c = 0; c < CALLS; c++) if (xpar_add(ctx, XPAR_INT32, arr[r][0], arr[r][1], arr[r][2], N) != XPAR_OK) return 2;
      t[r][round] = (now() - t0) / CALLS;
      for (int i = 0; i < N; i++) if (arr[r][2][i] != 4 * i) { printf("WRONG %s\n", names[r]); return 3; }
    }
  xpar_decision d; xpar_last_decision(ctx, &d);
  for (int r = 0; r < ROWS; r++) { qsort(t[r], ROUNDS, sizeof(double), cmp); printf("add int32 128 AUTO, %-20s %7.1f ns (min %.1f, max %.1f)\n", names[r], t[r][ROUNDS / 2], t[r][0], t[r][ROUNDS - 1]); }
  printf("last tier %s\n", xpar_tier_name(d.tier));
  return 0;
}
