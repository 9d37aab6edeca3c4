/* pool.h - the pools over 1 to 3 spatial dims (MaxPool, AveragePool,
 * LpPool and their Global forms; ops.def has the IR contract): one reading
 * of the window attributes for shape inference, the reference evaluator,
 * the layout choice and emission, so they cannot disagree.
 */
#ifndef IR_POOL_H
#define IR_POOL_H

#include "common/arena.h"
#include "common/status.h"
#include "ir/ir.h"

enum { IR_POOL_MAX_SPATIAL = 3 };

typedef struct ir_pool {
  int r;      /* spatial dims, 1..3 */
  int mode;   /* 0 max, 1 avg, 2 lp (OM_TASK_POOL_ND's mode) */
  int global; /* a Global* pool: the window is the whole spatial extent */
  int ceil_mode, include_pad;
  int64_t p; /* lp only */
  int64_t k[IR_POOL_MAX_SPATIAL], s[IR_POOL_MAX_SPATIAL], dl[IR_POOL_MAX_SPATIAL];
  int64_t pb[IR_POOL_MAX_SPATIAL], pe[IR_POOL_MAX_SPATIAL]; /* pads at the begin and the end */
} ir_pool;

/* 1 for MaxPool, AveragePool, LpPool and the three Global pools. */
int ir_is_pool(ir_op op);

/* The window of pool n over an input of `rank` dims `xdims` (rank 3..5):
 * absent strides, dilations and pads default to 1, 1 and 0, auto_pad is
 * not read (shape inference resolves it first). Returns 0, or -1 with a
 * message in err. */
int ir_pool_read(const ir_node *n, int rank, const int64_t *xdims, ir_pool *out, char *err, size_t cap);

/* Output extent of one spatial dim (ONNX: floor, or with ceil_mode ceil
 * unless that window would start past the input and the begin pad); < 1
 * when the window does not fit. */
int64_t ir_pool_out(int64_t in, int64_t k, int64_t s, int64_t dl, int64_t pb, int64_t pe, int ceil_mode);

/* Shape inference for pool n: checks dtype and attributes, resolves
 * auto_pad into explicit pads (then dropped) and writes kernel_shape,
 * strides, dilations and pads back (Global pools keep none), and the
 * output's rank and dims. Errors name the node. */
status ir_pool_infer(ir_graph *g, ir_node *n, diag *d, int *rank_out, int64_t *dims_out);

/* The reference evaluator for pool n (ir_eval_node's contract, eval.h). */
status ir_eval_pool(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d);

#endif
