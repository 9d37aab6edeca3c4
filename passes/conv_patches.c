/* conv_patches.c - a Conv over non-overlapping patches of a few channels
 * becomes a MatMul.
 *
 * A Conv whose stride equals its kernel and which has no padding reads each
 * input pixel once: output pixel (ho, wo) is the dot product of one
 * C x kh x kw patch with each filter, so the Conv is a matrix product of
 * the patches ([N*Ho*Wo, C*kh*kw], a transpose of the input) by the
 * filters. On the cube a Conv of a few input channels either pads them to
 * C0 = 16 fractal lanes (FRACTAL_Z weights of 16 lanes for 3 of data) or,
 * for an RGB stem, packs them and stages its weights as f32 for a 6-row
 * micro-kernel; MATMUL runs K = C * kh * kw unpadded through its 12-row
 * one from f16 weights. The patches are one strided copy whose contiguous
 * runs are kernel rows of kw elements, quick when they are whole 16-lane
 * vectors: so a Conv of fewer than C0 channels whose kernel rows are at
 * least C0 wide goes through MATMUL, and the Reshape / Transpose chain
 * after it that only undoes the product's row order (a ViT's
 * flatten(2).transpose(1, 2)) goes with it. A ViT-B/16's patch embedding
 * (768 filters of 3 x 16 x 16 on 224 x 224, then the flatten) ran in 1.49
 * ms as a Conv, 1.18 ms so (fastest of 200 runs, one core, a model of it
 * alone); a ConvNeXt stem's (96 of 3 x 4 x 4, rows of 4) in 0.29 ms as a
 * Conv, 0.54 ms so, most of it the copy: it stays a Conv.
 *
 * Contract.
 *   Needs:   shape_infer (a Conv's kernel_shape, strides, dilations, pads
 *            and group explicit; shapes known), bn_fold (a folded BN's
 *            weights and bias are the Conv's); before fuse (the bias, Add
 *            and activation after the Conv fuse into the MatMul instead).
 *   Changes: a 2-D Conv (x [N, C, H, W], weight a constant float [M, C, kh,
 *            kw], optional bias a constant float [M], no other inputs or
 *            attributes than ONNX's) with group 1, dilations 1, pads 0,
 *            strides = kernel_shape, kw >= 16, C < 16, H a multiple of kh
 *            and W of kw (Ho = H / kh, Wo = W / kw) becomes, each node
 *            named "<conv>/<step>" and of the Conv's origin:
 *              Reshape(x, [N, C, Ho, kh, Wo, kw])           "patches"
 *              Transpose(perm [0, 2, 4, 1, 3, 5])            "patch_order"
 *              Reshape([N * Ho * Wo, C * kh * kw])          "patch_rows"
 *              MatMul(., "<conv>/filters", bias)             "matmul"
 *              Reshape([N, Ho, Wo, M])                       "pixels"
 *              Transpose(perm [0, 3, 1, 2]) -> the Conv's output value
 *            with "<conv>/filters" the constant [C * kh * kw, M] =
 *            weight^T in the weight's dtype. Then the order chain: while
 *            the value reached from the MatMul's output has one reader (no
 *            graph output) and that reader is a Reshape, Flatten, Squeeze,
 *            Unsqueeze or Transpose, the chain grows by it; the longest
 *            prefix (past the Conv's output) whose element order is the
 *            MatMul output's (checked by moving every index through it, up
 *            to 2^24 elements) becomes one Reshape of the MatMul's output
 *            ("<conv>/order", producing the prefix's last value) and its
 *            nodes go. Nothing changes when ctx->fusion_off has
 *            FUSION_CONV_PATCHES (ConvPatchMatMulFusionPass:off).
 *   Leaves:  the same results (the products summed in another order);
 *            topological order; unreferenced values dropped.
 */
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "ir/conv.h"
#include "pass.h"

enum { ORDER_MAX_ELEMS = 1 << 24 };

static status nomem(diag *d, const ir_node *n) {
  return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory turning a patch Conv into a MatMul");
}

/* Conv n as the contract's patch Conv (its window in *c), or 0. */
static int patch_conv(const ir_node *n, ir_conv *c) {
  static const char *const known[] = {"kernel_shape", "strides", "dilations", "pads", "group"};
  const ir_value *x = n->in[0], *w = n->in[1], *b = n->nin > 2 ? n->in[2] : NULL;
  char err[256];
  if (n->nin > 3 || x->rank != 4 || !w->data || w->rank != 4 || !elem_is_float(w->dtype) ||
      !elem_is_float(x->dtype) || (b && (!b->data || !elem_is_float(b->dtype))) ||
      ir_conv_read(n, 2, c, err, sizeof err))
    return 0;
  for (int i = 0; i < n->nattrs; i++) {
    int ok = 0;
    for (size_t j = 0; j < sizeof known / sizeof *known; j++)
      ok |= strcmp(n->attrs[i].name, known[j]) == 0;
    if (!ok) return 0;
  }
  if (c->group != 1 || x->dims[1] >= C0 || c->k[1] < C0) return 0;
  for (int j = 0; j < 2; j++)
    if (c->dl[j] != 1 || c->pb[j] || c->pe[j] || c->s[j] != c->k[j] || x->dims[2 + j] % c->k[j]) return 0;
  return 1;
}

/* A new node `op` of origin `origin` named "<conv>/<step>" from in[0..nin)
 * to a new value of dtype dt and dims[0..rank), or to `out` when given. */
static ir_value *add_node(ir_graph *g, const ir_node *conv, ir_op op, const char *step, int nin,
                          ir_value *const *in, dtype dt, int rank, const int64_t *dims, ir_value *out) {
  char name[300];
  snprintf(name, sizeof name, "%.250s/%s", conv->name, step);
  ir_value *y = out ? out : ir_value_new(g, name, dt);
  ir_node *n = y ? ir_node_new(g, op, name, nin, in, 1, &y) : NULL;
  if (!n) return NULL;
  n->origin = conv->origin;
  if (!out) ir_value_set_shape(y, rank, dims);
  return y;
}

/* Reshape(x) to dims[0..rank) (to `out` when given). */
static ir_value *reshape(ir_graph *g, const ir_node *conv, const char *step, ir_value *x, int rank,
                         const int64_t *dims, ir_value *out) {
  char name[300];
  snprintf(name, sizeof name, "%.250s/%s_shape", conv->name, step);
  const int64_t r = rank;
  ir_value *shape = ir_const_new(g, name, DT_INT64, 1, &r, dims, (size_t)rank * sizeof *dims);
  ir_value *in[2] = {x, shape};
  ir_value *y = shape ? add_node(g, conv, IR_OP_RESHAPE, step, 2, in, x->dtype, rank, dims, out) : NULL;
  return y && !ir_attr_set_int(g, y->producer, "allowzero", 0) ? y : NULL;
}

/* Transpose(x, perm) (to `out` when given). */
static ir_value *transpose(ir_graph *g, const ir_node *conv, const char *step, ir_value *x,
                           const int64_t *perm, ir_value *out) {
  int64_t dims[MAX_RANK];
  for (int i = 0; i < x->rank; i++)
    dims[i] = x->dims[perm[i]];
  ir_value *y = add_node(g, conv, IR_OP_TRANSPOSE, step, 1, &x, x->dtype, x->rank, dims, out);
  return y && !ir_attr_set_ints(g, y->producer, "perm", x->rank, perm) ? y : NULL;
}

/* idx (the elements of a value of dims[0..rank), C order) through
 * Transpose(perm), into tmp; returns tmp. */
static int32_t *permute(const int32_t *idx, int32_t *tmp, int rank, const int64_t *dims,
                        const int64_t *perm) {
  int64_t in_stride[MAX_RANK], step[MAX_RANK], pos[MAX_RANK] = {0}, n = 1;
  for (int i = rank - 1; i >= 0; i--)
    in_stride[i] = n, n *= dims[i];
  for (int i = 0; i < rank; i++)
    step[i] = in_stride[perm[i]];
  int64_t at = 0;
  for (int64_t o = 0; o < n; o++) {
    tmp[o] = idx[at];
    for (int i = rank - 1; i >= 0; i--) { /* the next output index, odometer style */
      at += step[i];
      if (++pos[i] < dims[perm[i]]) break;
      at -= step[i] * pos[i];
      pos[i] = 0;
    }
  }
  return tmp;
}

static int reshapes(ir_op op) {
  return op == IR_OP_RESHAPE || op == IR_OP_FLATTEN || op == IR_OP_SQUEEZE || op == IR_OP_UNSQUEEZE;
}

/* The order chain of the contract from the MatMul's output v; the prefix
 * folded reaches at least the Conv's output `from`. */
static status fold_order(ir_graph *g, const ir_node *conv, ir_value *v, const ir_value *from, arena *scratch,
                         diag *d) {
  const int64_t n = ir_value_elements(v);
  if (n <= 0 || n > ORDER_MAX_ELEMS) return ST_OK;
  int32_t *idx = arena_array(scratch, (size_t)n, sizeof *idx),
          *tmp = arena_array(scratch, (size_t)n, sizeof *tmp);
  if (!idx || !tmp) return nomem(d, conv);
  for (int64_t i = 0; i < n; i++)
    idx[i] = (int32_t)i;
  ir_value *cur = v, *last = NULL;
  int passed = 0; /* the chain has reached the Conv's output */
  for (ir_node *u; (u = ir_value_single_user(g, cur)) && u->in[0] == cur && u->nout == 1;) {
    if (u->op == IR_OP_TRANSPOSE) {
      int64_t perm[MAX_RANK + 1];
      if (ir_attr_ints(u, "perm", perm, MAX_RANK + 1) != cur->rank) break;
      int32_t *t = permute(idx, tmp, cur->rank, cur->dims, perm);
      tmp = idx, idx = t;
    } else if (!reshapes(u->op)) {
      break;
    }
    cur = u->out[0];
    passed |= cur == from;
    int kept = 1;
    for (int64_t i = 0; i < n && kept; i++)
      kept = idx[i] == i;
    if (passed && kept) last = cur;
  }
  if (!last) return ST_OK;
  for (ir_value *c = v; c != last;) { /* the chain's nodes up to last go */
    ir_node *u = ir_value_single_user(g, c);
    u->dead = 1;
    c = u->out[0];
  }
  return reshape(g, conv, "order", v, last->rank, last->dims, last) ? ST_OK : nomem(d, conv);
}

/* Patch Conv n (window c) becomes the contract's MatMul chain. */
static status rewrite(ir_graph *g, ir_node *n, const ir_conv *c, arena *scratch, diag *d) {
  ir_value *x = n->in[0], *w = n->in[1], *b = n->nin > 2 ? n->in[2] : NULL, *y = n->out[0];
  const int64_t N = x->dims[0], C = x->dims[1], kh = c->k[0], kw = c->k[1];
  const int64_t Ho = x->dims[2] / kh, Wo = x->dims[3] / kw, M = w->dims[0], K = C * kh * kw;
  const size_t es = dtype_size(w->dtype);
  void *wt = arena_array(scratch, (size_t)(K * M), es);
  if (!wt) return nomem(d, n);
  for (int64_t m = 0; m < M; m++)
    for (int64_t k = 0; k < K; k++)
      memcpy((char *)wt + (size_t)(k * M + m) * es, (const char *)w->data + (size_t)(m * K + k) * es, es);
  char name[300];
  snprintf(name, sizeof name, "%.250s/filters", n->name);
  const int64_t wdims[2] = {K, M};
  ir_value *filters = ir_const_new(g, name, w->dtype, 2, wdims, wt, (size_t)(K * M) * es);
  static const int64_t to_patches[6] = {0, 2, 4, 1, 3, 5}, to_nchw[4] = {0, 3, 1, 2};
  const int64_t d6[6] = {N, C, Ho, kh, Wo, kw}, rows[2] = {N * Ho * Wo, K}, ymat[2] = {N * Ho * Wo, M};
  const int64_t d4[4] = {N, Ho, Wo, M};
  ir_value *v = filters ? reshape(g, n, "patches", x, 6, d6, NULL) : NULL;
  if (v) v = transpose(g, n, "patch_order", v, to_patches, NULL);
  if (v) v = reshape(g, n, "patch_rows", v, 2, rows, NULL);
  ir_value *in[3] = {v, filters, b}, *prod = NULL;
  if (v) prod = v = add_node(g, n, IR_OP_MATMUL, "matmul", b ? 3 : 2, in, y->dtype, 2, ymat, NULL);
  if (v) v = reshape(g, n, "pixels", v, 4, d4, NULL);
  if (v) v = transpose(g, n, "nchw", v, to_nchw, y);
  if (!v) return nomem(d, n);
  n->dead = 1;
  return fold_order(g, n, prod, y, scratch, d);
}

status pass_conv_patches(ir_graph *g, pass_ctx *ctx, diag *d) {
  if (ctx->fusion_off & FUSION_CONV_PATCHES) return ST_OK;
  arena scratch;
  arena_init(&scratch, 0);
  status st = ST_OK;
  int changed = 0;
  const int count = g->nnodes; /* rewrite appends nodes; none is a Conv */
  for (int i = 0; i < count && st == ST_OK; i++) {
    ir_node *n = g->nodes[i];
    ir_conv c;
    if (n->dead || n->op != IR_OP_CONV || !patch_conv(n, &c)) continue;
    st = rewrite(g, n, &c, &scratch, d);
    changed = 1;
  }
  arena_free(&scratch);
  if (st == ST_OK && changed) {
    ir_graph_compact(g);
    st = ir_graph_toposort(g, d);
  }
  return st;
}
