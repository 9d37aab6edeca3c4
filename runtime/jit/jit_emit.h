/* jit_emit.h - LLVM IR for one vector program (runtime/jit/jit_emit.c). */
#ifndef RUNTIME_JIT_JIT_EMIT_H
#define RUNTIME_JIT_JIT_EMIT_H

#include <llvm-c/Core.h>
#include <stdint.h>

#include "common/vprog.h"

/* Lanes of the main vector loop: four AVX2 registers of f32, so four
 * independent dependency chains (exp, the f16 converts are long ones) fill
 * the out-of-order window; then a loop of one register's width, then
 * scalar. */
enum { VPIR_WIDTH = 16, VPIR_TAIL_WIDTH = 8 };

/* A scalar function the generated code calls, and the address to bind it to
 * in the JIT (the same libm functions the interpreter calls). */
typedef struct vpir_extern {
  const char *name;
  void *addr;
} vpir_extern;

/* The functions jit_emit.c may call; terminated by {NULL, NULL}. */
extern const vpir_extern vpir_externs[];

/* Adds `name` to module `mod`: an rt_vnative_fn (runtime/vprog_plan.h) for
 * the verified program h / ins whose input j is contiguous along the
 * innermost dim when bit j of inner_mask is set, else broadcast along it. */
void vpir_build(LLVMModuleRef mod, const char *name, const om_vprog *h, const om_vinstr *ins,
                uint32_t inner_mask);

#endif
