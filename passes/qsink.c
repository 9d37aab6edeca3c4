/* qsink.c - a DequantizeLinear moves down across a Concat and the ops that
 * only move channels, so they run on the int8 values.
 *
 * ShuffleNetV2's blocks, as omquant and ONNX Runtime's quantizer leave them:
 *   Concat(DequantizeLinear(a_q), DequantizeLinear(b_q)) -> Reshape
 *   [N, 2, C/2, H, W] -> Transpose (0, 2, 1, 3, 4) -> Reshape [N, C, H, W]
 *   (the channel shuffle) -> Slice (channels 0..C/2) | Slice (C/2..C)
 * The first half goes on unquantized into the next block's Concat; only
 * the second half has a QuantizeLinear (before the branch's convolution).
 * So no QuantizeLinear sits above the shuffle and passes/qconv.c's
 * fold_move (a QuantizeLinear moving up to its DequantizeLinear leaves)
 * has nothing to move: the Concat, the shuffle and the Slices ran on f32.
 *
 * Here the DequantizeLinears move down instead, exactly: each channel c of
 * the Concat's output is DequantizeLinear(x_q[c]) with its input's scale
 * s[c] and zero point z[c], so the Concat of the int8 values followed by one
 * DequantizeLinear with those parameters per channel (axis 1, the [C, 1, 1]
 * broadcast of the IR contract) computes every element as before: (x - z[c])
 * * s[c] in f32, the same operation. Then:
 *  - a chain of Reshapes and Transposes, each value read by the next
 *    alone, whose end has the Concat's dims and moves whole channels (the
 *    element at (n, c, h, w) comes from (n, p[c], h, w), checked on every
 *    element's index) runs on the int8 values, the parameters permuted by p
 *    (s'[c] = s[p[c]]);
 *  - a Slice along the channels alone (step 1) runs on the int8 values,
 *    the parameters sliced likewise;
 * and a Concat whose inputs are such per-channel DequantizeLinears (the next
 * block's) joins them again. Parameters equal on every channel give a
 * per-tensor DequantizeLinear.
 *
 * What remains after the ops is a per-channel DequantizeLinear, read by a
 * QuantizeLinear (the branch's: an int8 -> int8 requantization, one vector
 * program) or by float ops, as the DequantizeLinears above were.
 *
 * Contract.
 *   Needs:   qconv (its fold_move and islands read per-tensor
 *            DequantizeLinears: they match first), shape_infer.
 *   Changes: each Concat along axis 1 of rank 4 whose inputs are all
 *            DequantizeLinears of non-constant int8 values of one dtype and
 *            one output type, with constant scales and zero points per
 *            tensor or per channel, reads those values and writes an int8
 *            value, which a new DequantizeLinear (scale f32 [C, 1, 1] and
 *            zero point [C, 1, 1], or per tensor) turns into the Concat's
 *            output; from there the chains and Slices above move likewise.
 *            DequantizeLinears other nodes read stay for them.
 *   Leaves:  topological order (sorted again); dead nodes removed (dce);
 *            every value computed to the same bits.
 */
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "pass.h"

static int is_q8(int dt) { return dt == DT_UINT8 || dt == DT_INT8; }

enum { SINK_MAX_ELEMS = 1 << 22 }; /* the index map of a shuffle check */

/* Per-channel parameters of DequantizeLinear dq of a rank-4 int8 value:
 * scale s[C] and zero point z[C] (C = x's dims[1]) from one element or
 * from C along axis 1; 0 when they are not constants so. */
static int read_params(const ir_node *dq, float *s, int32_t *z) {
  const ir_value *x = dq->in[0], *sv = dq->in[1], *zv = dq->nin > 2 ? dq->in[2] : NULL;
  const int64_t c = x->dims[1];
  for (int k = 0; k < (zv ? 2 : 1); k++) {
    const ir_value *p = k ? zv : sv;
    const int64_t n = ir_value_elements(p);
    if (!p->data || !(n == 1 || (n == c && p->rank >= 3 && p->dims[p->rank - 3] == c))) return 0;
    if (k ? p->dtype != x->dtype : !elem_is_float(p->dtype)) return 0;
  }
  const int64_t ns = ir_value_elements(sv), nz = zv ? ir_value_elements(zv) : 0;
  for (int64_t i = 0; i < c; i++) {
    s[i] = (float)elem_get(sv->data, sv->dtype, (size_t)(ns == 1 ? 0 : i));
    z[i] = zv ? (int32_t)elem_get_int(zv->data, zv->dtype, (size_t)(nz == 1 ? 0 : i)) : 0;
    if (!(s[i] > 0.0f)) return 0;
  }
  return 1;
}

/* v is a DequantizeLinear's output of a non-constant rank-4 int8 value with
 * constant parameters (read_params); its node, else NULL. */
static ir_node *int8_dq(const ir_value *v) {
  ir_node *dq = v->producer;
  if (!dq || dq->op != IR_OP_DEQUANTIZE || dq->nin < 2) return NULL;
  const ir_value *x = dq->in[0];
  if (x->data || !is_q8(x->dtype) || x->rank != 4 || x->dims[1] <= 0 || !dq->in[1]->data ||
      (dq->nin > 2 && !dq->in[2]->data))
    return NULL;
  return dq;
}

/* y = DequantizeLinear(x, s, z) per channel ([C, 1, 1] constants, or one
 * element when all channels' are equal), `like`'s output type and origin;
 * y keeps its readers. NULL when out of memory. */
static ir_node *add_dq(ir_graph *g, const ir_node *like, ir_value *x, ir_value *y, const float *s,
                       const int32_t *z) {
  const int64_t c = x->dims[1];
  int same = 1;
  for (int64_t i = 1; i < c; i++)
    same &= s[i] == s[0] && z[i] == z[0];
  const int64_t dims[3] = {same ? 1 : c, 1, 1}, n = same ? 1 : c;
  const int rank = same ? 0 : 3;
  char name[256];
  snprintf(name, sizeof name, "%s_scale", y->name);
  ir_value *in[3] = {x, ir_const_new(g, name, DT_FLOAT32, rank, dims, s, sizeof(float) * (size_t)n), NULL};
  snprintf(name, sizeof name, "%s_zero_point", y->name);
  in[2] = ir_const_new(g, name, x->dtype, rank, dims, NULL, (size_t)n);
  if (!in[1] || !in[2]) return NULL;
  for (int64_t i = 0; i < n; i++) /* z fits x's dtype: read from its zero points */
    ((uint8_t *)in[2]->data)[i] = (uint8_t)z[i];
  snprintf(name, sizeof name, "%s_dq", y->name);
  y->producer = NULL;
  ir_node *dq = ir_node_new(g, IR_OP_DEQUANTIZE, name, 3, in, 1, &y);
  if (!dq || ir_attr_set_int(g, dq, "to", ir_attr_int(like, "to", DT_FLOAT32))) return NULL;
  dq->origin = like->origin;
  return dq;
}

/* A new int8 value of v's dims and dtype dt, named after v. */
static ir_value *int8_like(ir_graph *g, const ir_value *v, int dt) {
  char name[256];
  snprintf(name, sizeof name, "%s_q", v->name);
  ir_value *q = ir_value_new(g, name, (dtype)dt);
  if (q) ir_value_set_shape(q, v->rank, v->dims);
  return q;
}

/* n now writes a new int8 value of dtype dt, which a DequantizeLinear with
 * s, z (like `like`'s) turns into n's old output; that DequantizeLinear, or
 * NULL when out of memory. */
static ir_node *retype(ir_graph *g, ir_node *n, const ir_node *like, int dt, const float *s,
                       const int32_t *z) {
  ir_value *y = n->out[0], *q = int8_like(g, y, dt);
  if (!q) return NULL;
  n->out[0] = q;
  q->producer = n;
  return add_dq(g, like, q, y, s, z);
}

/* Element index map of a Reshape / Transpose chain: src[i] the flat index
 * in the chain's input of the output's element i; dims[rank] the current
 * shape. 0 when a Transpose's perm is not one of the rank. */
static int map_transpose(const ir_node *t, int32_t *src, int32_t *tmp, int64_t *dims, int rank) {
  int64_t perm[8], od[8], stride[8], idx[8] = {0};
  const int np = ir_attr_ints(t, "perm", perm, 8);
  for (int k = 0; k < rank; k++)
    if (np < 0) perm[k] = rank - 1 - k;
  if (np >= 0 && np != rank) return 0;
  stride[rank - 1] = 1;
  for (int k = rank - 2; k >= 0; k--)
    stride[k] = stride[k + 1] * dims[k + 1];
  int64_t total = 1;
  for (int k = 0; k < rank; k++) {
    if (perm[k] < 0 || perm[k] >= rank) return 0;
    od[k] = dims[perm[k]], total *= od[k];
  }
  for (int64_t o = 0; o < total; o++) {
    int64_t in = 0;
    for (int k = 0; k < rank; k++)
      in += idx[k] * stride[perm[k]];
    tmp[o] = src[in];
    for (int k = rank - 1; k >= 0 && ++idx[k] == od[k]; k--)
      idx[k] = 0;
  }
  memcpy(src, tmp, sizeof(int32_t) * (size_t)total);
  memcpy(dims, od, sizeof(int64_t) * (size_t)rank);
  return 1;
}

static ir_node *sink(ir_graph *g, ir_node *dq, int *changed);

/* dq's output read by Reshapes and Transposes, each value by the next
 * alone, to a value of dq's dims whose elements are dq's with channels
 * permuted: the chain reads the int8 value and a DequantizeLinear with the
 * permuted parameters writes its end. 1 moved, 0 not, -1 out of memory. */
static int sink_chain(ir_graph *g, ir_node *dq, arena *a, int *changed) {
  ir_value *x = dq->in[0], *y = dq->out[0];
  const int64_t c = x->dims[1], hw = x->dims[2] * x->dims[3], total = ir_value_elements(x);
  ir_node *chain[16], *r;
  int n = 0, end = -1;
  for (ir_value *v = y; n < 16 && (r = ir_value_single_user(g, v)) != NULL && v->output_index < 0;
       v = r->out[0]) {
    if (!(r->op == IR_OP_RESHAPE || r->op == IR_OP_TRANSPOSE) || r->nout != 1 || r->in[0] != v) break;
    chain[n++] = r;
    if (r->out[0]->rank == 4 && !memcmp(r->out[0]->dims, x->dims, sizeof x->dims[0] * 4)) end = n - 1;
  }
  if (end < 0 || total <= 0 || total > SINK_MAX_ELEMS) return 0;
  int32_t *src = arena_array(a, (size_t)total, sizeof(int32_t)),
          *tmp = arena_array(a, (size_t)total, sizeof(int32_t));
  float *s = arena_array(a, (size_t)(2 * c), sizeof(float));
  int32_t *z = arena_array(a, (size_t)(2 * c), sizeof(int32_t)),
          *perm = arena_array(a, (size_t)c, sizeof(int32_t));
  if (!src || !tmp || !s || !z || !perm) return -1;
  for (int64_t i = 0; i < total; i++)
    src[i] = (int32_t)i;
  int64_t dims[8];
  int rank = 4;
  memcpy(dims, x->dims, sizeof dims[0] * 4);
  for (int k = 0; k <= end; k++) {
    const ir_value *o = chain[k]->out[0];
    if (o->rank < 1 || o->rank > 8) return 0;
    if (chain[k]->op == IR_OP_TRANSPOSE && !map_transpose(chain[k], src, tmp, dims, rank)) return 0;
    rank = o->rank;
    memcpy(dims, o->dims, sizeof dims[0] * (size_t)rank);
  }
  for (int64_t i = 0; i < total; i++) { /* (n, c, p) from (n, perm[c], p) */
    const int64_t ch = i / hw % c, nn = i / (hw * c), in_ch = src[i] / hw % c;
    if (i % hw == 0 && nn == 0) perm[ch] = (int32_t)in_ch;
    if (src[i] / (hw * c) != nn || src[i] % hw != i % hw || in_ch != perm[ch]) return 0;
  }
  if (!read_params(dq, s + c, z + c)) return 0;
  for (int64_t i = 0; i < c; i++)
    s[i] = s[c + perm[i]], z[i] = z[c + perm[i]];
  chain[0]->in[0] = x;
  for (int k = 0; k < end; k++)
    chain[k]->out[0]->dtype = x->dtype;
  ir_node *d = retype(g, chain[end], dq, x->dtype, s, z);
  if (!d) return -1;
  dq->dead = *changed = 1;
  return sink(g, d, changed) ? 1 : -1;
}

/* Each Slice of dq's output along axis 1 alone, step 1: it reads the int8
 * value and a DequantizeLinear with its channels' parameters writes its
 * output. 0 ok, -1 out of memory. */
static int sink_slices(ir_graph *g, ir_node *dq, arena *a, int *changed) {
  ir_value *x = dq->in[0], *y = dq->out[0];
  const int64_t c = x->dims[1];
  float *s = arena_array(a, (size_t)c, sizeof(float));
  int32_t *z = arena_array(a, (size_t)c, sizeof(int32_t));
  if (!s || !z) return -1;
  if (!read_params(dq, s, z)) return 0;
  const int count = g->nnodes;
  for (int i = 0; i < count; i++) {
    ir_node *r = g->nodes[i];
    int64_t ax, st, b;
    if (r->dead || r->op != IR_OP_SLICE || r->nin != 1 || r->in[0] != y ||
        ir_attr_ints(r, "axes", &ax, 1) != 1 || (ax != 1 && ax != -3) ||
        ir_attr_ints(r, "starts", &b, 1) != 1 || (ir_attr_ints(r, "steps", &st, 1) == 1 && st != 1))
      continue;
    const ir_value *o = r->out[0];
    b = b < 0 ? b + c : b;
    b = b < 0 ? 0 : b > c ? c : b;
    if (o->rank != 4 || o->dims[1] <= 0 || b + o->dims[1] > c) continue;
    r->in[0] = x;
    ir_node *d = retype(g, r, dq, x->dtype, s + b, z + b);
    if (!d || !sink(g, d, changed)) return -1;
    *changed = 1;
  }
  return 0;
}

/* Moves dq down across what reads it (sink_chain, sink_slices); NULL when
 * out of memory, else dq. */
static ir_node *sink(ir_graph *g, ir_node *dq, int *changed) {
  arena a;
  arena_init(&a, 0);
  int r = sink_chain(g, dq, &a, changed);
  if (r == 0) r = sink_slices(g, dq, &a, changed);
  arena_free(&a);
  return r < 0 ? NULL : dq;
}

/* Concat n (axis 1, rank 4) of int8 DequantizeLinears (int8_dq) of one
 * dtype and output type: it joins the int8 values, and one DequantizeLinear
 * per channel (*dq_out) writes its output. 1 rewrote, 0 not, -1 out of
 * memory. */
static int sink_concat(ir_graph *g, ir_node *n, arena *a, ir_node **dq_out) {
  ir_value *y = n->out[0];
  int64_t axis = ir_attr_int(n, "axis", 0);
  if (n->nout != 1 || y->rank != 4 || (axis != 1 && axis != -3) || y->dims[1] <= 0) return 0;
  const int64_t c = y->dims[1];
  const ir_node *first = int8_dq(n->in[0]);
  float *s = arena_array(a, (size_t)c, sizeof(float));
  int32_t *z = arena_array(a, (size_t)c, sizeof(int32_t));
  if (!s || !z) return -1;
  if (!first) return 0;
  int64_t at = 0;
  for (int i = 0; i < n->nin; i++) {
    const ir_node *dq = int8_dq(n->in[i]);
    if (!dq || dq->in[0]->dtype != first->in[0]->dtype ||
        ir_attr_int(dq, "to", 0) != ir_attr_int(first, "to", 0) || at + dq->in[0]->dims[1] > c ||
        !read_params(dq, s + at, z + at))
      return 0;
    at += dq->in[0]->dims[1];
  }
  if (at != c) return 0;
  for (int i = 0; i < n->nin; i++)
    n->in[i] = n->in[i]->producer->in[0];
  return (*dq_out = retype(g, n, first, first->in[0]->dtype, s, z)) != NULL ? 1 : -1;
}

status pass_qsink(ir_graph *g, pass_ctx *ctx, diag *d) {
  (void)ctx;
  int changed = 0;
  const int count = g->nnodes; /* topological: a block's Concat before the next's */
  for (int i = 0; i < count; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead || n->op != IR_OP_CONCAT) continue;
    arena a;
    arena_init(&a, 0);
    ir_node *dq = NULL;
    const int r = sink_concat(g, n, &a, &dq);
    arena_free(&a);
    if (r < 0 || (r > 0 && !sink(g, dq, &changed))) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory");
    changed |= r;
  }
  if (!changed) return ST_OK;
  ir_graph_compact(g);
  status st = ir_graph_toposort(g, d);
  return st == ST_OK ? pass_dce(g, ctx, d) : st;
}
