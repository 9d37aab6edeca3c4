/* precision.c - --precision_mode: which values are stored as fp16.
 *
 * Needs: the IR contract of pass.h (shapes and dtypes known, Conv fused).
 * Changes: the dtype of values, and the data of constants it retypes.
 * Leaves true: every value keeps its shape and layout; no node is added or
 * removed. A producer and a consumer may now disagree on a dtype (a graph
 * input f32 feeding a Conv that computes in f16): no Cast is inserted here,
 * the layout pass puts a TransData there that converts layout and dtype in
 * one copy.
 *
 * Modes:
 *   force_fp16 (default), allow_fp32_to_fp16: every f32 value produced by an
 *     op whose fp16 policy is ALWAYS or FOLLOW becomes f16, and so does every
 *     f32 constant read only by such ops (its data is converted with
 *     float_to_half, so Conv weights become fp16 fractals). Exceptions: graph
 *     inputs and outputs keep the user's dtype; Conv and MatMul bias
 *     constants stay f32 (the cube adds them in its f32 accumulator); values of ops with policy
 *     NEVER (shape arithmetic, Cast) keep theirs. The two modes are the same
 *     here because every op this compiler lowers has an fp16 kernel.
 *   allow_mix_precision: as force_fp16, but Softmax computes and stores in
 *     f32 (its exp/sum is where fp16 loses accuracy first); its f16 input is
 *     widened by the layout pass's TransData.
 *   must_keep_origin_dtype: nothing changes (but the graph I/O below).
 * Graph inputs and outputs take the dtype the driver asks in
 * pass_ctx.io_dtype (atc --input_fp16_nodes, --output_type FP16/FP32), in
 * every mode; the layout pass converts where they meet what nodes compute.
 *
 * The decision per node is precision_node_dtype (precision.h), which the
 * layout pass uses to know what each consumer computes in.
 *
 * Quantized islands keep f32 in every mode: an op between the
 * DequantizeLinear and QuantizeLinear programs of a QDQ model (pooling),
 * and the programs that dequantize only for such ops, carry the attribute
 * quant_f32 (mark_quant_islands below), as ONNX Runtime computes its
 * quantized ops in f32.
 *
 * Vector programs (VectorProgram nodes from passes/vectorize.c) follow the
 * same rule as one FOLLOW op, with one exception: a program none of whose
 * outputs is a float (compares, casts to integers, IsNaN) does not lower --
 * its results are exact, and computing them in f16 could only change them.
 * A program that lowers computes in f16: every f32 register (loads,
 * immediates, casts to f32, arithmetic) becomes f16, which vprog.h defines
 * as f32 arithmetic rounded to f16 after every instruction, as the chip
 * does. Then each program is reconciled with its tensors, whose dtypes this
 * pass may just have changed: a LOAD reads the tensor's dtype and a CAST
 * follows when the program wants another; a STORE is preceded by a CAST to
 * the output's dtype when they differ (an f32 graph output of an f16
 * program). Casts therefore appear only where a program meets a differently
 * typed tensor.
 */
#include "precision.h"

#include "common/fp16.h"
#include "ir/ir_vprog.h"
#include "pass.h"

int precision_is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16; }

/* 1 when node n computes in fp16 under precision p. */
static int node_lowers(const ir_node *n, om_precision p) {
  if (p == OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE) return 0;
  if (ir_ops[n->op].fp16 == IR_FP16_NEVER || ir_attr_int(n, "quant_f32", 0)) return 0;
  if (n->op == IR_OP_VECPROG) {
    int float_out = 0;
    for (int j = 0; j < n->nout; j++)
      float_out |= precision_is_float(n->out[j]->dtype);
    return float_out;
  }
  if (p == OM_PRECISION_ALLOW_MIX_PRECISION && n->op == IR_OP_SOFTMAX) return 0;
  return 1;
}

int precision_node_dtype(const ir_node *n, om_precision p) {
  int orig = n->nout > 0 && n->out[0] ? (int)n->out[0]->dtype : DT_UNDEFINED;
  if (!precision_is_float(orig)) return orig;
  if (node_lowers(n, p)) return DT_FLOAT16;
  if (p == OM_PRECISION_ALLOW_MIX_PRECISION && n->op == IR_OP_SOFTMAX) return DT_FLOAT32;
  return orig;
}

static int is_io(const ir_value *v) { return v->input_index >= 0 || v->output_index >= 0; }

/* 1 when every reader of constant c computes in fp16 and none reads it as a
 * Conv or MatMul bias (in[2]). Constants nobody reads are left alone. */
static int const_lowers(const ir_graph *g, const ir_value *c, om_precision p) {
  int readers = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->nin; j++) {
      if (n->in[j] != c) continue;
      if (!node_lowers(n, p)) return 0;
      if ((n->op == IR_OP_CONV || n->op == IR_OP_MATMUL) && j == 2) return 0; /* a bias */
      readers++;
    }
  }
  return readers > 0;
}

static status const_to_f16(ir_graph *g, ir_value *c, diag *d) {
  int64_t count = ir_value_elements(c);
  if (count < 0) return diag_set(d, ST_ERR_INVALID, "constant '%s': element count unknown", c->name);
  uint16_t *h = arena_array(&g->arena, (size_t)count ? (size_t)count : 1, sizeof *h);
  if (!h) return diag_set(d, ST_ERR_NOMEM, "constant '%s': out of memory", c->name);
  floats_to_halves(h, c->data, (size_t)count);
  ir_value_replace_data(g, c, h);
  c->dtype = DT_FLOAT16;
  return ST_OK;
}

/* Rewrites VectorProgram n: f32 registers become f16 when `lower`, and LOADs
 * and STOREs meet their tensors' (possibly changed) dtypes through CASTs. */
static status retype_program(ir_graph *g, ir_node *n, int lower, diag *d) {
  arena tmp;
  arena_init(&tmp, 0);
  ir_vprog old, p;
  status st = ir_vprog_read(n, &tmp, &old, d);
  int *map = st ? NULL : arena_array(&tmp, (size_t)old.nregs + 1, sizeof *map);
  if (st == ST_OK && !map) st = ir_node_error(d, ST_ERR_NOMEM, n, "out of memory retyping the program");
  ir_vprog_init(&p, &tmp);
  for (int k = 0; st == ST_OK && k < old.count; k++) {
    om_vinstr in = old.ins[k];
    int want = lower && in.dtype == DT_FLOAT32 ? DT_FLOAT16 : in.dtype, r;
    if (in.op == VOP_LOAD) {
      r = ir_vprog_cast(&p, ir_vprog_load(&p, in.a, n->in[in.a]->dtype), want);
    } else if (in.op == VOP_STORE) {
      r = ir_vprog_store(&p, in.a, ir_vprog_cast(&p, map[in.b], n->out[in.a]->dtype));
    } else if (in.op == VOP_CAST) {
      r = ir_vprog_cast(&p, map[in.a], want);
    } else {
      int ops = in.op >= VOP_SELECT ? 3 : in.op >= VOP_ADD ? 2 : in.op >= VOP_CAST ? 1 : 0;
      if (ops > 0) in.a = (uint16_t)map[in.a];
      if (ops > 1) in.b = (uint16_t)map[in.b];
      if (ops > 2) in.c = (uint16_t)map[in.c];
      in.dtype = (uint8_t)want;
      r = ir_vprog_append(&p, in);
    }
    if (r < 0)
      st = ir_node_error(d, ST_ERR_NOMEM, n, "out of memory retyping the program");
    else if (in.op != VOP_STORE)
      map[in.dst] = r;
  }
  if (st == ST_OK && ir_vprog_encode(g, n, &p)) st = ir_node_error(d, ST_ERR_NOMEM, n, "out of memory");
  if (st == ST_OK) st = ir_vprog_check(n, p.ins, p.count, d);
  arena_free(&tmp);
  return st;
}

/* Every vector program retyped (lowered to f16 where it lowers, when
 * `lower`) and reconciled with its tensors' dtypes. */
static status reconcile_programs(ir_graph *g, int lower, om_precision p, diag *d) {
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead || n->op != IR_OP_VECPROG) continue;
    status st = retype_program(g, n, lower && node_lowers(n, p), d);
    if (st != ST_OK) return st;
  }
  return ST_OK;
}

/* --- quantized islands */

static int reads_float(const ir_node *n) {
  for (int j = 0; j < n->nin; j++)
    if (n->in[j] && precision_is_float(n->in[j]->dtype)) return 1;
  return 0;
}

static int writes_float(const ir_node *n) {
  for (int j = 0; j < n->nout; j++)
    if (n->out[j] && precision_is_float(n->out[j]->dtype)) return 1;
  return 0;
}

static int reads_only_int8(const ir_node *n) {
  for (int j = 0; j < n->nin; j++)
    if (n->in[j] && !n->in[j]->data && n->in[j]->dtype != DT_UINT8 && n->in[j]->dtype != DT_INT8) return 0;
  return 1;
}

static int writes_only_int8(const ir_node *n) {
  for (int j = 0; j < n->nout; j++)
    if (n->out[j] && n->out[j]->dtype != DT_UINT8 && n->out[j]->dtype != DT_INT8) return 0;
  return 1;
}

/* A vector program that dequantizes (reads only u8/i8 tensors) or
 * quantizes (writes only u8/i8 tensors). */
static int dequantizes(const ir_node *n) { return n && n->op == IR_OP_VECPROG && reads_only_int8(n); }
static int quantizes(const ir_node *n) { return n && n->op == IR_OP_VECPROG && writes_only_int8(n); }

/* 1 when v has readers and every one satisfies pred (a graph output: 0). */
static int readers_all(const ir_graph *g, const ir_value *v, int (*pred)(const ir_node *)) {
  if (v->output_index >= 0) return 0;
  int any = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *m = g->nodes[i];
    for (int j = 0; j < m->nin && !m->dead; j++)
      if (m->in[j] == v) {
        if (!pred(m)) return 0;
        any = 1;
      }
  }
  return any;
}

static int is_island_op(const ir_node *n) { return ir_attr_int(n, "quant_f32", 0) != 0; }

/* Marks (attribute quant_f32) the float ops of quantized islands, which keep
 * f32 in every mode: an op (pooling, between the DequantizeLinear and
 * QuantizeLinear programs of a QDQ model) whose every float input a
 * dequantizing program writes and whose every float output only
 * quantizing programs read, and the dequantizing programs that feed only
 * such ops. Quantized ops compute in f32 in ONNX Runtime's kernels too; an
 * fp16 average before a QuantizeLinear would move values across rounding
 * boundaries. */
static status mark_quant_islands(ir_graph *g, diag *d) {
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead || n->op == IR_OP_VECPROG || ir_ops[n->op].fp16 == IR_FP16_NEVER || !reads_float(n)) continue;
    int ok = 1;
    for (int j = 0; j < n->nin && ok; j++) {
      const ir_value *v = n->in[j];
      if (v && !v->data && precision_is_float(v->dtype)) ok = dequantizes(v->producer);
    }
    for (int j = 0; j < n->nout && ok; j++)
      if (precision_is_float(n->out[j]->dtype)) ok = readers_all(g, n->out[j], quantizes);
    if (ok && ir_attr_set_int(g, n, "quant_f32", 1))
      return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory");
  }
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead || !dequantizes(n) || !writes_float(n)) continue;
    int ok = 1;
    for (int j = 0; j < n->nout && ok; j++)
      if (precision_is_float(n->out[j]->dtype)) ok = readers_all(g, n->out[j], is_island_op);
    if (ok && ir_attr_set_int(g, n, "quant_f32", 1))
      return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory");
  }
  return ST_OK;
}

status pass_precision(ir_graph *g, pass_ctx *ctx, diag *d) {
  om_precision p = ctx->precision;
  if (p != OM_PRECISION_FORCE_FP16 && p != OM_PRECISION_ALLOW_FP32_TO_FP16 &&
      p != OM_PRECISION_ALLOW_MIX_PRECISION && p != OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE)
    return diag_set(d, ST_ERR_INVALID, "unknown precision mode %d", (int)p);
  /* Graph I/O in the dtype the driver asks (atc --input_fp16_nodes, --output_type). */
  int io_changed = 0;
  for (int i = 0; ctx->io_dtype && i < g->ninputs + g->noutputs; i++) {
    ir_value *v = i < g->ninputs ? g->inputs[i] : g->outputs[i - g->ninputs];
    int want = ctx->io_dtype[i];
    if (want == DT_UNDEFINED || want == (int)v->dtype) continue;
    if (!precision_is_float(v->dtype) || !precision_is_float(want))
      return diag_set(d, ST_ERR_UNSUPPORTED, "graph %s '%s' is %s; it cannot be made %s",
                      i < g->ninputs ? "input" : "output", v->name, dtype_name(v->dtype), dtype_name(want));
    v->dtype = want;
    io_changed = 1;
  }
  if (p == OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE) return io_changed ? reconcile_programs(g, 0, p, d) : ST_OK;
  status qst = mark_quant_islands(g, d);
  if (qst != ST_OK) return qst;

  for (int i = 0; i < g->nvalues; i++) {
    ir_value *v = g->values[i];
    if (v->dtype != DT_FLOAT32 || is_io(v)) continue;
    if (v->producer) {
      if (!v->producer->dead && node_lowers(v->producer, p)) v->dtype = DT_FLOAT16;
    } else if (v->data && const_lowers(g, v, p)) {
      status st = const_to_f16(g, v, d);
      if (st != ST_OK) return st;
    }
  }
  return reconcile_programs(g, 1, p, d);
}
