/* Reading a threshold off two measured curves (crossing.h). */
#include "crossing.h"

#include <math.h>
#include <stdlib.h>

int xpar__crossing(const double *a, const double *b, int lo, int hi) {
  int result = XPAR__EXP_NO_DATA;
  for (int e = hi; e >= lo; --e) {
    if (isnan(a[e]) || isnan(b[e]) || (isinf(a[e]) && isinf(b[e]))) continue;
    if (b[e] < a[e]) {
      result = e;
    } else {
      if (result == XPAR__EXP_NO_DATA) result = XPAR__EXP_NEVER;
      break;
    }
  }
  return result;
}

/* AUTO's worst ratio over lo..hi with threshold candidate k (k < lo: never). */
static double worst_with(const double *below, const double *above, int lo, int hi, int k,
                         int *at) {
  double worst = 0;
  *at = -1;
  for (int e = lo; e <= hi; ++e) {
    if (isnan(below[e]) || isnan(above[e])) continue;
    double r = (k >= lo && e >= k ? above[e] : below[e]) / fmin(below[e], above[e]);
    if (r > worst) worst = r, *at = e;
  }
  return worst;
}

xpar__threshold_choice xpar__threshold_pick(const double *below, const double *above, int lo,
                                            int hi) {
  xpar__threshold_choice c;
  c.crossing = xpar__crossing(below, above, lo, hi);
  if (c.crossing == XPAR__EXP_NO_DATA) c.crossing = XPAR__EXP_NEVER;
  /* candidate k = lo - 1 stands for "never"; k >= lo for 2^k */
  double best = INFINITY;
  for (int k = lo - 1; k <= hi; ++k) {
    int at;
    best = fmin(best, worst_with(below, above, lo, hi, k, &at));
  }
  int xk = c.crossing == XPAR__EXP_NEVER ? lo - 1 : c.crossing, pk = lo - 1, have = 0;
  for (int k = lo - 1; k <= hi; ++k) {
    int at;
    if (worst_with(below, above, lo, hi, k, &at) <= 1.02 * best &&
        (!have || abs(k - xk) < abs(pk - xk)))
      pk = k, have = 1;
  }
  c.pick = pk < lo ? XPAR__EXP_NEVER : pk;
  c.worst = worst_with(below, above, lo, hi, pk, &c.worst_at);
  return c;
}
