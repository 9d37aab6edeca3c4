/* eval_internal.h - what the reference evaluator's files (ir/eval.c,
 * ir/eval_index.c) share: the per-node context and its error helpers.
 * Internal to ir/; nothing outside the evaluator includes this. */
#ifndef IR_EVAL_INTERNAL_H
#define IR_EVAL_INTERNAL_H

#include "common/arena.h"
#include "common/status.h"
#include "ir/ir.h"

/* One node being evaluated: its inputs, outputs, the arena and the diag. */
typedef struct ev {
  const ir_node *n;
  const void *const *in;
  void **out;
  arena *a;
  diag *d;
} ev;

/* Records an error naming e's node (ir_node_error); returns code. */
#define fail(e, code, ...) ir_node_error((e)->d, (code), (e)->n, __VA_ARGS__)

static inline status nomem(ev *e) { return fail(e, ST_ERR_NOMEM, "out of memory evaluating"); }

static inline int is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }

#endif
