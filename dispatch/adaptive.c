/* Adaptive AUTO's cells and schedule (adaptive.h says what and why). */
#include "adaptive.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

xpar_tier xpar__adapt_choose(xpar_context *ctx, xpar_op op, xpar_dtype dtype, size_t n,
                             xpar__crossing_kind kind, size_t t, xpar_tier small, xpar_tier large,
                             xpar_tier tier, xpar__decision_raw *d, xpar__adapt_step *step) {
  step->cell = NULL;
  if (!ctx->adaptive || !xpar__adapt_in_band(n, t)) return tier;
  if (!ctx->adapt_cells && !(ctx->adapt_cells = calloc(1, sizeof *ctx->adapt_cells)))
    return tier; /* no memory for the cells: the threshold decides, as without them */
  const int idx = xpar__floor_log2(n) - xpar__floor_log2(t) + XPAR__ADAPT_CLASSES_BELOW;
  xpar__adapt_cell *cl = &ctx->adapt_cells->cell[op][dtype][kind][idx];
  /* Measured around another threshold, team or pair of tiers (a profile
   * loaded since, the team resized): measure again. */
  if (cl->threshold != t || cl->num_threads != ctx->num_threads || cl->tier[0] != small ||
      cl->tier[1] != large) {
    memset(cl, 0, sizeof *cl);
    cl->threshold = t;
    cl->num_threads = ctx->num_threads;
    cl->tier[0] = small;
    cl->tier[1] = large;
    cl->first = tier == large;
  }
  int side;
  switch (cl->verdict) {
    case XPAR__ADAPT_SMALL_SIDE: side = 0; break;
    case XPAR__ADAPT_LARGE_SIDE: side = 1; break;
    case XPAR__ADAPT_TIE: side = tier == large; break;
    default: /* measuring: a run of calls on the first side, then one on the other */
      side = cl->calls < XPAR__ADAPT_CALLS / 2 ? cl->first : !cl->first;
      break;
  }
  step->cell = cl;
  step->side = side;
  d->adapt = (unsigned char)(cl->verdict + 1);
  d->adapt_call = (unsigned char)(cl->calls + 1);
  d->adapt_tier[0] = small;
  d->adapt_tier[1] = large;
  d->adapt_ns[0] = cl->best_ns[0];
  d->adapt_ns[1] = cl->best_ns[1];
  return cl->tier[side];
}

void xpar__adapt_start(xpar__adapt_step *s) { s->start_ns = now_ns(); }

void xpar__adapt_record(xpar__adapt_step *s) {
  xpar__adapt_cell *cl = s->cell;
  if (!cl || cl->verdict != XPAR__ADAPT_MEASURING) return;
  const uint64_t ns = now_ns() - s->start_ns;
  const int side = s->side;
  if (cl->seen[side]) /* a run's first call is its warm-up */
    if (!cl->best_ns[side] || ns < cl->best_ns[side]) cl->best_ns[side] = ns ? ns : 1;
  cl->seen[side]++;
  if (++cl->calls < XPAR__ADAPT_CALLS) return;
  const double small = (double)cl->best_ns[0], large = (double)cl->best_ns[1];
  cl->verdict = large <= XPAR__ADAPT_MARGIN * small   ? XPAR__ADAPT_LARGE_SIDE
                : small <= XPAR__ADAPT_MARGIN * large ? XPAR__ADAPT_SMALL_SIDE
                                                      : XPAR__ADAPT_TIE;
}

void xpar__adapt_free(xpar_context *ctx) {
  free(ctx->adapt_cells);
  ctx->adapt_cells = NULL;
}
