/* omrt_jit.h - libomrt_jit: compiles a model's vector programs to native
 * code at load with LLVM OrcJIT (LLJIT), for the host CPU. A separate
 * shared library (libomrt_jit.so.<soversion>, the version of omrt.h), built only when LLVM 16 is found;
 * libomrt itself never links LLVM and takes the compiler through
 * omrt_load_options:
 *
 *   omrt_jit *jit;
 *   omrt_jit_new(&jit);
 *   omrt_load_options lo = {.vprog_compiler = omrt_jit_compiler(jit)};
 *   omrt_model_load_file("m.om", &lo, &m);    // compiles every VPROG program
 *   ...
 *   omrt_model_free(m);                       // frees its native code
 *   omrt_jit_free(jit);                       // after every model using it
 *
 * Programs with identical bodies (and the same broadcast pattern along the
 * innermost dim) are compiled once per omrt_jit: within a model and across
 * the models loaded through it at the same time (the code is shared and
 * freed with its last model). Results equal the interpreter's (vprog.h
 * semantics; math functions call the same libm). Loads through one omrt_jit
 * may run on several threads at once.
 *
 * On-disk cache: with OMRT_JIT_CACHE=DIR in the environment at
 * omrt_jit_new (or omrt_jit_set_cache), compiled programs are stored in DIR
 * as object files keyed by the program's IR, the host CPU (name and
 * features) and the LLVM version, and later loads read them instead of
 * compiling. DIR is created (mode 0700) if missing and must be owned by the
 * user and writable by nobody else; entries are validated (checksums, the
 * whole key) and an invalid one is ignored and rewritten
 * (runtime/jit/jit_cache.h).
 *
 * Linking: libomrt_jit.so exports only the functions below and calls a few
 * libomrt internals (rt_error, so its messages reach omrt_last_error(),
 * rt_vprog_upow, crc32c) that it takes from the program, so the program
 * links libomrt statically (libomrt.a; the shared libomrt hides them) and
 * exports them: a program linked with libomrt_jit.so does so automatically;
 * one that dlopens it, like omrun (tools/lazy_jit.c), links with -rdynamic.
 * Loading it maps and relocates libLLVM (~50 MB resident): load it only
 * when a model has vector programs, as omrun does.
 */
#ifndef OMRT_JIT_H
#define OMRT_JIT_H

#include "omrt.h"

typedef struct omrt_jit omrt_jit;

/* What the last load through this compiler did. */
typedef struct omrt_jit_stats {
  uint32_t programs; /* VPROG tasks given native code */
  uint32_t unique;   /* distinct functions they run (= compiled + cached + shared) */
  uint32_t compiled; /* of those, compiled by LLVM now */
  uint32_t cached;   /* read from the on-disk cache */
  uint32_t shared;   /* already loaded for another model through this jit */
  double ms;         /* wall time of IR building, optimization and codegen */
  double cpu_ms;     /* CPU time of the same (the compile runs on the loading thread) */
} omrt_jit_stats;

/* Sets up LLVM for the host CPU; on failure *jit_out is NULL and
 * omrt_last_error() says why. */
OMRT_API omrt_status omrt_jit_new(omrt_jit **jit_out);
OMRT_API void omrt_jit_free(omrt_jit *jit); /* NULL is fine */
/* The hook to put in omrt_load_options.vprog_compiler; owned by jit. */
OMRT_API const omrt_vprog_compiler *omrt_jit_compiler(omrt_jit *jit);
OMRT_API void omrt_jit_last_stats(omrt_jit *jit, omrt_jit_stats *stats_out);
/* Uses directory dir (borrowed for the call) as the on-disk cache for later
 * loads; NULL or "" turns the cache off. OMRT_ERR_ARG naming dir when it
 * cannot be created or is not private to the user. */
OMRT_API omrt_status omrt_jit_set_cache(omrt_jit *jit, const char *dir);
/* The cache directory in use, or NULL; valid until the next set_cache. */
OMRT_API const char *omrt_jit_cache_dir(const omrt_jit *jit);

#endif
