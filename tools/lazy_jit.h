/* lazy_jit.h - omrun's JIT, loaded on demand (tools/lazy_jit.c).
 *
 * A vector-program compiler (runtime/vprog_compiler.h) that forwards to
 * libomrt_jit (runtime/jit/omrt_jit.h) but dlopens that library only when a
 * model that has vector programs (VPROG tasks or conv epilogues) is loaded
 * through it. Loading libomrt_jit maps and relocates libLLVM (~50 MB
 * resident), so a model without programs, or a run with the JIT off, never
 * pays for LLVM.
 *
 * The library is $OMRT_JIT_LIBRARY when set (a path, or a name dlopen
 * searches), else libomrt_jit.so.<soversion> (OMRT_JIT_SONAME) through omrun's RUNPATH (the build
 * directory, or $ORIGIN/../lib when installed). When it cannot be loaded,
 * the first model with programs prints one line on stderr
 *   omrun: jit: cannot load <library> (<why>): vector programs are interpreted
 * and every model's programs are interpreted: loads succeed, results are
 * the same. Once loaded, omrt_jit_new and compile errors fail the load as
 * they would with libomrt_jit linked directly (message in omrt_last_error());
 * so an unusable OMRT_JIT_CACHE directory fails only the loads of models
 * with programs. The cache does not make LLVM avoidable: a cached body still
 * needs LLVM to build the IR its key holds and to link the object (LLJIT).
 */
#ifndef TOOLS_LAZY_JIT_H
#define TOOLS_LAZY_JIT_H

#include "omrt.h"
#include "omrt_jit.h"

typedef struct lazy_jit lazy_jit;

lazy_jit *lazy_jit_new(void);     /* NULL when out of memory */
void lazy_jit_free(lazy_jit *lj); /* after every model loaded through it; NULL is fine */
/* The hook for omrt_load_options.vprog_compiler; owned by lj. */
const omrt_vprog_compiler *lazy_jit_compiler(lazy_jit *lj);

/* What the one load through lj since the last call did: LAZY_JIT_COMPILED
 * (*stats_out and *cache_dir_out, which is NULL or valid until
 * lazy_jit_free, describe it), LAZY_JIT_NO_PROGRAMS (the model has none:
 * LLVM not needed, not loaded for it) or LAZY_JIT_UNAVAILABLE (the library
 * could not be loaded: interpreted). */
enum { LAZY_JIT_COMPILED = 1, LAZY_JIT_NO_PROGRAMS, LAZY_JIT_UNAVAILABLE };
int lazy_jit_last(lazy_jit *lj, omrt_jit_stats *stats_out, const char **cache_dir_out);

#endif
