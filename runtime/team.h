/* team.h - the executor's team of workers: host threads that run the pieces of
 * one task at a time, the caller taking part (team.c explains the barrier).
 * Internal to libomrt: exec.c drives it, tests/unit/test_team.c tests it.
 *
 * Ownership: rt_team_new allocates the pool and starts its threads;
 * rt_team_free stops and joins them and frees the pool. A pool is driven by
 * one thread at a time (the context's caller), which is worker 0. */
#ifndef RUNTIME_TEAM_H
#define RUNTIME_TEAM_H

#include <stdint.h>

#include "omrt.h"

typedef struct rt_team rt_team;

/* Runs pieces [first, first + count) of the current job on worker `worker`
 * (0: the caller, 1..nworkers-1: the pool's threads); count is a power of
 * two no larger than the job's grain and divides first (rt_team_run). */
typedef void (*rt_team_fn)(void *job, uint64_t first, uint32_t count, int worker);

/* A pool of nworkers workers (1 <= nworkers <= RT_TEAM_MAX_WORKERS):
 * nworkers - 1 threads. On failure *out is NULL and nothing is left
 * running. `who` prefixes the error message. */
enum { RT_TEAM_MAX_WORKERS = 1 << 16 };
omrt_status rt_team_new(int nworkers, const char *who, rt_team **out);
void rt_team_free(rt_team *p); /* NULL: nothing */

/* Gives worker w pieces [lo, hi) of the next job (hi - lo < 2^32, hi < 2^32):
 * set every worker's share before rt_team_run; an empty share is lo == hi. */
void rt_team_share(rt_team *p, int w, uint64_t lo, uint64_t hi);

/* Runs every piece of the shares exactly once, on the calling thread and on
 * the workers that join in, and returns when all have run: everything the
 * pieces wrote is then visible to the caller. A worker takes up to `grain`
 * pieces at a time (a power of two, >= 1; team.c says how many). Allocates
 * nothing. */
void rt_team_run(rt_team *p, rt_team_fn fn, void *job, uint32_t grain);

/* For tests: hook(user, w) runs on pool thread w after it has seen a job
 * published and before it tries to join it (a test sleeps there to play a
 * worker that the OS descheduled). Set it before the first rt_team_run. */
void rt_team_set_enter_hook(rt_team *p, void (*hook)(void *user, int worker), void *user);

#endif
