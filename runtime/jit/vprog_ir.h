/* vprog_ir.h - LLVM IR for one vector program (runtime/jit/vprog_ir.c). */
#ifndef RUNTIME_JIT_VPROG_IR_H
#define RUNTIME_JIT_VPROG_IR_H

#include <llvm-c/Core.h>
#include <stdint.h>

#include "common/vprog.h"

enum { VPIR_WIDTH = 8 }; /* lanes of the vector loop (one AVX2 register of f32) */

/* A scalar function the generated code calls, and the address to bind it to
 * in the JIT (the same libm functions the interpreter calls). */
typedef struct vpir_extern {
  const char *name;
  void *addr;
} vpir_extern;

/* The functions vprog_ir.c may call; terminated by {NULL, NULL}. */
extern const vpir_extern vpir_externs[];

/* How EXP (and SIGMOID, SOFTPLUS's exp) is computed: */
typedef enum vpir_exp {
  VPIR_EXP_CALL = 0,       /* calling libm's expf lane by lane */
  VPIR_EXP_INLINE = 1,     /* inline vector code: glibc's expf algorithm, unfused (its SSE2 build) */
  VPIR_EXP_INLINE_FMA = 2, /* the same with glibc's FMA contractions (its FMA/AVX2 build) */
} vpir_exp;

/* Adds `name` to module `mod`: an rt_vnative_fn (runtime/vprog_plan.h) for
 * the verified program h / ins whose input j is contiguous along the
 * innermost dim when bit j of inner_mask is set, else broadcast along it. */
void vpir_build(LLVMModuleRef mod, const char *name, const om_vprog *h, const om_vinstr *ins, uint32_t inner_mask,
                vpir_exp exp_mode);

#endif
