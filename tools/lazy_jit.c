/* lazy_jit.c - omrun's JIT, loaded on demand (contract in lazy_jit.h).
 *
 * The hook's compile first looks for a vector program plan among the
 * model's tasks (rt_task_vplan: what libomrt_jit would compile); with none
 * it returns no state and libomrt interprets nothing. Otherwise, the first
 * time only, it dlopens the library (RTLD_NOW, so a missing symbol is a
 * load failure, not a crash later), resolves the omrt_jit_ functions,
 * creates the omrt_jit and from then on forwards compile and release to
 * the library's hook. release forwards whenever the library is loaded:
 * libomrt_jit's release takes the NULL state of a model it did not compile.
 * Loads through one lazy_jit are not concurrent (omrun loads one model).
 * The library is never dlclosed (LLVM's static state is not made to be
 * unloaded); the process's exit unmaps it.
 */
#include "tools/lazy_jit.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/vprog_compiler.h"
#include "runtime/vprog_plan.h"

typedef omrt_status (*jit_new_fn)(omrt_jit **);
typedef void (*jit_free_fn)(omrt_jit *);
typedef const omrt_vprog_compiler *(*jit_compiler_fn)(omrt_jit *);
typedef void (*last_stats_fn)(omrt_jit *, omrt_jit_stats *);
typedef const char *(*cache_dir_fn)(const omrt_jit *);

struct lazy_jit {
  omrt_vprog_compiler hook; /* first: the hook's address is the lazy_jit's */
  int tried;                /* dlopen attempted */
  int last;                 /* LAZY_JIT_* of the last load */
  void *lib;                /* dlopen handle, or NULL */
  omrt_jit *jit;
  const omrt_vprog_compiler *inner; /* the library's hook */
  jit_new_fn jit_new;               /* the library's omrt_jit_ functions */
  jit_free_fn jit_free;
  jit_compiler_fn jit_compiler;
  last_stats_fn last_stats;
  cache_dir_fn cache_dir;
};

static int has_programs(const omrt_model *m) {
  for (uint32_t i = 0; i < m->def->ntasks; i++)
    if (rt_task_vplan(m, i)) return 1;
  return 0;
}

/* dlopens the library and resolves its API; 0, or -1 after saying why on stderr. */
static int open_library(lazy_jit *lj) {
  const char *name = getenv("OMRT_JIT_LIBRARY");
  if (!name || !*name) name = OMRT_JIT_SONAME;
  const char *why = NULL;
  if ((lj->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
    lj->jit_new = (jit_new_fn)dlsym(lj->lib, "omrt_jit_new");
    lj->jit_free = (jit_free_fn)dlsym(lj->lib, "omrt_jit_free");
    lj->jit_compiler = (jit_compiler_fn)dlsym(lj->lib, "omrt_jit_compiler");
    lj->last_stats = (last_stats_fn)dlsym(lj->lib, "omrt_jit_last_stats");
    lj->cache_dir = (cache_dir_fn)dlsym(lj->lib, "omrt_jit_cache_dir");
    if (lj->jit_new && lj->jit_free && lj->jit_compiler && lj->last_stats && lj->cache_dir) return 0;
    why = "not a libomrt_jit: an omrt_jit_ function is missing";
  } else {
    why = dlerror();
  }
  fprintf(stderr, "omrun: jit: cannot load %s (%s): vector programs are interpreted\n", name,
          why ? why : "?");
  return -1;
}

static omrt_status lazy_compile(const omrt_vprog_compiler *self, omrt_model *m, void **state_out) {
  lazy_jit *lj = (lazy_jit *)(void *)self;
  *state_out = NULL;
  lj->last = LAZY_JIT_NO_PROGRAMS;
  if (!has_programs(m)) return OMRT_OK;
  if (!lj->tried) {
    lj->tried = 1;
    if (open_library(lj) == 0) {
      omrt_status s = lj->jit_new(&lj->jit);
      if (s != OMRT_OK) return s; /* omrt_last_error() has the JIT's message */
      lj->inner = lj->jit_compiler(lj->jit);
    }
  }
  if (!lj->inner) {
    lj->last = LAZY_JIT_UNAVAILABLE;
    return OMRT_OK;
  }
  omrt_status s = lj->inner->compile(lj->inner, m, state_out);
  if (s == OMRT_OK) lj->last = LAZY_JIT_COMPILED;
  return s;
}

static void lazy_release(const omrt_vprog_compiler *self, void *state) {
  lazy_jit *lj = (lazy_jit *)(void *)self;
  if (lj->inner) lj->inner->release(lj->inner, state);
}

lazy_jit *lazy_jit_new(void) {
  lazy_jit *lj = calloc(1, sizeof *lj);
  if (lj) *lj = (lazy_jit){.hook = {lazy_compile, lazy_release}, .last = LAZY_JIT_NO_PROGRAMS};
  return lj;
}

void lazy_jit_free(lazy_jit *lj) {
  if (!lj) return;
  if (lj->jit) lj->jit_free(lj->jit);
  free(lj); /* the library stays mapped: LLVM's static state is not made to be unloaded */
}

const omrt_vprog_compiler *lazy_jit_compiler(lazy_jit *lj) { return &lj->hook; }

int lazy_jit_last(lazy_jit *lj, omrt_jit_stats *stats_out, const char **cache_dir_out) {
  int last = lj->last;
  if (last == LAZY_JIT_COMPILED) {
    lj->last_stats(lj->jit, stats_out);
    *cache_dir_out = lj->cache_dir(lj->jit);
  }
  lj->last = LAZY_JIT_NO_PROGRAMS; /* libomrt does not call compile for a model without side tables */
  return last;
}
