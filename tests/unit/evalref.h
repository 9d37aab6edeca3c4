/* evalref.h - one IR node run by the reference evaluator (ir/eval.c), the
 * oracle of the kernel tests. er_eval is the step every such test takes:
 * infer a built node's shapes, then evaluate it. For f32 results
 * (test_norm, test_attention, test_recurrence): er_new makes a
 * graph with one node of `op`, er_in appends an input (a constant holding
 * the caller's data, which must be in the input's dtype), attributes are set
 * on e->n with ir_attr_set_*, er_run infers the node's shapes
 * (ir_shape_infer_node, so attributes are normalised as the compiler would)
 * and evaluates it, returning output k as malloc'd f32 values (the caller
 * frees them), or NULL after printing why. Header-only, test code only. */
#ifndef TESTS_UNIT_EVALREF_H
#define TESTS_UNIT_EVALREF_H

#include <stdio.h>
#include <stdlib.h>

#include "ir/eval.h"
#include "ir/ir.h"
#include "ir/shape.h"
#include "support.h"

typedef struct er {
  ir_graph *g;
  ir_node *n;
  ir_value *in[8], *out[3];
  int nin, nout;
} er;

static inline void er_new(er *e, ir_op op, int nout) {
  e->g = ir_graph_new("evalref", 0);
  e->nin = 0, e->nout = nout;
  for (int k = 0; k < nout; k++)
    e->out[k] = ir_value_new(e->g, NULL, DT_FLOAT32);
  e->n = ir_node_new(e->g, op, "ref", 0, NULL, nout, e->out);
}

/* Appends input slot nin; data NULL: an omitted optional input. */
static inline void er_in(er *e, int dt, int rank, const int64_t *dims, const void *data) {
  ir_value *v = NULL;
  if (data) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
      n *= dims[i];
    v = ir_const_new(e->g, NULL, (dtype)dt, rank, dims, data, (size_t)n * dtype_size(dt));
  }
  e->in[e->nin] = v;
  ir_node_set_input(e->g, e->n, e->nin++, v);
}

/* Infers node n's shapes (ir_shape_infer_node, so attributes are
 * normalised as the compiler would) and evaluates it on ins (its inputs'
 * data in slot order, NULL for an omitted one) into outs (output k's data,
 * allocated in a: it lives as long as a). Returns 0, or 1 after printing
 * why. */
static inline int er_eval(ir_graph *g, ir_node *n, const void *const *ins, void **outs, arena *a) {
  diag d;
  diag_init(&d);
  if (ir_shape_infer_node(g, n, NULL, &d) == ST_OK && ir_eval_node(n, ins, outs, a, &d) == ST_OK) return 0;
  test_note("  reference: %s", d.msg);
  return 1;
}

static inline float *er_run(er *e, int k) {
  arena a;
  arena_init(&a, 0);
  const void *ins[8];
  void *outs[3] = {NULL, NULL, NULL};
  for (int i = 0; i < e->nin; i++)
    ins[i] = e->in[i] ? e->in[i]->data : NULL;
  float *r = NULL;
  if (!er_eval(e->g, e->n, ins, outs, &a)) {
    const ir_value *y = e->out[k];
    int64_t n = ir_value_elements(y);
    r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    for (int64_t i = 0; i < n; i++)
      r[i] = (float)elem_get(outs[k], y->dtype, i);
  }
  arena_free(&a);
  return r;
}

static inline void er_free(er *e) { ir_graph_free(e->g); }

#endif
