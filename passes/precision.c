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
 *     float_to_half, so Conv weights become fp16 fractals; see "Tiny
 *     constants" below for the one exception to rounding). Exceptions: graph
 *     inputs and outputs keep the user's dtype; Conv and MatMul bias
 *     constants stay f32 (the cube adds them in its f32 accumulator); values of ops with policy
 *     NEVER (shape arithmetic, Cast) keep theirs. The two modes are the same
 *     here because every op this compiler lowers has an fp16 kernel.
 *   allow_mix_precision: as force_fp16, but each node is classed by the op
 *     types it stands for (see "Per-node classes" below) on a black list
 *     (kept in fp32), a white list (fp16) or the gray list (follows its
 *     inputs' producers), atc --modify_mixlist editing the lists.
 *   must_keep_origin_dtype: nothing changes (but the graph I/O below).
 *
 * Per-node classes. A node the pass keeps out of fp16 carries the string
 * attribute "precision" = "fp32": it computes and stores in its original
 * dtype; its f16 inputs are widened by the layout pass's TransData, or by a
 * program's LOAD; its constants stay f32. The nodes an IR node stands for are the source (ONNX) nodes
 * it realizes, found by tensor name as emit_sources.c does: the node that
 * writes one of a source node's outputs, or for a source node fused away,
 * the node standing for its first reader. Then:
 *   --customize_dtypes (every fp16 mode; it wins over the rest, and a line
 *     naming a node over one naming an op type, as in ATC): a node standing
 *     for a listed ONNX node or op type computes in the line's precision,
 *     fp32 (kept) or fp16 (under allow_mix_precision, whatever the lists
 *     say). A name no source node has, or a line whose dtype counts are not
 *     the named node's inputs and outputs, is an error naming the file and
 *     line.
 *   --keep_dtype (every fp16 mode): a node standing for a listed ONNX node,
 *     or for a node of a listed op type ("OpType::Name"), is kept in fp32.
 *     A name no source node has is an error naming the file and line.
 *   allow_mix_precision: a node is black when one of the op types it
 *     stands for (or its own IR op type) is black, else white when one is
 *     white, else gray. Black nodes are kept in fp32, except LayerNorm
 *     and FusedAttention, whose kernels compute in f32 already (only their
 *     stored I/O is fp16). A gray node is kept in fp32 when every float
 *     input computed by a node comes from a node kept in fp32 (a chain
 *     after a black op stays fp32 until a white op), else fp16. One rule
 *     adds to the lists: a Resize writing a graph output (the upsampling
 *     of logits) is kept in fp32. What the lists cannot see -- error that
 *     grows through depth, so that early fp16 rounding costs most -- the
 *     driver measures (driver/calibrate.c) and passes in as keep entries.
 * Each node kept out of fp16 is reported through ctx->note with the
 * reason (atc --log=info).
 * Graph inputs and outputs take the dtype the driver asks in
 * pass_ctx.io_dtype (atc --input_fp16_nodes, --output_type FP16/FP32), in
 * every mode; the layout pass converts where they meet what nodes compute.
 *
 * The decision per node is precision_node_dtype (precision.h), which the
 * layout pass uses to know what each consumer computes in.
 *
 * Tiny constants. A nonzero f32 constant that fp16 would round to zero
 * (|c| <= 2^-25: a program's immediate, an element of a constant the vector
 * unit reads; not a Conv's or MatMul's weights, which keep the nearest) becomes
 * the smallest fp16 subnormal of its sign, 2^-24, instead: such constants are
 * epsilons guarding a division or a root (F.normalize's x / Clip(ReduceL2(x),
 * 1e-12), x + 1e-12 before a Sqrt), and rounded to zero they stop guarding
 * (a zero row of swin_v2_t's windowed attention became 0 / 0 = NaN). The
 * value moves by at most 2^-24, one fp16 subnormal step.
 *
 * Large constants. A finite f32 constant (a weight, an immediate) that
 * fp16 would round to an infinity (|c| >= 65520) is stored as the largest
 * finite fp16 of its sign, +-65504, as ATC's --is_weight_clip=1 (its
 * default) clips weights: exporters write "minus infinity" as the float's
 * lowest value (torch.finfo(torch.float32).min for attention masks), and
 * as fp16's -inf, (1 - mask) * min makes 0 * -inf = NaN where the mask
 * keeps a position. --is_weight_clip=0 (pass_ctx.no_weight_clip) stores
 * +-inf. Infinities and NaN stay what they are.
 *
 * Quantized islands keep f32 in every mode: the vector and pooling ops
 * between the DequantizeLinear and QuantizeLinear programs of a QDQ model
 * (the programs themselves included) are marked precision = "fp32"
 * (mark_quant_islands below), as ONNX Runtime computes them in f32.
 *
 * Vector programs (VectorProgram nodes from passes/vectorize.c) follow the
 * same rule as one FOLLOW op, with two exceptions: a program none of whose
 * outputs is a float (compares, casts to integers, IsNaN) does not lower --
 * its results are exact, and computing them in f16 could only change them;
 * and a program that rounds a float to int8 and back (a QuantizeLinear ->
 * DequantizeLinear pair) or converts an int32 to a float (a MatMulInteger's
 * sums before their scale) computes in f32 between fp16 tensors (keeps_f32).
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

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "common/fp16.h"
#include "common/strmap.h"
#include "ir/ir_vprog.h"
#include "pass.h"

int precision_is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16; }

/* allow_mix_precision's default lists. Black: where fp16 loses accuracy
 * first -- exponentials and logarithms, powers, reductions over many
 * elements, normalizations, Softmax. White: the cube's ops and pooling,
 * which accumulate in f32 and whose fp16 operands are the point of fp16.
 * Everything else is gray. */
static const struct {
  const char *op_type;
  prec_list list;
} default_lists[] = {
    {"Softmax", PREC_LIST_BLACK},
    {"LogSoftmax", PREC_LIST_BLACK},
    {"Exp", PREC_LIST_BLACK},
    {"Log", PREC_LIST_BLACK},
    {"Pow", PREC_LIST_BLACK},
    {"ReduceSum", PREC_LIST_BLACK},
    {"ReduceMean", PREC_LIST_BLACK},
    {"ReduceProd", PREC_LIST_BLACK},
    {"ReduceL1", PREC_LIST_BLACK},
    {"ReduceL2", PREC_LIST_BLACK},
    {"ReduceLogSum", PREC_LIST_BLACK},
    {"ReduceLogSumExp", PREC_LIST_BLACK},
    {"ReduceSumSquare", PREC_LIST_BLACK},
    {"CumSum", PREC_LIST_BLACK},
    {"CumProd", PREC_LIST_BLACK},
    {"LayerNormalization", PREC_LIST_BLACK},
    {"RMSNormalization", PREC_LIST_BLACK},
    {"InstanceNormalization", PREC_LIST_BLACK},
    {"GroupNormalization", PREC_LIST_BLACK},
    {"LpNormalization", PREC_LIST_BLACK},
    {"MeanVarianceNormalization", PREC_LIST_BLACK},
    {"LayerNorm", PREC_LIST_BLACK},
    {"Conv", PREC_LIST_WHITE},
    {"ConvTranspose", PREC_LIST_WHITE},
    {"MatMul", PREC_LIST_WHITE},
    {"Gemm", PREC_LIST_WHITE},
    {"Attention", PREC_LIST_WHITE},
    {"FusedAttention", PREC_LIST_WHITE},
    {"MaxPool", PREC_LIST_WHITE},
    {"AveragePool", PREC_LIST_WHITE},
    {"GlobalAveragePool", PREC_LIST_WHITE},
    {"GlobalMaxPool", PREC_LIST_WHITE},
};
enum { NDEFAULT = sizeof default_lists / sizeof *default_lists };

prec_list precision_default_list(const char *op_type) {
  for (int i = 0; i < NDEFAULT; i++)
    if (!strcmp(default_lists[i].op_type, op_type)) return default_lists[i].list;
  return PREC_LIST_GRAY;
}

const char *precision_default_entry(int i, prec_list *list_out) {
  if (i < 0 || i >= NDEFAULT) return NULL;
  if (list_out) *list_out = default_lists[i].list;
  return default_lists[i].op_type;
}

enum { CLASS_FP16, CLASS_FP32 };

static int node_class(const ir_node *n) {
  return !strcmp(ir_attr_string(n, "precision", ""), "fp32") ? CLASS_FP32 : CLASS_FP16;
}

/* 1 when node n computes in fp16 under precision p. */
static int node_lowers(const ir_node *n, om_precision p) {
  if (p == OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE) return 0;
  if (ir_ops[n->op].fp16 == IR_FP16_NEVER) return 0;
  if (node_class(n) == CLASS_FP32) return 0;
  if (n->op == IR_OP_VECPROG) {
    int float_out = 0;
    for (int j = 0; j < n->nout; j++)
      float_out |= precision_is_float(n->out[j]->dtype);
    return float_out;
  }
  return 1;
}

int precision_f32_out(const ir_node *n) { return !strcmp(ir_attr_string(n, "precision", ""), "f32_out"); }

static int orig_dtype(const ir_node *n) {
  return n->nout > 0 && n->out[0] ? (int)n->out[0]->dtype : DT_UNDEFINED;
}

int precision_node_dtype(const ir_node *n, om_precision p) {
  int orig = orig_dtype(n);
  if (!precision_is_float(orig)) return orig;
  if (node_lowers(n, p)) return DT_FLOAT16;
  return orig; /* kept: the dtype the frontend gave it */
}

/* --- which source nodes each node stands for ----------------------------- */

typedef struct prec_state {
  ir_graph *g;
  pass_ctx *ctx;
  diag *d;
  arena a;
  int *owner;  /* per source node: the index in g->nodes of the node standing for it, or -1 */
  int *cls;    /* per node index: CLASS_* decided */
  int *by_pos; /* per node id: its index in g->nodes */
  int kept, notes;
} prec_state;

/* Fills s->owner (see the top of the file). A source node whose inputs are
 * all constants or outputs of such nodes, or a Shape or Size, folded at
 * compile time: it stands with no node. */
static status find_owners(prec_state *s) {
  ir_graph *g = s->g;
  int nsrc = g->nsrc, nnames = 0, nouts = 0;
  for (int i = 0; i < nsrc; i++)
    nnames += g->src[i].nin + g->src[i].nout;
  for (int i = 0; i < g->nnodes; i++)
    nouts += g->nodes[i]->nout;
  strmap node_of, prod, reader;
  s->owner = arena_array(&s->a, (size_t)nsrc + 1, sizeof *s->owner);
  int *folded = arena_array(&s->a, (size_t)nsrc + 1, sizeof *folded);
  if (!s->owner || !folded || strmap_init(&node_of, (size_t)nouts, &s->a) ||
      strmap_init(&prod, (size_t)nnames, &s->a) || strmap_init(&reader, (size_t)nnames, &s->a))
    return diag_set(s->d, ST_ERR_NOMEM, "out of memory");
  /* tensor name -> the live node writing it */
  for (int i = 0; i < g->nnodes; i++)
    for (int k = 0; k < g->nodes[i]->nout; k++)
      if (!g->nodes[i]->dead && g->nodes[i]->out[k]) strmap_put(&node_of, g->nodes[i]->out[k]->name, i);
  for (int i = 0; i < nsrc; i++) {
    const ir_source *src = &g->src[i];
    s->owner[i] = -1;
    for (int k = 0; k < src->nout && s->owner[i] < 0; k++)
      if (*src->out[k]) s->owner[i] = strmap_get(&node_of, src->out[k]);
    int all_const = 1;
    for (int k = 0; k < src->nin && all_const; k++) {
      if (!*src->in[k]) continue;
      int p = strmap_get(&prod, src->in[k]);
      const ir_value *v = p < 0 ? ir_value_find(g, src->in[k]) : NULL;
      all_const = p >= 0 ? folded[p] : v && v->data && v->input_index < 0;
    }
    /* Shape and Size read only dims, which are static here */
    all_const |= !strcmp(src->op_type, "Shape") || !strcmp(src->op_type, "Size");
    folded[i] = s->owner[i] < 0 && all_const;
    for (int k = 0; k < src->nout; k++)
      if (*src->out[k]) strmap_put(&prod, src->out[k], i);
  }
  /* fused away: the owner of the first reader (readers come later) */
  for (int i = nsrc - 1; i >= 0; i--) {
    const ir_source *src = &g->src[i];
    for (int k = 0; k < src->nout && s->owner[i] < 0 && !folded[i]; k++)
      if (*src->out[k]) s->owner[i] = strmap_get(&reader, src->out[k]);
    for (int k = 0; k < src->nin && s->owner[i] >= 0; k++)
      if (*src->in[k]) strmap_put(&reader, src->in[k], s->owner[i]);
  }
  return ST_OK;
}

/* The ONNX op type an IR node of IR-text graphs (no source nodes) stands
 * for, where its attributes say more than its IR op type. */
static const char *ir_onnx_type(const ir_node *n) {
  if (n->op == IR_OP_SOFTMAX && ir_attr_int(n, "log", 0)) return "LogSoftmax";
  if (n->op == IR_OP_REDUCE) {
    static const char *const modes[][2] = {{"sum", "ReduceSum"},
                                           {"mean", "ReduceMean"},
                                           {"prod", "ReduceProd"},
                                           {"l1", "ReduceL1"},
                                           {"l2", "ReduceL2"},
                                           {"logsum", "ReduceLogSum"},
                                           {"logsumexp", "ReduceLogSumExp"},
                                           {"sumsquare", "ReduceSumSquare"},
                                           {"max", "ReduceMax"},
                                           {"min", "ReduceMin"}};
    const char *m = ir_attr_string(n, "mode", "");
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
      if (!strcmp(modes[i][0], m)) return modes[i][1];
  }
  return ir_ops[n->op].name;
}

/* Calls fn for each op type node i stands for: its IR op's, then its
 * source nodes'; stops at the first nonzero result and returns it. */
static int each_type(const prec_state *s, int i,
                     int (*fn)(const prec_state *, const char *, const char *, void *), void *arg) {
  const ir_node *n = s->g->nodes[i];
  int r = fn(s, ir_onnx_type(n), n->name, arg);
  for (int k = 0; !r && k < s->g->nsrc; k++)
    if (s->owner[k] == i) r = fn(s, s->g->src[k].op_type, s->g->src[k].name, arg);
  return r;
}

static void note(prec_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(prec_state *s, const char *fmt, ...) {
  if (!s->ctx->note || s->ctx->copy_weights) return; /* gear 0 speaks for every gear */
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  s->ctx->note(s->ctx->note_user, msg);
  s->notes++;
}

/* --keep_dtype: the entry matching (op type t, node name nm), or NULL. */
static const prec_entry *keep_match(const prec_state *s, const char *t, const char *nm) {
  const prec_cfg *c = s->ctx->prec;
  for (int i = 0; c && i < c->nkeep; i++)
    if (!strcmp(c->keep[i].name, c->keep[i].op_type ? t : nm)) return &c->keep[i];
  return NULL;
}

static int keep_fn(const prec_state *s, const char *t, const char *nm, void *arg) {
  const prec_entry *e = keep_match(s, t, nm);
  if (e) *(const prec_entry **)arg = e;
  return e != NULL;
}

/* --customize_dtypes: the first entry naming node nm (by_type 0) or op type
 * t (by_type 1), or NULL. */
static const prec_entry *custom_match(const prec_state *s, const char *t, const char *nm, int by_type) {
  const prec_cfg *c = s->ctx->prec;
  for (int i = 0; c && i < c->ncustom; i++)
    if (c->custom[i].op_type == by_type && !strcmp(c->custom[i].name, by_type ? t : nm)) return &c->custom[i];
  return NULL;
}

static int custom_name_fn(const prec_state *s, const char *t, const char *nm, void *arg) {
  return (*(const prec_entry **)arg = custom_match(s, t, nm, 0)) != NULL;
}

static int custom_type_fn(const prec_state *s, const char *t, const char *nm, void *arg) {
  return (*(const prec_entry **)arg = custom_match(s, t, nm, 1)) != NULL;
}

/* The --customize_dtypes entry for node i, or NULL: one naming a node it
 * stands for wins over one naming an op type, as in ATC. */
static const prec_entry *custom_of(const prec_state *s, int i) {
  const prec_entry *e = NULL;
  if (each_type(s, i, custom_name_fn, &e) || each_type(s, i, custom_type_fn, &e)) return e;
  return NULL;
}

/* The list op type t is on: the defaults as --modify_mixlist edits them
 * (later entries win). */
static prec_list list_of(const prec_state *s, const char *t) {
  prec_list l = precision_default_list(t);
  const prec_cfg *c = s->ctx->prec;
  for (int i = 0; c && i < c->nmix; i++)
    if (!strcmp(c->mix[i].name, t)) l = c->mix[i].list;
  return l;
}

typedef struct list_hit {
  prec_list list;
  const char *type;
} list_hit;

static int black_fn(const prec_state *s, const char *t, const char *nm, void *arg) {
  (void)nm;
  list_hit *h = arg;
  prec_list l = list_of(s, t);
  if (l == PREC_LIST_BLACK || (l == PREC_LIST_WHITE && h->list == PREC_LIST_GRAY)) h->list = l, h->type = t;
  return l == PREC_LIST_BLACK;
}

/* An entry naming a node (not an op type) names a source node (or, in a
 * graph parsed from IR text, a node). */
static status check_named(prec_state *s, const prec_entry *e) {
  if (e->op_type) return ST_OK;
  for (int k = 0; k < s->g->nsrc; k++)
    if (!strcmp(s->g->src[k].name, e->name)) return ST_OK;
  for (int k = 0; k < s->g->nnodes && s->g->nsrc == 0; k++)
    if (!strcmp(s->g->nodes[k]->name, e->name)) return ST_OK;
  return diag_set(s->d, ST_ERR_INVALID, "%s: no node named '%s' in the model", e->where, e->name);
}

/* Every --keep_dtype node name names a node. */
static status check_keep_names(prec_state *s) {
  const prec_cfg *c = s->ctx->prec;
  for (int i = 0; c && i < c->nkeep; i++)
    if (check_named(s, &c->keep[i])) return s->d->code;
  return ST_OK;
}

/* Source node src against --customize_dtypes entry e: a dtype per input
 * (counting its omitted optional inputs or not) and per output. */
static status check_custom_counts(prec_state *s, const prec_entry *e, const ir_source *src) {
  int present = 0;
  for (int k = 0; k < src->nin; k++)
    present += src->in[k][0] != '\0';
  if ((e->nin == present || e->nin == src->nin) && e->nout == src->nout) return ST_OK;
  return diag_set(s->d, ST_ERR_INVALID,
                  "%s: node '%s' (%s) has %d input%s and %d output%s; the line gives %d input and %d output "
                  "dtype%s",
                  e->where, src->name, src->op_type, present, present == 1 ? "" : "s", src->nout,
                  src->nout == 1 ? "" : "s", e->nin, e->nout, e->nin + e->nout == 1 ? "" : "s");
}

/* Every --customize_dtypes node name names a source node (or, in a graph
 * parsed from IR text, a node), and every entry gives as many dtypes as
 * the source nodes it names have inputs and outputs. */
static status check_custom(prec_state *s) {
  const prec_cfg *c = s->ctx->prec;
  for (int i = 0; c && i < c->ncustom; i++) {
    const prec_entry *e = &c->custom[i];
    for (int k = 0; k < s->g->nsrc; k++) {
      const ir_source *src = &s->g->src[k];
      if (!strcmp(e->op_type ? src->op_type : src->name, e->name) && check_custom_counts(s, e, src))
        return s->d->code;
    }
    if (check_named(s, e)) return s->d->code;
  }
  return ST_OK;
}

/* 1 when node n is one the precision mode can move to fp16 at all. */
static int lowerable(const ir_node *n) {
  return !n->dead && ir_ops[n->op].fp16 != IR_FP16_NEVER && precision_is_float(orig_dtype(n));
}

static int is_graph_output_node(const ir_node *n) {
  for (int k = 0; k < n->nout; k++)
    if (n->out[k] && n->out[k]->output_index >= 0) return 1;
  return 0;
}

/* Under allow_mix_precision, the class the lists give node i (with the
 * reason in why), for a node no --keep_dtype entry names. */
static int mix_class(prec_state *s, int i, char *why, size_t cap) {
  const ir_node *n = s->g->nodes[i];
  list_hit hit = {PREC_LIST_GRAY, NULL};
  each_type(s, i, black_fn, &hit);
  if (hit.list == PREC_LIST_BLACK && n->op != IR_OP_LAYERNORM && n->op != IR_OP_ATTENTION) {
    snprintf(why, cap, "black list (%s)", hit.type);
    return CLASS_FP32;
  }
  if (n->op == IR_OP_RESIZE && is_graph_output_node(n)) {
    snprintf(why, cap, "upsampling of logits (a Resize writing a graph output)");
    return CLASS_FP32;
  }
  if (hit.list == PREC_LIST_GRAY) { /* follows the producers of its computed float inputs */
    int votes = 0, fp32 = 0;
    const char *from = NULL;
    for (int k = 0; k < n->nin; k++) {
      const ir_value *v = n->in[k];
      if (!v || !v->producer || v->producer->dead || !precision_is_float(v->dtype)) continue;
      votes++;
      if (s->cls[s->by_pos[v->producer->id]] == CLASS_FP32) fp32++, from = v->producer->name;
    }
    if (votes > 0 && fp32 == votes) {
      snprintf(why, cap, "gray list, follows '%s'", from);
      return CLASS_FP32;
    }
  }
  return CLASS_FP16;
}

/* Decides each node's class (s->cls) and sets the "precision" attributes. */
static status classify(prec_state *s) {
  ir_graph *g = s->g;
  const int mix = s->ctx->precision == OM_PRECISION_ALLOW_MIX_PRECISION;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    const prec_entry *keep = NULL;
    char why[600] = "";
    s->cls[i] = CLASS_FP16;
    if (!lowerable(n)) continue;
    if (node_class(n) == CLASS_FP32) { /* set by its importer (ir/ops.def) */
      s->cls[i] = CLASS_FP32;
      s->kept++;
      note(s,
           "precision: node '%s' (%s) runs in fp32: marked before the lists (an integer-exact decomposition "
           "or a quantized island)",
           n->name, ir_ops[n->op].name);
      continue;
    }
    const prec_entry *custom = custom_of(s, i);
    if (custom) {
      s->cls[i] = custom->fp16 ? CLASS_FP16 : CLASS_FP32;
      snprintf(why, sizeof why, "--customize_dtypes %s ('%s')", custom->where, custom->name);
      if (custom->fp16) {
        note(s, "precision: node '%s' (%s) runs in fp16: %s", n->name, ir_ops[n->op].name, why);
        continue;
      }
    } else if (each_type(s, i, keep_fn, &keep)) {
      s->cls[i] = CLASS_FP32;
      if (keep->reason)
        snprintf(why, sizeof why, "%s", keep->reason);
      else
        snprintf(why, sizeof why, "--keep_dtype %s ('%s')", keep->where, keep->name);
    } else if (mix) {
      s->cls[i] = mix_class(s, i, why, sizeof why);
    }
    if (s->cls[i] == CLASS_FP16) continue;
    if (ir_attr_set_string(g, n, "precision", "fp32"))
      return ir_node_error(s->d, ST_ERR_NOMEM, n, "out of memory");
    s->kept++;
    note(s, "precision: node '%s' (%s) runs in fp32: %s", n->name, ir_ops[n->op].name, why);
  }
  return ST_OK;
}

/* Per-node classes (the top of the file): --customize_dtypes and
 * --keep_dtype in the fp16 modes, and the lists under allow_mix_precision. */
static status decide_nodes(ir_graph *g, pass_ctx *ctx, diag *d) {
  const om_precision p = ctx->precision;
  if (p == OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE) return ST_OK;
  if (p != OM_PRECISION_ALLOW_MIX_PRECISION && (!ctx->prec || ctx->prec->nkeep + ctx->prec->ncustom == 0))
    return ST_OK;
  prec_state s = {.g = g, .ctx = ctx, .d = d};
  arena_init(&s.a, 0);
  s.cls = arena_array(&s.a, (size_t)g->nnodes + 1, sizeof *s.cls);
  s.by_pos = arena_array(&s.a, (size_t)g->next_node_id + 1, sizeof *s.by_pos);
  status st = s.cls && s.by_pos ? ST_OK : diag_set(d, ST_ERR_NOMEM, "out of memory");
  for (int i = 0; st == ST_OK && i < g->nnodes; i++)
    s.by_pos[g->nodes[i]->id] = i;
  if (st == ST_OK) st = check_keep_names(&s);
  if (st == ST_OK) st = check_custom(&s);
  if (st == ST_OK) st = find_owners(&s);
  if (st == ST_OK) st = classify(&s);
  if (st == ST_OK) {
    int lowerable_nodes = 0;
    for (int i = 0; i < g->nnodes; i++)
      lowerable_nodes += lowerable(g->nodes[i]);
    note(&s, "precision: %s: %d of %d float nodes kept out of fp16",
         p == OM_PRECISION_ALLOW_MIX_PRECISION ? "allow_mix_precision"
         : ctx->prec->ncustom                  ? "--keep_dtype / --customize_dtypes"
                                               : "--keep_dtype",
         s.kept, lowerable_nodes);
  }
  arena_free(&s.a);
  return st;
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

enum { HALF_MIN_SUBNORMAL = 1 }; /* 2^-24 */

/* f's fp16 value as the pass stores constants: nearest, but nonzero stays
 * nonzero ("Tiny constants" above) and, when clip, finite stays finite
 * ("Large constants"). */
static double half_stored(double f, int clip) {
  uint16_t h = float_to_half((float)f);
  if (f != 0 && (h & 0x7fffu) == 0) return copysign(0x1p-24, f);
  if (clip && half_clipped(h, (float)f) != h) return copysign(65504.0, f);
  return f;
}

/* 1 when a cube op (a Conv's or MatMul's weights) reads constant c. */
static int read_by_cube(const ir_graph *g, const ir_value *c) {
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = g->nodes[i];
    if (n->dead || ir_ops[n->op].unit != IR_UNIT_CUBE) continue;
    for (int j = 0; j < n->nin; j++)
      if (n->in[j] == c) return 1;
  }
  return 0;
}

static status const_to_f16(ir_graph *g, ir_value *c, int clip, diag *d) {
  int keep_tiny = !read_by_cube(g, c);
  int64_t count = ir_value_elements(c);
  if (count < 0) return diag_set(d, ST_ERR_INVALID, "constant '%s': element count unknown", c->name);
  ir_payload_reader r;
  ir_payload_reader_init(g, &r, c, 1);
  uint16_t *h = (uint64_t)count <= SIZE_MAX / 2 ? ir_payload_alloc(g, &r, (size_t)count * 2) : NULL;
  if (!h) return diag_set(d, ST_ERR_NOMEM, "constant '%s': out of memory", c->name);
  for (int64_t i = 0, chunk = 8 << 20; i < count; i += chunk) { /* the source goes as it is read */
    int64_t n = count - i < chunk ? count - i : chunk;
    const float *f = (const float *)c->data + i;
    if (clip)
      floats_to_halves_clipped(h + i, f, (size_t)n);
    else
      floats_to_halves(h + i, f, (size_t)n);
    for (int64_t j = 0; keep_tiny && j < n; j++)
      if ((h[i + j] & 0x7fffu) == 0 && f[j] != 0) h[i + j] |= HALF_MIN_SUBNORMAL;
    ir_payload_read(&r, (uint64_t)(i + n));
  }
  ir_value_replace_data(g, c, h);
  c->dtype = DT_FLOAT16;
  return ST_OK;
}

/* Rewrites VectorProgram n: f32 registers become f16 when `lower`, and LOADs
 * and STOREs meet their tensors' (possibly changed) dtypes through CASTs. */
static status retype_program(ir_graph *g, ir_node *n, int lower, int clip, diag *d) {
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
      if (in.op == VOP_CONST && in.dtype == DT_FLOAT32 && want == DT_FLOAT16)
        in.imm.f = half_stored(in.imm.f, clip);
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

static int int32_type(int dt) { return dt == DT_INT32 || dt == DT_UINT32; }

/* 1 when program n keeps f32 arithmetic while its tensors follow the mode:
 * it rounds a float to int8 and on to a float again (a QuantizeLinear ->
 * DequantizeLinear pair between two float ops: the attention's Q, K, V and
 * softmax in a QDQ transformer, its MatMuls in fp16), where in fp16 x / s
 * at 3000 has steps of 2, so the rounding the pair stands for would be
 * lost, and the f16 steps cost a conversion after each instruction
 * (reconcile_programs); or it converts a wide int32 to a float: one loaded
 * from an int32 tensor or converted from a float, or integer arithmetic on
 * such (the int32 sums of a MatMulInteger before their scale, Cast -> Mul
 * in a dynamically quantized model), which in fp16 would pass 65504 and
 * overflow. An int32 made from 8- or 16-bit integers (a DequantizeLinear's
 * x - zp) is not wide. */
static int keeps_f32(const ir_node *n, diag *d) {
  arena tmp;
  arena_init(&tmp, 0);
  ir_vprog v;
  int q = 0, dq = 0, wide_cast = 0;
  if (ir_vprog_read(n, &tmp, &v, d) == ST_OK) {
    char *wide = arena_alloc(&tmp, (size_t)(v.nregs > 0 ? v.nregs : 1));
    for (int k = 0; k < v.count && wide; k++) {
      const om_vinstr *in = &v.ins[k];
      if (in->op == VOP_STORE || in->op == VOP_CONST) continue;
      int w = 0;
      if (in->op == VOP_LOAD)
        w = int32_type(in->dtype);
      else if (in->op == VOP_CAST)
        w = int32_type(in->dtype) && (ir_vprog_is_float(v.rdt[in->a]) || wide[in->a]);
      else if (!ir_vprog_is_float(in->dtype))
        w = wide[in->a] || (in->op >= VOP_ADD && wide[in->b]) || (in->op >= VOP_SELECT && wide[in->c]);
      wide[in->dst] = (char)w;
      if (in->op == VOP_CAST) {
        q |= in->dtype == DT_UINT8 || in->dtype == DT_INT8;
        dq |= q && precision_is_float(in->dtype);
        wide_cast |= precision_is_float(in->dtype) && wide[in->a];
      }
    }
  }
  arena_free(&tmp);
  return (q && dq) || wide_cast;
}

/* Every vector program retyped (lowered to f16 where it lowers, when
 * `lower`) and reconciled with its tensors' dtypes. */
static status reconcile_programs(ir_graph *g, int lower, const pass_ctx *ctx, diag *d) {
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead || n->op != IR_OP_VECPROG) continue;
    status st = retype_program(g, n, lower && node_lowers(n, ctx->precision) && !keeps_f32(n, d),
                               !ctx->no_weight_clip, d);
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

/* flags[v->id] set: the float value v is outside every quantized island.
 * Node n cannot be in a quantized island (a cube op: its operands follow
 * the precision mode, atc's choice for the int8 islands that did not become
 * QConvs), or touches a float value outside one; then its float values
 * are outside too. 1 when that changed a flag. */
static int spread(const ir_node *n, char *flags) {
  int out = ir_ops[n->op].unit == IR_UNIT_CUBE || ir_ops[n->op].fp16 == IR_FP16_NEVER;
  for (int j = 0; j < n->nin && !out; j++)
    out = n->in[j] && !n->in[j]->data && precision_is_float(n->in[j]->dtype) && flags[n->in[j]->id];
  for (int j = 0; j < n->nout && !out; j++)
    out = precision_is_float(n->out[j]->dtype) && flags[n->out[j]->id];
  if (!out) return 0;
  int changed = 0;
  for (int j = 0; j < n->nin + n->nout; j++) {
    const ir_value *v = j < n->nin ? n->in[j] : n->out[j - n->nin];
    if (v && !v->data && precision_is_float(v->dtype) && !flags[v->id]) flags[v->id] = changed = 1;
  }
  return changed;
}

/* Marks (precision = "fp32") the quantized islands, which keep f32 in every
 * mode: the float values of a QDQ model that only DequantizeLinear
 * programs make and only QuantizeLinear programs consume, with every
 * vector and pooling op between (a SiLU, an SE block's pooling, Sigmoid
 * and Mul, an average pool), as ONNX Runtime computes these in f32 between
 * its int8 tensors: fp16 values there would move results across the next
 * QuantizeLinear's rounding boundaries (EfficientNet-B0 quantized by
 * omquant: cosine 0.983 against ONNX Runtime with its islands in fp16,
 * 0.9999 in f32). A float value is outside every island when it is a graph
 * input or output or when a cube op or an op that never takes fp16 reads
 * or writes it, and so is every float value of a node that touches one
 * outside: spread forward and backward over the nodes until nothing
 * changes. The nodes left that touch a float value are the islands'. */
static status mark_quant_islands(ir_graph *g, diag *d) {
  char *flags = calloc((size_t)g->nvalues + 1, 1);
  if (!flags) return diag_set(d, ST_ERR_NOMEM, "out of memory");
  for (int i = 0; i < g->ninputs; i++)
    flags[g->inputs[i]->id] = 1;
  for (int i = 0; i < g->noutputs; i++)
    flags[g->outputs[i]->id] = 1;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = 0; i < g->nnodes; i++)
      if (!g->nodes[i]->dead) changed |= spread(g->nodes[i], flags);
    for (int i = g->nnodes - 1; i >= 0; i--)
      if (!g->nodes[i]->dead) changed |= spread(g->nodes[i], flags);
  }
  status st = ST_OK;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead || ir_ops[n->op].unit == IR_UNIT_CUBE || ir_ops[n->op].fp16 == IR_FP16_NEVER ||
        !(reads_float(n) || writes_float(n)))
      continue;
    int ok = 1;
    for (int j = 0; j < n->nin + n->nout && ok; j++) {
      const ir_value *v = j < n->nin ? n->in[j] : n->out[j - n->nin];
      ok = !(v && !v->data && precision_is_float(v->dtype) && flags[v->id]);
    }
    if (ok && ir_attr_set_string(g, n, "precision", "fp32"))
      st = ir_node_error(d, ST_ERR_NOMEM, n, "out of memory");
  }
  free(flags);
  return st;
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
  if (p == OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE) return io_changed ? reconcile_programs(g, 0, ctx, d) : ST_OK;
  status st = mark_quant_islands(g, d);
  if (st == ST_OK) st = decide_nodes(g, ctx, d);
  if (st != ST_OK) return st;

  for (int i = 0; i < g->nvalues; i++) {
    ir_value *v = g->values[i];
    if (v->dtype != DT_FLOAT32 || is_io(v)) continue;
    if (v->producer) {
      if (!v->producer->dead && node_lowers(v->producer, p) && !precision_f32_out(v->producer))
        v->dtype = DT_FLOAT16;
    } else if (v->data && const_lowers(g, v, p)) {
      st = const_to_f16(g, v, !ctx->no_weight_clip, d);
      if (st != ST_OK) return st;
    }
  }
  return reconcile_programs(g, 1, ctx, d);
}
