/* om_task_kind.h - what every task kind of the om package shares: the kind
 * numbers, the naming of slots and params, the block split, the activation
 * codes and the tensor-access bits. Each kind's own slots and params are in
 * its family's header (om_tasks_cube.h, om_tasks_vector.h, om_aipp.h);
 * om_tasks.h gathers them. Part of the om format: include om_format.h. */
#ifndef COMMON_OM_TASK_KIND_H
#define COMMON_OM_TASK_KIND_H

#include <stdint.h>

#include "types.h"

/* Activation applied at the end of a task (after bias and residual). */
typedef enum om_act {
  OM_ACT_NONE = 0,
  OM_ACT_RELU = 1,
  OM_ACT_CLIP = 2, /* clamp to [clip_min, clip_max] (Relu6 = CLIP 0..6) */
  /* MATMUL only (format 2.10), on the f32 sum before the cast to y's dtype,
   * common/vmath.h's functions: */
  OM_ACT_GELU = 3,      /* x/2 * (1 + erf(x / sqrt 2)): om_vgelu */
  OM_ACT_GELU_TANH = 4, /* x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): om_vgelu_tanh */
  OM_ACT_SILU = 5,      /* x * sigmoid(x): om_vsilu */
  OM_ACT_COUNT
} om_act;

/* Task kinds. Each kind's comment below says what it computes, what its
 * tensors[] slots and params[] hold, and its block unit.
 * Names: a kind's tensor slots are OM_<KIND>_T_<NAME> and its params
 * OM_<KIND>_P_<NAME> (CONV2D and DWCONV share OM_CONV_); OM_<KIND>_NTENSORS
 * is its tensor count (the fixed slots where the count varies) and
 * OM_<KIND>_NPARAMS one past its last param: params from there on are 0. A
 * name that starts a run (OM_PAD_P_BEGIN, one per dim) names its first
 * element. The prose calls a slot or param by its name in lower case
 * (tile_m is OM_CONV_P_TILE_M); the numbers are the format.
 * Floats in params are stored as their IEEE-754 bit pattern (memcpy).
 * Blocks: a task's work is `units` of the kind's block unit (stated with
 * each kind), split into block_dim blocks (1 <= block_dim <= units, or 1 for
 * empty work) as [b*units/block_dim, (b+1)*units/block_dim); AI core c of
 * `cores` runs blocks [c*block_dim/cores, (c+1)*block_dim/cores); blocks
 * never write overlapping bytes. */
typedef enum om_task_kind {
  OM_TASK_NONE = 0, /* not a kind: the compiler's "no task" (ir/ops.def) */
  OM_TASK_TRANSDATA = 1,
  OM_TASK_CONV2D = 2,
  OM_TASK_DWCONV = 3,
  OM_TASK_POOL = 4,
  /* 5 was ELTWISE (binary ops with an activation), retired: elementwise work
   * of every kind is VPROG. The number is not reused. */
  OM_TASK_COPY_SLICE = 6,
  OM_TASK_SOFTMAX = 7,
  OM_TASK_VPROG = 8,
  OM_TASK_REDUCE = 9,
  OM_TASK_STRIDED_COPY = 10,
  OM_TASK_GATHER = 11,
  OM_TASK_PAD = 12,
  OM_TASK_MATMUL = 13,
  OM_TASK_RESIZE = 14,
  OM_TASK_POOL_ND = 15,
  OM_TASK_TOPK = 16,
  OM_TASK_SCATTER = 17,
  OM_TASK_CUMSUM = 18,
  OM_TASK_ONEHOT = 19,
  OM_TASK_WPACK = 20,
  OM_TASK_LAYERNORM = 21,
  OM_TASK_ATTENTION = 22,
  OM_TASK_CONV3D = 23,
  OM_TASK_AIPP = 24,
  OM_TASK_QCONV2D = 25,
  OM_TASK_RECURRENCE = 26,
  OM_TASK_NONZERO = 27,
  OM_TASK_NMS = 28,
  OM_TASK_UNIQUE = 29,
  OM_TASK_TFIDF = 30,
  OM_TASK_QELTWISE = 31,
  OM_TASK_QLUT = 32,
  OM_TASK_QMATMUL = 33,
  OM_TASK_DYNQUANT = 34,
  OM_TASK_KIND_COUNT /* one past the largest kind */
} om_task_kind;

enum { OM_TASK_MAX_TENSORS = 8, OM_TASK_MAX_PARAMS = 24 };

/* Tensor access, declared with each kind's slots: OM_<KIND>_WRITES are the
 * slots its tasks write (OM_SLOT(s) for tensors[s]; OM_WRITES_OUTPUTS: a
 * program's outputs, slots ninputs .. ntensors-1, the program's header
 * says ninputs); a task reads every other slot it uses. OM_<KIND>_IN_PLACE
 * are the read slots whose tensor may occupy exactly a written tensor's
 * bytes: the kernel reads each of its elements before it writes the one
 * at that place. libomrt's loader holds every task to the rule: a written
 * tensor lies in WORKSPACE or OUTPUT; written tensors overlap no tensor
 * the task reads (but exactly, in place, where the kind allows it) nor
 * each other. OM_TASK_ACCESS (om_tasks.h) lists every kind's. */
#define OM_SLOT(s) (1u << (s))
enum { OM_WRITES_OUTPUTS = 1u << OM_TASK_MAX_TENSORS };

#endif
