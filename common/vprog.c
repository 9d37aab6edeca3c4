/* vprog.c - names of the vector-program opcodes (common/vprog.h), shared by
 * the runtime's verifier messages, the JSON dump and the compiler's printers.
 * One table indexed by opcode; numbers that are not opcodes have no name.
 */
#include "common/vprog.h"

#include <stddef.h>

static const char *const names[] = {
    [VOP_LOAD] = "load",     [VOP_STORE] = "store",
    [VOP_CONST] = "const",   [VOP_CAST] = "cast",
    [VOP_NEG] = "neg",       [VOP_ABS] = "abs",
    [VOP_SIGN] = "sign",     [VOP_NOT] = "not",
    [VOP_BITNOT] = "bitnot", [VOP_EXP] = "exp",
    [VOP_LOG] = "log",       [VOP_SQRT] = "sqrt",
    [VOP_RSQRT] = "rsqrt",   [VOP_RECIP] = "recip",
    [VOP_TANH] = "tanh",     [VOP_SIGMOID] = "sigmoid",
    [VOP_ERF] = "erf",       [VOP_FLOOR] = "floor",
    [VOP_CEIL] = "ceil",     [VOP_ROUND] = "round",
    [VOP_SIN] = "sin",       [VOP_COS] = "cos",
    [VOP_TAN] = "tan",       [VOP_ASIN] = "asin",
    [VOP_ACOS] = "acos",     [VOP_ATAN] = "atan",
    [VOP_SINH] = "sinh",     [VOP_COSH] = "cosh",
    [VOP_ASINH] = "asinh",   [VOP_ACOSH] = "acosh",
    [VOP_ATANH] = "atanh",   [VOP_ISNAN] = "isnan",
    [VOP_ISINF] = "isinf",   [VOP_SOFTPLUS] = "softplus",
    [VOP_ADD] = "add",       [VOP_SUB] = "sub",
    [VOP_MUL] = "mul",       [VOP_DIV] = "div",
    [VOP_MOD] = "mod",       [VOP_FMOD] = "fmod",
    [VOP_POW] = "pow",       [VOP_MAX] = "max",
    [VOP_MIN] = "min",       [VOP_AND] = "and",
    [VOP_OR] = "or",         [VOP_XOR] = "xor",
    [VOP_BITAND] = "bitand", [VOP_BITOR] = "bitor",
    [VOP_BITXOR] = "bitxor", [VOP_SHL] = "shl",
    [VOP_SHR] = "shr",       [VOP_EQ] = "eq",
    [VOP_NE] = "ne",         [VOP_LT] = "lt",
    [VOP_LE] = "le",         [VOP_GT] = "gt",
    [VOP_GE] = "ge",         [VOP_SELECT] = "select",
    [VOP_CLAMP] = "clamp",   [VOP_FMA] = "fma",
};

const char *vop_name(int op) {
  return op >= 0 && op < (int)(sizeof names / sizeof *names) ? names[op] : NULL;
}
