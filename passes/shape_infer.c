/* shape_infer.c - dims and dtypes of every value.
 *
 * Contract.
 *   Needs:   graph inputs and constants with known shapes and dtypes (the
 *            frontend applies --input_shape); g->nodes in topological order;
 *            Reshape's shape input computable at compile time (a constant, or
 *            shape arithmetic over static dims: Shape/Gather/Concat/...).
 *   Changes: sets dtype, rank and dims of every node output (overwriting what
 *            the model declared); normalises attributes so later passes read
 *            no defaults: Conv and the pools get explicit kernel_shape,
 *            strides, dilations and pads [t,l,b,r] (Conv also group), auto_pad
 *            is resolved into pads and removed, Softmax gets an explicit axis
 *            >= 0, Reduce gets axes >= 0 in ascending order (or noop=1
 *            when it reduces nothing), Resize gets the scales its
 *            coordinate transform uses in place of sizes and
 *            keep_aspect_ratio_policy (ir/resize.h); the compile-time list inputs of
 *            Reduce, Expand and Split (ops.def) become attributes and the
 *            input is dropped from the node; a Cast still holding
 *            CastLike's like input gets `to` from its dtype and drops it.
 *            Otherwise nodes, values and
 *            edges are untouched.
 *   Leaves:  every value with a known shape and dtype; the graph verifies.
 *   Errors:  name the node, its op and the offending input or attribute with
 *            shapes, e.g. "node 'Add_3' (Add): inputs [1,64,56,56] and
 *            [1,32,56,56] do not broadcast".
 *
 * The rules for each op are ir's (ir/shape.h: ir_shape_infer_node); this
 * pass walks the graph in order and applies them. Shape arithmetic (Shape ->
 * Gather -> Concat -> Reshape) is the one place values matter: while walking,
 * the pass evaluates, with the reference evaluator into a scratch arena,
 * every small integer or bool tensor whose inputs are known (constants, or
 * Shape of a static value) and keeps it in a side table by value id, which
 * the rules read, so a Reshape fed by such a chain gets its dims before
 * constfold turns the chain into a constant.
 *
 * The frontend already ran the same rules at import (ir_shape_try) on every
 * node whose inputs were known then, best effort and leaving no trace but
 * output shapes and folded nodes; this pass recomputes every shape from the
 * node the importer made (the dims come out the same) and reports the
 * errors.
 */
#include "ir/eval.h"
#include "ir/shape.h"
#include "pass.h"

enum { PROPAGATE_MAX_ELEMENTS = 4096 }; /* integer tensors evaluated for shape arithmetic */

typedef struct si {
  diag *d;
  arena scratch;
  const void **known; /* per value id: data of constants and propagated integer tensors */
} si;

static int is_int(int dt) {
  return dt == DT_INT64 || dt == DT_INT32 || dt == DT_INT16 || dt == DT_INT8 || dt == DT_UINT8 ||
         dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64;
}

/* Evaluates n when it yields a small integer (or bool: the conditions of
 * shape arithmetic's Where) tensor from known inputs. */
static status propagate(si *s, ir_node *n) {
  const ir_value *y = n->out[0];
  if (n->nout != 1 || (!is_int(y->dtype) && y->dtype != DT_BOOL) ||
      ir_value_elements(y) > PROPAGATE_MAX_ELEMENTS || !ir_eval_supported(n->op))
    return ST_OK;
  const void *in[4] = {NULL};
  const void **ins = n->nin <= 4 ? in : arena_array(&s->scratch, (size_t)n->nin, sizeof *ins);
  if (!ins) return ir_node_error(s->d, ST_ERR_NOMEM, n, "out of memory inferring shapes");
  for (int i = 0; i < n->nin; i++) {
    if (!n->in[i]) continue;
    ins[i] = s->known[n->in[i]->id];
    if (!ins[i] && n->op != IR_OP_SHAPE && n->op != IR_OP_SIZE) return ST_OK;
  }
  void *out[1];
  diag local;
  diag_init(&local);
  status st = ir_eval_node(n, ins, out, &s->scratch, &local);
  if (st == ST_ERR_UNSUPPORTED) return ST_OK; /* not shape arithmetic the evaluator knows */
  if (st) return diag_set(s->d, st, "%s", local.msg);
  s->known[y->id] = out[0];
  return ST_OK;
}

status pass_shape_infer(ir_graph *g, pass_ctx *ctx, diag *d) {
  for (int i = 0; i < g->nvalues; i++) {
    const ir_value *v = g->values[i];
    if ((v->input_index < 0 && !v->data) || v->producer) continue;
    if (v->rank < 0 || ir_value_bytes(v) < 0)
      return diag_set(
          d, ST_ERR_INVALID, "%s '%s' has an unknown shape or dtype %s%s (give it with --input_shape)",
          v->data ? "constant" : "graph input", v->name, dtype_name(v->dtype) ? dtype_name(v->dtype) : "?",
          v->rank < 0 ? "[?]" : ir_dims_str(v->rank, v->dims));
  }
  si s = {d, {0}, NULL};
  arena_init(&s.scratch, 0);
  s.known = arena_array(&s.scratch, (size_t)g->nvalues, sizeof *s.known);
  status st = s.known ? ST_OK : diag_set(d, ST_ERR_NOMEM, "out of memory inferring shapes");
  for (int i = 0; st == ST_OK && i < g->nvalues; i++)
    s.known[i] = g->values[i]->data;
  for (int i = 0; st == ST_OK && i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead) continue;
    st = ir_shape_infer_node(g, n, s.known, d);
    if (st == ST_OK) st = propagate(&s, n);
  }
  arena_free(&s.scratch);
  return st;
}
