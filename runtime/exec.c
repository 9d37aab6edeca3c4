/* exec.c - the execution context and the executor: the software NPU's AI
 * cores as host threads.
 *
 * A context owns, allocated once in omrt_context_new:
 *   - the workspace (def->workspace_bytes, 64-byte aligned) that every
 *     WORKSPACE tensor offset points into, unless the caller gives its own
 *     (omrt_context_options.workspace: then the context only borrows it);
 *   - one worker per simulated AI core (m->threads of them): worker 0 is the
 *     thread calling omrt_execute, workers 1.. are pooled pthreads;
 *   - per worker an rt_core with L1, L0A, L0B, L0C and UB scratch of the
 *     model's capacities, each 64-byte aligned; L0A and L0B OM_L0_STAGING
 *     times them, for the cube kernels stage their operands as f32
 *     (common/om_format.h).
 * omrt_execute walks the task list of the context's gear (omrt_context_set_gear;
 * gear 0 by default, the whole list of a model without gears) in order: it
 * resolves each task's tensors
 * to addresses (rt_args), gives worker w the pieces of blocks
 * [w*block_dim/nworkers, (w+1)*block_dim/nworkers), the tiling's static
 * split, and runs the task on the pool (team.c): the caller (worker 0)
 * takes its share, steals what is left, and waits only for the workers
 * that joined the task (a barrier between tasks). Single-block tasks run on
 * the caller alone. The work taken is a block, or for kinds that divide
 * their blocks (rt_kernel.pieces: CONV2D tiles into finer tiles) a piece of
 * one, so that a task of two blocks still balances; a core takes a run of
 * up to rt_kernel.pieces' grain pieces at a time, fewer at the end of a
 * share, so that the last pieces are small enough to share (team.c). Measured on a 2-vCPU VM
 * whose second vCPU ran ResNet-50 alone 27% slower than the first: 2
 * workers 27.5 ms with the static split, 26.0 with pieces (5 alternating
 * rounds). A kernel that meets a run-time index outside its axis records it
 * in its core
 * (rt_core.fault); after the task's barrier execute fails with OMRT_ERR_ARG
 * naming the task and the index, and runs no further task. execute
 * allocates nothing and creates no threads; omrt_context_free stops and
 * joins the pool. With profiling on at context creation
 * (omrt_context_options.profile, or OMRT_PROFILE=1 or 2 in the environment),
 * execute also sums each task's wall time (from its dispatch to
 * the end of its barrier) per task kind, in a table allocated with the
 * context (omrt_context_profile reads it); with OMRT_PROFILE=2 per task
 * too (omrt_context_task_profile). After each task, a task hook
 * (omrt_context_set_task_hook: layer dumps) sees what the task wrote (a
 * start hook, omrt_context_set_task_start_hook, sees the task before it
 * runs, its tensors resolved: AscendCL's dump and profiling), and
 * with check_overflow on the task's float outputs are checked for inf and
 * NaN (tasks.c); both run on the calling thread between two tasks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/kernels.h"
#include "runtime/team.h"
#include "runtime/rt.h"

/* One simulated AI core: its state and the allocation of its buffers, on
 * cache lines of their own (kernels write core fields as they run). */
typedef struct worker {
  _Alignas(64) rt_core core;
  uint8_t *scratch; /* one allocation holding all of core's buffers */
} worker;

struct omrt_context {
  const omrt_model *m;
  const rt_gear *gear; /* the one omrt_execute runs */
  uint8_t *workspace;
  int own_workspace; /* 0: the caller's (omrt_context_options.workspace) */
  int nworkers;
  worker *workers; /* [nworkers]; [0] is the calling thread */
  rt_team *team;   /* its nworkers - 1 pooled threads (team.c) */

  struct kind_profile {
    uint64_t tasks, ns;
  } * profile;         /* [rt_kernel_count] under OMRT_PROFILE=1 or 2, else NULL */
  uint64_t *task_ns;   /* [ntasks] under OMRT_PROFILE=2, else NULL */
  omrt_task_hook hook; /* omrt_context_set_task_hook; NULL: none */
  void *hook_user;
  omrt_task_hook start_hook; /* omrt_context_set_task_start_hook; NULL: none */
  void *start_user;
  int in_hook;        /* a hook is running: omrt_context_task_input reads ctx->task's args */
  int check_overflow; /* omrt_context_options.check_overflow */

  /* Dynamic AIPP parameters kept by omrt_context_set_aipp (NULL until its
   * first call): one malloc'd block of ninputs record pointers (each
   * malloc'd, NULL until set) and the input pointers execute passes on. */
  uint8_t **aipp_params;
  const void **aipp_inputs;

  /* The valid extent of each counted output after the last execute
   * ([noutputs], malloc'd when the model has a COUNTS partition). */
  int64_t *counts;

  /* The current job, written by the caller before rt_team_run. */
  const om_task *task;
  rt_kernel_fn fn;
  rt_piece_fn piece_fn; /* with parts: the pieces are the task's */
  uint32_t parts, grain;
  uint64_t run; /* numbers task runs (rt_core.run), from 1 */
  rt_args args;
};

/* Worker w's share is blocks [w*bd/n, (w+1)*bd/n): as even a split as
 * round robin, and a worker's blocks are neighbours. Kinds number their
 * blocks along the output (conv tiles M-major), so a worker keeps one
 * region of each tensor from task to task, in its own core's caches: on
 * ResNet-50 with 2 workers the residual 1x1 convolutions of layers 1 and 2
 * took 20% less time than with blocks dealt round robin. With pieces the
 * share is those of its blocks. Taking from the back of another's share
 * keeps that locality for all but the last pieces. */
static void deal_shares(omrt_context *ctx) {
  const om_task *task = ctx->task;
  uint64_t units = 0;
  uint32_t parts = 1, grain = 1;
  const rt_kernel *k = &rt_kernels[task->kind];
  if (k->pieces) units = k->pieces(task, &ctx->args, &ctx->workers[0].core, &parts, &grain);
  if (units > UINT32_MAX / parts) units = 0; /* (a share is two 32-bit piece indices) */
  ctx->parts = units ? parts : 0;
  ctx->grain = units ? grain : 1;
  ctx->piece_fn = k->run_piece;
  for (int i = 0; i < ctx->nworkers; i++) {
    uint64_t b0, b1, lo, hi, unused;
    rt_block_range(task->block_dim, (uint32_t)ctx->nworkers, (uint32_t)i, &b0, &b1);
    lo = b0, hi = b1;       /* (empty when the worker has no block) */
    if (units && b0 < b1) { /* the pieces of units [first unit of b0, end of b1 - 1) */
      rt_block_range(units, task->block_dim, (uint32_t)b0, &lo, &unused);
      rt_block_range(units, task->block_dim, (uint32_t)(b1 - 1), &unused, &hi);
      lo *= parts, hi *= parts;
    }
    rt_team_share(ctx->team, i, lo, hi);
  }
}

/* Runs pieces [first, first + count) of the current task on worker w
 * (rt_team_fn): blocks count 1 at a time (grain 1). */
static void run_piece(void *job, uint64_t first, uint32_t count, int w) {
  omrt_context *ctx = job;
  rt_core *core = &ctx->workers[w].core;
  if (core->run != ctx->run) core->run = ctx->run;
  if (ctx->parts)
    ctx->piece_fn(ctx->task, &ctx->args, first, count, ctx->parts, core);
  else
    ctx->fn(ctx->task, &ctx->args, (uint32_t)first, core);
}

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* Carves one aligned allocation into the core's buffers. */
static int core_init(worker *w, int id, const om_model_def *d) {
  rt_core *c = &w->core;
  c->id = id;
  c->l1_bytes = d->l1_bytes;
  c->l0a_bytes = OM_L0_STAGING * (size_t)d->l0a_bytes; /* f32 staging (om_format.h) */
  c->l0b_bytes = OM_L0_STAGING * (size_t)d->l0b_bytes;
  c->l0c_bytes = d->l0c_bytes;
  c->ub_bytes = d->ub_bytes;
  size_t sizes[5] = {align64(c->l1_bytes), align64(c->l0a_bytes), align64(c->l0b_bytes),
                     align64(c->l0c_bytes), align64(c->ub_bytes)};
  size_t total = sizes[0] + sizes[1] + sizes[2] + sizes[3] + sizes[4];
  w->scratch = aligned_alloc(64, total ? total : 64);
  if (!w->scratch) return -1;
  uint8_t *p = w->scratch;
  uint8_t **bufs[5] = {&c->l1, &c->l0a, &c->l0b, &c->l0c, &c->ub};
  for (int i = 0; i < 5; i++) {
    *bufs[i] = p;
    p += sizes[i];
  }
  return 0;
}

void omrt_context_free(omrt_context *ctx) {
  if (!ctx) return;
  rt_team_free(ctx->team);
  if (ctx->workers)
    for (int i = 0; i < ctx->nworkers; i++)
      free(ctx->workers[i].scratch);
  free(ctx->workers);
  free(ctx->profile);
  free(ctx->task_ns);
  if (ctx->aipp_params)
    for (uint32_t i = 0; i < ctx->m->def->ninputs; i++)
      free(ctx->aipp_params[i]);
  free(ctx->aipp_params);
  free(ctx->counts);
  if (ctx->own_workspace) free(ctx->workspace);
  free(ctx);
}

omrt_status omrt_context_new(const omrt_model *model, omrt_context **ctx_out) {
  return omrt_context_new_with(model, NULL, ctx_out);
}

/* The profiling level: the options' if set, else OMRT_PROFILE's (1 or 2), else 0. */
static int profile_level(const omrt_context_options *opts) {
  if (opts && opts->profile) return opts->profile;
  const char *prof = getenv("OMRT_PROFILE");
  return prof && (strcmp(prof, "1") == 0 || strcmp(prof, "2") == 0) ? prof[0] - '0' : 0;
}

omrt_status omrt_context_new_with(const omrt_model *model, const omrt_context_options *opts,
                                  omrt_context **ctx_out) {
  if (!ctx_out) return rt_error(OMRT_ERR_ARG, "omrt_context_new: ctx_out is NULL");
  *ctx_out = NULL;
  if (!model) return rt_error(OMRT_ERR_ARG, "omrt_context_new: model is NULL");
  uint64_t ws = model->def->workspace_bytes;
  if (opts && (opts->profile < 0 || opts->profile > 2))
    return rt_error(OMRT_ERR_ARG, "omrt_context_new: options: profile %d outside 0..2", opts->profile);
  if (opts && opts->check_overflow != 0 && opts->check_overflow != 1)
    return rt_error(OMRT_ERR_ARG, "omrt_context_new: options: check_overflow %d is not 0 or 1",
                    opts->check_overflow);
  if (opts && opts->workspace && (uintptr_t)opts->workspace % 64 != 0)
    return rt_error(OMRT_ERR_ARG, "omrt_context_new: options: workspace %p is not 64-byte aligned",
                    opts->workspace);
  if (opts && opts->workspace && opts->workspace_bytes < ws)
    return rt_error(OMRT_ERR_ARG,
                    "omrt_context_new: options: workspace_bytes %zu is less than the model's %llu",
                    opts->workspace_bytes, (unsigned long long)ws);
  omrt_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return rt_error(OMRT_ERR_NOMEM, "omrt_context_new: out of memory");
  ctx->m = model;
  ctx->check_overflow = opts ? opts->check_overflow : 0;
  ctx->gear = &model->gears[0];
  ctx->nworkers = model->threads ? (int)model->threads : 1;
  rt_cpu(); /* choose the kernel paths (cpu.c) now, not during the first execute */

  ctx->own_workspace = !(opts && opts->workspace);
  if (!ctx->own_workspace) {
    ctx->workspace = opts->workspace;
  } else if (ws > SIZE_MAX - 64) {
    omrt_context_free(ctx);
    return rt_error(OMRT_ERR_NOMEM, "omrt_context_new: workspace of %llu bytes", (unsigned long long)ws);
  } else if (!(ctx->workspace = aligned_alloc(64, align64(ws ? (size_t)ws : 1)))) {
    omrt_context_free(ctx);
    return rt_error(OMRT_ERR_NOMEM, "omrt_context_new: cannot allocate the %llu-byte workspace",
                    (unsigned long long)ws);
  }
  ctx->workers = aligned_alloc(64, (size_t)ctx->nworkers * sizeof *ctx->workers);
  if (ctx->workers) memset(ctx->workers, 0, (size_t)ctx->nworkers * sizeof *ctx->workers);
  int level = profile_level(opts), profiling = level >= 1, per_task = level == 2;
  if (!ctx->workers || (profiling && !(ctx->profile = calloc(rt_kernel_count, sizeof *ctx->profile))) ||
      (per_task &&
       !(ctx->task_ns = calloc(model->def->ntasks ? model->def->ntasks : 1, sizeof *ctx->task_ns))) ||
      (model->counts && !(ctx->counts = calloc(model->def->noutputs, sizeof *ctx->counts)))) {
    omrt_context_free(ctx);
    return rt_error(OMRT_ERR_NOMEM, "omrt_context_new: out of memory");
  }
  for (int i = 0; i < ctx->nworkers; i++) {
    if (core_init(&ctx->workers[i], i, model->def)) {
      omrt_context_free(ctx);
      return rt_error(OMRT_ERR_NOMEM, "omrt_context_new: cannot allocate AI core %d's buffers", i);
    }
    ctx->workers[i].core.nworkers = ctx->nworkers;
  }
  omrt_status s = rt_team_new(ctx->nworkers, "omrt_context_new", &ctx->team);
  if (s) {
    omrt_context_free(ctx);
    return s;
  }
  *ctx_out = ctx;
  return OMRT_OK;
}

int omrt_context_threads(const omrt_context *ctx) { return ctx ? ctx->nworkers : 0; }

omrt_status omrt_context_profile(const omrt_context *ctx, int kind, const char **name_out,
                                 uint64_t *tasks_out, double *ms_out) {
  if (!ctx || !name_out || !tasks_out || !ms_out)
    return rt_error(OMRT_ERR_ARG, "omrt_context_profile: NULL argument");
  if (!ctx->profile)
    return rt_error(OMRT_ERR_ARG, "omrt_context_profile: profiling is off (omrt_context_options.profile or "
                                  "OMRT_PROFILE=1 turns it on)");
  if (kind < 0 || (uint32_t)kind >= rt_kernel_count)
    return rt_error(OMRT_ERR_ARG, "omrt_context_profile: kind %d outside 0..%u", kind, rt_kernel_count - 1);
  *name_out = rt_kernels[kind].name ? rt_kernels[kind].name : "";
  *tasks_out = ctx->profile[kind].tasks;
  *ms_out = (double)ctx->profile[kind].ns / 1e6;
  return OMRT_OK;
}

omrt_status omrt_context_task_profile(const omrt_context *ctx, int task, const char **name_out,
                                      const char **kind_out, double *ms_out) {
  if (!ctx || !name_out || !kind_out || !ms_out)
    return rt_error(OMRT_ERR_ARG, "omrt_context_task_profile: NULL argument");
  if (!ctx->task_ns)
    return rt_error(OMRT_ERR_ARG,
                    "omrt_context_task_profile: per-task profiling is off (omrt_context_options.profile "
                    "or OMRT_PROFILE=2 turns it on)");
  const rt_gear *g = ctx->gear;
  if (task < 0 || (uint32_t)task >= g->ntasks)
    return rt_error(OMRT_ERR_ARG, "omrt_context_task_profile: task %d outside 0..%d", task,
                    (int)g->ntasks - 1);
  const om_task *t = &g->tasks[task];
  *name_out = rt_string(ctx->m, t->name);
  *kind_out = rt_kernels[t->kind].name ? rt_kernels[t->kind].name : "";
  *ms_out = (double)ctx->task_ns[g->first_task + (uint32_t)task] / 1e6;
  return OMRT_OK;
}

omrt_status omrt_context_set_gear(omrt_context *ctx, int gear) {
  if (!ctx) return rt_error(OMRT_ERR_ARG, "omrt_context_set_gear: ctx is NULL");
  if (gear < 0 || (uint32_t)gear >= ctx->m->ngears) {
    char list[1024];
    rt_gear_list(ctx->m, list, sizeof list);
    return rt_error(OMRT_ERR_ARG, "omrt_context_set_gear: gear %d outside 0..%u (the gears: %s)", gear,
                    ctx->m->ngears - 1, list);
  }
  ctx->gear = &ctx->m->gears[gear];
  return OMRT_OK;
}

static omrt_status set_aipp(omrt_context *ctx, int input, const omrt_aipp *cfgs, int ncfgs, const char *fn) {
  if (!ctx) return rt_error(OMRT_ERR_ARG, "%s: ctx is NULL", fn);
  if (ncfgs < 1) return rt_error(OMRT_ERR_ARG, "%s: ncfgs %d < 1", fn, ncfgs);
  const uint32_t n = ctx->m->def->ninputs;
  if (!ctx->aipp_params) {
    void **block = calloc(2 * (size_t)n, sizeof(void *));
    if (!block) return rt_error(OMRT_ERR_NOMEM, "%s: out of memory", fn);
    ctx->aipp_params = (uint8_t **)block;
    ctx->aipp_inputs = (const void **)(block + n);
  }
  const uint64_t bytes = rt_aipp_params_bytes(ctx->m, input);
  uint8_t *recs = bytes ? malloc(bytes) : NULL;
  if (bytes && !recs) return rt_error(OMRT_ERR_NOMEM, "%s: out of memory", fn);
  int at;
  omrt_status s = rt_aipp_pack(ctx->m, input, cfgs, (uint64_t)ncfgs, recs, bytes, fn, &at);
  if (s) return free(recs), s;
  free(ctx->aipp_params[at]);
  ctx->aipp_params[at] = recs;
  return OMRT_OK;
}

omrt_status omrt_context_set_aipp(omrt_context *ctx, int input, const omrt_aipp *cfg) {
  return set_aipp(ctx, input, cfg, 1, "omrt_context_set_aipp");
}

omrt_status omrt_context_set_aipp_images(omrt_context *ctx, int input, const omrt_aipp *cfgs, int ncfgs) {
  return set_aipp(ctx, input, cfgs, ncfgs, "omrt_context_set_aipp_images");
}

int omrt_context_gear(const omrt_context *ctx) { return ctx ? (int)(ctx->gear - ctx->m->gears) : 0; }

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Addresses of a task's tensors for this execution. */
static void resolve(const omrt_context *ctx, const om_task *task, const void *const *inputs,
                    void *const *outputs, rt_args *a) {
  const omrt_model *m = ctx->m;
  memset(a, 0, sizeof *a);
  for (uint32_t s = 0; s < task->ntensors; s++) {
    if (task->tensors[s] == OM_NONE) continue;
    const om_tensor *t = &m->tensors[task->tensors[s]];
    const uint8_t *base = NULL;
    switch (t->region) {
    case OM_REGION_WEIGHTS: base = m->weights; break;
    case OM_REGION_WORKSPACE: base = ctx->workspace; break;
    case OM_REGION_INPUT: base = inputs[t->index]; break;
    case OM_REGION_OUTPUT: base = outputs[t->index]; break;
    }
    a->desc[s] = t;
    a->data[s] = (void *)(base + t->offset);
  }
  a->aux = m->task_aux ? m->task_aux[task - m->tasks] : NULL;
}

/* The error of a task whose run-time indices left their axis (rt_core.fault). */
static omrt_status index_fault(const omrt_context *ctx, uint32_t t, const rt_core *c) {
  const om_task *task = &ctx->m->tasks[t];
  return rt_error(
      OMRT_ERR_ARG,
      "omrt_execute: task %u (%s) '%s': index %lld in the input data is out of range [%lld, %lld)", t,
      rt_kernels[task->kind].name, rt_string(ctx->m, task->name), (long long)c->fault_index,
      (long long)-c->fault_dim, (long long)c->fault_dim);
}

/* After the last task: each counted output's count from the workspace
 * (clamped to its bound), and the output compacted in the caller's buffer
 * to C order over its actual dims: the rows of each outer index move down,
 * to addresses never above where they were. */
static void finish_counts(omrt_context *ctx, void *const *outputs) {
  const omrt_model *m = ctx->m;
  for (uint32_t i = 0; i < m->def->noutputs; i++) {
    const om_count *c = &m->counts[i];
    if (c->axis == OM_NONE) continue;
    const om_tensor *y = &m->tensors[m->io[m->def->ninputs + i]];
    int64_t n, bound = y->dims[c->axis];
    memcpy(&n, ctx->workspace + m->tensors[c->count].offset, sizeof n);
    n = n < 0 ? 0 : n > bound ? bound : n;
    ctx->counts[i] = n;
    uint64_t outer = 1, inner = dtype_size((int)y->dtype);
    for (uint32_t d = 0; d < y->rank; d++)
      if (d < c->axis)
        outer *= (uint64_t)y->dims[d];
      else if (d > c->axis)
        inner *= (uint64_t)y->dims[d];
    uint8_t *b = outputs[i];
    for (uint64_t o = 1; o < outer && n < bound; o++)
      memmove(b + o * (uint64_t)n * inner, b + o * (uint64_t)bound * inner, (uint64_t)n * inner);
  }
}

omrt_status omrt_execute(omrt_context *ctx, const void *const *inputs, void *const *outputs) {
  if (!ctx) return rt_error(OMRT_ERR_ARG, "omrt_execute: ctx is NULL");
  const omrt_model *m = ctx->m;
  const om_model_def *d = m->def;
  if (d->ninputs && !inputs) return rt_error(OMRT_ERR_ARG, "omrt_execute: inputs is NULL");
  if (d->noutputs && !outputs) return rt_error(OMRT_ERR_ARG, "omrt_execute: outputs is NULL");
  if (ctx->aipp_params) { /* parameters the context keeps stand in for NULL inputs */
    for (uint32_t i = 0; i < d->ninputs; i++)
      ctx->aipp_inputs[i] = !inputs[i] && ctx->aipp_params[i] ? ctx->aipp_params[i] : inputs[i];
    inputs = ctx->aipp_inputs;
  }
  for (uint32_t i = 0; i < d->ninputs; i++)
    if (!inputs[i]) return rt_error(OMRT_ERR_ARG, "omrt_execute: inputs[%u] is NULL", i);
  for (uint32_t i = 0; i < d->noutputs; i++)
    if (!outputs[i]) return rt_error(OMRT_ERR_ARG, "omrt_execute: outputs[%u] is NULL", i);

  const rt_gear *g = ctx->gear;
  omrt_status s = rt_aipp_check_run(m, g, inputs);
  if (s) return s;
  for (int i = 0; i < ctx->nworkers; i++)
    ctx->workers[i].core.fault = 0;
  for (uint32_t t = g->first_task; t < g->first_task + g->ntasks; t++) {
    const om_task *task = &m->tasks[t];
    uint64_t t0 = ctx->profile ? now_ns() : 0;
    ctx->task = task;
    ctx->fn = rt_kernels[task->kind].run;
    ctx->workers[0].core.run = ++ctx->run;
    resolve(ctx, task, inputs, outputs, &ctx->args);
    if (ctx->start_hook) {
      omrt_task_info info;
      rt_task_info(m, t, &ctx->args, &info);
      ctx->in_hook = 1;
      int stop = ctx->start_hook(ctx->start_user, &info);
      ctx->in_hook = 0;
      if (stop)
        return rt_error(OMRT_ERR_STOPPED,
                        "omrt_execute: the task start hook stopped the run before task %u '%s'", t,
                        info.name);
    }
    if (ctx->nworkers == 1 || (task->block_dim == 1 && !rt_kernels[task->kind].pieces)) {
      for (uint32_t b = 0; b < task->block_dim; b++)
        ctx->fn(task, &ctx->args, b, &ctx->workers[0].core);
    } else {
      deal_shares(ctx);
      rt_team_run(ctx->team, run_piece, ctx, ctx->grain);
    }
    for (int i = 0; i < ctx->nworkers; i++) /* the barrier made the cores' faults visible */
      if (ctx->workers[i].core.fault) return index_fault(ctx, t, &ctx->workers[i].core);
    if (ctx->profile) {
      uint64_t ns = now_ns() - t0;
      ctx->profile[task->kind].tasks++;
      ctx->profile[task->kind].ns += ns;
      if (ctx->task_ns) ctx->task_ns[t] += ns;
    }
    if (ctx->hook || ctx->check_overflow) {
      omrt_task_info info;
      rt_task_info(m, t, &ctx->args, &info);
      omrt_status st = ctx->check_overflow ? rt_check_overflow(m, &info) : OMRT_OK;
      if (st != OMRT_OK) return st;
      ctx->in_hook = 1;
      int stop = ctx->hook && ctx->hook(ctx->hook_user, &info);
      ctx->in_hook = 0;
      if (stop)
        return rt_error(OMRT_ERR_STOPPED, "omrt_execute: the task hook stopped the run after task %u '%s'", t,
                        info.name);
    }
  }
  if (m->counts) finish_counts(ctx, outputs);
  return OMRT_OK;
}

omrt_status omrt_context_output_dims(const omrt_context *ctx, int index, omrt_tensor_desc *desc_out) {
  if (!ctx || !desc_out) return rt_error(OMRT_ERR_ARG, "omrt_context_output_dims: NULL argument");
  const omrt_model *m = ctx->m;
  if (index < 0 || (uint32_t)index >= m->def->noutputs)
    return rt_error(OMRT_ERR_ARG, "omrt_context_output_dims: index %d outside 0..%d", index,
                    (int)m->def->noutputs - 1);
  *desc_out = ctx->gear->outputs[index];
  int a = desc_out->count_axis;
  if (a >= 0 && desc_out->dims[a] > 0) {
    desc_out->bytes = desc_out->bytes / (size_t)desc_out->dims[a] * (size_t)ctx->counts[index];
    desc_out->dims[a] = ctx->counts[index];
  }
  return OMRT_OK;
}

omrt_status omrt_context_set_task_hook(omrt_context *ctx, omrt_task_hook hook, void *user) {
  if (!ctx) return rt_error(OMRT_ERR_ARG, "omrt_context_set_task_hook: ctx is NULL");
  ctx->hook = hook;
  ctx->hook_user = user;
  return OMRT_OK;
}

omrt_status omrt_context_set_task_start_hook(omrt_context *ctx, omrt_task_hook hook, void *user) {
  if (!ctx) return rt_error(OMRT_ERR_ARG, "omrt_context_set_task_start_hook: ctx is NULL");
  ctx->start_hook = hook;
  ctx->start_user = user;
  return OMRT_OK;
}

omrt_status omrt_context_task_input(const omrt_context *ctx, int index, omrt_task_tensor *tensor_out) {
  if (!ctx || !tensor_out) return rt_error(OMRT_ERR_ARG, "omrt_context_task_input: NULL argument");
  if (!ctx->in_hook) return rt_error(OMRT_ERR_ARG, "omrt_context_task_input: not called from a task hook");
  uint32_t t = (uint32_t)(ctx->task - ctx->m->tasks);
  if (index < 0 || !rt_task_input(ctx->m, t, &ctx->args, index, tensor_out))
    return rt_error(OMRT_ERR_ARG, "omrt_context_task_input: task %u has no input %d", t, index);
  return OMRT_OK;
}

/* Checks n buffer sizes against the gear's descriptors (not an input whose
 * parameters the context keeps: bufs[i] NULL and omrt_context_set_aipp set). */
static omrt_status check_sizes(const omrt_context *ctx, const char *what, uint32_t n,
                               const omrt_tensor_desc *want, const void *const *bufs, const size_t *have) {
  for (uint32_t i = 0; i < n; i++)
    if (have[i] < want[i].bytes && !(bufs && !bufs[i] && ctx->aipp_params && ctx->aipp_params[i]))
      return rt_error(OMRT_ERR_ARG, "omrt_execute: %s %u '%s' has %zu bytes; gear %d needs %zu", what, i,
                      want[i].name, have[i], omrt_context_gear(ctx), want[i].bytes);
  return OMRT_OK;
}

omrt_status omrt_execute_sized(omrt_context *ctx, const void *const *inputs, const size_t *input_bytes,
                               void *const *outputs, const size_t *output_bytes) {
  if (!ctx) return rt_error(OMRT_ERR_ARG, "omrt_execute: ctx is NULL");
  const om_model_def *d = ctx->m->def;
  if ((d->ninputs && !input_bytes) || (d->noutputs && !output_bytes))
    return rt_error(OMRT_ERR_ARG, "omrt_execute: %s is NULL", !output_bytes ? "output_bytes" : "input_bytes");
  omrt_status s;
  if ((s = check_sizes(ctx, "input", d->ninputs, ctx->gear->inputs, inputs, input_bytes)) ||
      (s = check_sizes(ctx, "output", d->noutputs, ctx->gear->outputs, NULL, output_bytes)))
    return s;
  return omrt_execute(ctx, inputs, outputs);
}
