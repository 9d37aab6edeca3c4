/* emit.c - the task list and the om package.
 *
 * Needs: memplan has run (every value has a region, offset and bytes; view
 * nodes that need no copy carry alias=1); tiling has run (block_dim on every
 * node, tile_m/n/k on cube Convs); layouts and dtypes as layout left them.
 * Changes: builds ctx->writer (owned by the ctx from then on; it borrows the
 * constants' data, so serialise it before the graph is freed), or with
 * ctx->gear_append adds the graph as a gear to the driver's ctx->writer
 * (copying the constants with ctx->copy_weights); assigns the
 * offsets of constants in the WEIGHTS partition (v->offset); sets
 * ctx->ntasks and ctx->weights_bytes. The graph is otherwise untouched.
 * Leaves true: one om_tensor per value some task or the model I/O uses,
 * tasks in node order, each named after its node; the SOURCES partition
 * (emit_sources.c) says which ONNX nodes and tensors each task stands for.
 *
 * Node -> task: ops.def's task column names the node's task kind, and
 * emit_rules below holds one rule per kind (the op's row picks it):
 *   CONV2D               Conv: CONV2D (FRACTAL_Z weights; algorithm 0 or 2;
 *                        FRACTAL_Z_G with groups), CONV3D (FRACTAL_Z_3D
 *                        weights) or DWCONV (NC1HWC0 weights); an epilogue
 *                        program (attrs epi_prog..., ir/epilogue_ir.h) goes
 *                        to VPROGS like a VectorProgram's, its extra inputs
 *                        in the slots after x_scale's
 *   POOL, POOL_ND        MaxPool, AveragePool (2-D or 3-D): POOL;
 *                        GlobalAveragePool/GlobalMaxPool: POOL with the
 *                        whole (D x) H x W as the window; on ND (other
 *                        ranks, dilations, LpPool, GlobalLpPool, i8/u8):
 *                        POOL_ND
 *   RESIZE               Resize with the layout pass's tables
 *   MATMUL               MatMul (Gemm is one by now: lower_gemm): bias in
 *                        its slot, c unless beta is 0, the row fold, the
 *                        operands' permutations and the tiles; an epilogue program as a Conv's, its
 *                        extra inputs in the slots after bias
 *   VPROG                VectorProgram: its program (ir/ir_vprog.h decodes
 *                        the node's attributes into om_vinstr records) goes
 *                        to the VPROGS partition (identical programs stored
 *                        once); tensors are its inputs, then its outputs
 *   COPY_SLICE           Concat: one per input, at increasing offsets;
 *                        nothing when memplan placed the inputs in the
 *                        output's buffer (alias=1)
 *   SOFTMAX, REDUCE      Softmax; Reduce (mode as om_reduce_op, axes as a
 *                        bit mask)
 *   LAYERNORM            LayerNorm (passes/norm.c)
 *   RECURRENCE           Recurrence (frontend/onnx_decomp_rnn.c)
 *   ATTENTION            FusedAttention (passes/attention.c)
 *   QCONV2D              QConv (passes/qconv.c), its operands as the layout
 *                        pass packed them
 *   QELTWISE             QEltwise (passes/qconv.c)
 *   QLUT                 QLut (passes/qlut.c)
 *   DYNQUANT             DynQuant (frontend/onnx_decomp_quant.c: DynamicQuantizeLinear)
 *   GATHER               Gather, GatherElements (what did not fold to a
 *                        constant), GatherND (mode 2)
 *   PAD                  Pad (the constant as bytes of y's dtype)
 *   NONZERO, NMS, UNIQUE NonZero, NonMaxSuppression, Unique: inputs, the
 *                        counted outputs and their count (UNIQUE's axis -1
 *                        without one)
 *   TOPK, SCATTER, CUMSUM, ONEHOT  TopK; ScatterElements/ND, TensorScatter;
 *                        CumSum/CumProd; OneHot
 *   TFIDF                TfIdfVectorizer: x, its n-gram table, weights
 *   STRIDED_COPY         Transpose, Slice, Expand, Tile, DepthToSpace,
 *                        SpaceToDepth: the node's view (ir/view.h); Split:
 *                        one per non-empty output
 *   TRANSDATA            TransData: TRANSDATA (channels_last from its attr),
 *                        or WPACK when it packs conv
 *                        weights (lower/conv_weights.h); Reshape, Flatten,
 *                        Squeeze, Unsqueeze, Identity: nothing when memplan
 *                        aliased them (alias=1), else a TRANSDATA ND copy
 *                        (floats) or a flat STRIDED_COPY (other dtypes);
 *                        (a storage dtype's: TRANSDATA too);
 *                        Convert: a TRANSDATA ND copy with its saturate and
 *                        round_mode
 * A node whose row names no task is ST_ERR_UNSUPPORTED naming the node (the
 * layout pass rejects it first).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/dtype_cvt.h"
#include "common/matmul_geom.h"
#include "lower/conv_weights.h"
#include "ir/conv.h"
#include "ir/eval.h"
#include "ir/eval_index.h"
#include "ir/pool.h"
#include "ir/view.h"
#include "ir/epilogue_ir.h"
#include "ir/ir_vprog.h"
#include "emit_sources.h"
#include "pass.h"

#ifndef ATC_VERSION
#define ATC_VERSION "unknown"
#endif

typedef struct emit_state {
  ir_graph *g;
  pass_ctx *ctx;
  om_writer *w;
  uint32_t *tensor;     /* per value id: om tensor index, OM_NONE until added */
  uint64_t weights_end; /* bytes */
  emit_task_src *src;   /* [ntasks]: what each task writes, for emit_sources */
  int nsrc, src_cap;
  arena *a;
  diag *d;
} emit_state;

static status nomem(emit_state *s) { return diag_set(s->d, ST_ERR_NOMEM, "emit: out of memory"); }

static int32_t f32_bits(double x) {
  float f = (float)x;
  int32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

/* The om tensor index of v, adding its descriptor (and, for a constant, its
 * data to the WEIGHTS partition) on first use. OM_NONE for v == NULL; sets
 * *st on failure. */
static uint32_t tensor_of(emit_state *s, ir_value *v, status *st) {
  if (!v || *st != ST_OK) return OM_NONE;
  if (s->tensor[v->id] != OM_NONE) return s->tensor[v->id];
  if (v->region == IR_REGION_NONE) {
    *st = diag_set(s->d, ST_ERR_INVALID, "emit: value '%s' has no memory plan", v->name);
    return OM_NONE;
  }
  if (v->region == IR_REGION_WEIGHTS) {
    if ((s->ctx->copy_weights ? om_writer_add_weights : om_writer_add_weights_ref)(s->w, v->data, v->bytes,
                                                                                   &v->offset)) {
      *st = nomem(s);
      return OM_NONE;
    }
    if (v->offset + v->bytes > s->weights_end) s->weights_end = v->offset + v->bytes;
  }
  om_tensor t = {0};
  t.name = om_writer_string(s->w, v->name);
  t.region = (uint32_t)v->region;
  t.index = v->region == IR_REGION_INPUT    ? (uint32_t)v->input_index
            : v->region == IR_REGION_OUTPUT ? (uint32_t)v->output_index
                                            : 0;
  t.dtype = (uint32_t)v->dtype;
  t.layout = (uint32_t)v->layout;
  t.rank = (uint32_t)v->rank;
  t.offset = v->offset;
  t.bytes = v->bytes;
  for (int i = 0; i < v->rank; i++)
    t.dims[i] = v->dims[i];
  uint32_t idx = om_writer_add_tensor(s->w, &t);
  if (idx == OM_NONE || t.name == OM_NONE) {
    *st = nomem(s);
    return OM_NONE;
  }
  s->tensor[v->id] = idx;
  return idx;
}

/* Appends a task of `kind` for node n with tensors tv[0..nt) (NULL entries
 * become OM_NONE; a slot whose `fixed` entry is not OM_NONE takes that
 * descriptor instead, tv naming the value it stands for) and params
 * p[0..np). */
static status add_task_fixed(emit_state *s, const ir_node *n, om_task_kind kind, int nt, ir_value **tv,
                             const uint32_t *fixed, int np, const int32_t *p) {
  om_task t = {0};
  t.kind = kind;
  t.name = om_writer_string(s->w, n->name);
  t.block_dim = (uint32_t)ir_attr_int(n, "block_dim", 1);
  t.ntensors = (uint32_t)nt;
  /* Nodes with only empty outputs emit no task (emit_node), Concat skips
   * empty inputs; REDUCE (the op's identity), PAD and GATHER define what an
   * empty x gives (om_format.h). Other kinds need at least one element in
   * every dim, so this refuses only empty inputs feeding their non-empty
   * results. */
  int empty_ok = kind == OM_TASK_REDUCE || kind == OM_TASK_PAD || kind == OM_TASK_GATHER ||
                 kind == OM_TASK_NONZERO || kind == OM_TASK_NMS || kind == OM_TASK_UNIQUE;
  for (int i = 0; i < nt && !empty_ok; i++)
    for (int k = 0; tv[i] && k < tv[i]->rank; k++)
      if (tv[i]->dims[k] == 0)
        return ir_node_error(s->d, ST_ERR_UNSUPPORTED, n,
                             "tensor '%s' has dim %d = 0; empty tensors are not supported", tv[i]->name, k);
  status st = ST_OK;
  for (int i = 0; i < nt; i++)
    t.tensors[i] = fixed && fixed[i] != OM_NONE ? fixed[i] : tensor_of(s, tv[i], &st);
  if (st != ST_OK) return st;
  for (int i = 0; i < np; i++)
    t.params[i] = p[i];
  if (t.name == OM_NONE || om_writer_add_task(s->w, &t) == OM_NONE) return nomem(s);
  if (arena_grow(s->a, (void **)&s->src, &s->src_cap, s->nsrc, sizeof *s->src)) return nomem(s);
  emit_task_src *ts = &s->src[s->nsrc++];
  memset(ts, 0, sizeof *ts);
  ts->ntensors = nt;
  for (int i = 0; i < nt; i++) /* a view slot holds a strided part of its value: no ONNX tensor */
    for (int k = 0; tv[i] && k < n->nout && !(fixed && fixed[i] != OM_NONE); k++)
      if (n->out[k] == tv[i]) ts->writes[i] = tv[i];
  s->ctx->ntasks++;
  return ST_OK;
}

static status add_task(emit_state *s, const ir_node *n, om_task_kind kind, int nt, ir_value **tv, int np,
                       const int32_t *p) {
  return add_task_fixed(s, n, kind, nt, tv, NULL, np, p);
}

/* act, clip_min, clip_max (the param slots they point at) from a fused "act" attribute. */
static status fused_act(emit_state *s, const ir_node *n, int32_t *act_out, int32_t *clip_min_out,
                        int32_t *clip_max_out) {
  const char *act = ir_attr_string(n, "act", NULL);
  *act_out = OM_ACT_NONE;
  if (!act) return ST_OK;
  if (strcmp(act, "relu") == 0) {
    *act_out = OM_ACT_RELU;
  } else if (strcmp(act, "clip") == 0) {
    *act_out = OM_ACT_CLIP;
    *clip_min_out = f32_bits(ir_attr_float(n, "clip_min", -INFINITY));
    *clip_max_out = f32_bits(ir_attr_float(n, "clip_max", INFINITY));
  } else if (n->op == IR_OP_MATMUL && strcmp(act, "gelu") == 0) {
    *act_out = OM_ACT_GELU;
  } else if (n->op == IR_OP_MATMUL && strcmp(act, "gelu_tanh") == 0) {
    *act_out = OM_ACT_GELU_TANH;
  } else if (n->op == IR_OP_MATMUL && strcmp(act, "silu") == 0) {
    *act_out = OM_ACT_SILU;
  } else {
    return ir_node_error(s->d, ST_ERR_UNSUPPORTED, n, "act \"%s\" is not supported", act);
  }
  return ST_OK;
}

/* Writes VectorProgram node n's program into the VPROGS partition. */
static status add_program(emit_state *s, const ir_node *n, uint32_t *offset_out) {
  arena tmp;
  arena_init(&tmp, 0);
  ir_vprog p;
  status st = ir_vprog_decode(n, &tmp, &p, s->d);
  *offset_out = 0;
  if (st == ST_OK) {
    om_vprog hdr = {.ninputs = (uint16_t)n->nin,
                    .noutputs = (uint16_t)n->nout,
                    .nregs = (uint16_t)p.nregs,
                    .ninstrs = (uint16_t)p.count};
    if (om_writer_add_vprog(s->w, &hdr, p.ins, offset_out)) st = nomem(s);
  }
  arena_free(&tmp);
  return st;
}

/* The H and W window (kh .. pad_right, dilations where the kind has them)
 * in the slots CONV2D, CONV3D, DWCONV and POOL share (om_format.h), from
 * spatial dims o, o + 1 of the window's (k, s, pb, pe, dl) arrays. */
static void window_params(const int64_t *k, const int64_t *st, const int64_t *pb, const int64_t *pe, int o,
                          int32_t *p) {
  p[OM_CONV_P_KH] = (int32_t)k[o], p[OM_CONV_P_KW] = (int32_t)k[o + 1];
  p[OM_CONV_P_STRIDE_H] = (int32_t)st[o], p[OM_CONV_P_STRIDE_W] = (int32_t)st[o + 1];
  p[OM_CONV_P_PAD_TOP] = (int32_t)pb[o], p[OM_CONV_P_PAD_LEFT] = (int32_t)pb[o + 1];
  p[OM_CONV_P_PAD_BOTTOM] = (int32_t)pe[o], p[OM_CONV_P_PAD_RIGHT] = (int32_t)pe[o + 1];
}

static status emit_conv(emit_state *s, ir_node *n) {
  ir_value *w = n->in[1];
  ir_conv c;
  char err[400];
  if (ir_conv_read(n, n->in[0]->rank - 2, &c, err, sizeof err))
    return ir_node_error(s->d, ST_ERR_INVALID, n, "%s", err);
  const int o = c.r - 2; /* 3-D: H and W are window dims 1 and 2 */
  int32_t p[OM_TASK_MAX_PARAMS] = {0};
  window_params(c.k, c.s, c.pb, c.pe, o, p);
  p[OM_CONV_P_DILATION_H] = (int32_t)c.dl[o], p[OM_CONV_P_DILATION_W] = (int32_t)c.dl[o + 1];
  status st = fused_act(s, n, &p[OM_CONV_P_ACT], &p[OM_CONV_P_CLIP_MIN], &p[OM_CONV_P_CLIP_MAX]);
  if (st != ST_OK) return st;
  ir_value *tv[OM_TASK_MAX_TENSORS] = {[OM_CONV_T_X] = n->in[0],
                                       [OM_CONV_T_W] = w,
                                       [OM_CONV_T_BIAS] = n->nin > 2 ? n->in[2] : NULL,
                                       [OM_CONV_T_RESIDUAL] = n->nin > 3 ? n->in[3] : NULL,
                                       [OM_CONV_T_Y] = n->out[0]};
  /* x_scale (passes/fuse.c): its slot, x_scale = 1. The epilogue program
   * (ir/epilogue_ir.h): epilogue = 1, epilogue_offset, its extra inputs in
   * the slots after (om_format.h). */
  int nt = OM_CONV_NTENSORS;
  if (n->nin > 4 && n->in[4]) tv[nt++] = n->in[4], p[OM_CONV_P_X_SCALE] = 1;
  ir_epilogue epi;
  if (ir_epilogue_view(n, &epi)) {
    uint32_t offset;
    if ((st = add_program(s, &epi.node, &offset)) != ST_OK) return st;
    for (int j = 1; j < epi.node.nin; j++)
      tv[nt++] = epi.node.in[j];
    p[OM_CONV_P_EPILOGUE] = 1, p[OM_CONV_P_EPILOGUE_OFFSET] = (int32_t)offset;
  }
  if (w->layout == LAYOUT_NC1HWC0) return add_task(s, n, OM_TASK_DWCONV, nt, tv, OM_CONV_NPARAMS, p);
  p[OM_CONV_P_TILE_M] = (int32_t)ir_attr_int(n, "tile_m", 0);
  p[OM_CONV_P_TILE_N] = (int32_t)ir_attr_int(n, "tile_n", 0);
  p[OM_CONV_P_TILE_K] = (int32_t)ir_attr_int(n, "tile_k", 0);
  if (w->layout == LAYOUT_FRACTAL_Z_3D) { /* the depth window in its CONV3D slots */
    p[OM_CONV3D_P_KD] = (int32_t)c.k[0], p[OM_CONV3D_P_STRIDE_D] = (int32_t)c.s[0];
    p[OM_CONV3D_P_PAD_FRONT] = (int32_t)c.pb[0], p[OM_CONV3D_P_PAD_BACK] = (int32_t)c.pe[0];
    p[OM_CONV3D_P_DILATION_D] = (int32_t)c.dl[0];
    return add_task(s, n, OM_TASK_CONV3D, nt, tv, OM_CONV_NPARAMS, p);
  }
  p[OM_CONV_P_ALGORITHM] = (int32_t)ir_attr_int(n, "algorithm", OM_CONV_DIRECT);
  if (w->layout == LAYOUT_FRACTAL_Z_G) p[OM_CONV_P_GROUPS] = (int32_t)w->dims[0]; /* groups = G */
  return add_task(s, n, OM_TASK_CONV2D, nt, tv, OM_CONV_NPARAMS, p);
}

/* MatMul: MATMUL (c dropped when beta is 0); an epilogue program as a
 * Conv's, its extra inputs in the slots after bias. */
static status emit_matmul(emit_state *s, ir_node *n) {
  const double beta = ir_attr_float(n, "beta", 1.0);
  ir_value *c = n->nin > 3 && beta != 0.0 ? n->in[3] : NULL;
  int32_t p[OM_TASK_MAX_PARAMS] = {0};
  p[OM_MATMUL_P_TRANS_A] = ir_attr_int(n, "transA", 0) != 0;
  p[OM_MATMUL_P_TRANS_B] = ir_attr_int(n, "transB", 0) != 0;
  p[OM_MATMUL_P_ALPHA] = f32_bits(ir_attr_float(n, "alpha", 1.0));
  p[OM_MATMUL_P_BETA] = c ? f32_bits(beta) : 0;
  status st = fused_act(s, n, &p[OM_MATMUL_P_ACT], &p[OM_MATMUL_P_CLIP_MIN], &p[OM_MATMUL_P_CLIP_MAX]);
  if (st != ST_OK) return st;
  p[OM_MATMUL_P_TILE_M] = (int32_t)ir_attr_int(n, "tile_m", 0);
  p[OM_MATMUL_P_TILE_N] = (int32_t)ir_attr_int(n, "tile_n", 0);
  p[OM_MATMUL_P_TILE_K] = (int32_t)ir_attr_int(n, "tile_k", 0);
  p[OM_MATMUL_P_FOLD] = (int32_t)ir_attr_int(n, "fold", 0);
  for (int j = 0; j < 2; j++) { /* a folded Transpose (permA / permB), encoded as common/matmul_geom.h says */
    int64_t v[MAX_RANK + 1];
    int perm[MAX_RANK], count = ir_attr_ints(n, j ? "permB" : "permA", v, MAX_RANK + 1);
    for (int d = 0; d < count && count <= MAX_RANK; d++)
      perm[d] = (int)v[d];
    if (count > 0 && count <= MAX_RANK)
      p[j ? OM_MATMUL_P_PERM_B : OM_MATMUL_P_PERM_A] = mm_perm_encode(count, perm);
  }
  ir_value *tv[OM_TASK_MAX_TENSORS] = {[OM_MATMUL_T_A] = n->in[0],
                                       [OM_MATMUL_T_B] = n->in[1],
                                       [OM_MATMUL_T_C] = c,
                                       [OM_MATMUL_T_Y] = n->out[0],
                                       [OM_MATMUL_T_BIAS] = n->nin > 2 ? n->in[2] : NULL};
  int nt = OM_MATMUL_NTENSORS;
  ir_epilogue epi;
  if (ir_epilogue_view(n, &epi)) {
    uint32_t offset;
    if ((st = add_program(s, &epi.node, &offset)) != ST_OK) return st;
    for (int j = 1; j < epi.node.nin; j++)
      tv[nt++] = epi.node.in[j];
    p[OM_MATMUL_P_EPILOGUE] = 1, p[OM_MATMUL_P_EPILOGUE_OFFSET] = (int32_t)offset;
  }
  return add_task(s, n, OM_TASK_MATMUL, nt, tv, OM_MATMUL_NPARAMS, p);
}

/* POOL_ND: mode, count_include_pad, p, then per spatial dim kernel, strides,
 * dilations, pad begins and pad ends (ir/pool.h reads the window). */
static status emit_pool_nd(emit_state *s, ir_node *n) {
  const ir_value *x = n->in[0];
  ir_pool w;
  char err[400];
  if (ir_pool_read(n, x->rank, x->dims, &w, err, sizeof err))
    return ir_node_error(s->d, ST_ERR_INVALID, n, "%s", err);
  int32_t p[OM_POOL_ND_NPARAMS] = {[OM_POOL_ND_P_MODE] = w.mode,
                                   [OM_POOL_ND_P_COUNT_INCLUDE_PAD] = w.include_pad,
                                   [OM_POOL_ND_P_LP_P] = (int32_t)w.p};
  for (int j = 0; j < w.r; j++) { /* bounded to 65535 by the layout pass */
    p[OM_POOL_ND_P_KERNEL + j] = (int32_t)w.k[j], p[OM_POOL_ND_P_STRIDES + j] = (int32_t)w.s[j];
    p[OM_POOL_ND_P_DILATIONS + j] = (int32_t)w.dl[j];
    p[OM_POOL_ND_P_PAD_BEGIN + j] = (int32_t)w.pb[j], p[OM_POOL_ND_P_PAD_END + j] = (int32_t)w.pe[j];
  }
  ir_value *tv[OM_POOL_ND_NTENSORS] = {[OM_POOL_ND_T_X] = n->in[0], [OM_POOL_ND_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_POOL_ND, OM_POOL_ND_NTENSORS, tv, OM_POOL_ND_NPARAMS, p);
}

static status emit_pool(emit_state *s, ir_node *n) {
  const ir_value *x = n->in[0];
  if (x->layout == LAYOUT_ND) return emit_pool_nd(s, n);
  ir_pool w; /* undilated, 2-D or 3-D (the layout pass); Global: the whole extent */
  char err[400];
  if (ir_pool_read(n, x->rank, x->dims, &w, err, sizeof err))
    return ir_node_error(s->d, ST_ERR_INVALID, n, "%s", err);
  int32_t p[OM_POOL_NPARAMS] = {0};
  const int o = w.r - 2;
  window_params(w.k, w.s, w.pb, w.pe, o, p);
  if (w.r == 3)
    p[OM_POOL_P_KD] = (int32_t)w.k[0], p[OM_POOL_P_STRIDE_D] = (int32_t)w.s[0],
    p[OM_POOL_P_PAD_FRONT] = (int32_t)w.pb[0], p[OM_POOL_P_PAD_BACK] = (int32_t)w.pe[0];
  p[OM_POOL_P_MODE] = w.mode;
  p[OM_POOL_P_COUNT_INCLUDE_PAD] = w.include_pad;
  ir_value *tv[OM_POOL_NTENSORS] = {[OM_POOL_T_X] = n->in[0], [OM_POOL_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_POOL, OM_POOL_NTENSORS, tv, OM_POOL_NPARAMS, p);
}

static status emit_vprog(emit_state *s, ir_node *n) {
  uint32_t offset;
  status st = add_program(s, n, &offset);
  if (st != ST_OK) return st;
  ir_value *tv[VPROG_MAX_IO];
  for (int i = 0; i < n->nin; i++)
    tv[i] = n->in[i];
  for (int j = 0; j < n->nout; j++)
    tv[n->nin + j] = n->out[j];
  int32_t p[OM_VPROG_NPARAMS] = {[OM_VPROG_P_PROGRAM] = (int32_t)offset};
  return add_task(s, n, OM_TASK_VPROG, n->nin + n->nout, tv, OM_VPROG_NPARAMS, p);
}

static status emit_concat(emit_state *s, ir_node *n) {
  if (ir_attr_int(n, "alias", 0)) return ST_OK; /* memplan placed the inputs inside y */
  ir_value *y = n->out[0];
  int64_t axis = ir_attr_int(n, "axis", 0), offset = 0;
  if (axis < 0) axis += y->rank;
  for (int i = 0; i < n->nin; i++) {
    int32_t p[OM_COPY_SLICE_NPARAMS] = {
        [OM_COPY_SLICE_P_AXIS] = (int32_t)axis, [OM_COPY_SLICE_P_OFFSET] = (int32_t)offset};
    ir_value *tv[OM_COPY_SLICE_NTENSORS] = {[OM_COPY_SLICE_T_X] = n->in[i], [OM_COPY_SLICE_T_Y] = y};
    /* an empty input (empty along axis: y is not empty) has nothing to copy */
    status st = ir_value_elements(n->in[i])
                    ? add_task(s, n, OM_TASK_COPY_SLICE, OM_COPY_SLICE_NTENSORS, tv, OM_COPY_SLICE_NPARAMS, p)
                    : ST_OK;
    if (st != ST_OK) return st;
    offset += n->in[i]->dims[axis];
  }
  return ST_OK;
}

static status emit_reduce(emit_state *s, ir_node *n) {
  uint32_t mask = 0;
  int mode = ir_reduce_mode(n);
  if (mode < 0 || ir_reduce_mask(n, n->in[0]->rank, &mask))
    return ir_node_error(s->d, ST_ERR_INVALID, n, "bad mode or axes (shape inference normalises them)");
  int32_t p[OM_REDUCE_NPARAMS] = {[OM_REDUCE_P_OP] = mode,
                                  [OM_REDUCE_P_AXES] = (int32_t)mask,
                                  [OM_REDUCE_P_SELECT_LAST_INDEX] =
                                      (int32_t)ir_attr_int(n, "select_last_index", 0)};
  ir_value *tv[OM_REDUCE_NTENSORS] = {[OM_REDUCE_T_X] = n->in[0], [OM_REDUCE_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_REDUCE, OM_REDUCE_NTENSORS, tv, OM_REDUCE_NPARAMS, p);
}

/* The view (ir/view.h) as STRIDED_COPY params; every value must fit int32. */
static status emit_view_out(emit_state *s, ir_node *n, int k) {
  ir_view v;
  char err[256];
  if (ir_view_build(n, k, n->in[0]->rank, n->in[0]->dims, &v, err, sizeof err))
    return ir_node_error(s->d, ST_ERR_INVALID, n, "%s", err);
  int32_t p[OM_STRIDED_COPY_NPARAMS] = {0};
  int64_t all[OM_STRIDED_COPY_NPARAMS] = {
      [OM_STRIDED_COPY_P_RANK] = v.rank, [OM_STRIDED_COPY_P_OFFSET] = v.offset};
  for (int d = 0; d < v.rank; d++)
    all[OM_STRIDED_COPY_P_DIMS + d] = v.dims[d], all[OM_STRIDED_COPY_P_STRIDES + d] = v.strides[d];
  for (int k = 0; k < OM_STRIDED_COPY_NPARAMS; k++) {
    if (all[k] < INT32_MIN || all[k] > INT32_MAX)
      return ir_node_error(s->d, ST_ERR_LIMIT, n,
                           "tensor '%s' is too large for a strided copy (offsets beyond 2^31)",
                           n->in[0]->name);
    p[k] = (int32_t)all[k];
  }
  ir_value *tv[OM_STRIDED_COPY_NTENSORS] = {
      [OM_STRIDED_COPY_T_X] = n->in[0], [OM_STRIDED_COPY_T_Y] = n->out[k]};
  return add_task(s, n, OM_TASK_STRIDED_COPY, OM_STRIDED_COPY_NTENSORS, tv, OM_STRIDED_COPY_NPARAMS, p);
}

/* PAD: mode, the begins, the constant as bytes of y's dtype. */
static status emit_pad(emit_state *s, ir_node *n) {
  static const char *const modes[] = {"constant", "reflect", "edge", "wrap"};
  const ir_value *x = n->in[0], *y = n->out[0];
  int32_t p[OM_PAD_NPARAMS] = {0};
  p[OM_PAD_P_MODE] = -1;
  for (int i = 0; i < 4; i++)
    if (!strcmp(ir_attr_string(n, "mode", "constant"), modes[i])) p[OM_PAD_P_MODE] = i;
  int64_t pads[2 * MAX_RANK + 1];
  if (p[OM_PAD_P_MODE] < 0 || ir_attr_ints(n, "pads", pads, 2 * MAX_RANK + 1) != 2 * x->rank)
    return ir_node_error(s->d, ST_ERR_INVALID, n, "bad mode or pads (shape inference checks them)");
  for (int d = 0; d < x->rank; d++)
    p[OM_PAD_P_BEGIN + d] = (int32_t)pads[d]; /* in int32 range: shape inference */
  if (p[OM_PAD_P_MODE] == 0) {
    uint8_t value[8] = {0};
    uint64_t bits = 0;
    elem_put(value, y->dtype, 0, ir_attr_float(n, "value", 0.0));
    for (int k = 0; k < 8; k++)
      bits |= (uint64_t)value[k] << (8 * k);
    p[OM_PAD_P_VALUE_LO] = (int32_t)(uint32_t)bits, p[OM_PAD_P_VALUE_HI] = (int32_t)(uint32_t)(bits >> 32);
  }
  ir_value *tv[OM_PAD_NTENSORS] = {[OM_PAD_T_X] = n->in[0], [OM_PAD_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_PAD, OM_PAD_NTENSORS, tv, OM_PAD_NPARAMS, p);
}

/* TOPK, SCATTER, CUMSUM, ONEHOT and GATHER take their params from the
 * attributes shape inference normalised (axes >= 0; k and depth in int32
 * range). */
static status emit_topk(emit_state *s, ir_node *n) {
  int counted = n->nin > 1 && n->in[1]; /* a run-time k: param k is the bound (k's, or the axis') */
  int32_t axis = (int32_t)ir_attr_int(n, "axis", 0);
  int32_t p[OM_TOPK_NPARAMS] = {[OM_TOPK_P_AXIS] = axis,
                                [OM_TOPK_P_K] =
                                    (int32_t)(counted ? n->out[0]->dims[axis] : ir_attr_int(n, "k", 0)),
                                [OM_TOPK_P_LARGEST] = (int32_t)ir_attr_int(n, "largest", 1),
                                [OM_TOPK_P_SORTED] = (int32_t)ir_attr_int(n, "sorted", 1)};
  ir_value *extent = n->nin > 2 ? n->in[2] : NULL; /* x counted along the axis */
  ir_value *tv[OM_TOPK_NTENSORS_EXTENT] = {[OM_TOPK_T_X] = n->in[0],
                                           [OM_TOPK_T_VALUES] = n->out[0],
                                           [OM_TOPK_T_INDICES] = n->out[1],
                                           [OM_TOPK_T_K] = counted ? n->in[1] : NULL,
                                           [OM_TOPK_T_COUNT] = counted ? n->out[2] : NULL,
                                           [OM_TOPK_T_EXTENT] = extent};
  int nt = extent ? OM_TOPK_NTENSORS_EXTENT : counted ? OM_TOPK_NTENSORS_COUNTED : OM_TOPK_NTENSORS;
  return add_task(s, n, OM_TASK_TOPK, nt, tv, OM_TOPK_NPARAMS, p);
}

static status emit_nonzero(emit_state *s, ir_node *n) {
  ir_value *tv[OM_NONZERO_NTENSORS] = {
      [OM_NONZERO_T_X] = n->in[0], [OM_NONZERO_T_Y] = n->out[0], [OM_NONZERO_T_COUNT] = n->out[1]};
  return add_task(s, n, OM_TASK_NONZERO, OM_NONZERO_NTENSORS, tv, OM_NONZERO_NPARAMS, NULL);
}

static status emit_nms(emit_state *s, ir_node *n) {
  int64_t max = ir_attr_int(n, "max_per_class", 0), N = n->in[0]->dims[1];
  int32_t p[OM_NMS_NPARAMS] = {[OM_NMS_P_CENTER_POINT_BOX] = (int32_t)ir_attr_int(n, "center_point_box", 0),
                               [OM_NMS_P_MAX_PER_CLASS] = (int32_t)(max < N ? max : N)};
  ir_value *extent = n->nin > 4 ? n->in[4] : NULL; /* boxes and scores counted */
  ir_value *tv[OM_NMS_NTENSORS_EXTENT] = {[OM_NMS_T_BOXES] = n->in[0],
                                          [OM_NMS_T_SCORES] = n->in[1],
                                          [OM_NMS_T_IOU] = n->nin > 2 ? n->in[2] : NULL,
                                          [OM_NMS_T_SCORE_THRESHOLD] = n->nin > 3 ? n->in[3] : NULL,
                                          [OM_NMS_T_SELECTED] = n->out[0],
                                          [OM_NMS_T_COUNT] = n->out[1],
                                          [OM_NMS_T_EXTENT] = extent};
  return add_task(s, n, OM_TASK_NMS, extent ? OM_NMS_NTENSORS_EXTENT : OM_NMS_NTENSORS, tv, OM_NMS_NPARAMS,
                  p);
}

static status emit_unique(emit_state *s, ir_node *n) {
  int32_t p[OM_UNIQUE_NPARAMS] = {[OM_UNIQUE_P_AXIS] =
                                      ir_attr_find(n, "axis") ? (int32_t)ir_attr_int(n, "axis", 0) : -1,
                                  [OM_UNIQUE_P_SORTED] = (int32_t)ir_attr_int(n, "sorted", 1)};
  ir_value *tv[OM_UNIQUE_NTENSORS] = {
      [OM_UNIQUE_T_X] = n->in[0],        [OM_UNIQUE_T_Y] = n->out[0],      [OM_UNIQUE_T_INDICES] = n->out[1],
      [OM_UNIQUE_T_INVERSE] = n->out[2], [OM_UNIQUE_T_COUNTS] = n->out[3], [OM_UNIQUE_T_COUNT] = n->out[4]};
  return add_task(s, n, OM_TASK_UNIQUE, OM_UNIQUE_NTENSORS, tv, OM_UNIQUE_NPARAMS, p);
}

static status emit_tfidf(emit_state *s, ir_node *n) {
  int32_t p[OM_TFIDF_NPARAMS] = {[OM_TFIDF_P_MODE] = (int32_t)ir_attr_int(n, "mode", 0),
                                 [OM_TFIDF_P_MAX_SKIP] = (int32_t)ir_attr_int(n, "max_skip", 0)};
  ir_value *tv[OM_TFIDF_NTENSORS] = {[OM_TFIDF_T_X] = n->in[0],
                                     [OM_TFIDF_T_TABLE] = n->in[1],
                                     [OM_TFIDF_T_WEIGHTS] = n->nin > 2 ? n->in[2] : NULL,
                                     [OM_TFIDF_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_TFIDF, OM_TFIDF_NTENSORS, tv, OM_TFIDF_NPARAMS, p);
}

/* ScatterElements (mode 0), ScatterND (mode 1), TensorScatter (mode 2: past,
 * update, write indices or none -> y). */
static status emit_scatter(emit_state *s, ir_node *n) {
  const int32_t axis = (int32_t)ir_attr_int(n, "axis", 0);
  int32_t p[OM_SCATTER_NPARAMS] = {0};
  ir_value *tv[OM_SCATTER_NTENSORS] = {[OM_SCATTER_T_DATA] = n->in[0], [OM_SCATTER_T_Y] = n->out[0]};
  if (n->op == IR_OP_TENSORSCATTER) {
    p[OM_SCATTER_P_MODE] = 2, p[OM_SCATTER_P_AXIS] = axis;
    p[OM_SCATTER_P_CIRCULAR] = !strcmp(ir_attr_string(n, "mode", "linear"), "circular");
    tv[OM_SCATTER_T_INDICES] = n->nin > 2 ? n->in[2] : NULL, tv[OM_SCATTER_T_UPDATES] = n->in[1];
  } else {
    p[OM_SCATTER_P_MODE] = n->op == IR_OP_SCATTERND;
    p[OM_SCATTER_P_AXIS] = n->op == IR_OP_SCATTERND ? 0 : axis;
    p[OM_SCATTER_P_REDUCTION] = ir_scatter_reduction(n);
    tv[OM_SCATTER_T_INDICES] = n->in[1], tv[OM_SCATTER_T_UPDATES] = n->in[2];
  }
  return add_task(s, n, OM_TASK_SCATTER, OM_SCATTER_NTENSORS, tv, OM_SCATTER_NPARAMS, p);
}

/* CumSum (op 0) and CumProd (op 1). */
static status emit_cumsum(emit_state *s, ir_node *n) {
  int32_t p[OM_CUMSUM_NPARAMS] = {[OM_CUMSUM_P_AXIS] = (int32_t)ir_attr_int(n, "axis", 0),
                                  [OM_CUMSUM_P_EXCLUSIVE] = (int32_t)ir_attr_int(n, "exclusive", 0),
                                  [OM_CUMSUM_P_REVERSE] = (int32_t)ir_attr_int(n, "reverse", 0),
                                  [OM_CUMSUM_P_OP] = n->op == IR_OP_CUMPROD};
  ir_value *tv[OM_CUMSUM_NTENSORS] = {[OM_CUMSUM_T_X] = n->in[0], [OM_CUMSUM_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_CUMSUM, OM_CUMSUM_NTENSORS, tv, OM_CUMSUM_NPARAMS, p);
}

static status emit_aipp(emit_state *s, ir_node *n) {
  ir_value *tv[OM_AIPP_NTENSORS] = {
      [OM_AIPP_T_SRC] = n->in[0], [OM_AIPP_T_PARAMS] = n->in[1], [OM_AIPP_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_AIPP, OM_AIPP_NTENSORS, tv, 0, NULL);
}

static status emit_onehot(emit_state *s, ir_node *n) {
  int32_t p[OM_ONEHOT_NPARAMS] = {[OM_ONEHOT_P_AXIS] = (int32_t)ir_attr_int(n, "axis", 0),
                                  [OM_ONEHOT_P_DEPTH] = (int32_t)ir_attr_int(n, "depth", 0)};
  ir_value *tv[OM_ONEHOT_NTENSORS] = {
      [OM_ONEHOT_T_INDICES] = n->in[0], [OM_ONEHOT_T_VALUES] = n->in[1], [OM_ONEHOT_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_ONEHOT, OM_ONEHOT_NTENSORS, tv, OM_ONEHOT_NPARAMS, p);
}

/* Gather (mode 0), GatherElements (mode 1) with the axis made >= 0, and
 * GatherND (mode 2) with its batch_dims in the axis slot. */
static status emit_gather(emit_state *s, ir_node *n) {
  int64_t axis = ir_attr_int(n, "axis", 0);
  if (axis < 0) axis += n->in[0]->rank;
  int32_t p[OM_GATHER_NPARAMS] = {
      [OM_GATHER_P_MODE] = n->op == IR_OP_GATHERELEMENTS, [OM_GATHER_P_AXIS] = (int32_t)axis};
  if (n->op == IR_OP_GATHERND)
    p[OM_GATHER_P_MODE] = 2, p[OM_GATHER_P_AXIS] = (int32_t)ir_attr_int(n, "batch_dims", 0);
  ir_value *ix = n->in[1],
           *tv[OM_GATHER_NTENSORS_EXTENT] = {
               [OM_GATHER_T_X] = n->in[0], [OM_GATHER_T_INDICES] = ix, [OM_GATHER_T_Y] = n->out[0]};
  /* Counted indices whose valid part is a prefix: the task reads their
   * count and gathers only the valid ones (memplan keeps the count). */
  int a = ix->count ? ix->count_axis : -1, prefix = a >= 0 && a < ix->rank;
  for (int d = 0; prefix && d < a; d++)
    prefix = ix->dims[d] == 1;
  if (prefix) tv[OM_GATHER_T_EXTENT] = ix->count, p[OM_GATHER_P_EXTENT_AXIS] = a;
  return add_task(s, n, OM_TASK_GATHER, prefix ? OM_GATHER_NTENSORS_EXTENT : OM_GATHER_NTENSORS, tv,
                  OM_GATHER_NPARAMS, p);
}

static status emit_softmax(emit_state *s, ir_node *n) {
  int32_t p[OM_SOFTMAX_NPARAMS] = {[OM_SOFTMAX_P_AXIS] = (int32_t)ir_attr_int(n, "axis", 0),
                                   [OM_SOFTMAX_P_COERCE_2D] = (int32_t)ir_attr_int(n, "coerce_2d", 0),
                                   [OM_SOFTMAX_P_LOG] = (int32_t)ir_attr_int(n, "log", 0)};
  ir_value *tv[OM_SOFTMAX_NTENSORS] = {[OM_SOFTMAX_T_X] = n->in[0], [OM_SOFTMAX_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_SOFTMAX, OM_SOFTMAX_NTENSORS, tv, OM_SOFTMAX_NPARAMS, p);
}

/* QCONV2D: QConv's operands as layout made them (om_format.h), the
 * window in CONV2D's slots, x's zero point as the kernels read x (u8, i8
 * x + 128). */
static status emit_qconv(emit_state *s, ir_node *n) {
  /* the window from the attributes (shape inference wrote them all); the
   * packed weights no longer have the kernel's dims */
  int64_t k[2] = {1, 1}, st[2] = {1, 1}, dl[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
  if (ir_attr_ints(n, "kernel_shape", k, 2) != 2)
    return ir_node_error(s->d, ST_ERR_INVALID, n, "kernel_shape must have 2 values");
  ir_attr_ints(n, "strides", st, 2), ir_attr_ints(n, "dilations", dl, 2), ir_attr_ints(n, "pads", pads, 4);
  const int xs = n->in[0]->dtype == DT_INT8;
  int32_t p[OM_QCONV_NPARAMS] = {
      [OM_CONV_P_KH] = (int32_t)k[0],
      [OM_CONV_P_KW] = (int32_t)k[1],
      [OM_CONV_P_STRIDE_H] = (int32_t)st[0],
      [OM_CONV_P_STRIDE_W] = (int32_t)st[1],
      [OM_CONV_P_PAD_TOP] = (int32_t)pads[0],
      [OM_CONV_P_PAD_LEFT] = (int32_t)pads[1],
      [OM_CONV_P_PAD_BOTTOM] = (int32_t)pads[2],
      [OM_CONV_P_PAD_RIGHT] = (int32_t)pads[3],
      [OM_CONV_P_DILATION_H] = (int32_t)dl[0],
      [OM_CONV_P_DILATION_W] = (int32_t)dl[1],
      [OM_QCONV_P_TILE_M] = (int32_t)ir_attr_int(n, "tile_m", 1),
      [OM_QCONV_P_TILE_N] = (int32_t)ir_attr_int(n, "tile_n", 1),
      [OM_QCONV_P_GROUPS] = (int32_t)ir_attr_int(n, "group", 1),
      [OM_QCONV_P_X_ZP] = (int32_t)ir_attr_int(n, "x_zp", 0) + (xs ? 128 : 0),
      [OM_QCONV_P_Y_ZP] = (int32_t)ir_attr_int(n, "y_zp", 0),
      [OM_QCONV_P_LO] = (int32_t)ir_attr_int(n, "lo", 0),
      [OM_QCONV_P_HI] = (int32_t)ir_attr_int(n, "hi", 0),
      [OM_QCONV_P_X_SIGNED] = xs,
  };
  ir_value *tv[OM_QCONV_NTENSORS_DYN] = {[OM_QCONV_T_X] = n->in[0],
                                         [OM_QCONV_T_W] = n->in[1],
                                         [OM_QCONV_T_BIAS] = n->in[2],
                                         [OM_QCONV_T_MULT] = n->in[3],
                                         [OM_QCONV_T_Y] = n->out[0]};
  if (ir_qconv_dynamic(n)) { /* the run-time zero point form (layout_qconv_dyn) */
    const int has_lo = ir_attr_find(n, "f_lo") != NULL, has_hi = ir_attr_find(n, "f_hi") != NULL;
    tv[OM_QCONV_T_X_ZP] = n->in[4];
    tv[OM_QCONV_T_FBIAS] = n->nin > 5 ? n->in[5] : NULL;
    p[OM_QCONV_P_F_CLAMP] = has_lo | has_hi << 1;
    p[OM_QCONV_P_F_LO] = has_lo ? f32_bits(ir_attr_float(n, "f_lo", 0.0)) : 0;
    p[OM_QCONV_P_F_HI] = has_hi ? f32_bits(ir_attr_float(n, "f_hi", 0.0)) : 0;
    return add_task(s, n, OM_TASK_QCONV2D, OM_QCONV_NTENSORS_DYN, tv, OM_QCONV_NPARAMS, p);
  }
  if (n->nin > 4) { /* the residual epilogue */
    tv[OM_QCONV_T_R] = n->in[4];
    p[OM_QCONV_P_R_OP] = !strcmp(ir_attr_string(n, "r_op", "add"), "mul");
    p[OM_QCONV_P_C_SCALE] = f32_bits(ir_attr_float(n, "c_scale", 0.0));
    p[OM_QCONV_P_R_SCALE] = f32_bits(ir_attr_float(n, "r_scale", 0.0));
    p[OM_QCONV_P_R_ZP] = (int32_t)ir_attr_int(n, "r_zp", 0);
    p[OM_QCONV_P_O_SCALE] = f32_bits(ir_attr_float(n, "o_scale", 0.0));
    p[OM_QCONV_P_O_ZP] = (int32_t)ir_attr_int(n, "o_zp", 0);
  }
  return add_task(s, n, OM_TASK_QCONV2D, n->nin > 4 ? OM_QCONV_NTENSORS_R : OM_QCONV_NTENSORS, tv,
                  OM_QCONV_NPARAMS, p);
}

/* QMATMUL: the QMatMul's inputs in the task's order (layout_qmatmul) and
 * its tiles; with a run-time w, w's zero point, the requantization's and
 * the folded Transposes (encoded as common/matmul_geom.h says). */
static status emit_qmatmul(emit_state *s, ir_node *n) {
  int32_t p[OM_QMATMUL_NPARAMS] = {[OM_QMATMUL_P_TILE_M] = (int32_t)ir_attr_int(n, "tile_m", 1),
                                   [OM_QMATMUL_P_TILE_N] = (int32_t)ir_attr_int(n, "tile_n", 1),
                                   [OM_QMATMUL_P_W_ZP] = (int32_t)ir_attr_int(n, "w_zp", 0),
                                   [OM_QMATMUL_P_Y_ZP] = (int32_t)ir_attr_int(n, "y_zp", 0),
                                   [OM_QMATMUL_P_LO] = (int32_t)ir_attr_int(n, "lo", 0),
                                   [OM_QMATMUL_P_HI] = (int32_t)ir_attr_int(n, "hi", 0)};
  for (int j = 0; j < 2; j++) {
    int64_t v[MAX_RANK + 1];
    int perm[MAX_RANK], count = ir_attr_ints(n, j ? "permB" : "permA", v, MAX_RANK + 1);
    for (int d = 0; d < count && count <= MAX_RANK; d++)
      perm[d] = (int)v[d];
    if (count > 0 && count <= MAX_RANK)
      p[j ? OM_QMATMUL_P_PERM_B : OM_QMATMUL_P_PERM_A] = mm_perm_encode(count, perm);
  }
  const int packed = n->in[1]->data != NULL; /* else a run-time w: x, w, x_zp[, scale] (layout_qmatmul) */
  ir_value *tv[OM_QMATMUL_NTENSORS] = {[OM_QMATMUL_T_X] = n->in[0],
                                       [OM_QMATMUL_T_W] = n->in[1],
                                       [OM_QMATMUL_T_COLSUM] = packed ? n->in[2] : NULL,
                                       [OM_QMATMUL_T_X_ZP] = n->in[packed ? 3 : 2],
                                       [OM_QMATMUL_T_SCALE] = n->nin > 3 + packed ? n->in[3 + packed] : NULL,
                                       [OM_QMATMUL_T_BIAS] = n->nin > 5 ? n->in[5] : NULL,
                                       [OM_QMATMUL_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_QMATMUL, OM_QMATMUL_NTENSORS, tv, OM_QMATMUL_NPARAMS, p);
}

/* DYNQUANT: DynQuant's x and its three outputs (om_tasks_vector.h); no params. */
static status emit_dynquant(emit_state *s, ir_node *n) {
  ir_value *tv[OM_DYNQUANT_NTENSORS] = {[OM_DYNQUANT_T_X] = n->in[0],
                                        [OM_DYNQUANT_T_Y] = n->out[0],
                                        [OM_DYNQUANT_T_SCALE] = n->out[1],
                                        [OM_DYNQUANT_T_ZP] = n->out[2]};
  return add_task(s, n, OM_TASK_DYNQUANT, OM_DYNQUANT_NTENSORS, tv, OM_DYNQUANT_NPARAMS, NULL);
}

/* QELTWISE: QEltwise's operands and attributes (om_tasks.h). */
static status emit_qeltwise(emit_state *s, ir_node *n) {
  int32_t p[OM_QELTWISE_NPARAMS] = {
      [OM_QELTWISE_P_OP] = !strcmp(ir_attr_string(n, "op", "add"), "mul"),
      [OM_QELTWISE_P_A_ZP] = (int32_t)ir_attr_int(n, "a_zp", 0),
      [OM_QELTWISE_P_B_ZP] = (int32_t)ir_attr_int(n, "b_zp", 0),
      [OM_QELTWISE_P_Y_ZP] = (int32_t)ir_attr_int(n, "y_zp", 0),
      [OM_QELTWISE_P_A_SCALE] = f32_bits(ir_attr_float(n, "a_scale", 0.0)),
      [OM_QELTWISE_P_B_SCALE] = f32_bits(ir_attr_float(n, "b_scale", 0.0)),
      [OM_QELTWISE_P_Y_SCALE] = f32_bits(ir_attr_float(n, "y_scale", 0.0)),
      [OM_QELTWISE_P_LO] = (int32_t)ir_attr_int(n, "lo", 0),
      [OM_QELTWISE_P_HI] = (int32_t)ir_attr_int(n, "hi", 0),
  };
  ir_value *tv[OM_QELTWISE_NTENSORS] = {
      [OM_QELTWISE_T_A] = n->in[0], [OM_QELTWISE_T_B] = n->in[1], [OM_QELTWISE_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_QELTWISE, OM_QELTWISE_NTENSORS, tv, OM_QELTWISE_NPARAMS, p);
}

/* QLUT: QLut's x, table and y (om_tasks.h); no params. */
static status emit_qlut(emit_state *s, ir_node *n) {
  ir_value *tv[OM_QLUT_NTENSORS] = {
      [OM_QLUT_T_X] = n->in[0], [OM_QLUT_T_TABLE] = n->in[1], [OM_QLUT_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_QLUT, OM_QLUT_NTENSORS, tv, OM_QLUT_NPARAMS, NULL);
}

/* LAYERNORM: the LayerNorm node's inputs and outputs in their slots. */
static status emit_layernorm(emit_state *s, ir_node *n) {
  int32_t p[OM_LAYERNORM_NPARAMS] = {[OM_LAYERNORM_P_AXIS] = (int32_t)ir_attr_int(n, "axis", 0),
                                     [OM_LAYERNORM_P_EPSILON] = f32_bits(ir_attr_float(n, "epsilon", 1e-5)),
                                     [OM_LAYERNORM_P_RMS] = (int32_t)ir_attr_int(n, "rms", 0)};
  ir_value *tv[OM_LAYERNORM_NTENSORS] = {[OM_LAYERNORM_T_X] = n->in[0],
                                         [OM_LAYERNORM_T_SCALE] = n->nin > 1 ? n->in[1] : NULL,
                                         [OM_LAYERNORM_T_BIAS] = n->nin > 2 ? n->in[2] : NULL,
                                         [OM_LAYERNORM_T_RESIDUAL] = n->nin > 3 ? n->in[3] : NULL,
                                         [OM_LAYERNORM_T_Y] = n->out[0],
                                         [OM_LAYERNORM_T_SUM] = n->nout > 1 ? n->out[1] : NULL};
  return add_task(s, n, OM_TASK_LAYERNORM, OM_LAYERNORM_NTENSORS, tv, OM_LAYERNORM_NPARAMS, p);
}

/* The descriptor of FusedAttention's operand view v over value x (its
 * logical dims, from the view's first element) into *idx, and its strides
 * and span into p[4] (om_format.h, ATTENTION views). */
static status attention_view(emit_state *s, ir_node *n, ir_value *x, const ir_view *v, const char *vname,
                             uint32_t *idx, int32_t *p) {
  const int64_t elems = ir_value_elements(x);
  if (x->region != IR_REGION_WORKSPACE || x->layout != LAYOUT_ND || v->rank < 2 || v->rank > 4 ||
      v->strides[v->rank - 1] != 1 || elems - v->offset > INT32_MAX)
    return ir_node_error(s->d, ST_ERR_INVALID, n, "operand view of '%s' is no ATTENTION view", x->name);
  for (int d = 0; d < v->rank - 1; d++) {
    if (v->strides[d] < 0 || v->strides[d] > INT32_MAX)
      return ir_node_error(s->d, ST_ERR_INVALID, n, "operand view of '%s' has stride %lld", x->name,
                           (long long)v->strides[d]);
    p[d] = (int32_t)v->strides[d];
  }
  p[3] = (int32_t)(elems - v->offset);
  char name[256];
  snprintf(name, sizeof name, "%.200s_view", x->name);
  om_tensor t = {.name = om_writer_string(s->w, vname ? vname : name),
                 .region = (uint32_t)x->region,
                 .dtype = (uint32_t)x->dtype,
                 .layout = LAYOUT_ND,
                 .rank = (uint32_t)v->rank,
                 .offset = x->offset + (uint64_t)v->offset * dtype_size(x->dtype)};
  uint64_t n_el = 1;
  for (int d = 0; d < v->rank; d++)
    t.dims[d] = v->dims[d], n_el *= (uint64_t)v->dims[d];
  t.bytes = n_el * dtype_size(x->dtype);
  *idx = om_writer_add_tensor(s->w, &t);
  return *idx == OM_NONE || t.name == OM_NONE ? nomem(s) : ST_OK;
}

/* ATTENTION: the FusedAttention node's operands and attributes. */
static status emit_attention(emit_state *s, ir_node *n) {
  int32_t p[OM_ATTENTION_NPARAMS] = {[OM_ATTENTION_P_SCALE] = f32_bits(ir_attr_float(n, "scale", 1.0)),
                                     [OM_ATTENTION_P_K_TRANS] = (int32_t)ir_attr_int(n, "k_trans", 0),
                                     [OM_ATTENTION_P_CAUSAL] = (int32_t)ir_attr_int(n, "causal", 0),
                                     [OM_ATTENTION_P_CAUSAL_OFFSET] =
                                         (int32_t)ir_attr_int(n, "causal_offset", 0),
                                     [OM_ATTENTION_P_ZERO_MASKED] = (int32_t)ir_attr_int(n, "zero_masked", 0),
                                     [OM_ATTENTION_P_TILE_Q] = (int32_t)ir_attr_int(n, "tile_q", 0),
                                     [OM_ATTENTION_P_TILE_KV] = (int32_t)ir_attr_int(n, "tile_kv", 0)};
  ir_value *tv[OM_ATTENTION_NTENSORS] = {[OM_ATTENTION_T_Q] = n->in[0],
                                         [OM_ATTENTION_T_K] = n->in[1],
                                         [OM_ATTENTION_T_V] = n->in[2],
                                         [OM_ATTENTION_T_BIAS0] = n->nin > 3 ? n->in[3] : NULL,
                                         [OM_ATTENTION_T_BIAS1] = n->nin > 4 ? n->in[4] : NULL,
                                         [OM_ATTENTION_T_Y] = n->out[0]};
  static const int slot[OM_ATTENTION_NVIEWS] = {OM_ATTENTION_T_Q, OM_ATTENTION_T_K, OM_ATTENTION_T_V,
                                                OM_ATTENTION_T_Y};
  uint32_t fixed[OM_ATTENTION_NTENSORS] = {OM_NONE, OM_NONE, OM_NONE, OM_NONE, OM_NONE, OM_NONE};
  for (int t = 0; t < OM_ATTENTION_NVIEWS; t++) {
    ir_view v;
    if (ir_attr_ints(n, ir_attn_view_attr[t], NULL, 0) < 0) continue;
    if (ir_attn_operand(n, t, &v)) return ir_node_error(s->d, ST_ERR_INVALID, n, "malformed operand view");
    const char *vname = t == 3 ? ir_attr_string(n, "y_name", NULL) : NULL;
    status st =
        attention_view(s, n, tv[slot[t]], &v, vname, &fixed[slot[t]], &p[OM_ATTENTION_P_VIEW + 4 * t]);
    if (st != ST_OK) return st;
    p[OM_ATTENTION_P_VIEWS] |= 1 << t;
  }
  status st =
      add_task_fixed(s, n, OM_TASK_ATTENTION, OM_ATTENTION_NTENSORS, tv, fixed, OM_ATTENTION_NPARAMS, p);
  if (st == ST_OK && fixed[OM_ATTENTION_T_Y] != OM_NONE) /* y's own tensor, which its view holds */
    s->src[s->nsrc - 1].names[OM_ATTENTION_T_Y] = ir_attr_string(n, "y_name", NULL);
  return st;
}

/* RECURRENCE: the Recurrence node's inputs and outputs in their slots. */
static status emit_recurrence(emit_state *s, ir_node *n) {
  int32_t p[OM_RECURRENCE_NPARAMS] = {[OM_RECURRENCE_P_CELL] = (int32_t)ir_attr_int(n, "cell", 0),
                                      [OM_RECURRENCE_P_REVERSE] = (int32_t)ir_attr_int(n, "reverse", 0),
                                      [OM_RECURRENCE_P_LINEAR_BEFORE_RESET] =
                                          (int32_t)ir_attr_int(n, "linear_before_reset", 0)};
  ir_value *tv[OM_RECURRENCE_NTENSORS] = {[OM_RECURRENCE_T_XW] = n->in[0],
                                          [OM_RECURRENCE_T_RT] = n->in[1],
                                          [OM_RECURRENCE_T_RB] = n->nin > 2 ? n->in[2] : NULL,
                                          [OM_RECURRENCE_T_H0] = n->nin > 3 ? n->in[3] : NULL,
                                          [OM_RECURRENCE_T_C0] = n->nin > 4 ? n->in[4] : NULL,
                                          [OM_RECURRENCE_T_Y] = n->out[0],
                                          [OM_RECURRENCE_T_Y_H] = n->out[1],
                                          [OM_RECURRENCE_T_Y_C] = n->nout > 2 ? n->out[2] : NULL};
  return add_task(s, n, OM_TASK_RECURRENCE, OM_RECURRENCE_NTENSORS, tv, OM_RECURRENCE_NPARAMS, p);
}

/* RESIZE: the tables the layout pass attached (in[1] idx, in[2] w unless
 * the resize only selects), the per-dim taps, the extrapolation value as
 * bytes of y's dtype. */
static status emit_resize(emit_state *s, ir_node *n) {
  ir_value *y = n->out[0];
  int64_t taps[MAX_RANK + 1];
  if (n->nin < 2 || !n->in[1] || ir_attr_ints(n, "taps", taps, MAX_RANK + 1) != y->rank)
    return ir_node_error(s->d, ST_ERR_INVALID, n, "no tap tables (the layout pass attaches them)");
  int select = n->nin < 3 || !n->in[2];
  int32_t p[OM_RESIZE_NPARAMS] = {[OM_RESIZE_P_MODE] = select};
  for (int d = 0; d < y->rank; d++)
    p[OM_RESIZE_P_TAPS + d] = (int32_t)taps[d];
  uint8_t value[8] = {0};
  uint64_t bits = 0;
  elem_put(value, y->dtype, 0, ir_attr_float(n, "extrapolation_value", 0.0));
  for (int k = 0; k < 8; k++)
    bits |= (uint64_t)value[k] << (8 * k);
  p[OM_RESIZE_P_VALUE_LO] = (int32_t)(uint32_t)bits,
  p[OM_RESIZE_P_VALUE_HI] = (int32_t)(uint32_t)(bits >> 32);
  ir_value *tv[OM_RESIZE_NTENSORS] = {[OM_RESIZE_T_X] = n->in[0],
                                      [OM_RESIZE_T_IDX] = n->in[1],
                                      [OM_RESIZE_T_W] = select ? NULL : n->in[2],
                                      [OM_RESIZE_T_Y] = y};
  return add_task(s, n, OM_TASK_RESIZE, OM_RESIZE_NTENSORS, tv, OM_RESIZE_NPARAMS, p);
}

/* One STRIDED_COPY per non-empty output (Split has several); nothing for
 * a view memplan made an alias (alias=1). */
static status emit_view(emit_state *s, ir_node *n) {
  if (ir_attr_int(n, "alias", 0)) return ST_OK;
  for (int k = 0; k < n->nout; k++) {
    if (ir_value_elements(n->out[k]) == 0) continue;
    status st = emit_view_out(s, n, k);
    if (st != ST_OK) return st;
  }
  return ST_OK;
}

static status emit_copy(emit_state *s, ir_node *n) {
  const ir_value *x = n->in[0], *y = n->out[0];
  int fl = (x->dtype == DT_FLOAT32 || x->dtype == DT_FLOAT16) &&
           (y->dtype == DT_FLOAT32 || y->dtype == DT_FLOAT16);
  int cvt = n->op == IR_OP_CONVERT, storage = dtype_is_storage(x->dtype); /* storage copies: TRANSDATA */
  if (fl || cvt || storage || x->layout != LAYOUT_ND ||
      y->layout != LAYOUT_ND) { /* TRANSDATA moves u8/i8 between layouts */
    ir_value *tv[OM_TRANSDATA_NTENSORS] = {[OM_TRANSDATA_T_SRC] = n->in[0], [OM_TRANSDATA_T_DST] = n->out[0]};
    int32_t p[OM_TRANSDATA_NPARAMS] = {
        [OM_TRANSDATA_P_CHANNELS_LAST] = (int32_t)ir_attr_int(n, "channels_last", 0),
        [OM_TRANSDATA_P_SATURATE] = cvt ? (int32_t)ir_attr_int(n, "saturate", 1) : 0,
        [OM_TRANSDATA_P_ROUND_MODE] = cvt ? (int32_t)ir_attr_int(n, "round_mode", CVT_ROUND_UP) : 0};
    return add_task(s, n, OM_TASK_TRANSDATA, OM_TRANSDATA_NTENSORS, tv, OM_TRANSDATA_NPARAMS, p);
  }
  /* other dtypes, and bit casts: a flat STRIDED_COPY of the bytes (TRANSDATA
   * converts floats only) */
  int64_t count = ir_value_elements(n->out[0]);
  if (count > INT32_MAX)
    return ir_node_error(s->d, ST_ERR_LIMIT, n, "tensor '%s' is too large for a strided copy",
                         n->in[0]->name);
  int32_t p[OM_STRIDED_COPY_NPARAMS] = {[OM_STRIDED_COPY_P_RANK] = 1,
                                        [OM_STRIDED_COPY_P_DIMS] = (int32_t)count,
                                        [OM_STRIDED_COPY_P_STRIDES] = 1};
  ir_value *tv[OM_STRIDED_COPY_NTENSORS] = {
      [OM_STRIDED_COPY_T_X] = n->in[0], [OM_STRIDED_COPY_T_Y] = n->out[0]};
  return add_task(s, n, OM_TASK_STRIDED_COPY, OM_STRIDED_COPY_NTENSORS, tv, OM_STRIDED_COPY_NPARAMS, p);
}

/* 1 when every output of n has no elements: there is nothing to compute. */
static int outputs_empty(const ir_node *n) {
  for (int i = 0; i < n->nout; i++)
    if (n->out[i] && ir_value_elements(n->out[i]) != 0) return 0;
  return 1;
}

/* TRANSDATA: nothing for a Reshape-family node memplan made an alias
 * (alias=1), WPACK for conv weights computed at run time, else a copy. */
static status emit_transdata(emit_state *s, ir_node *n) {
  if (ir_attr_int(n, "alias", 0)) return ST_OK;
  if (convw_is_pack(n)) {
    ir_value *tv[OM_WPACK_NTENSORS] = {[OM_WPACK_T_W] = n->in[0], [OM_WPACK_T_DST] = n->out[0]};
    return add_task(s, n, OM_TASK_WPACK, OM_WPACK_NTENSORS, tv, OM_WPACK_NPARAMS, NULL);
  }
  return emit_copy(s, n);
}

/* One rule per task kind: ops.def's task column picks it. */
typedef status (*emit_rule)(emit_state *s, ir_node *n);
static const emit_rule emit_rules[OM_TASK_KIND_COUNT] = {
    [OM_TASK_TRANSDATA] = emit_transdata, [OM_TASK_CONV2D] = emit_conv,
    [OM_TASK_POOL] = emit_pool,           [OM_TASK_COPY_SLICE] = emit_concat,
    [OM_TASK_SOFTMAX] = emit_softmax,     [OM_TASK_VPROG] = emit_vprog,
    [OM_TASK_REDUCE] = emit_reduce,       [OM_TASK_STRIDED_COPY] = emit_view,
    [OM_TASK_GATHER] = emit_gather,       [OM_TASK_PAD] = emit_pad,
    [OM_TASK_MATMUL] = emit_matmul,       [OM_TASK_RESIZE] = emit_resize,
    [OM_TASK_POOL_ND] = emit_pool_nd,     [OM_TASK_TOPK] = emit_topk,
    [OM_TASK_SCATTER] = emit_scatter,     [OM_TASK_CUMSUM] = emit_cumsum,
    [OM_TASK_ONEHOT] = emit_onehot,       [OM_TASK_AIPP] = emit_aipp,
    [OM_TASK_LAYERNORM] = emit_layernorm, [OM_TASK_ATTENTION] = emit_attention,
    [OM_TASK_QCONV2D] = emit_qconv,       [OM_TASK_RECURRENCE] = emit_recurrence,
    [OM_TASK_NONZERO] = emit_nonzero,     [OM_TASK_NMS] = emit_nms,
    [OM_TASK_UNIQUE] = emit_unique,       [OM_TASK_TFIDF] = emit_tfidf,
    [OM_TASK_QELTWISE] = emit_qeltwise,   [OM_TASK_QLUT] = emit_qlut,
    [OM_TASK_QMATMUL] = emit_qmatmul,     [OM_TASK_DYNQUANT] = emit_dynquant,
};

int pass_emit_has_rule(om_task_kind kind) {
  return kind > 0 && kind < OM_TASK_KIND_COUNT && emit_rules[kind];
}

static status emit_node(emit_state *s, ir_node *n) {
  if (outputs_empty(n)) return ST_OK;
  om_task_kind kind = ir_ops[n->op].task;
  if (!pass_emit_has_rule(kind))
    return ir_node_error(s->d, ST_ERR_UNSUPPORTED, n, "no task kind for this op");
  return emit_rules[kind](s, n);
}

/* The COUNTS partition when an output is counted (ir.h's count_axis):
 * its axis and its count's tensor, which memplan keeps to the end. */
static status emit_counts(emit_state *s, arena *a) {
  om_count *c = arena_array(a, (size_t)s->g->noutputs + 1, sizeof *c);
  int any = 0;
  status st = ST_OK;
  if (!c) return nomem(s);
  for (int i = 0; i < s->g->noutputs; i++) {
    ir_value *v = s->g->outputs[i];
    c[i].axis = c[i].count = OM_NONE;
    if (v->count_axis < 0 || !v->count) continue;
    if (s->ctx->gear_append)
      return diag_set(s->d, ST_ERR_UNSUPPORTED,
                      "graph output %d '%s' has a run-time extent along axis %d; models with gears "
                      "cannot have such outputs",
                      i, v->name, v->count_axis);
    c[i].axis = (uint32_t)v->count_axis, c[i].count = tensor_of(s, v->count, &st);
    any = 1;
  }
  if (st != ST_OK) return st;
  return any && om_writer_set_counts(s->w, c, (uint32_t)s->g->noutputs) ? nomem(s) : ST_OK;
}

/* The source node that writes the tensor `name` and which of its outputs
 * it is (*edge); NULL when none does, or it has no name (a node without one
 * whose first output is omitted). */
static const char *source_of(const ir_graph *g, const char *name, uint32_t *edge) {
  for (int k = 0; k < g->nsrc; k++)
    for (int e = 0; e < g->src[k].nout; e++)
      if (strcmp(g->src[k].out[e], name) == 0) {
        *edge = (uint32_t)e;
        return *g->src[k].name ? g->src[k].name : NULL;
      }
  return NULL;
}

/* The ONODES partition: for each output, the source node that writes the
 * tensor of its name (import keeps graph outputs' names) and which of that
 * node's outputs it is; node 0 (edge 0) when there is none. */
static status emit_onodes(emit_state *s, arena *a) {
  const ir_graph *g = s->g;
  om_onode *o = arena_array(a, (size_t)g->noutputs + 1, sizeof *o);
  if (!o) return nomem(s);
  for (int i = 0; i < g->noutputs; i++) {
    uint32_t edge = 0;
    const char *node = source_of(g, g->outputs[i]->name, &edge);
    o[i] = (om_onode){.flags = g->outputs_picked ? OM_ONODE_PICKED : 0};
    if (node) {
      o[i].node = om_writer_string(s->w, node), o[i].edge = edge;
      if (o[i].node == OM_NONE) return nomem(s);
    }
  }
  return om_writer_set_onodes(s->w, o, (uint32_t)g->noutputs) ? nomem(s) : ST_OK;
}

static status emit_all(emit_state *s, arena *a) {
  pass_ctx *ctx = s->ctx;
  status st = ST_OK;
  for (int i = 0; i < s->g->nnodes && st == ST_OK; i++)
    if (!s->g->nodes[i]->dead) st = emit_node(s, s->g->nodes[i]);
  if (st != ST_OK || (st = emit_sources(s->g, s->src, s->nsrc, s->w, a, s->d)) != ST_OK) return st;

  uint32_t *io = arena_array(a, (size_t)(s->g->ninputs + s->g->noutputs) + 1, sizeof *io);
  if (!io) return nomem(s);
  for (int i = 0; i < s->g->ninputs; i++)
    io[i] = tensor_of(s, s->g->inputs[i], &st);
  for (int i = 0; i < s->g->noutputs; i++) {
    /* A graph output that folded to a constant (Shape -> Gather) or that is a
     * graph input has no OUTPUT buffer of its own; libomrt would refuse it. */
    const ir_value *v = s->g->outputs[i];
    if (v->region != IR_REGION_OUTPUT)
      return diag_set(s->d, ST_ERR_UNSUPPORTED,
                      "graph output %d '%s' is %s, not computed by any task; outputs that "
                      "are constants or graph inputs are not supported",
                      i, v->name,
                      v->region == IR_REGION_WEIGHTS ? "a constant (folded at compile time)"
                      : v->region == IR_REGION_INPUT ? "a graph input"
                                                     : "not in the OUTPUT region");
    io[s->g->ninputs + i] = tensor_of(s, s->g->outputs[i], &st);
  }
  if (st != ST_OK) return st;
  if (om_writer_set_io(s->w, io, s->g->ninputs, io + s->g->ninputs, s->g->noutputs)) return nomem(s);
  if ((st = emit_counts(s, a)) != ST_OK || (st = emit_onodes(s, a)) != ST_OK) return st;

  const soc_info *soc = ctx->soc;
  om_model_def def = {0};
  def.name = om_writer_string(s->w, ctx->model_name ? ctx->model_name : s->g->name);
  def.soc = om_writer_string(s->w, soc->name);
  def.atc_version = om_writer_string(s->w, "atc " ATC_VERSION);
  def.cmdline = om_writer_string(s->w, ctx->cmdline ? ctx->cmdline : "");
  def.singleop = om_writer_string(s->w, ctx->singleop ? ctx->singleop : "");
  if (def.name == OM_NONE || def.soc == OM_NONE || def.atc_version == OM_NONE || def.cmdline == OM_NONE ||
      def.singleop == OM_NONE)
    return nomem(s);
  def.precision = (uint32_t)ctx->precision;
  def.ai_cores = (uint32_t)soc->ai_cores;
  if (ctx->workspace_bytes > OM_MAX_WORKSPACE_BYTES)
    return diag_set(s->d, ST_ERR_LIMIT,
                    "the memory plan needs a workspace of %llu bytes, more than the om "
                    "limit of 2^40 (check the input shapes)",
                    (unsigned long long)ctx->workspace_bytes);
  def.workspace_bytes = ctx->workspace_bytes;
  def.l1_bytes = soc->l1_bytes, def.l0a_bytes = soc->l0a_bytes, def.l0b_bytes = soc->l0b_bytes;
  def.l0c_bytes = soc->l0c_bytes, def.ub_bytes = soc->ub_bytes;
  om_writer_set_model(s->w, &def);
  ctx->weights_bytes = s->weights_end;
  return ST_OK;
}

status pass_emit(ir_graph *g, pass_ctx *ctx, diag *d) {
  if (!ctx->soc) return diag_set(d, ST_ERR_INVALID, "emit: no SoC description");
  arena a;
  arena_init(&a, 0);
  emit_state s = {.g = g, .ctx = ctx, .a = &a, .d = d};
  s.tensor = arena_array(&a, (size_t)g->nvalues + 1, sizeof *s.tensor);
  s.w = ctx->gear_append ? ctx->writer : om_writer_new();
  status st = ST_OK;
  if (!s.tensor || !s.w) {
    st = nomem(&s);
  } else {
    for (int i = 0; i < g->nvalues; i++)
      s.tensor[i] = OM_NONE;
    ctx->ntasks = 0;
    st = emit_all(&s, &a);
  }
  arena_free(&a);
  if (ctx->gear_append) return st; /* the driver's writer */
  if (st != ST_OK) {
    om_writer_free(s.w);
    return st;
  }
  om_writer_free(ctx->writer);
  ctx->writer = s.w;
  return ST_OK;
}
