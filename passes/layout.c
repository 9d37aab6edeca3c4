/* layout.c - data layouts: NC1HWC0 / NDC1HWC0 activations, FRACTAL_Z /
 * FRACTAL_Z_3D conv weights, TransData where a consumer needs another layout
 * or dtype.
 *
 * Needs: precision has run (value dtypes final, precision.h tells what each
 * node computes in); g->nodes topologically sorted.
 * Changes: the layout (and for constants also data, dtype, dims) of values;
 * adds TRANSDATA nodes; redirects producers of graph outputs through one;
 * gives each graph output that folded to a constant an Identity copying it.
 * Rejects what the backend cannot run with ST_ERR_UNSUPPORTED naming the node
 * and its op type, so this is the last pass that can refuse a model.
 * Leaves true: every node input has the layout and dtype its task kind
 * (common/om_format.h) reads; graph inputs and outputs are ND in the user's
 * dtype (NC1HWC0 where pass_ctx.io_nc1hwc0 asks: atc's
 * --is_input_adjust_hw_layout / --is_output_adjust_hw_layout); g->nodes is
 * topologically sorted; unused constants are compacted.
 *
 * Each node's rule is its row's lay column (ops.def; lay_rules below),
 * which puts it in one of two domains:
 *   5HD      the cube's activation layouts: NC1HWC0 for rank 4, NDC1HWC0
 *            for rank 5 ([N, C, D, H, W], whose (n, d) slices are NC1HWC0
 *            images). CONV (x, residual, y; 3-D: dense with constant
 *            weights), POOL for undilated 2-D and 3-D MaxPool/
 *            AveragePool/GlobalMaxPool/GlobalAveragePool on floats (other
 *            pools are ND: POOL_ND), CONCAT along axis 1 of rank 4 when one
 *            of its non-constant inputs already is NC1HWC0 (it follows the
 *            convs); QCONV (x, y and a residual u8/i8 NC1HWC0, its constants in
 *            QCONV2D's form, lower/qconv_weights.h; x and y ND NHWC
 *            instead when the QConv sits between Transposes from and back
 *            to NHWC with channels in multiples of 16: a Linear layer's
 *            rows, qconv_nhwc); QELTWISE (a, b and y
 *            u8/i8 NC1HWC0 when a or b already is, else ND); QLUT (x and
 *            y likewise, the table ND); VECPROG, see
 *            below.
 *   ND       everything else: MATMUL (MatMul; a constant B FRACTAL_NZ), COPY (Flatten/Reshape/
 *            Squeeze/Unsqueeze/Identity, emitted as ND copies or aliases,
 *            which also cast f16<->f32, so they accept either float dtype),
 *            ND_FLOAT (Softmax, LayerNorm, FusedAttention), REDUCE (also on the integer and bool dtypes
 *            its modes take), VIEW (the strided views Transpose, Slice,
 *            Split, Expand, Tile, DepthToSpace, SpaceToDepth, and Pad: any
 *            dtype), GATHER and INDEX (indices as they are), RESIZE (nearest
 *            on any dtype; its tap tables become constant inputs),
 *            REINTERPRET (BitCast: the bytes as they are), graph I/O.
 *   AIPP     its uint8 inputs as they are; it writes NC1HWC0.
 * The rules VECTORIZED, FOLDED and NONE refuse what should be gone by now.
 * A VectorProgram converts dtypes itself (precision reconciled it with its
 * tensors), so only its layouts are set here, all operands one layout: the
 * 5HD layout of its outputs' rank (4 or 5) when every tensor it touches is
 * f16/f32/u8/i8 (the int8 activations of a QDQ model's Add and
 * Quantize/DequantizeLinear, between QConvs), a non-constant input already is in it, and every non-constant
 * input has the outputs' C and broadcasts over N, (D,) H and W only (so a
 * runtime [N,C,1,1] scale is read in place); a constant input then becomes
 * a 5HD constant expanded along C only ([C,1,1] -> [1,C,1,1], [W] ->
 * [1,C,1,W]), the rest of its broadcasting left to the task. Otherwise the
 * program is ND (5HD inputs get a TransData to ND) and broadcasts
 * numpy-style.
 * Walking the nodes in order, every float input is made to match what the
 * node wants, (domain layout, the node's compute dtype): a non-constant value
 * gets a TransData node, shared through a cache keyed by (value, layout,
 * dtype); a constant is converted at compile time instead (in place when the
 * node is its only reader, else as a cached copy). One exception: a dense
 * 2-D Conv of at most 4 input channels (an RGB stem) whose x is ND (f32 or
 * f16: a graph input, or a vector program's result) reads it as it is, with
 * no TransData: the cube stages those few lanes from the NCHW planes
 * itself. Conv weights become FRACTAL_Z (3-D: FRACTAL_Z_3D) per common/types.h; depthwise weights
 * [C,1,KH,KW] become NC1HWC0 with logical dims [1,C,KH,KW]; other grouped
 * weights FRACTAL_Z_G [G,Og,Ig,KH,KW] (common/conv_group.h); 2-D weights
 * computed at run time get a packing TransData (lower/conv_weights.h); Conv
 * bias is ND f32. A node whose output is a graph output but which computes
 * in another layout or dtype writes a new value that a TransData converts
 * into the graph output.
 * Channels last (NHWC models, a quantized MatMul's u8 / i8 rows): a
 * Transpose (perm 0,3,1,2) of an ND value
 * feeding a node that wants NC1HWC0 becomes one TransData from the
 * Transpose's input with channels_last = 1 (and the Transpose goes when
 * nothing else reads it); a Transpose (perm 0,2,3,1) of an NC1HWC0 value
 * becomes that TransData the other way.
 */
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "lower/const_layout.h"
#include "lower/conv_weights.h"
#include "lower/qconv_weights.h"
#include "ir/eval.h"
#include "ir/pool.h"
#include "ir/resize.h"
#include "pass.h"
#include "precision.h"

enum { ANY_DTYPE = DT_UNDEFINED };

typedef struct conv_entry {
  const ir_value *src;
  int layout, dtype;
  ir_value *dst;
} conv_entry;

typedef struct lay_state {
  ir_graph *g;
  om_precision precision;
  int clip; /* !pass_ctx.no_weight_clip: constants made fp16 stay finite */
  arena scratch;
  conv_entry *cache;
  int ncache, cache_cap;
  diag *d;
} lay_state;

static status unsupported(lay_state *s, const ir_node *n, const char *what) {
  return ir_node_error(s->d, ST_ERR_UNSUPPORTED, n, "%s", what);
}

static status nomem(lay_state *s, const ir_node *n) {
  return ir_node_error(s->d, ST_ERR_NOMEM, n, "out of memory in the layout pass");
}

static const char *layout_tag(int lay) {
  switch (lay) {
  case LAYOUT_NC1HWC0: return "nc1hwc0";
  case LAYOUT_NDC1HWC0: return "ndc1hwc0";
  case LAYOUT_FRACTAL_Z: return "fz";
  case LAYOUT_FRACTAL_Z_3D: return "fz3d";
  case LAYOUT_FRACTAL_NZ: return "nz";
  default: return "nd";
  }
}

static int same_dims(const ir_value *a, int rank, const int64_t *dims) {
  if (a->rank != rank) return 0;
  for (int i = 0; i < rank; i++)
    if (a->dims[i] != dims[i]) return 0;
  return 1;
}

/* --- making an input match ---------------------------------------------- */

static ir_value *cache_find(lay_state *s, const ir_value *src, int lay, int dt) {
  for (int i = 0; i < s->ncache; i++)
    if (s->cache[i].src == src && s->cache[i].layout == lay && s->cache[i].dtype == dt)
      return s->cache[i].dst;
  return NULL;
}

static int cache_add(lay_state *s, const ir_value *src, int lay, int dt, ir_value *dst) {
  if (arena_grow(&s->scratch, (void **)&s->cache, &s->cache_cap, s->ncache, sizeof *s->cache)) return -1;
  s->cache[s->ncache++] = (conv_entry){src, lay, dt, dst};
  return 0;
}

/* 1 when n is a Transpose of a rank-4 float or u8 / i8 value (a quantized
 * MatMul's rows, passes/qconv.c) with perm p[0..3]. */
static int is_transpose(const ir_node *n, const int64_t *p) {
  int64_t perm[MAX_RANK + 1];
  if (!n || n->dead || n->op != IR_OP_TRANSPOSE || n->in[0]->rank != 4) return 0;
  const int dt = n->in[0]->dtype;
  if (!(precision_is_float(dt) || dt == DT_UINT8 || dt == DT_INT8) ||
      ir_attr_ints(n, "perm", perm, MAX_RANK + 1) != 4)
    return 0;
  return perm[0] == p[0] && perm[1] == p[1] && perm[2] == p[2] && perm[3] == p[3];
}

static const int64_t nhwc_to_nchw[4] = {0, 3, 1, 2}, nchw_to_nhwc[4] = {0, 2, 3, 1};

/* Makes input `slot` of n a value in layout `lay` and dtype `dt` (ANY_DTYPE:
 * keep the dtype), with logical dims `dims` (NULL: unchanged; only constants
 * are ever given new dims, the depthwise weights). */
static status ensure_input(lay_state *s, ir_node *n, int slot, int lay, int dt, const int64_t *dims) {
  ir_value *v = n->in[slot];
  int want_dt = dt == ANY_DTYPE ? (int)v->dtype : dt;
  int rank = v->rank;
  const int64_t *want_dims = dims ? dims : v->dims;
  if ((int)v->layout == lay && (int)v->dtype == want_dt && same_dims(v, rank, want_dims)) return ST_OK;
  ir_value *hit = cache_find(s, v, lay, want_dt);
  if (hit) return ir_node_set_input(s->g, n, slot, hit) ? nomem(s, n) : ST_OK;

  char name[512];
  snprintf(name, sizeof name, "%s_%s_%s", v->name, layout_tag(lay), dtype_name(want_dt));
  if (v->data) {
    if (v->layout != LAYOUT_ND)
      return ir_node_error(s->d, ST_ERR_INVALID, n, "constant '%s' is %s, wanted %s", v->name,
                           layout_name(v->layout), layout_name(lay));
    int only_reader = ir_value_use_count(s->g, v) == 1;
    void *data = const_layout_convert(s->g, v, lay, want_dt, rank, want_dims, only_reader, s->clip);
    if (!data) return nomem(s, n);
    if (only_reader) { /* only this node reads it: convert in place */
      ir_value_replace_data(s->g, v, data);
      v->dtype = want_dt;
      v->layout = lay;
      ir_value_set_shape(v, rank, want_dims);
      return ST_OK;
    }
    uint64_t phys;
    layout_elements(lay, rank, want_dims, &phys);
    /* build the copy as ND bytes of the physical size, then retag it */
    int64_t flat = (int64_t)phys;
    ir_value *c = ir_const_new(s->g, name, want_dt, 1, &flat, data, phys * dtype_size(want_dt));
    arena_release(&s->g->arena, data); /* c has its own copy */
    if (!c) return nomem(s, n);
    c->layout = lay;
    ir_value_set_shape(c, rank, want_dims);
    if (cache_add(s, v, lay, want_dt, c) || ir_node_set_input(s->g, n, slot, c)) return nomem(s, n);
    return ST_OK;
  }

  ir_value *t = ir_value_new(s->g, name, want_dt);
  if (!t) return nomem(s, n);
  ir_value_set_shape(t, rank, v->dims);
  t->layout = lay;
  t->count_axis = v->count_axis, t->count = v->count;
  char tname[600];
  snprintf(tname, sizeof tname, "trans_%s", name);
  /* v = Transpose(u, perm 0,3,1,2) of an ND [N, H, W, C] value u (an NHWC
   * model's input) into NC1HWC0: one channels-last TransData from u; the
   * Transpose goes if nothing else reads it (drop_unread_transposes). */
  ir_value *src = v;
  int channels_last = lay == LAYOUT_NC1HWC0 && is_transpose(v->producer, nhwc_to_nchw) &&
                      v->producer->in[0]->layout == LAYOUT_ND;
  if (channels_last) src = v->producer->in[0];
  if (channels_last && src->producer && src->producer->op == IR_OP_TRANSDATA &&
      !ir_attr_int(src->producer, "channels_last", 0) && src->producer->in[0]->layout == LAYOUT_ND &&
      precision_is_float(src->producer->in[0]->dtype) && same_dims(src->producer->in[0], 4, src->dims))
    src = src->producer->in[0]; /* the Transpose's dtype cast: this TransData converts the dtype too */
  ir_node *td = ir_node_new(s->g, IR_OP_TRANSDATA, tname, 1, &src, 1, &t);
  if (!td || (channels_last && ir_attr_set_int(s->g, td, "channels_last", 1))) return nomem(s, n);
  if (cache_add(s, v, lay, want_dt, t) || ir_node_set_input(s->g, n, slot, t)) return nomem(s, n);
  return ST_OK;
}

/* Transposes that channels-last TransDatas replaced, and the dtype casts
 * made for them: dead once nothing reads their output (readers come after
 * their producers, so one walk from the end drops chains). */
static void drop_unread_transposes(ir_graph *g) {
  for (int i = g->nnodes - 1; i >= 0; i--) {
    ir_node *n = g->nodes[i];
    if (n->dead || n->out[0]->output_index >= 0 ||
        !(is_transpose(n, nhwc_to_nchw) || n->op == IR_OP_TRANSDATA))
      continue;
    int used = 0;
    for (int j = 0; j < g->nnodes && !used; j++)
      for (int k = 0; k < g->nodes[j]->nin && !g->nodes[j]->dead; k++)
        used |= g->nodes[j]->in[k] == n->out[0];
    if (!used) n->dead = 1;
  }
}

/* Output k of n is a graph output in ND and the user's dtype; when n computes
 * in another layout or dtype, n writes a new value and a TransData converts
 * it into the graph output. */
static status redirect_output(lay_state *s, ir_node *n, int k, int lay, int dt) {
  ir_value *v = n->out[k];
  if (v->output_index < 0 || ((int)v->layout == lay && (int)v->dtype == dt)) {
    v->layout = lay;
    v->dtype = dt;
    return ST_OK;
  }
  char name[512];
  snprintf(name, sizeof name, "%s_%s_%s", v->name, layout_tag(lay), dtype_name(dt));
  ir_value *t = ir_value_new(s->g, name, dt);
  if (!t) return nomem(s, n);
  ir_value_set_shape(t, v->rank, v->dims);
  t->layout = lay;
  t->count_axis = v->count_axis, t->count = v->count;
  t->producer = n;
  n->out[k] = t;
  /* Readers move to the node's own value, except vector programs: precision
   * reconciled their LOADs with v's dtype, so they keep reading v. */
  for (int i = 0; i < s->g->nnodes; i++) {
    ir_node *m = s->g->nodes[i];
    for (int j = 0; j < m->nin && !m->dead; j++)
      if (m->in[j] == v && m->op != IR_OP_VECPROG) m->in[j] = t;
  }
  char tname[600];
  snprintf(tname, sizeof tname, "trans_%s", v->name);
  if (!ir_node_new(s->g, IR_OP_TRANSDATA, tname, 1, &t, 1, &v)) return nomem(s, n);
  return ST_OK;
}

/* --- per op -------------------------------------------------------------- */

static status check_float(lay_state *s, const ir_node *n, const ir_value *v) {
  if (precision_is_float(v->dtype)) return ST_OK;
  char msg[160];
  snprintf(msg, sizeof msg, "value '%s' has dtype %s; only f32 and f16 are supported", v->name,
           dtype_name(v->dtype) ? dtype_name(v->dtype) : "?");
  return unsupported(s, n, msg);
}

/* A 3-D Conv: x, residual and y NDC1HWC0, weights FRACTAL_Z_3D (computed
 * ones packed by a WPACK task, lower/conv_weights.h), dense only (CONV3D,
 * om_format.h). */
static status layout_conv3d(lay_state *s, ir_node *n, int cdt) {
  ir_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
  if (ir_attr_int(n, "group", 1) != 1 || w->dims[1] != x->dims[1])
    return unsupported(s, n, "a 3-D convolution with groups is not supported");
  if (n->nin > 4 && n->in[4]) return unsupported(s, n, "a 3-D convolution takes no input scale");
  status st = w->data ? ensure_input(s, n, 1, LAYOUT_FRACTAL_Z_3D, cdt, NULL)
                      : convw_make_input(s->g, n, LAYOUT_FRACTAL_Z_3D, cdt, 5, w->dims, s->d);
  if (st == ST_OK) st = ensure_input(s, n, 0, LAYOUT_NDC1HWC0, cdt, NULL);
  if (st == ST_OK && n->nin > 2 && n->in[2]) {
    if (n->in[2]->rank != 1 || n->in[2]->dims[0] != y->dims[1])
      return unsupported(s, n, "bias must have shape [Cout]");
    st = ensure_input(s, n, 2, LAYOUT_ND, DT_FLOAT32, NULL);
  }
  if (st == ST_OK && n->nin > 3 && n->in[3]) {
    if (!same_dims(n->in[3], y->rank, y->dims))
      return unsupported(s, n, "residual must have the output's shape");
    st = ensure_input(s, n, 3, LAYOUT_NDC1HWC0, cdt, NULL);
  }
  return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_NDC1HWC0, cdt);
}

static status layout_conv(lay_state *s, ir_node *n, int cdt) {
  ir_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
  if (x->rank == 5 && w->rank == 5 && y->rank == 5) return layout_conv3d(s, n, cdt);
  if (x->rank != 4 || w->rank != 4 || y->rank != 4)
    return unsupported(s, n, "only 2-D and 3-D convolution (rank-4 or -5 input and weights) is supported");
  if (w->dims[0] != y->dims[1]) return unsupported(s, n, "weight output channels differ from y's");
  int64_t group = ir_attr_int(n, "group", 1), cin = x->dims[1], cout = y->dims[1];
  int64_t dil[2] = {1, 1};
  ir_attr_ints(n, "dilations", dil, 2);
  if (dil[0] < 1 || dil[1] < 1) return unsupported(s, n, "dilations must be >= 1");
  if (group == 1) { /* weights computed at run time are packed by a WPACK task (lower/conv_weights.h) */
    if (w->dims[1] != cin) return unsupported(s, n, "weight input channels differ from x's");
    status st = w->data ? ensure_input(s, n, 1, LAYOUT_FRACTAL_Z, cdt, NULL)
                        : convw_make_input(s->g, n, LAYOUT_FRACTAL_Z, cdt, 4, w->dims, s->d);
    if (st != ST_OK) return st;
  } else if (group == cin && group == cout && w->dims[1] == 1) {
    int64_t dims[4] = {1, w->dims[0], w->dims[2], w->dims[3]};
    status st = w->data ? ensure_input(s, n, 1, LAYOUT_NC1HWC0, cdt, dims)
                        : convw_make_input(s->g, n, LAYOUT_NC1HWC0, cdt, 4, dims, s->d);
    if (st != ST_OK) return st;
  } else if (group > 1 && cin % group == 0 && cout % group == 0 && w->dims[1] == cin / group) {
    int64_t dims[5] = {group, cout / group, cin / group, w->dims[2], w->dims[3]};
    status st = convw_make_input(s->g, n, LAYOUT_FRACTAL_Z_G, cdt, 5, dims, s->d);
    if (st != ST_OK) return st;
  } else {
    char msg[160];
    snprintf(msg, sizeof msg, "group=%lld does not divide input channels %lld and output channels %lld",
             (long long)group, (long long)cin, (long long)cout);
    return unsupported(s, n, msg);
  }
  /* An RGB stem reads its NCHW input in place (om_format.h, CONV2D): the
   * model's input, or the ND result of the preprocessing before it (an
   * ImageScaler, a (x - mean) / std vector program). Not a channels-last
   * image's Transpose to NCHW: one channels-last TransData reads that (and
   * the Transpose goes), where reading in place would keep the Transpose's copy. */
  const int nd_stem = group == 1 && cin <= 4 && x->layout == LAYOUT_ND && x->rank == 4 &&
                      (x->dtype == DT_FLOAT32 || x->dtype == DT_FLOAT16) && !(n->nin > 4 && n->in[4]) &&
                      !is_transpose(x->producer, nhwc_to_nchw);
  status st = nd_stem ? ST_OK : ensure_input(s, n, 0, LAYOUT_NC1HWC0, cdt, NULL);
  if (st == ST_OK && n->nin > 2 && n->in[2]) {
    if (n->in[2]->rank != 1 || n->in[2]->dims[0] != cout)
      return unsupported(s, n, "bias must have shape [Cout]");
    st = ensure_input(s, n, 2, LAYOUT_ND, DT_FLOAT32, NULL);
  }
  if (st == ST_OK && n->nin > 3 && n->in[3]) {
    if (!same_dims(n->in[3], y->rank, y->dims))
      return unsupported(s, n, "residual must have the output's shape");
    st = ensure_input(s, n, 3, LAYOUT_NC1HWC0, cdt, NULL);
  }
  if (st == ST_OK && n->nin > 4 && n->in[4]) { /* x_scale (passes/fuse.c) */
    const int64_t sd[4] = {x->dims[0], cin, 1, 1};
    if (group != 1 || !same_dims(n->in[4], 4, sd))
      return unsupported(s, n, "x_scale must have shape [N, Cin, 1, 1] and the Conv group 1");
    st = ensure_input(s, n, 4, LAYOUT_NC1HWC0, cdt, NULL);
  }
  return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_NC1HWC0, cdt);
}

/* Pools (ir/pool.h): undilated 2-D and 3-D max and average pooling on
 * floats, and MaxPool on i8/u8, the CNN case, runs as POOL on NC1HWC0 /
 * NDC1HWC0; the rest (1-D, dilated, Lp, GlobalMaxPool on i8/u8) as POOL_ND
 * on ND, when the window fits its params. */
static status layout_pool(lay_state *s, ir_node *n, int cdt) {
  const ir_value *x = n->in[0];
  int xt = x->dtype, fl = precision_is_float(xt);
  if (!fl && !((n->op == IR_OP_MAXPOOL || n->op == IR_OP_GLOBALMAXPOOL) && (xt == DT_INT8 || xt == DT_UINT8)))
    return check_float(s, n, x);
  ir_pool p;
  char err[400];
  if (ir_pool_read(n, x->rank, x->dims, &p, err, sizeof err)) return unsupported(s, n, err);
  int fits = 1, undilated = 1;
  for (int j = 0; j < p.r; j++) {
    int64_t ext = p.dl[j] * (p.k[j] - 1) + 1;
    fits &= p.k[j] <= 65535 && p.s[j] <= 65535 && p.dl[j] <= 65535 && p.pb[j] < ext && p.pe[j] < ext;
    undilated &= p.dl[j] == 1;
  }
  if (!fits)
    return unsupported(s, n,
                       "the pooling window needs kernel, strides and dilations <= 65535 and pads "
                       "below the kernel extent");
  const int max8 = !fl && n->op == IR_OP_MAXPOOL; /* the int8 max of a QDQ model's stem (passes/qconv.c) */
  int lay = (!fl && !max8) || p.mode == 2 || !undilated ? LAYOUT_ND
            : x->rank == 4                              ? LAYOUT_NC1HWC0
            : x->rank == 5                              ? LAYOUT_NDC1HWC0
                                                        : LAYOUT_ND;
  status st = ensure_input(s, n, 0, lay, fl ? cdt : ANY_DTYPE, NULL);
  return st != ST_OK ? st : redirect_output(s, n, 0, lay, fl ? cdt : xt);
}

/* Resize: ND, floats in the node's dtype, nearest also on the other dtypes
 * the vector unit moves; its tap tables (ir/resize.h) become constant
 * inputs 1 (idx, i32) and, unless it only selects, 2 (w, f32), and its
 * per-dim tap counts the attribute `taps`. */
static status layout_resize(lay_state *s, ir_node *n, int cdt) {
  ir_value *x = n->in[0], *y = n->out[0];
  int xt = x->dtype, fl = precision_is_float(xt);
  if (!fl && (!dtype_size(xt) || xt == DT_DOUBLE)) return check_float(s, n, x);
  ir_resize_tables t;
  status st = ir_resize_tables_build(n, x, y, &s->scratch, &t, s->d);
  if (st == ST_OK) st = ensure_input(s, n, 0, LAYOUT_ND, fl ? cdt : ANY_DTYPE, NULL);
  if (st != ST_OK) return st;
  char name[512];
  int64_t count = t.count, taps[MAX_RANK];
  for (int d = 0; d < t.rank; d++)
    taps[d] = t.taps[d];
  snprintf(name, sizeof name, "%s_resize_idx", y->name);
  ir_value *idx = ir_const_new(s->g, name, DT_INT32, 1, &count, t.idx, (size_t)count * sizeof *t.idx);
  if (!idx || ir_node_set_input(s->g, n, 1, idx) || ir_attr_set_ints(s->g, n, "taps", t.rank, taps))
    return nomem(s, n);
  if (!t.select) {
    snprintf(name, sizeof name, "%s_resize_w", y->name);
    ir_value *w = ir_const_new(s->g, name, DT_FLOAT32, 1, &count, t.w, (size_t)count * sizeof *t.w);
    if (!w || ir_node_set_input(s->g, n, 2, w)) return nomem(s, n);
  }
  return redirect_output(s, n, 0, LAYOUT_ND, fl ? cdt : xt);
}

/* Concat: NC1HWC0 when rank 4 along axis 1 and a computed input already is
 * NC1HWC0, else ND. */
static status layout_concat(lay_state *s, ir_node *n, int cdt) {
  ir_value *y = n->out[0];
  int64_t axis = ir_attr_int(n, "axis", 0);
  if (axis < 0) axis += y->rank;
  int can_5hd = y->rank == 4 && axis == 1, lay = LAYOUT_ND;
  for (int j = 0; j < n->nin; j++) {
    if (!n->in[j]) return unsupported(s, n, "missing input");
    if (can_5hd && !n->in[j]->data && n->in[j]->layout == LAYOUT_NC1HWC0) lay = LAYOUT_NC1HWC0;
  }
  for (int j = 0; j < n->nin; j++) {
    status st = ensure_input(s, n, j, lay, cdt, NULL);
    if (st != ST_OK) return st;
  }
  return redirect_output(s, n, 0, lay, cdt);
}

/* v (y's rank, 4 or 5) has y's channels and broadcasts to y over N, (D,) H
 * and W only. */
static int fits_5hd(const ir_value *v, const ir_value *y) {
  if (v->rank != y->rank || (y->rank != 4 && y->rank != 5) || v->dims[1] != y->dims[1]) return 0;
  for (int k = 0; k < y->rank; k += k == 0 ? 2 : 1)
    if (v->dims[k] != 1 && v->dims[k] != y->dims[k]) return 0;
  return 1;
}

/* Replaces constant input `slot` of n (rank <= y's, broadcasting to n's
 * rank-4 or -5 outputs y) by an ND constant of y's rank whose C is the
 * outputs' C: the constant right-aligned to that rank and repeated along C
 * when it has 1 there. */
static status expand_channels(lay_state *s, ir_node *n, int slot) {
  const ir_value *c = n->in[slot], *y = n->out[0];
  const int r = y->rank, off = r - c->rank;
  int64_t src[5] = {1, 1, 1, 1, 1}, dims[5], count = 1;
  for (int k = 0; k < r; k++)
    src[k] = k < off ? 1 : c->dims[k - off];
  memcpy(dims, src, sizeof dims);
  dims[1] = y->dims[1];
  for (int k = 0; k < r; k++)
    count *= dims[k];
  size_t es = dtype_size(c->dtype);
  uint8_t *out = arena_array(&s->g->arena, count ? (size_t)count : 1, es);
  if (!out) return nomem(s, n);
  const uint8_t *from = c->data;
  for (int64_t i = 0; i < count; i++) {
    int64_t rest = i, at = 0, stride = 1;
    for (int k = r - 1; k >= 0; k--) {
      int64_t idx = rest % dims[k];
      rest /= dims[k];
      at += (src[k] == 1 ? 0 : idx) * stride;
      stride *= src[k];
    }
    memcpy(out + (size_t)i * es, from + (size_t)at * es, es);
  }
  char name[512];
  snprintf(name, sizeof name, "%s_c%lld", c->name, (long long)dims[1]);
  ir_value *e = ir_const_new(s->g, name, c->dtype, r, dims, out, (size_t)count * es);
  if (!e || ir_node_set_input(s->g, n, slot, e)) return nomem(s, n);
  return ST_OK;
}

static status layout_vecprog(lay_state *s, ir_node *n, int cdt) {
  (void)cdt;
  const ir_value *y = n->out[0];
  const int lay5 = y->rank == 4 ? LAYOUT_NC1HWC0 : LAYOUT_NDC1HWC0; /* the 5HD layout of y's rank */
  int fits = y->rank == 4 || y->rank == 5, any_5hd = 0;
  for (int j = 0; j < n->nin + n->nout; j++) {
    const ir_value *v = j < n->nin ? n->in[j] : n->out[j - n->nin];
    if (!precision_is_float(v->dtype) && v->dtype != DT_UINT8 && v->dtype != DT_INT8) fits = 0;
    if (j >= n->nin || v->data) continue;
    any_5hd |= (int)v->layout == lay5;
    if (!fits_5hd(v, y)) fits = 0;
  }
  int lay = fits && any_5hd ? lay5 : LAYOUT_ND;
  for (int j = 0; j < n->nin; j++) {
    status st = ST_OK;
    if (lay != LAYOUT_ND && n->in[j]->data && !fits_5hd(n->in[j], y)) st = expand_channels(s, n, j);
    if (st == ST_OK) st = ensure_input(s, n, j, lay, ANY_DTYPE, NULL);
    if (st != ST_OK) return st;
  }
  for (int k = 0; k < n->nout; k++) {
    status st = redirect_output(s, n, k, lay, n->out[k]->dtype);
    if (st != ST_OK) return st;
  }
  return ST_OK;
}

/* MatMul (ops.def's form): one MATMUL task. A ND in the node's dtype; B
 * in it too, a constant of rank >= 2 (not transposed: lower_gemm made
 * Gemm's constants plain) stored once as FRACTAL_NZ, the panels the cube
 * reads in place, anything else ND; bias ND f32; c ND as it is (f16 or
 * f32: the epilogue reads either); y in the node's dtype, or f32 for a
 * precision "f32_out" node (its f32 sums). */
static status layout_matmul(lay_state *s, ir_node *n, int cdt) {
  const ir_value *b = n->in[1];
  const int nz = b->data && b->rank >= 2 && !ir_attr_int(n, "transB", 0) && !ir_attr_find(n, "permB");
  status st = ensure_input(s, n, 0, LAYOUT_ND, cdt, NULL);
  if (st == ST_OK) st = ensure_input(s, n, 1, nz ? LAYOUT_FRACTAL_NZ : LAYOUT_ND, cdt, NULL);
  if (st == ST_OK && n->nin > 2 && n->in[2]) st = ensure_input(s, n, 2, LAYOUT_ND, DT_FLOAT32, NULL);
  if (st == ST_OK && n->nin > 3 && n->in[3]) st = ensure_input(s, n, 3, LAYOUT_ND, ANY_DTYPE, NULL);
  return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_ND, precision_f32_out(n) ? DT_FLOAT32 : cdt);
}

/* Reshape family: ND copies (or aliases) that may also cast. */
static status layout_nd_copy(lay_state *s, ir_node *n) {
  status st = ensure_input(s, n, 0, LAYOUT_ND, ANY_DTYPE, NULL);
  n->out[0]->layout = LAYOUT_ND;
  return st;
}

/* Reduce: ND. Float modes compute in the node's dtype (f16 under
 * force_fp16); argmax/argmin read their input in whatever float dtype it
 * has; integer and bool inputs stay as they are where the REDUCE kind takes
 * them (om_format.h). */
static status layout_reduce(lay_state *s, ir_node *n, int cdt) {
  const ir_value *x = n->in[0];
  int mode = ir_reduce_mode(n), xt = x->dtype;
  int is_arg = mode == OM_REDUCE_ARGMAX || mode == OM_REDUCE_ARGMIN;
  int is_ext = mode == OM_REDUCE_MAX || mode == OM_REDUCE_MIN;
  int wide = xt == DT_INT64 || xt == DT_INT32 || xt == DT_INT16 || xt == DT_UINT64 || xt == DT_UINT32 ||
             xt == DT_UINT16;
  int narrow = xt == DT_INT8 || xt == DT_UINT8;
  int ok = precision_is_float(xt) || xt == DT_DOUBLE; /* f64 reduces in f64 */
  if (mode == OM_REDUCE_SUM || mode == OM_REDUCE_PROD || mode == OM_REDUCE_L1 || mode == OM_REDUCE_SUMSQUARE)
    ok |= wide;
  if (is_arg) ok |= wide || narrow;
  if (is_ext) ok |= wide || narrow || xt == DT_BOOL;
  if (!ok) {
    char msg[160];
    snprintf(msg, sizeof msg, "mode '%s' on input '%s' of dtype %s is not supported",
             ir_attr_string(n, "mode", ""), x->name, dtype_name(xt) ? dtype_name(xt) : "?");
    return unsupported(s, n, msg);
  }
  int want = precision_is_float(xt) && !is_arg ? cdt : ANY_DTYPE;
  status st = ensure_input(s, n, 0, LAYOUT_ND, want, NULL);
  if (st != ST_OK) return st;
  return redirect_output(s, n, 0, LAYOUT_ND, is_arg ? DT_INT64 : want == ANY_DTYPE ? xt : cdt);
}

/* Strided views (Transpose, Slice, ...): ND; floats move in the node's
 * dtype, every other dtype of 1, 2, 4 or 8 bytes as it is. */
static status layout_view(lay_state *s, ir_node *n, int cdt) {
  int xt = n->in[0]->dtype;
  if (is_transpose(n, nchw_to_nhwc) && n->in[0]->layout == LAYOUT_NC1HWC0) { /* back to NHWC: one TransData */
    n->op = IR_OP_TRANSDATA; /* (writing a graph output in its dtype: TransData converts) */
    if (ir_attr_set_int(s->g, n, "channels_last", 1)) return nomem(s, n);
    return redirect_output(s, n, 0, LAYOUT_ND, n->out[0]->dtype);
  }
  if (!dtype_size(xt)) {
    char msg[160];
    snprintf(msg, sizeof msg, "value '%s' has dtype %s, which the vector unit does not move", n->in[0]->name,
             dtype_name(xt) ? dtype_name(xt) : "?");
    return unsupported(s, n, msg);
  }
  int want = precision_is_float(xt) ? cdt : ANY_DTYPE;
  status st = ensure_input(s, n, 0, LAYOUT_ND, want, NULL);
  for (int k = 0; k < n->nout && st == ST_OK; k++)
    st = redirect_output(s, n, k, LAYOUT_ND, want == ANY_DTYPE ? xt : cdt);
  return st;
}

/* Gather, GatherElements (what did not fold): ND data in any dtype the
 * vector unit moves (floats in the node's dtype), indices as they are. */
static status layout_gather(lay_state *s, ir_node *n, int cdt) {
  int xt = n->in[0]->dtype, it = n->in[1]->dtype;
  if (!dtype_size(xt) || (it != DT_INT64 && it != DT_INT32)) {
    char msg[200];
    snprintf(msg, sizeof msg, "data '%s' of dtype %s or indices '%s' of dtype %s are not supported",
             n->in[0]->name, dtype_name(xt) ? dtype_name(xt) : "?", n->in[1]->name,
             dtype_name(it) ? dtype_name(it) : "?");
    return unsupported(s, n, msg);
  }
  int want = precision_is_float(xt) ? cdt : ANY_DTYPE;
  status st = ensure_input(s, n, 0, LAYOUT_ND, want, NULL);
  if (st == ST_OK) st = ensure_input(s, n, 1, LAYOUT_ND, ANY_DTYPE, NULL);
  return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_ND, want == ANY_DTYPE ? xt : cdt);
}

/* TopK, Scatter*, CumSum/CumProd, GatherND, OneHot, TfIdfVectorizer: ND
 * operands in the dtypes their kinds take (om_format.h TOPK, SCATTER,
 * CUMSUM, GATHER, ONEHOT, TFIDF); float data in the node's dtype, indices
 * (and TfIdfVectorizer's tokens, table and f32 weights) as they are. */
static status layout_index(lay_state *s, ir_node *n, int cdt) {
  int xt = n->in[0]->dtype, yt = n->out[0]->dtype, ok = dtype_size(xt) && dtype_size(yt);
  int cum = n->op == IR_OP_CUMSUM || n->op == IR_OP_CUMPROD, onehot = n->op == IR_OP_ONEHOT;
  if (cum)
    ok = precision_is_float(xt) || xt == DT_DOUBLE || xt == DT_INT32 || xt == DT_INT64 || xt == DT_UINT32 ||
         xt == DT_UINT64;
  if (n->op == IR_OP_TOPK || onehot) ok = ok && xt != DT_BOOL;
  if (!ok) {
    char msg[200];
    snprintf(msg, sizeof msg, "input '%s' of dtype %s is not supported%s", n->in[0]->name,
             dtype_name(xt) ? dtype_name(xt) : "?",
             cum ? " (CumSum/CumProd take f32, f16, f64, i32, i64, u32, u64)" : "");
    return unsupported(s, n, msg);
  }
  int want = precision_is_float(yt) ? cdt : ANY_DTYPE; /* the data operands' and out[0]'s dtype */
  for (int j = 0; j < n->nin; j++) {
    if (!n->in[j]) continue; /* NonMaxSuppression's absent thresholds */
    int data = onehot                         ? j == 1
               : n->op == IR_OP_TFIDF         ? 0
               : n->op == IR_OP_TENSORSCATTER ? j <= 1 /* past, update */
                                              : j == 0 || (j == 2 && n->op != IR_OP_GATHERND &&
                                                           n->op != IR_OP_TOPK); /* TopK's x count */
    status st = ensure_input(s, n, j, LAYOUT_ND, data ? want : ANY_DTYPE, NULL);
    if (st != ST_OK) return st;
  }
  for (int k = 0; k < n->nout; k++) {
    int dt = k > 0 ? (int)n->out[k]->dtype : want == ANY_DTYPE ? yt : want; /* TopK's indices: i64 */
    status st = redirect_output(s, n, k, LAYOUT_ND, dt);
    if (st != ST_OK) return st;
  }
  return ST_OK;
}

/* Floats only: every input (a Reshape's shape aside) and output. */
static status check_floats(lay_state *s, const ir_node *n) {
  for (int j = 0; j < n->nin; j++) {
    if (!n->in[j] || (n->op == IR_OP_RESHAPE && j == 1)) continue;
    status st = check_float(s, n, n->in[j]);
    if (st != ST_OK) return st;
  }
  for (int k = 0; k < n->nout; k++) {
    status st = check_float(s, n, n->out[k]);
    if (st != ST_OK) return st;
  }
  return ST_OK;
}

/* Softmax, LayerNorm, FusedAttention: every operand ND, in the node's dtype. */
static status layout_nd_float(lay_state *s, ir_node *n, int cdt) {
  status st = check_floats(s, n);
  for (int j = 0; j < n->nin && st == ST_OK; j++)
    if (n->in[j]) st = ensure_input(s, n, j, LAYOUT_ND, cdt, NULL);
  for (int k = 0; k < n->nout && st == ST_OK; k++)
    st = redirect_output(s, n, k, LAYOUT_ND, cdt);
  return st;
}

/* The Reshape family: floats as ND copies that may also cast; integer and
 * bool copies of any dtype the vector unit moves, and of the storage dtypes
 * (a TRANSDATA copy of the codes), as they are. */
static status layout_copy(lay_state *s, ir_node *n, int cdt) {
  (void)cdt;
  int xt = n->in[0]->dtype;
  if (precision_is_float(xt)) {
    status st = check_floats(s, n);
    return st != ST_OK ? st : layout_nd_copy(s, n);
  }
  if ((!dtype_size(xt) && !dtype_is_storage(xt)) || (int)n->out[0]->dtype != xt) {
    char msg[160];
    snprintf(msg, sizeof msg, "value '%s' has dtype %s, which the vector unit does not move", n->in[0]->name,
             dtype_name(xt) ? dtype_name(xt) : "?");
    return unsupported(s, n, msg);
  }
  return layout_nd_copy(s, n);
}

/* BitCast: ND, y in its own dtype, x in the dtype of y's size it had in the
 * model: precision may have stored an f32 x as f16 (its producer computes in
 * fp16), and a TransData widens it back, since the bits read are an f32's.
 * The bytes themselves do not change. */
static status layout_reinterpret(lay_state *s, ir_node *n, int cdt) {
  (void)cdt;
  const ir_value *x = n->in[0], *y = n->out[0];
  int want = x->dtype;
  if (precision_is_float(x->dtype) && dtype_size(y->dtype) == 4) want = DT_FLOAT32;
  if (!dtype_size(want) || dtype_size(want) != dtype_size(y->dtype)) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "values '%s' (%s) and '%s' (%s) are not dtypes of one size the vector unit moves", x->name,
             dtype_name(x->dtype) ? dtype_name(x->dtype) : "?", y->name,
             dtype_name(y->dtype) ? dtype_name(y->dtype) : "?");
    return unsupported(s, n, msg);
  }
  status st = ensure_input(s, n, 0, LAYOUT_ND, want, NULL);
  return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_ND, y->dtype);
}

/* Convert: ND, from whatever dtype its input is stored in (f16 under
 * force_fp16) to its own; TRANSDATA converts any pair (om_tasks.h). */
static status layout_convert(lay_state *s, ir_node *n, int cdt) {
  (void)cdt;
  status st = ensure_input(s, n, 0, LAYOUT_ND, ANY_DTYPE, NULL);
  return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_ND, n->out[0]->dtype);
}

/* TransData nodes are the pass's own (or a WPACK's): already laid out. */
static status layout_keep(lay_state *s, ir_node *n, int cdt) {
  (void)s, (void)n, (void)cdt;
  return ST_OK;
}

/* The ops that must be gone before layout (ops.def's lay NONE, FOLDED and
 * VECTORIZED). */
static status refuse_unfolded(lay_state *s, ir_node *n, int cdt) {
  (void)cdt;
  if (n->op == IR_OP_GEMM) return unsupported(s, n, "Gemm must be a MatMul by now (passes/lower_gemm.c)");
  return unsupported(s, n, "shape arithmetic must fold to constants (are the input shapes static?)");
}

static status refuse_folded(lay_state *s, ir_node *n, int cdt) {
  (void)cdt;
  return unsupported(s, n, "only supported folded into a preceding Conv");
}

static status refuse_vectorized(lay_state *s, ir_node *n, int cdt) {
  (void)cdt;
  status st = check_floats(s, n);
  return st != ST_OK ? st : unsupported(s, n, "op not supported by the backend");
}

static status layout_conv_checked(lay_state *s, ir_node *n, int cdt) {
  status st = check_floats(s, n);
  return st != ST_OK ? st : layout_conv(s, n, cdt);
}

/* Concat: floats in the precision's dtype; other dtypes as they are when
 * every operand has one (the u8 or i8 activations of a quantized model,
 * passes/qconv.c; the i64 and bool values a counted value's shape and
 * packing compute at run time, ir/count.h). */
static status layout_concat_checked(lay_state *s, ir_node *n, int cdt) {
  int yt = n->out[0]->dtype, same = !precision_is_float(yt) && dtype_size(yt);
  for (int j = 0; j < n->nin && same; j++)
    same = n->in[j] && (int)n->in[j]->dtype == yt;
  if (same) return layout_concat(s, n, yt);
  status st = check_floats(s, n);
  return st != ST_OK ? st : layout_concat(s, n, cdt);
}

static status layout_matmul_checked(lay_state *s, ir_node *n, int cdt) {
  status st = check_floats(s, n);
  return st != ST_OK ? st : layout_matmul(s, n, cdt);
}

/* AIPP: src and params as they are (uint8 ND); the image it gives is
 * NC1HWC0 in the node's compute dtype, the layout the model's first layer
 * (a Conv) reads, so no TransData follows it there; other readers get one
 * to what they want. */
static status layout_aipp(lay_state *s, ir_node *n, int cdt) {
  return redirect_output(s, n, 0, LAYOUT_NC1HWC0, cdt);
}

/* One rule per ops.def lay value. */
typedef status (*lay_rule)(lay_state *s, ir_node *n, int cdt);
/* A QConv between Transposes from and back to NHWC (a Linear layer's rows,
 * passes/qconv.c matmul_operands): when x is Transpose(u, 0,3,1,2) of an ND
 * value u, y's only reader is Transpose(y, 0,2,3,1) (not a graph output),
 * there is no residual, groups = 1 and both channel counts are multiples of
 * 16, the QConv reads u and writes the second Transpose's value itself, both
 * ND [N, H, W, C] (QCONV2D on NHWC tensors, format 2.11): no TransData on
 * either side. The Transposes go (the first when nothing else reads it,
 * drop_unread_transposes). 1 when done, else 0 and n as it was. */
static int qconv_nhwc(ir_graph *g, ir_node *n) {
  ir_value *x = n->in[0], *y = n->out[0];
  if (n->nin != 4 || ir_qconv_dynamic(n) || ir_attr_int(n, "group", 1) != 1 ||
      !is_transpose(x->producer, nhwc_to_nchw) || x->dims[1] % C0 || y->dims[1] % C0 || y->output_index >= 0)
    return 0;
  ir_value *u = x->producer->in[0];
  ir_node *back = ir_value_single_user(g, y);
  if (u->layout != LAYOUT_ND || u->dtype != x->dtype || !is_transpose(back, nchw_to_nhwc) ||
      back->out[0]->output_index >= 0)
    return 0;
  ir_value *v = back->out[0];
  if (ir_node_set_input(g, n, 0, u)) return 0;
  ir_value_set_shape(y, 4, v->dims);
  y->layout = LAYOUT_ND;
  back->dead = 1;
  ir_replace_uses(g, v, y);
  return 1;
}

/* A run-time zero point QConv (ops.def; QCONV2D's form 2.15): x and y
 * NC1HWC0, the weights packed as below (wp), the inputs in the task's
 * order x, w, colsum (each output channel's sum of weights, padded to
 * C1out*16), scale (ND, or an f32 [1] of 0 without one), x_zp (ND)[,
 * fbias padded to C1out*16]. */
static status layout_qconv_dyn(lay_state *s, ir_node *n, const qconvw_geom *gm, ir_value *wp) {
  ir_value *w = n->in[1], *zp = n->in[2], *sc = n->nin > 3 ? n->in[3] : NULL,
           *fb = n->nin > 4 ? n->in[4] : NULL;
  const int64_t c16 = gm->c1out * 16, one = 1;
  int32_t *zero = arena_array(&s->scratch, (size_t)c16, sizeof(int32_t)),
          *colsum = arena_array(&s->scratch, (size_t)c16, sizeof(int32_t));
  float *fz = arena_array(&s->scratch, (size_t)c16, sizeof(float)),
        *bias = arena_array(&s->scratch, (size_t)c16, sizeof(float));
  if (!zero || !colsum || !fz || !bias) return nomem(s, n);
  qconvw_bias(gm, w->data, zero, fz, -1, colsum, fz); /* 0 - (-1) * sum */
  for (int64_t j = 0; fb && j < gm->cout; j++)
    bias[j] = (float)elem_get(fb->data, fb->dtype, (size_t)j);
  char name[300];
  snprintf(name, sizeof name, "%s_colsum", w->name);
  ir_value *cv = ir_const_new(s->g, name, DT_INT32, 1, &c16, colsum, sizeof(int32_t) * (size_t)c16);
  snprintf(name, sizeof name, "%s_scale0", n->name);
  const float z = 0.0f;
  ir_value *sv = sc ? sc : ir_const_new(s->g, name, DT_FLOAT32, 1, &one, &z, sizeof z);
  ir_value *bv = NULL;
  if (fb) {
    snprintf(name, sizeof name, "%s_c16", fb->name);
    bv = ir_const_new(s->g, name, DT_FLOAT32, 1, &c16, bias, sizeof(float) * (size_t)c16);
  }
  if (!cv || !sv || (fb && !bv) || ir_node_set_input(s->g, n, 1, wp) || ir_node_set_input(s->g, n, 2, cv) ||
      ir_node_set_input(s->g, n, 3, sv) || ir_node_set_input(s->g, n, 4, zp) ||
      (fb && ir_node_set_input(s->g, n, 5, bv)))
    return nomem(s, n);
  status st = ensure_input(s, n, 0, LAYOUT_NC1HWC0, ANY_DTYPE, NULL);
  for (int j = 3; j < 5 && st == ST_OK; j++)
    st = ensure_input(s, n, j, LAYOUT_ND, ANY_DTYPE, NULL);
  return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_NC1HWC0, n->out[0]->dtype);
}

/* QConv: x, y and a residual NC1HWC0 in their dtypes (u8 / i8), the weights packed
 * for QCONV2D (lower/qconv_weights.h) as an ND i8 constant [C1out, KG, 16,
 * 4], the bias corrected for x's zero point (i8 x is read as u8 x + 128,
 * so its zero point moves by 128 too) and mult padded to C1out*16; the
 * run-time zero point form as layout_qconv_dyn says. */
static status layout_qconv(lay_state *s, ir_node *n, int cdt) {
  (void)cdt;
  ir_value *x = n->in[0], *w = n->in[1], *b = n->in[2], *m = n->nin > 3 ? n->in[3] : NULL;
  qconvw_geom gm;
  if (!w->data || w->dtype != DT_INT8 || w->rank != 4 ||
      qconvw_init(w->dims[0], x->dims[1], ir_attr_int(n, "group", 1), w->dims[2], w->dims[3], &gm) ||
      gm.kg * 4 > OM_QCONV_MAX_K) /* int32 sums */
    return unsupported(s, n,
                       "weights beyond QCONV2D's range (K = KH * KW * 16 * input blocks at most 65536)");
  const int32_t zp_u = (int32_t)ir_attr_int(n, "x_zp", 0) + (x->dtype == DT_INT8 ? 128 : 0);
  const int64_t c16 = gm.c1out * 16;
  int64_t pdims[4];
  qconvw_dims(&gm, pdims);
  int8_t *packed = arena_alloc_aligned(&s->g->arena, (size_t)qconvw_bytes(&gm), 64);
  if (!packed) return nomem(s, n);
  memset(packed, 0, (size_t)qconvw_bytes(&gm));
  qconvw_pack(&gm, w->data, packed);
  char name[300];
  snprintf(name, sizeof name, "%s_packed", w->name);
  ir_value *wp = ir_const_new(s->g, name, DT_INT8, 4, pdims, packed, (size_t)qconvw_bytes(&gm));
  arena_release(&s->g->arena, packed);
  if (ir_qconv_dynamic(n)) return wp ? layout_qconv_dyn(s, n, &gm, wp) : nomem(s, n);
  int32_t *bias = arena_array(&s->scratch, (size_t)c16, sizeof(int32_t));
  float *mult = arena_array(&s->scratch, (size_t)c16, sizeof(float));
  if (!bias || !mult) return nomem(s, n);
  qconvw_bias(&gm, w->data, b->data, m->data, zp_u, bias, mult);
  snprintf(name, sizeof name, "%s_zp", b->name);
  ir_value *bp = ir_const_new(s->g, name, DT_INT32, 1, &c16, bias, sizeof(int32_t) * (size_t)c16);
  snprintf(name, sizeof name, "%s_c16", m->name);
  ir_value *mp = ir_const_new(s->g, name, DT_FLOAT32, 1, &c16, mult, sizeof(float) * (size_t)c16);
  if (!wp || !bp || !mp || ir_node_set_input(s->g, n, 1, wp) || ir_node_set_input(s->g, n, 2, bp) ||
      ir_node_set_input(s->g, n, 3, mp))
    return nomem(s, n);
  if (qconv_nhwc(s->g, n)) return ST_OK;
  status st = ensure_input(s, n, 0, LAYOUT_NC1HWC0, ANY_DTYPE, NULL);
  if (st == ST_OK && n->nin > 4) st = ensure_input(s, n, 4, LAYOUT_NC1HWC0, ANY_DTYPE, NULL); /* residual */
  return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_NC1HWC0, n->out[0]->dtype);
}

/* QMatMul: x, x_zp, scale and y ND in their dtypes; w [K, N] packed for
 * QMATMUL as QCONV2D's [N, K, 1, 1] weights (lower/qconv_weights.h), its
 * column sums and the bias padded to C1out*16; the inputs become the
 * task's order: x, w, colsum, x_zp[, scale[, bias]] (om_tasks_cube.h).
 * A run-time w stays ND as it is, the inputs too (x, w, x_zp[, scale]:
 * the task packs w, emit leaves out the column sums). */
static status layout_qmatmul(lay_state *s, ir_node *n, int cdt) {
  (void)cdt;
  ir_value *w = n->in[1], *b = n->nin > 4 ? n->in[4] : NULL;
  if (!w->data) { /* two activations: the task packs w at run time, no column sums (om_tasks_cube.h) */
    status st = ST_OK;
    for (int j = 0; j < n->nin && st == ST_OK; j++)
      st = ensure_input(s, n, j, LAYOUT_ND, ANY_DTYPE, NULL);
    return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_ND, n->out[0]->dtype);
  }
  const int64_t k = w->dims[0], m = w->dims[1];
  qconvw_geom gm;
  if (!w->data || k % 4 || qconvw_init(m, k, 1, 1, 1, &gm) || gm.kg * 4 > OM_QCONV_MAX_K)
    return unsupported(s, n, "weights beyond QMATMUL's range (K a multiple of 4, at most 65536)");
  const int64_t c16 = gm.c1out * 16;
  int64_t pdims[4];
  qconvw_dims(&gm, pdims);
  int8_t *packed = arena_alloc_aligned(&s->g->arena, (size_t)qconvw_bytes(&gm), 64);
  int8_t *wt = arena_array(&s->scratch, (size_t)(k * m), 1);
  int32_t *colsum = arena_array(&s->scratch, (size_t)c16, sizeof(int32_t));
  float *bias = arena_array(&s->scratch, (size_t)c16, sizeof(float));
  ir_value **in = arena_array(&s->g->arena, (size_t)n->nin + 1, sizeof *in);
  if (!packed || !wt || !colsum || !bias || !in) return nomem(s, n);
  const int8_t *wd = w->data;
  for (int64_t i = 0; i < k * m; i++) /* [K, N] -> [N, K] */
    wt[i] = wd[(i % k) * m + i / k];
  for (int64_t j = 0; j < m; j++)
    for (int64_t i = 0; i < k; i++)
      colsum[j] += wt[j * k + i];
  for (int64_t j = 0; b && j < m; j++)
    bias[j] = (float)elem_get(b->data, b->dtype, (size_t)j);
  memset(packed, 0, (size_t)qconvw_bytes(&gm));
  qconvw_pack(&gm, wt, packed);
  char name[300];
  snprintf(name, sizeof name, "%s_packed", w->name);
  ir_value *wp = ir_const_new(s->g, name, DT_INT8, 4, pdims, packed, (size_t)qconvw_bytes(&gm));
  arena_release(&s->g->arena, packed);
  snprintf(name, sizeof name, "%s_colsum", w->name);
  ir_value *cs = ir_const_new(s->g, name, DT_INT32, 1, &c16, colsum, sizeof(int32_t) * (size_t)c16);
  ir_value *bp = NULL;
  if (b) {
    snprintf(name, sizeof name, "%s_c16", b->name);
    bp = ir_const_new(s->g, name, DT_FLOAT32, 1, &c16, bias, sizeof(float) * (size_t)c16);
  }
  if (!wp || !cs || (b && !bp)) return nomem(s, n);
  in[0] = n->in[0], in[1] = wp, in[2] = cs, in[3] = n->in[2];
  if (n->nin > 3) in[4] = n->in[3];
  if (b) in[5] = bp;
  n->in = in;
  n->nin++;
  status st = ST_OK;
  for (int j = 0; j < n->nin && st == ST_OK; j++)
    if (j != 1 && j != 2 && j != 5) st = ensure_input(s, n, j, LAYOUT_ND, ANY_DTYPE, NULL);
  return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_ND, n->out[0]->dtype);
}

/* QEltwise: a, b and y in one layout, their dtypes kept: NC1HWC0 when a
 * or b already is (the QConvs' activations), else ND. */
static status layout_qeltwise(lay_state *s, ir_node *n, int cdt) {
  (void)cdt;
  const int lay =
      n->in[0]->layout == LAYOUT_NC1HWC0 || n->in[1]->layout == LAYOUT_NC1HWC0 ? LAYOUT_NC1HWC0 : LAYOUT_ND;
  status st = ensure_input(s, n, 0, lay, ANY_DTYPE, NULL);
  if (st == ST_OK) st = ensure_input(s, n, 1, lay, ANY_DTYPE, NULL);
  return st != ST_OK ? st : redirect_output(s, n, 0, lay, n->out[0]->dtype);
}

/* QLut: x and y in one layout, NC1HWC0 when x already is (a QConv's
 * output), else ND; the table stays an ND constant. */
static status layout_qlut(lay_state *s, ir_node *n, int cdt) {
  (void)cdt;
  const int lay = n->in[0]->layout == LAYOUT_NC1HWC0 ? LAYOUT_NC1HWC0 : LAYOUT_ND;
  status st = ensure_input(s, n, 0, lay, ANY_DTYPE, NULL);
  if (st == ST_OK) st = ensure_input(s, n, 1, LAYOUT_ND, ANY_DTYPE, NULL);
  return st != ST_OK ? st : redirect_output(s, n, 0, lay, n->out[0]->dtype);
}

/* DynQuant: x ND, f16 kept (the task reads its exact f32 values: no
 * conversion task), else f32; y, scale and zp ND in their dtypes. */
static status layout_dynquant(lay_state *s, ir_node *n, int cdt) {
  (void)cdt;
  const int dt = n->in[0]->dtype == DT_FLOAT16 ? ANY_DTYPE : DT_FLOAT32;
  status st = ensure_input(s, n, 0, LAYOUT_ND, dt, NULL);
  for (int k = 0; k < n->nout && st == ST_OK; k++)
    st = redirect_output(s, n, k, LAYOUT_ND, n->out[k]->dtype);
  return st;
}

static const lay_rule lay_rules[IR_LAY_COUNT] = {
    [IR_LAY_NONE] = refuse_unfolded,
    [IR_LAY_VECTORIZED] = refuse_vectorized,
    [IR_LAY_FOLDED] = refuse_folded,
    [IR_LAY_KEEP] = layout_keep,
    [IR_LAY_CONV] = layout_conv_checked,
    [IR_LAY_POOL] = layout_pool,
    [IR_LAY_RESIZE] = layout_resize,
    [IR_LAY_VECPROG] = layout_vecprog,
    [IR_LAY_MATMUL] = layout_matmul_checked,
    [IR_LAY_CONCAT] = layout_concat_checked,
    [IR_LAY_ND_FLOAT] = layout_nd_float,
    [IR_LAY_REDUCE] = layout_reduce,
    [IR_LAY_VIEW] = layout_view,
    [IR_LAY_GATHER] = layout_gather,
    [IR_LAY_INDEX] = layout_index,
    [IR_LAY_COPY] = layout_copy,
    [IR_LAY_REINTERPRET] = layout_reinterpret,
    [IR_LAY_AIPP] = layout_aipp,
    [IR_LAY_QCONV] = layout_qconv,
    [IR_LAY_QELTWISE] = layout_qeltwise,
    [IR_LAY_QLUT] = layout_qlut,
    [IR_LAY_QMATMUL] = layout_qmatmul,
    [IR_LAY_DYNQUANT] = layout_dynquant,
    [IR_LAY_CONVERT] = layout_convert,
};

int pass_layout_has_rule(ir_lay lay) { return lay >= 0 && lay < IR_LAY_COUNT && lay_rules[lay] != NULL; }

static status layout_node(lay_state *s, ir_node *n) {
  return lay_rules[ir_ops[n->op].lay](s, n, precision_node_dtype(n, s->precision));
}

/* A graph output that folded to a constant gets a task that writes it: the
 * value becomes the output of an Identity reading a new constant with its
 * payload (other readers move to that constant), so the model has an
 * OUTPUT buffer for it like for any computed output. */
static status materialise_const_output(lay_state *s, ir_value *v) {
  ir_graph *g = s->g;
  char name[512];
  snprintf(name, sizeof name, "%s_folded", v->name);
  ir_value *c = ir_const_new(g, name, v->dtype, v->rank, v->dims, v->data, (size_t)ir_value_bytes(v));
  if (!c) return diag_set(s->d, ST_ERR_NOMEM, "out of memory materialising graph output '%s'", v->name);
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *m = g->nodes[i];
    for (int j = 0; j < m->nin && !m->dead; j++)
      if (m->in[j] == v) m->in[j] = c;
  }
  v->data = NULL;
  char nname[600];
  snprintf(nname, sizeof nname, "copy_%s", v->name);
  if (!ir_node_new(g, IR_OP_IDENTITY, nname, 1, &c, 1, &v))
    return diag_set(s->d, ST_ERR_NOMEM, "out of memory materialising graph output '%s'", v->name);
  return ST_OK;
}

status pass_layout(ir_graph *g, pass_ctx *ctx, diag *d) {
  lay_state s = {.g = g, .precision = ctx->precision, .clip = !ctx->no_weight_clip, .d = d};
  arena_init(&s.scratch, 0);
  status st = ST_OK;
  /* Graph I/O is ND, or NC1HWC0 where the driver asks (pass_ctx.io_nc1hwc0). */
  for (int i = 0; i < g->ninputs + g->noutputs && st == ST_OK; i++) {
    ir_value *v = i < g->ninputs ? g->inputs[i] : g->outputs[i - g->ninputs];
    int five_d = ctx->io_nc1hwc0 && ctx->io_nc1hwc0[i];
    if (five_d && (v->rank != 4 || !precision_is_float(v->dtype)))
      st = diag_set(d, ST_ERR_UNSUPPORTED,
                    "graph %s '%s' is %s of rank %d; NC1HWC0 needs a rank-4 float tensor",
                    i < g->ninputs ? "input" : "output", v->name, dtype_name(v->dtype), v->rank);
    if (i < g->ninputs || five_d) v->layout = five_d ? LAYOUT_NC1HWC0 : LAYOUT_ND;
  }
  for (int i = 0; i < g->noutputs && st == ST_OK; i++)
    if (g->outputs[i]->data && g->outputs[i]->input_index < 0)
      st = materialise_const_output(&s, g->outputs[i]);
  int count = g->nnodes; /* TransData nodes appended meanwhile need no visit */
  for (int i = 0; i < count && st == ST_OK; i++)
    if (!g->nodes[i]->dead) st = layout_node(&s, g->nodes[i]);
  arena_free(&s.scratch);
  if (st != ST_OK) return st;
  drop_unread_transposes(g);
  st = ir_graph_toposort(g, d);
  if (st != ST_OK) return st;
  ir_graph_compact(g);
  return ST_OK;
}
