/* vprog.h - vector programs: the one form for elementwise work on the vector
 * unit, shared by the compiler (which builds them), the om package (which
 * stores them) and the runtime (which interprets them, or JIT-compiles them).
 *
 * A program computes one or more outputs element by element from several
 * inputs that broadcast (numpy rules) to the outputs' common shape. It is a
 * straight-line SSA list of instructions; each instruction writes a new
 * register. Registers hold one value per element of the current tile; every
 * register has one dtype.
 *
 *   r0 = LOAD  in0            (f16)      r3 = MUL   r2, r1    (f32)
 *   r1 = LOAD  in1            (f32)      r4 = CAST  r3        (f16)
 *   r2 = CAST  r0             (f32)      STORE out0, r4
 *
 * Semantics, which every executor must reproduce exactly (integers and
 * compares bit-exact; floats to within 1 ulp of the stored dtype):
 *   - Arithmetic on f16 registers is done in f32 and the result rounded to
 *     f16 (round to nearest even) after every instruction, as the chip does;
 *     f64 registers compute in f64.
 *   - Integer arithmetic wraps (two's complement) to the register's width;
 *     unsigned registers compare, divide and shift as unsigned numbers;
 *     DIV and MOD by zero give 0;
 *     DIV truncates toward zero, MOD is ONNX Mod with fmod=0 (sign of the
 *     divisor); FMOD is C fmod.
 *   - Compares and logic produce bool (0/1 bytes). SELECT c ? a : b.
 *   - CAST follows ONNX Cast: float -> int truncates toward zero (out-of-range
 *     is unspecified by ONNX; executors saturate to the destination's
 *     range), int -> float rounds, any -> bool is != 0, bool -> number is
 *     0/1; f32 -> f16 and f64 -> f16 round to nearest even (once).
 *   - Math functions (EXP, LOG, TANH, ERF, SIN, ...) are computed in f32 for
 *     f16/f32 registers and in f64 for f64 ones (libm-accurate in the
 *     interpreter).
 *
 * Binary layout in the om (partition VPROGS, see om_format.h): a sequence of
 * programs, each an om_vprog header followed by ninstrs om_vinstr records.
 * The VPROG task names its program by byte offset into the partition.
 */
#ifndef COMMON_VPROG_H
#define COMMON_VPROG_H

#include <stdint.h>

/* Register / operand dtypes are the dtype numbers of types.h. Supported:
 * DT_FLOAT32, DT_FLOAT16, DT_DOUBLE, DT_INT64, DT_INT32, DT_INT16, DT_INT8,
 * DT_UINT64, DT_UINT32, DT_UINT16, DT_UINT8, DT_BOOL. A register holds a
 * value of its dtype; executors compute it in a compute type (f32 for f16
 * and f32, f64 for f64, 64-bit integers for the integer dtypes) and bring
 * each result back to the register's dtype (rounding to f16, wrapping to
 * the integer's width) after every instruction. */

typedef enum vop {
  /* memory: a = input/output index */
  VOP_LOAD = 1,  /* dst = inputs[a], broadcast; dtype is the tensor's (no conversion) */
  VOP_STORE = 2, /* outputs[a] = b (dtype must match the tensor's); writes no register */
  VOP_CONST = 3, /* dst = imm (imm.f for floats, imm.i for integers and bool) */
  /* unary: dst = op(a) */
  VOP_CAST = 10,
  VOP_NEG,
  VOP_ABS,
  VOP_SIGN,
  VOP_NOT, /* bool */
  VOP_BITNOT,
  VOP_EXP,
  VOP_LOG,
  VOP_SQRT,
  VOP_RSQRT,
  VOP_RECIP,
  VOP_TANH,
  VOP_SIGMOID,
  VOP_ERF,
  VOP_FLOOR,
  VOP_CEIL,
  VOP_ROUND, /* half to even, as ONNX Round */
  VOP_SIN,
  VOP_COS,
  VOP_TAN,
  VOP_ASIN,
  VOP_ACOS,
  VOP_ATAN,
  VOP_SINH,
  VOP_COSH,
  VOP_ASINH,
  VOP_ACOSH,
  VOP_ATANH,
  VOP_ISNAN,    /* -> bool */
  VOP_ISINF,    /* -> bool; imm.i bit 0: detect +inf, bit 1: detect -inf */
  VOP_SOFTPLUS, /* log(1 + exp(a)), computed without overflow */
  /* binary: dst = a op b (a and b have the same dtype; compares give bool) */
  VOP_ADD = 60,
  VOP_SUB,
  VOP_MUL,
  VOP_DIV,
  VOP_MOD,
  VOP_FMOD,
  VOP_POW,
  VOP_MAX,
  VOP_MIN,
  VOP_AND, /* bool */
  VOP_OR,
  VOP_XOR,
  VOP_BITAND, /* integers */
  VOP_BITOR,
  VOP_BITXOR,
  VOP_SHL, /* integers; shift counts >= width give 0 */
  VOP_SHR, /* logical for unsigned, arithmetic for signed */
  VOP_EQ,
  VOP_NE,
  VOP_LT,
  VOP_LE,
  VOP_GT,
  VOP_GE,
  /* ternary */
  VOP_SELECT = 100, /* dst = a ? b : c (a bool; b, c, dst one dtype) */
  VOP_CLAMP,        /* dst = min(max(a, b), c) */
  VOP_FMA,          /* dst = a * b + c (floats: one rounding in f32, then to the dtype) */
} vop;

typedef struct om_vinstr { /* 24 bytes */
  uint8_t op;              /* vop */
  uint8_t dtype;           /* dtype of dst (for STORE: of the stored register) */
  uint16_t dst;            /* register written (unused for STORE) */
  uint16_t a, b, c;        /* operand registers; LOAD/STORE: a is the input/output index */
  uint16_t reserved;
  union {
    double f;
    int64_t i;
  } imm;
} om_vinstr;

typedef struct om_vprog {     /* 16 bytes, then ninstrs x om_vinstr */
  uint16_t ninputs, noutputs; /* tensors of the task, in slot order: inputs then outputs */
  uint16_t nregs;             /* registers r0..nregs-1; each written exactly once */
  uint16_t ninstrs;
  uint32_t reserved[2];
} om_vprog;

_Static_assert(sizeof(om_vinstr) == 24, "om_vinstr is 24 bytes");
_Static_assert(sizeof(om_vprog) == 16, "om_vprog is 16 bytes");

enum { VPROG_MAX_INSTRS = 4096, VPROG_MAX_IO = 8 };

/* Lowercase name of an opcode ("load", "add", ...); NULL for a number that
 * is not a vop (common/vprog.c). */
const char *vop_name(int op);

#endif
