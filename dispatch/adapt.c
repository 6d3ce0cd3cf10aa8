/* AUTO's self-correction: a site's two estimates and the choice between its
 * tiers (adapt.h states the rules and their reasons). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef __linux__
#include <fcntl.h>
#include <unistd.h>
#endif

#include "adapt.h"

void xpar__adapt_site_init(xpar__adapt_site *s, xpar_tier static_tier, xpar_tier alt_tier,
                           float prior_factor) {
  *s = (xpar__adapt_site){.static_tier = (unsigned char)static_tier,
                          .alt_tier = (unsigned char)alt_tier,
                          .alt_prior_factor = prior_factor < 1.0f ? 1.0f
                                              : prior_factor > XPAR__ADAPT_PRIOR_MAX
                                                  ? XPAR__ADAPT_PRIOR_MAX
                                                  : prior_factor,
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

/* The room, as last read (process-wide: every context sees one machine):
 * the runnable tasks other than the reader, the CPUs.  room_read_ns 0: never
 * read.  omp_ran_ns: when this process's OpenMP tier last ran a timed call. */
static _Atomic uint64_t room_read_ns, omp_ran_ns;
static _Atomic int room_others, room_cpus;

void xpar__adapt_openmp_ran(uint64_t now_ns) {
  atomic_store_explicit(&omp_ran_ns, now_ns, memory_order_relaxed);
}

int xpar__adapt_room_from(int others, int cpus, int threads, int team_may_spin) {
  if (others < 0 || cpus <= 0) return 0;
  const int need = threads > 0 && threads < cpus ? threads : cpus;
  if (team_may_spin) /* the team's share; the slack only from 8 CPUs up (adapt.h) */
    return (others > need - 1 ? others - (need - 1) : 0) + need <= cpus + cpus / 8;
  return others + need <= cpus + XPAR__ADAPT_ROOM_SLACK(cpus);
}

#ifdef __linux__
/* How long an OpenMP team may spin after its region: none where
 * OMP_WAIT_POLICY is passive (read once: the runtime reads it once too). */
static uint64_t spin_window_ns(void) {
  static _Atomic int passive = -1;
  int p = atomic_load_explicit(&passive, memory_order_relaxed);
  if (p < 0) {
    const char *w = getenv("OMP_WAIT_POLICY");
    p = w && (w[0] == 'p' || w[0] == 'P');
    atomic_store_explicit(&passive, p, memory_order_relaxed);
  }
  return p ? 0 : XPAR__ADAPT_OMP_SPIN_NS;
}

/* The runnable tasks of the machine now, the reader included (the 4th field
 * of /proc/loadavg, "running/total"); -1 when unreadable. */
static int runnable_now(void) {
  const int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  const ssize_t got = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (got <= 0) return -1;
  buf[got] = '\0';
  double l1, l5, l15;
  int running, total;
  if (sscanf(buf, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &running, &total) != 5) return -1;
  return running;
}
#endif

int xpar__adapt_cpu_room(int threads, uint64_t now_ns) {
#ifdef __linux__
  const uint64_t read_ns = atomic_load_explicit(&room_read_ns, memory_order_acquire);
  if (!read_ns || now_ns - read_ns >= XPAR__ADAPT_ROOM_REFRESH_NS) {
    const int running = runnable_now();
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int cpus = online > 0 && online < 1 << 20 ? (int)online : 0;
    /* a race between two readers stores two recent readings: either will do */
    atomic_store_explicit(&room_others, running > 0 && cpus > 0 ? running - 1 : -1,
                          memory_order_relaxed);
    atomic_store_explicit(&room_cpus, cpus, memory_order_relaxed);
    atomic_store_explicit(&room_read_ns, now_ns ? now_ns : 1, memory_order_release);
  }
  const uint64_t ran = atomic_load_explicit(&omp_ran_ns, memory_order_relaxed);
  const uint64_t window = spin_window_ns();
  /* another thread may have stored a later clock than this thread's now */
  const int spinning = window && ran && (now_ns <= ran || now_ns - ran < window);
  return xpar__adapt_room_from(atomic_load_explicit(&room_others, memory_order_relaxed),
                               atomic_load_explicit(&room_cpus, memory_order_relaxed), threads,
                               spinning);
#else
  (void)threads;
  (void)now_ns;
  return 0;
#endif
}

xpar__adapt_choice xpar__adapt_choose(const xpar__adapt_site *s, uint64_t now_ns, int room) {
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
     * a warm number to compare with and the first look's time share of its
     * prior has passed (adapt.h), then again with backoff: it is what the
     * static tier is judged against. */
    if (st->samples < 2) return ch;
    if (!alt->samples) {
      const double since = now_ns > s->start_ns ? (double)(now_ns - s->start_ns) : 0.0;
      if (room == 0 || st->recent_ns > XPAR__ADAPT_SLOWED_FACTOR * st->best_ns ||
          since >= (double)XPAR__ADAPT_SHARE * s->alt_prior_factor * (double)st->best_ns) {
        ch.tier = (xpar_tier)s->alt_tier;
        ch.probe = 1;
      }
      return ch;
    }
    const int due = s->calls_since_probe >= s->probe_gap ||
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
  if (room == 1 && xpar__adapt_wants_room(s)) {
    ch.tier = (xpar_tier)s->static_tier;
    ch.probe = 2;
    return ch;
  }
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
  if (!s->est[XPAR__ADAPT_STATIC].samples && !s->est[XPAR__ADAPT_ALT].samples)
    s->start_ns = now_ns > (uint64_t)t ? now_ns - (uint64_t)t : 0; /* the first call began */
  if (!e->samples || e->recent_ns < e->best_ns) e->best_ns = e->recent_ns;
  if (e->samples < UINT32_MAX) e->samples++;
  s->calls_since_probe += s->sample_period;
  if (probe == 2) s->room_probing = 1;

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
  const int room_probe = probe && s->room_probing;
  if (probe) {
    s->last_probe_ns = now_ns;
    s->calls_since_probe = 0;
    s->room_probing = 0;
  }
  if (!s->adapted) {
    if (both && st->recent_ns > XPAR__ADAPT_MOVE_FACTOR * alt->recent_ns) {
      s->adapted = 1;
      s->alt_ref_ns = alt->recent_ns;
      s->probe_gap = XPAR__ADAPT_MIN_GAP;
      s->calls_since_probe = 0;
      s->last_probe_ns = now_ns; /* the static tier's time share starts now */
      s->room_failed = 0;
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
      if (room_probe) s->room_failed = 1; /* the room did not tell the truth here */
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
