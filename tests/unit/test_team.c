/* test_team.c - the executor's team of workers (runtime/team.c) and its barrier.
 *
 * Jobs here are arrays of pieces; a piece writes which worker ran it and
 * bumps its own plain (non-atomic) counter, so a piece run twice shows as a
 * count of 2 (and under ThreadSanitizer as a race), one lost as 0, and a
 * piece whose writes the caller does not see after rt_team_run as a race.
 *   1. exactly once: thousands of jobs with uneven shares, piece costs and
 *      random delays between a worker's wake-up and its entry (the enter
 *      hook), on 2 and 4 workers;
 *   2. the race the barrier was built for: worker 1 is held in the enter
 *      hook for HOLD_MS after it saw a job; the caller runs every piece
 *      itself and must return without waiting for it (well under HOLD_MS),
 *      and once released the worker must run none of that job's pieces; the
 *      next jobs run normally;
 *   3. workers do join: with a caller that is slow on every piece, the pool
 *      threads take pieces;
 *   4. rt_team_free joins a worker held in the hook;
 *   5. runs of pieces: with a grain, every run a worker takes is aligned to
 *      its count, a power of two no larger than the grain (checked on every
 *      job of 1), and one worker's share of 8 goes 4, 2, 1, 1.
 * OMRT_CONCURRENCY_RUNS scales the job count of 1 (default 100 -> 2,000 jobs).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "runtime/team.h"
#include "support.h"

enum { MAXP = 256, HOLD_MS = 400 };

typedef struct job {
  int npieces;
  uint32_t grain;        /* rt_team_run's */
  int count[MAXP];       /* runs of each piece (plain: a second run is a race) */
  uint32_t run_of[MAXP]; /* the count of the run that ran it (0: none, or not aligned) */
  int record;            /* test_runs (one worker): keep the runs' counts in order */
  uint32_t order[MAXP];
  int nruns;
  int ran_by[MAXP];     /* worker + 1 */
  int spin[MAXP];       /* busy work per piece */
  int slow_caller;      /* worker 0 sleeps this many microseconds per piece */
  atomic_int *wait_for; /* non-NULL: worker 0's piece 0 waits (<= 1 s) until it is set */
  double seen_ms;       /* when it saw it set (0: never) */
} job;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void run_one(job *j, uint64_t piece, int w) {
  volatile int x = 0;
  for (int i = 0; i < j->spin[piece]; i++)
    x += i;
  if (w == 0 && j->slow_caller) usleep((useconds_t)j->slow_caller);
  if (w == 0 && piece == 0 && j->wait_for) {
    for (double t0 = now_ms(); !atomic_load(j->wait_for) && now_ms() - t0 < 1000;)
      usleep(100);
    if (atomic_load(j->wait_for)) j->seen_ms = now_ms();
  }
  j->count[piece]++;
  j->ran_by[piece] = w + 1;
}

static void run_piece(void *arg, uint64_t first, uint32_t count, int w) {
  job *j = arg;
  const int aligned = count >= 1 && (count & (count - 1)) == 0 && count <= j->grain && first % count == 0;
  if (j->record && j->nruns < MAXP) j->order[j->nruns++] = count;
  for (uint64_t p = first; p < first + count && p < MAXP; p++) {
    j->run_of[p] = aligned ? count : 0;
    run_one(j, p, w);
  }
}

static uint64_t rng(uint64_t *s) {
  *s = *s * 6364136223846793005u + 1442695040888963407u;
  return *s >> 33;
}

/* Deals pieces [0, n) to the workers in contiguous shares, unevenly. */
static void deal(rt_team *p, int nworkers, int n, uint64_t *s) {
  uint64_t at = 0;
  for (int w = 0; w < nworkers; w++) {
    uint64_t left = (uint64_t)n - at, take = w == nworkers - 1 ? left : left ? rng(s) % (left + 1) : 0;
    rt_team_share(p, w, at, at + take);
    at += take;
  }
}

static int check_once(const job *j, const char *what, long round) {
  for (int i = 0; i < j->npieces; i++) {
    if (j->count[i] != 1) {
      CHECKF(0, "%s round %ld: piece %d of %d ran %d times", what, round, i, j->npieces, j->count[i]);
      return 0;
    }
    if (!j->run_of[i]) {
      CHECKF(0, "%s round %ld: piece %d ran in a run not aligned to its count or above grain %u", what, round,
             i, j->grain);
      return 0;
    }
  }
  return 1;
}

/* 1: random delays between wake-up and entry. */
typedef struct jitter {
  _Atomic uint64_t seed;
} jitter;

static void jitter_hook(void *user, int worker) {
  jitter *jt = user;
  uint64_t s = atomic_fetch_add(&jt->seed, 0x9e3779b97f4a7c15u) + (uint64_t)worker;
  uint64_t r = rng(&s) % 8;
  if (r == 0)
    usleep((useconds_t)(rng(&s) % 200)); /* descheduled a while */
  else if (r == 1)
    sched_yield();
}

/* A team of n workers, or NULL (a failed check) when it cannot be made. */
static rt_team *new_team(int n) {
  rt_team *p = NULL;
  omrt_status st = rt_team_new(n, "test_team", &p);
  CHECKF(st == OMRT_OK && p, "rt_team_new(%d): %s", n, omrt_last_error());
  return st == OMRT_OK ? p : NULL;
}

static void test_exactly_once(int nworkers, long jobs) {
  rt_team *p = new_team(nworkers);
  if (!p) return;
  jitter jt = {0};
  atomic_init(&jt.seed, (uint64_t)nworkers * 77);
  rt_team_set_enter_hook(p, jitter_hook, &jt);
  static job j;
  uint64_t s = 99 + (uint64_t)nworkers;
  long by_pool = 0;
  for (long r = 0; r < jobs; r++) {
    memset(&j, 0, sizeof j);
    j.npieces = 1 + (int)(rng(&s) % MAXP);
    j.grain = 1u << (rng(&s) % 4); /* 1, 2, 4 or 8 */
    int heavy = rng(&s) % 4 == 0;
    for (int i = 0; i < j.npieces; i++)
      j.spin[i] = heavy ? (int)(rng(&s) % 20000) : (int)(rng(&s) % 50);
    deal(p, nworkers, j.npieces, &s);
    rt_team_run(p, run_piece, &j, j.grain);
    if (!check_once(&j, "exactly once", r)) break;
    for (int i = 0; i < j.npieces; i++)
      by_pool += j.ran_by[i] > 1;
  }
  printf("exactly once, %d workers: %ld jobs, %ld pieces run by pool threads\n", nworkers, jobs, by_pool);
  rt_team_free(p);
}

/* 2 and 4: worker 1 held in the hook while its first job runs. */
typedef struct hold {
  atomic_int held;     /* 1 while the worker is in the hook */
  atomic_int released; /* set by the test to let it go */
  atomic_int times;    /* holds left */
} hold;

static void hold_hook(void *user, int worker) {
  hold *h = user;
  if (worker != 1 || atomic_load(&h->times) == 0) return;
  atomic_fetch_sub(&h->times, 1);
  atomic_store(&h->held, 1);
  double t0 = now_ms();
  while (!atomic_load(&h->released) && now_ms() - t0 < HOLD_MS)
    usleep(1000);
  atomic_store(&h->held, 0);
}

/* Holds the first worker that enters a task of p in hold_hook (once). */
static void hold_first(rt_team *p, hold *h) {
  atomic_init(&h->held, 0);
  atomic_init(&h->released, 0);
  atomic_init(&h->times, 1);
  rt_team_set_enter_hook(p, hold_hook, h);
}

static void test_late_worker(void) {
  rt_team *p = new_team(2);
  if (!p) return;
  hold h;
  hold_first(p, &h);
  static job j1, j2;
  memset(&j1, 0, sizeof j1);
  j1.npieces = 64;
  j1.grain = 2;
  rt_team_share(p, 0, 0, 32);
  rt_team_share(p, 1, 32, 64); /* worker 1's half, which the caller must steal */
  /* The worker spins a while and then sleeps: it may see the job at once or
   * late; either way it stops in the hook before entering. The caller's
   * first piece waits until it is there, so that the hold covers the rest
   * of the job and the barrier. */
  j1.wait_for = &h.held;
  for (int i = 0; i < 64; i++)
    j1.spin[i] = 1000;
  rt_team_run(p, run_piece, &j1, j1.grain);
  double ms = now_ms() - j1.seen_ms;
  CHECKF(j1.seen_ms > 0, "worker 1 did not reach the enter hook within 1 s");
  check_once(&j1, "late worker", 0);
  for (int i = 0; i < 64; i++)
    CHECKF(j1.ran_by[i] == 1, "piece %d ran on worker %d, held before entering", i, j1.ran_by[i] - 1);
  printf("late worker: the caller returned %.2f ms after worker 1 was held before entering\n", ms);
  CHECKF(ms < HOLD_MS / 2, "the caller waited %.1f ms for a worker that never entered", ms);
  /* Release it: it must not run any of j1's pieces now. */
  atomic_store(&h.released, 1);
  while (atomic_load(&h.held))
    usleep(100);
  usleep(2000);
  check_once(&j1, "late worker after release", 0);
  for (long r = 0; r < 200; r++) {
    memset(&j2, 0, sizeof j2);
    j2.npieces = 100;
    j2.grain = 4;
    for (int i = 0; i < 100; i++)
      j2.spin[i] = 2000;
    rt_team_share(p, 0, 0, 50);
    rt_team_share(p, 1, 50, 100);
    rt_team_run(p, run_piece, &j2, j2.grain);
    if (!check_once(&j2, "after the late worker", r)) break;
  }
  check_once(&j1, "late worker, the end", 0);
  rt_team_free(p);
}

static void test_workers_join(void) {
  rt_team *p = new_team(2);
  if (!p) return;
  static job j;
  long by_pool = 0;
  for (int r = 0; r < 50 && by_pool == 0; r++) {
    memset(&j, 0, sizeof j);
    j.npieces = 20;
    j.grain = 1;
    j.slow_caller = 1000;
    rt_team_share(p, 0, 0, 10);
    rt_team_share(p, 1, 10, 20);
    rt_team_run(p, run_piece, &j, j.grain);
    check_once(&j, "workers join", r);
    for (int i = 0; i < 20; i++)
      by_pool += j.ran_by[i] == 2;
  }
  CHECKF(by_pool > 0, "worker 1 ran no piece of 50 jobs whose caller sleeps 1 ms a piece");
  rt_team_free(p);
}

static void test_free_while_held(void) {
  rt_team *p = new_team(3);
  if (!p) return;
  hold h;
  hold_first(p, &h);
  static job j;
  memset(&j, 0, sizeof j);
  j.npieces = 30;
  j.grain = 8;
  for (int w = 0; w < 3; w++)
    rt_team_share(p, w, (uint64_t)w * 10, (uint64_t)w * 10 + 10);
  rt_team_run(p, run_piece, &j, j.grain);
  check_once(&j, "free while held", 0);
  rt_team_free(p); /* joins worker 1 once the hook lets it go */
  check_once(&j, "free while held, after the join", 0);
}

/* 5: the runs a lone worker takes of its share: the grain while the share
 * holds twice that, then halves; aligned to their counts. */
static void test_runs(void) {
  rt_team *p = new_team(1);
  if (!p) return;
  static job j;
  const struct {
    uint32_t grain, lo, hi, n, want[8];
  } cases[] = {
      {4, 0, 8, 4, {4, 2, 1, 1}},        {4, 8, 20, 5, {4, 4, 2, 1, 1}},
      {4, 2, 11, 6, {2, 2, 2, 1, 1, 1}}, /* 4 pieces at 2 would not be aligned */
      {1, 0, 3, 3, {1, 1, 1}},           {8, 0, 8, 4, {4, 2, 1, 1}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    memset(&j, 0, sizeof j);
    j.npieces = (int)cases[c].hi, j.grain = cases[c].grain, j.record = 1;
    for (uint32_t i = 0; i < cases[c].lo; i++)
      j.count[i] = 1, j.run_of[i] = 1; /* (not in the share) */
    rt_team_share(p, 0, cases[c].lo, cases[c].hi);
    rt_team_run(p, run_piece, &j, j.grain);
    check_once(&j, "runs", (long)c);
    int same = j.nruns == (int)cases[c].n;
    for (int r = 0; same && r < j.nruns; r++)
      same = j.order[r] == cases[c].want[r];
    CHECKF(same, "runs case %zu: grain %u, share [%u, %u): %d runs, the first %u, %u, %u", c, cases[c].grain,
           cases[c].lo, cases[c].hi, j.nruns, j.order[0], j.order[1], j.order[2]);
  }
  rt_team_free(p);
}

int main(void) {
  const char *e = getenv("OMRT_CONCURRENCY_RUNS");
  long runs = e ? atol(e) : 100;
  if (runs < 1) runs = 1;
  test_exactly_once(2, runs * 20);
  test_exactly_once(4, runs * 5);
  test_late_worker();
  test_workers_join();
  test_free_while_held();
  test_runs();
  omrt_status st;
  rt_team *p;
  st = rt_team_new(0, "test_team", &p);
  CHECKF(st == OMRT_ERR_ARG && !p, "rt_team_new(0) accepted");
  return test_summary("test_team");
}
