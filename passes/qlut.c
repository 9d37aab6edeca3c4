/* qlut.c - an int8 -> int8 vector program becomes a 256-entry table.
 *
 * In a QDQ model the activations between the quantized convolutions are
 * int8, and an elementwise function of one of them is written
 * DequantizeLinear -> Sigmoid | HardSwish | HardSigmoid | Tanh | x *
 * Sigmoid(x) | ... -> QuantizeLinear (MobileNetV3's hardswish, an
 * EfficientNet's SiLU). vectorize makes each such chain one vector program
 * reading the u8/i8 tensor and writing the u8/i8 one; the program runs its
 * f32 steps on every element. Its result depends only on the input byte, so
 * it has 256 possible values: this pass computes them at compile time with
 * the vector program interpreter (ir_vprog_eval, the reference semantics
 * of vprog.h: the bits the program computes) and replaces the program by a
 * QLut node, y = table[x] (ops.def), which the QLUT task runs as a byte
 * gather. Any program qualifies, whatever its ops and dtypes inside, as long
 * as its one input and one output are 1-byte integers of the same dims: a
 * function of one byte per element.
 *
 * Contract.
 *   Needs:   vectorize (elementwise chains are programs), precision (their
 *            dtypes are final).
 *   Changes: each VectorProgram with one input x, not a constant, of dtype
 *            u8 or i8, and outputs y_j, u8 or i8, of x's dims (no
 *            broadcast, no counted extent) becomes QLut(x, table_j)
 *            writing y_j for each output, table_j a new u8/i8 [256]
 *            constant of y_j's dtype, table_j[b] = the program's output j
 *            for the input byte b.
 *   Leaves:  topological order (sorted again); y computed to the same
 *            bits as the program's interpreter.
 */
#include <stdio.h>
#include <string.h>

#include "ir/ir_vprog.h"
#include "pass.h"

static int is_q8(int dt) { return dt == DT_UINT8 || dt == DT_INT8; }

/* n is a program of one byte in and bytes out, element by element. */
static int is_byte_function(const ir_node *n) {
  if (n->op != IR_OP_VECPROG || n->nin != 1) return 0;
  const ir_value *x = n->in[0];
  if (!x || x->data || !is_q8(x->dtype) || x->count_axis >= 0) return 0;
  for (int j = 0; j < n->nout; j++) {
    const ir_value *y = n->out[j];
    if (!y || !is_q8(y->dtype) || y->rank != x->rank || y->count_axis >= 0 ||
        memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)x->rank))
      return 0;
  }
  return 1;
}

/* tables_out[j] = n's output j for each input byte (n as is_byte_function
 * accepts), by running n's program on [256] copies of its values. */
static status tabulate(const ir_node *n, arena *a, void **tables_out, diag *d) {
  ir_value x = *n->in[0], y[VPROG_MAX_IO], *in = &x, *out[VPROG_MAX_IO];
  x.rank = 1;
  x.dims[0] = 256;
  for (int j = 0; j < n->nout; j++) {
    y[j] = *n->out[j];
    y[j].rank = 1;
    y[j].dims[0] = 256;
    out[j] = &y[j];
  }
  ir_node t = *n;
  t.in = &in;
  t.out = out;
  uint8_t bytes[256];
  for (int b = 0; b < 256; b++)
    bytes[b] = (uint8_t)b;
  const void *inputs[1] = {bytes};
  return ir_vprog_eval(&t, inputs, tables_out, a, d);
}

/* n -> one QLut per output (siblings vectorize merged: a hardswish and a
 * Sigmoid of one tensor). */
static status rewrite(ir_graph *g, ir_node *n, arena *scratch, diag *d) {
  void *tables[VPROG_MAX_IO] = {NULL};
  status st = tabulate(n, scratch, tables, d);
  for (int j = 0; j < n->nout && st == ST_OK; j++) {
    char name[256];
    snprintf(name, sizeof name, n->nout > 1 ? "%s_lut%d" : "%s_lut", n->name, j);
    const int64_t dims[1] = {256};
    ir_value *y = n->out[j];
    ir_value *in[2] = {n->in[0], ir_const_new(g, name, y->dtype, 1, dims, tables[j], 256)};
    ir_node *q = in[1] ? ir_node_new(g, IR_OP_QLUT, name, 2, in, 1, &y) : NULL;
    if (!q) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory");
    q->origin = n->origin;
    if (n->nout == 1) q->name = n->name; /* the program's name (it goes; compact rebuilds the name table) */
    y->producer = q;
  }
  n->dead = st == ST_OK;
  return st;
}

status pass_qlut(ir_graph *g, pass_ctx *ctx, diag *d) {
  (void)ctx;
  arena scratch;
  arena_init(&scratch, 0);
  status st = ST_OK;
  int changed = 0;
  const int count = g->nnodes; /* the QLuts appended are not visited */
  for (int i = 0; i < count && st == ST_OK; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead || !is_byte_function(n)) continue;
    st = rewrite(g, n, &scratch, d);
    arena_free(&scratch);
    changed = 1;
  }
  arena_free(&scratch);
  if (st != ST_OK || !changed) return st;
  ir_graph_compact(g);
  return ir_graph_toposort(g, d);
}
