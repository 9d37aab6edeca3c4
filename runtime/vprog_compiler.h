/* vprog_compiler.h - the hook through which an optional library (libomrt_jit,
 * runtime/jit/) turns a model's vector programs into native code at load,
 * without libomrt linking it.
 *
 * An application passes a compiler in omrt_load_options.vprog_compiler.
 * After every task was verified and every VPROG plan built, the loader calls
 * compile() once with the whole model; the compiler sets plans' `native`
 * functions (any subset: a plan left NULL is interpreted) and returns its
 * per-model state (e.g. the code memory), which the model keeps and hands to
 * release() when it is freed. A failing compile fails the load with the
 * compiler's rt_error message. The compiler must outlive every model loaded
 * with it.
 */
#ifndef RUNTIME_VPROG_COMPILER_H
#define RUNTIME_VPROG_COMPILER_H

#include "runtime/rt.h"

struct omrt_vprog_compiler {
  /* Compiles the programs of m's VPROG tasks; m->task_aux[i] is task i's
   * rt_vplan (runtime/vprog_plan.h) and may be given its native function. */
  omrt_status (*compile)(const omrt_vprog_compiler *self, omrt_model *m, void **state_out);
  /* Frees what compile returned in *state_out (called once, even for NULL). */
  void (*release)(const omrt_vprog_compiler *self, void *state);
};

#endif
