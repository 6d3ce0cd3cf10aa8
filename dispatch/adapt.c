/* AUTO's self-correction: a site's two estimates and the choice between its
 * tiers (adapt.h states the rules and their reasons). */
#include <stdlib.h>
#include <time.h>

#include "adapt.h"

void xpar__adapt_site_init(xpar__adapt_site *s, xpar_tier static_tier, xpar_tier alt_tier) {
  *s = (xpar__adapt_site){.static_tier = (unsigned char)static_tier,
                          .alt_tier = (unsigned char)alt_tier,
                          .sample_in = 1, /* the first call is timed */
                          .sample_period = 1,
                          .probe_gap = XPAR__ADAPT_MIN_GAP};
}

xpar__adapt_site *xpar__adapt_row_new(void) {
  xpar__adapt_site *row = calloc((size_t)XPAR__ADAPT_WHERE_COUNT * XPAR__ADAPT_BUCKETS, sizeof *row);
  if (row)
    for (int i = 0; i < XPAR__ADAPT_WHERE_COUNT * XPAR__ADAPT_BUCKETS; i++)
      row[i].static_tier = row[i].alt_tier = (unsigned char)XPAR_TIER_NONE;
  return row;
}

uint64_t xpar__adapt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether the time share allows timing the tier not running now: its last
 * estimate times `share` has passed since it was last timed (unknown: yes). */
static int share_allows(const xpar__adapt_site *s, const xpar__adapt_estimate *other,
                        float share, uint64_t now_ns) {
  if (!other->samples) return 1;
  const double since = now_ns > s->last_probe_ns ? (double)(now_ns - s->last_probe_ns) : 0.0;
  return since >= (double)share * other->recent_ns;
}

xpar__adapt_choice xpar__adapt_choose(const xpar__adapt_site *s, uint64_t now_ns) {
  const xpar_tier running = xpar__adapt_running(s);
  xpar__adapt_choice ch = {running, 0};
  const xpar__adapt_estimate *st = &s->est[XPAR__ADAPT_STATIC], *alt = &s->est[XPAR__ADAPT_ALT];
  if (s->probe_again) {
    ch.tier = s->adapted ? (xpar_tier)s->static_tier : (xpar_tier)s->alt_tier;
    ch.probe = 1;
    return ch;
  }
  if (!s->adapted) {
    /* The static tier runs.  The alternative is timed once the static tier has
     * a warm number to compare with, then again with backoff: it is what the
     * static tier is judged against. */
    if (st->samples < 2) return ch;
    const int due = !alt->samples || s->calls_since_probe >= s->probe_gap ||
                    (st->recent_ns > XPAR__ADAPT_SLOWED_FACTOR * st->best_ns &&
                     s->calls_since_probe >= XPAR__ADAPT_MIN_GAP);
    if (due && share_allows(s, alt, XPAR__ADAPT_SHARE, now_ns)) {
      ch.tier = (xpar_tier)s->alt_tier;
      ch.probe = 1;
    }
    return ch;
  }
  /* The alternative runs: retry the displaced tier when its gap is over, or
   * at once when the alternative itself got markedly faster (the machine got
   * lighter), each within its share of the time. */
  const int lighter = alt->recent_ns < XPAR__ADAPT_LIGHTER_FACTOR * s->alt_ref_ns;
  if ((s->calls_since_probe >= s->probe_gap && share_allows(s, st, XPAR__ADAPT_SHARE, now_ns)) ||
      (lighter && share_allows(s, st, XPAR__ADAPT_QUICK_SHARE, now_ns))) {
    ch.tier = (xpar_tier)s->static_tier;
    ch.probe = 1;
  }
  return ch;
}

static uint32_t doubled(uint32_t gap, uint32_t cap) { return gap >= cap / 2 ? cap : 2 * gap; }

void xpar__adapt_observe(xpar__adapt_site *s, xpar_tier tier, int probe, double ns,
                         uint64_t now_ns) {
  const int which = tier == (xpar_tier)s->static_tier ? XPAR__ADAPT_STATIC : XPAR__ADAPT_ALT;
  xpar__adapt_estimate *e = &s->est[which];
  const float t = (float)(ns > 0 ? ns : 0);
  /* A probe's number replaces the old one: it was taken after a gap, and what
   * the tier cost then says nothing about now. */
  if (e->samples < 2 || probe)
    e->recent_ns = t;
  else
    e->recent_ns += (t - e->recent_ns) * 0.25f;
  if (!e->samples || e->recent_ns < e->best_ns) e->best_ns = e->recent_ns;
  if (e->samples < UINT32_MAX) e->samples++;
  s->calls_since_probe += s->sample_period;

  const xpar__adapt_estimate *st = &s->est[XPAR__ADAPT_STATIC], *alt = &s->est[XPAR__ADAPT_ALT];
  const int both = st->samples && alt->samples;
  const int moves = s->adapted ? st->recent_ns <= XPAR__ADAPT_BACK_FACTOR * alt->recent_ns
                               : both && st->recent_ns > XPAR__ADAPT_MOVE_FACTOR * alt->recent_ns;
  if (probe && !moves && !s->probe_again) {
    /* Perhaps only waking the tier: the next call times it again. */
    s->probe_again = 1;
    s->sample_in = 1;
    return;
  }
  s->probe_again = 0;
  if (probe) {
    s->last_probe_ns = now_ns;
    s->calls_since_probe = 0;
  }
  if (!s->adapted) {
    if (both && st->recent_ns > XPAR__ADAPT_MOVE_FACTOR * alt->recent_ns) {
      s->adapted = 1;
      s->alt_ref_ns = alt->recent_ns;
      s->probe_gap = XPAR__ADAPT_MIN_GAP;
      s->calls_since_probe = 0;
      s->last_probe_ns = now_ns; /* the static tier's time share starts now */
    } else if (probe) {
      s->probe_gap = doubled(s->probe_gap, XPAR__ADAPT_MAX_GAP_STATIC);
    }
  } else {
    if (probe && st->recent_ns <= XPAR__ADAPT_BACK_FACTOR * alt->recent_ns) {
      s->adapted = 0;
      s->probe_gap = XPAR__ADAPT_MIN_GAP;
    } else if (probe) {
      s->probe_gap = doubled(s->probe_gap, XPAR__ADAPT_MAX_GAP_ADAPTED);
      s->alt_ref_ns = alt->recent_ns; /* lighter than this, next time */
    } else if (alt->recent_ns > s->alt_ref_ns) {
      s->alt_ref_ns = alt->recent_ns; /* heavier still: the reference rises with it */
    }
  }
  const xpar__adapt_estimate *now_running = &s->est[s->adapted ? XPAR__ADAPT_ALT : XPAR__ADAPT_STATIC];
  s->sample_period =
      now_running->samples && now_running->recent_ns < XPAR__ADAPT_SAMPLE_ALL_NS
          ? XPAR__ADAPT_SAMPLE_PERIOD
          : 1;
  s->sample_in = (int32_t)s->sample_period;
}
