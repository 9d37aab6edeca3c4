/* vprog_plan.h - a VPROG task (om_format.h, common/vprog.h) as the runtime
 * runs it: the plan the loader builds once per task (runtime/vprog_plan.c) and
 * the interpreter executes tile by tile (runtime/vprog_exec.c).
 *
 * The plan is the verified program decoded into steps, with everything the
 * inner loops would otherwise recompute taken out of them:
 *   - registers are mapped to UB slots by liveness (an SSA register's slot is
 *     reused once its last reader ran; a step's destination never shares a
 *     slot with its own operands), and instructions whose result no STORE
 *     needs are dropped; STOREs run after every other step, so an output may
 *     occupy exactly the bytes of a same-shaped input (in place);
 *   - each slot holds `lanes` elements of 8 bytes (256 lanes, the block unit,
 *     unless the model's UB is too small for the live registers: then the
 *     largest power of two >= 16 that fits; fewer is rejected at load);
 *   - register lanes hold each register in its compute type: f32 and f16
 *     registers as float (f16 values rounded to f16 after every step that
 *     computes them), f64 as double, signed integers (i64 i32 i16 i8) as
 *     int64_t and unsigned ones (u64 u32 u16 u8) as uint64_t, both wrapped
 *     to the register's width after every step (so a lane always holds the
 *     register's value, sign- or zero-extended), bool as uint8_t 0/1;
 *   - the outputs' physical iteration space with size-1 dims dropped and
 *     adjacent dims merged wherever every input allows, and per input its
 *     element strides over that space (0 on broadcast dims);
 *   - each step's lane function, chosen by opcode and dtypes.
 * The plan is one malloc'd block (the steps are its flexible array member),
 * stored in omrt_model.task_aux and freed with the model.
 *
 * A vprog compiler (runtime/vprog_compiler.h, e.g. libomrt_jit) may give a
 * plan a native function at load; the run function then calls it instead of
 * interpreting the steps (same results, see rt_vnative_fn).
 */
#ifndef RUNTIME_VPROG_PLAN_H
#define RUNTIME_VPROG_PLAN_H

#include <stdint.h>

#include "common/vprog.h"
#include "runtime/rt.h"

enum { RT_VTILE = 256, RT_VMIN_LANES = 16, RT_VMAX_DIMS = MAX_RANK + 1 };

typedef struct rt_vstep rt_vstep;
/* Computes n lanes of one step; operands and destination are UB slots at
 * ub + s->a, s->b, s->c, s->d (bytes). */
typedef void (*rt_vlane_fn)(const rt_vstep *s, uint8_t *ub, uint32_t n);

typedef enum rt_vstep_kind {
  RT_VSTEP_LANES = 0, /* fn computes the destination slot */
  RT_VSTEP_LOAD = 1,  /* gather input `io` (broadcast, converted to lanes) into slot d */
  RT_VSTEP_STORE = 2, /* write slot a to output `io` */
} rt_vstep_kind;

/* A constant in its lane form (CONST; integers wrapped to the dtype and
 * extended to 64 bits), ISINF's detect mask, or SHL/SHR's width in bits, in i64. */
typedef union rt_vimm {
  float f;
  double d;
  int64_t i64;
  uint8_t u8;
} rt_vimm;

/* What a lane step does to its destination after fn (rt_vprog_post). */
typedef enum rt_vpost {
  RT_VPOST_NONE = 0,
  RT_VPOST_F16, /* round float lanes to f16 */
  RT_VPOST_S32,
  RT_VPOST_S16,
  RT_VPOST_S8, /* wrap int64 lanes to the width, sign-extended */
  RT_VPOST_U32,
  RT_VPOST_U16,
  RT_VPOST_U8, /* wrap uint64 lanes to the width, zero-extended */
} rt_vpost;

struct rt_vstep {
  rt_vlane_fn fn;      /* RT_VSTEP_LANES only */
  uint8_t kind;        /* rt_vstep_kind */
  uint8_t post;        /* rt_vpost */
  uint16_t io;         /* LOAD: input index; STORE: output index */
  uint32_t d, a, b, c; /* byte offsets of the slots in the UB */
  rt_vimm imm;
};

typedef struct rt_vinput {
  uint32_t dtype;                /* stored dtype (types.h) */
  int contiguous;                /* same physical shape as the outputs: element e is at e */
  int64_t strides[RT_VMAX_DIMS]; /* elements per step of each plan dim; 0 = broadcast */
} rt_vinput;

/* A vector program compiled to native code. It computes rows x cols
 * elements of the iteration space: element (r, j) of the task's tensor k
 * (inputs, then outputs) is at ptr[k] + r * outer[k] + j * inner_k elements
 * of the tensor's stored dtype, where inner_k is the tensor's stride over the
 * plan's last dim (1 for outputs; 1 or 0 (broadcast) for inputs, fixed when
 * the function was compiled: rt_vplan_inner_mask). An output may alias a
 * same-shaped input exactly. NC1HWC0 padding lanes are the caller's job. */
typedef void (*rt_vnative_fn)(void *const *ptr, const int64_t *outer, uint64_t rows, uint64_t cols);

typedef struct rt_vplan {
  uint32_t prog;  /* byte offset of the program in the VPROGS partition */
  uint64_t total; /* physical elements of each output */
  uint64_t tiles; /* ceil(total / RT_VTILE): the block unit */
  uint32_t lanes; /* elements per pass over the steps */
  uint32_t ninputs, noutputs;
  uint32_t ndims;             /* >= 1 */
  int64_t dims[RT_VMAX_DIMS]; /* the merged iteration space, outermost first */
  rt_vinput in[VPROG_MAX_IO];
  uint32_t out_dtype[VPROG_MAX_IO];
  /* NC1HWC0 outputs whose C is not a multiple of 16: in the last channel
   * block (c1 == c1s - 1) lanes c0 >= pad_from are padding and written as 0.
   * pad_from == 0: no padding. */
  uint32_t pad_from;
  uint64_t pad_hw16, pad_c1s; /* H*W*16 elements per channel block; C1 */
  rt_vnative_fn native;       /* set at load by a vprog compiler; NULL: interpret */
  uint32_t nsteps;
  rt_vstep steps[];
} rt_vplan;

/* Bit j set: input j is contiguous over the plan's last dim (stride 1);
 * clear: broadcast along it (stride 0); iteration_space (vprog_plan.c) leaves no
 * other stride there. Native code is specialized on it. */
static inline uint32_t rt_vplan_inner_mask(const rt_vplan *p) {
  uint32_t mask = 0;
  for (uint32_t j = 0; j < p->ninputs; j++)
    if (p->in[j].strides[p->ndims - 1]) mask |= 1u << j;
  return mask;
}

/* Lane function for opcode `op` with destination dtype `dt` and first
 * operand dtype `adt` (the same as dt where the typing rules say so); NULL if
 * there is none (vprog_exec.c). */
rt_vlane_fn rt_vprog_lane_fn(int op, int dt, int adt);
/* The post-pass (rt_vpost) of a step computing opcode op into dtype dt from
 * a first operand of dtype adt. */
int rt_vprog_post(int op, int dt, int adt);
/* a^e modulo 2^64: integer POW on unsigned registers (signed ones use it for
 * e >= 0); also what native code calls. */
uint64_t rt_vprog_upow(uint64_t a, uint64_t e);

/* Elements [e, end) of p's iteration space (any range), reading and writing
 * data[k] = the address of the program's tensor k (inputs, then outputs);
 * interpreted in `ub` (the core's UB, at least the model's ub_bytes) or run
 * through p->native. What a VPROG task's block runs, and a CONV2D / DWCONV
 * epilogue (runtime/epilogue.c) per output tile. */
void rt_vplan_exec(const rt_vplan *p, void *const *data, uint64_t e, uint64_t end, uint8_t *ub);
/* rows x cols elements from e, rows ld elements apart (a MATMUL tile
 * narrower than y): as rt_vplan_exec on each row, the same values; with
 * native code and ld the plan's last dim, one call per run of rows. */
void rt_vplan_exec_rows(const rt_vplan *p, void *const *data, uint64_t e, uint64_t rows, uint64_t cols,
                        uint64_t ld, uint8_t *ub);
/* Verifies the VPROG-shaped task record vtask (its tensors and its program param
 * name the program) and builds its plan (*plan_out, malloc'd; NULL when
 * something fails). `kind` labels the messages ("VPROG", "CONV2D epilogue").
 * Another kind's task uses it to run a program of its own (epilogue.c). */
omrt_status rt_vprog_build(const omrt_model *m, uint32_t i, const om_task *vtask, const char *kind,
                           rt_vplan **plan_out);
/* The plan of task i, if it has one: a VPROG task's, or a CONV2D / DWCONV / MATMUL
 * task's epilogue (epilogue = 1); NULL otherwise. What a vprog compiler
 * gives native functions. */
static inline rt_vplan *rt_task_vplan(const omrt_model *m, uint32_t i) {
  uint32_t k = m->tasks[i].kind;
  if (!m->task_aux ||
      (k != OM_TASK_VPROG && k != OM_TASK_CONV2D && k != OM_TASK_DWCONV && k != OM_TASK_MATMUL))
    return NULL;
  return (rt_vplan *)m->task_aux[i];
}

/* The kernel-table entry of OM_TASK_VPROG (kernels.c). */
void rt_vprog_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_vprog_check(const omrt_model *m, uint32_t i, const om_task *task);
omrt_status rt_vprog_prepare(const omrt_model *m, uint32_t i, const om_task *task, void **aux_out);

#endif
