/* omrt_jit.h - libomrt_jit: compiles a model's vector programs to native
 * code at load with LLVM OrcJIT (LLJIT), for the host CPU. A separate
 * static library, built only when LLVM 16 is found; libomrt itself never
 * links LLVM and takes the compiler through omrt_load_options:
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
 * innermost dim) are compiled once per model. Results equal the
 * interpreter's (vprog.h semantics; math functions call the same libm).
 * Loads through one omrt_jit may run on several threads at once.
 */
#ifndef OMRT_JIT_H
#define OMRT_JIT_H

#include "omrt.h"

typedef struct omrt_jit omrt_jit;

/* What the last load through this compiler did. */
typedef struct omrt_jit_stats {
  uint32_t programs; /* VPROG tasks given native code */
  uint32_t unique;   /* distinct functions compiled for them */
  double ms;         /* wall time of IR building, optimization and codegen */
  double cpu_ms;     /* CPU time of the same (the compile runs on the loading thread) */
  int inline_exp;    /* 1: exp is inline vector code (checked against expf), 0: calls expf */
} omrt_jit_stats;

/* Sets up LLVM for the host CPU; on failure *jit_out is NULL and
 * omrt_last_error() says why. */
omrt_status omrt_jit_new(omrt_jit **jit_out);
void omrt_jit_free(omrt_jit *jit); /* NULL is fine */
/* The hook to put in omrt_load_options.vprog_compiler; owned by jit. */
const omrt_vprog_compiler *omrt_jit_compiler(omrt_jit *jit);
void omrt_jit_last_stats(omrt_jit *jit, omrt_jit_stats *stats_out);

#endif
