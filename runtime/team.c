/* team.c - the team of workers under the executor: one job (a task's pieces) at
 * a time, run by the calling thread and whichever pooled threads join it.
 *
 * Shares. Each worker has a share of the job's pieces, [next, end) packed
 * into one word; it runs its own from the front and, once done, takes what
 * is left of the others' from their back ends (run_shares). A host's cores
 * do not always run at one speed (a VM's vCPUs, another process on a core),
 * so a static split alone would make every task wait for the slowest.
 * A claim takes a run of pieces, as many as the job's grain while the share
 * holds twice that, then halving: with grain 4 a share of 8 goes 4, 2, 1, 1
 * (claim_run). The runs are aligned (first a multiple of the count), so a
 * kernel can run one as a single larger piece (CONV2D: one tile of the
 * pixels or n blocks of its pieces); and a share ends in single pieces,
 * which an idle worker can still take when the owner's core is the slower.
 *
 * The barrier. One word, state, holds the job's generation, a CLOSED flag
 * and the number of workers inside the job (entered, not yet left):
 *   - rt_team_run publishes a job by storing a new generation, open, with
 *     no one inside; then runs its share and steals the rest, so that when
 *     it returns from run_shares every piece has been claimed;
 *   - a pooled worker that sees a new generation enters with one CAS that
 *     succeeds only while that generation is open, and only then claims
 *     pieces; it leaves (one decrement) when no share has any left;
 *   - the caller closes the job (fetch_or CLOSED) once every piece is
 *     claimed and waits only until no worker is inside: the entered ones
 *     finish the pieces they claimed. A worker still on its way in (woken
 *     late, descheduled between wake-up and entry) finds the job closed or
 *     a newer generation and stays out: the caller never waits for it.
 * A piece is claimed by a CAS on a share, so it runs once; a claimed piece
 * belongs to a worker inside the job, so the caller's wait covers it. The
 * leaving decrement (release) and the caller's load that sees nobody
 * inside (acquire) make every piece's writes visible to the caller.
 *
 * Waiting. Idle workers spin a while on the state word and then sleep on a
 * condition variable; the caller likewise while workers are inside. Each
 * side says it sleeps in an atomic (sleepers, caller_sleeps) before its
 * last look at the state, and the other side reads that after changing the
 * state (both sequentially consistent), so a wake-up is never lost and the
 * mutex is touched only when someone sleeps. rt_team_free publishes a
 * generation with STOP and joins the threads.
 */
#include "runtime/team.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"

enum { SPIN_ITERS = 1 << 14 }; /* polls before a worker or the caller sleeps */

/* The state word: workers inside (low 24 bits), CLOSED, STOP, generation. */
#define INSIDE_MASK ((1ull << 24) - 1)
#define CLOSED (1ull << 24)
#define STOP (1ull << 25)
#define GEN_ONE (1ull << 26)
#define GEN_MASK (~(GEN_ONE - 1))

typedef struct team_worker {
  /* Pieces [next, end) packed as next << 32 | end: the owner takes from the
   * front, others from the back. On a line of its own. */
  _Alignas(64) atomic_uint_fast64_t share;
  rt_team *team;
  pthread_t thread;
  int id;
} team_worker;

struct rt_team {
  int nworkers;
  int started;          /* pooled threads running: workers [1, started] */
  team_worker *workers; /* [nworkers], 64-byte aligned; [0] is the caller */
  _Alignas(64) atomic_uint_fast64_t state;
  atomic_int sleepers;      /* workers asleep or about to sleep on wake */
  atomic_int caller_sleeps; /* the caller asleep or about to sleep on done */
  pthread_mutex_t mu;
  pthread_cond_t wake; /* a new generation */
  pthread_cond_t done; /* nobody inside a closed job */
  uint64_t gen;        /* the caller's last generation (GEN_ONE units) */
  /* The job, written by the caller before it publishes. */
  rt_team_fn fn;
  void *job;
  uint32_t grain;
  void (*enter_hook)(void *user, int worker);
  void *hook_user;
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

void rt_team_share(rt_team *p, int w, uint64_t lo, uint64_t hi) {
  atomic_store_explicit(&p->workers[w].share, lo << 32 | hi, memory_order_relaxed);
}

/* The pieces a claim takes from a share of n > 0 pieces whose claimed end
 * is at `edge` (its first piece from the front, its end from the back): the
 * grain while the share holds twice that, else half the share, and no more
 * than keeps the run aligned to its count. */
static uint32_t claim_run(uint64_t n, uint64_t edge, uint32_t grain) {
  uint32_t c = grain;
  while (c > 1 && (2 * (uint64_t)c > n || edge % c))
    c /= 2;
  return c;
}

/* Claims a run at the front (own share) or the back of a share; 0 when it
 * is empty. */
static int claim(atomic_uint_fast64_t *share, int back, uint32_t grain, uint64_t *first, uint32_t *count) {
  uint64_t v = atomic_load_explicit(share, memory_order_relaxed);
  for (;;) {
    uint64_t next = v >> 32, end = v & 0xffffffffu;
    if (next >= end) return 0;
    uint32_t c = claim_run(end - next, back ? end : next, grain);
    uint64_t nv = back ? next << 32 | (end - c) : (next + c) << 32 | end;
    if (atomic_compare_exchange_weak_explicit(share, &v, nv, memory_order_relaxed, memory_order_relaxed)) {
      *first = back ? end - c : next;
      *count = c;
      return 1;
    }
  }
}

/* Runs worker w's share, then what is left of the others'; on return every
 * share is empty. */
static void run_shares(rt_team *p, int w) {
  uint64_t first;
  uint32_t count;
  while (claim(&p->workers[w].share, 0, p->grain, &first, &count))
    p->fn(p->job, first, count, w);
  for (int i = 1; i < p->nworkers; i++) {
    team_worker *o = &p->workers[(w + i) % p->nworkers];
    while (claim(&o->share, 1, p->grain, &first, &count))
      p->fn(p->job, first, count, w);
  }
}

/* Stores a new open generation (with STOP when stopping) and wakes sleepers. */
static void publish(rt_team *p, uint64_t stop) {
  p->gen += GEN_ONE;
  atomic_store_explicit(&p->state, (p->gen & GEN_MASK) | stop, memory_order_seq_cst);
  if (atomic_load_explicit(&p->sleepers, memory_order_seq_cst)) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
  }
}

/* The state once its generation differs from seen: spins, then sleeps. */
static uint64_t next_generation(rt_team *p, uint64_t seen) {
  uint64_t v = atomic_load_explicit(&p->state, memory_order_acquire);
  for (int spin = 0; (v & GEN_MASK) == seen && spin < SPIN_ITERS; spin++) {
    cpu_relax();
    v = atomic_load_explicit(&p->state, memory_order_acquire);
  }
  if ((v & GEN_MASK) != seen) return v;
  pthread_mutex_lock(&p->mu);
  atomic_fetch_add_explicit(&p->sleepers, 1, memory_order_seq_cst);
  while (((v = atomic_load_explicit(&p->state, memory_order_seq_cst)) & GEN_MASK) == seen)
    pthread_cond_wait(&p->wake, &p->mu);
  atomic_fetch_sub_explicit(&p->sleepers, 1, memory_order_relaxed);
  pthread_mutex_unlock(&p->mu);
  return v;
}

static void *worker_main(void *arg) {
  team_worker *w = arg;
  rt_team *p = w->team;
  uint64_t seen = 0;
  for (;;) {
    uint64_t v = next_generation(p, seen);
    if (v & STOP) return NULL;
    seen = v & GEN_MASK;
    if (p->enter_hook) p->enter_hook(p->hook_user, w->id);
    /* Enter only while this generation is open (a newer one is the next
     * round's: the loop above returns it at once). */
    while ((v & GEN_MASK) == seen && !(v & CLOSED)) {
      if (atomic_compare_exchange_weak_explicit(&p->state, &v, v + 1, memory_order_acquire,
                                                memory_order_acquire)) {
        run_shares(p, w->id);
        uint64_t after = atomic_fetch_sub_explicit(&p->state, 1, memory_order_seq_cst) - 1;
        if (!(after & INSIDE_MASK) && atomic_load_explicit(&p->caller_sleeps, memory_order_seq_cst)) {
          pthread_mutex_lock(&p->mu);
          pthread_cond_signal(&p->done);
          pthread_mutex_unlock(&p->mu);
        }
        break;
      }
    }
  }
}

void rt_team_run(rt_team *p, rt_team_fn fn, void *job, uint32_t grain) {
  p->fn = fn;
  p->job = job;
  p->grain = grain ? grain : 1;
  if (p->started == 0) {
    run_shares(p, 0);
    return;
  }
  publish(p, 0);
  run_shares(p, 0);
  uint64_t v = atomic_fetch_or_explicit(&p->state, CLOSED, memory_order_acq_rel) | CLOSED;
  for (int spin = 0; (v & INSIDE_MASK) && spin < SPIN_ITERS; spin++) {
    cpu_relax();
    v = atomic_load_explicit(&p->state, memory_order_acquire);
  }
  if (!(v & INSIDE_MASK)) return;
  pthread_mutex_lock(&p->mu);
  atomic_store_explicit(&p->caller_sleeps, 1, memory_order_seq_cst);
  while (atomic_load_explicit(&p->state, memory_order_seq_cst) & INSIDE_MASK)
    pthread_cond_wait(&p->done, &p->mu);
  atomic_store_explicit(&p->caller_sleeps, 0, memory_order_relaxed);
  pthread_mutex_unlock(&p->mu);
}

void rt_team_set_enter_hook(rt_team *p, void (*hook)(void *user, int worker), void *user) {
  p->enter_hook = hook;
  p->hook_user = user;
}

void rt_team_free(rt_team *p) {
  if (!p) return;
  if (p->started) {
    publish(p, STOP);
    for (int i = 1; i <= p->started; i++)
      pthread_join(p->workers[i].thread, NULL);
  }
  pthread_cond_destroy(&p->done);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->mu);
  free(p->workers);
  free(p);
}

omrt_status rt_team_new(int nworkers, const char *who, rt_team **out) {
  *out = NULL;
  if (nworkers < 1 || nworkers > RT_TEAM_MAX_WORKERS)
    return rt_error(OMRT_ERR_ARG, "%s: %d worker threads outside 1..%d", who, nworkers, RT_TEAM_MAX_WORKERS);
  rt_team *p = aligned_alloc(64, (sizeof *p + 63) & ~(size_t)63);
  team_worker *ws = aligned_alloc(64, (size_t)nworkers * sizeof *ws);
  if (!p || !ws) {
    free(p);
    free(ws);
    return rt_error(OMRT_ERR_NOMEM, "%s: out of memory", who);
  }
  memset(p, 0, sizeof *p);
  memset(ws, 0, (size_t)nworkers * sizeof *ws);
  p->nworkers = nworkers;
  p->workers = ws;
  atomic_init(&p->state, 0);
  atomic_init(&p->sleepers, 0);
  atomic_init(&p->caller_sleeps, 0);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  for (int i = 0; i < nworkers; i++) {
    ws[i].team = p;
    ws[i].id = i;
    atomic_init(&ws[i].share, 0);
  }
  for (int i = 1; i < nworkers; i++) {
    if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i])) {
      rt_team_free(p);
      return rt_error(OMRT_ERR_THREAD, "%s: cannot start worker thread %d of %d", who, i, nworkers - 1);
    }
    p->started = i;
  }
  *out = p;
  return OMRT_OK;
}
