/* onnx_decomp_rnn.c - RNN, GRU and LSTM unrolled over time (onnx_decomp.h).
 *
 * The sequence length is fixed at compile time (X's time dim, after
 * --input_shape), so each op becomes its recurrence written out step by
 * step, per direction, in IR ops the rest of the compiler runs:
 *
 *   XW = X W^T + Wb        one MatMul over every step at once ([T*B, I] rows), [T, B, G*H]
 *   per step t (forward t = 0..T-1, reverse t = T-1..0):
 *     g   = XW[t] + H R^T + Rb                      (G gate blocks of H)
 *     RNN:  H' = f(g)
 *     GRU:  z = f(gz), r = f(gr),
 *           h~ = g(XWh[t] + (r * H) Rh^T + Rbh)     linear_before_reset = 0
 *           h~ = g(XWh[t] + r * (H Rh^T + Rbh))     linear_before_reset = 1
 *           H' = (1 - z) * h~ + z * H
 *     LSTM: i = f(gi + Pi * C), f = f(gf + Pf * C)  (input_forget: f = 1 - i)
 *           C' = f * C + i * g(gc), o = f(go + Po * C'), H' = o * h(C')
 *   gate pre-activations clipped to [-clip, clip] when clip is set.
 *
 * sequence_lens (a run-time input, or a constant below seq_length somewhere:
 * one of seq_length everywhere is dropped) masks each step per batch entry: past a
 * sequence's length its state is held and its Y rows are 0; a reverse
 * direction then starts at the entry's own last step, as ONNX's reference.
 * Outputs: Y [T, D, B, H] (layout 1: [B, T, D, H]), Y_h [D, B, H] (layout 1:
 * [B, D, H]) and, for LSTM, Y_c like Y_h. Activations: Sigmoid, Tanh, Relu,
 * HardSigmoid, LeakyRelu, ThresholdedRelu, Elu, Softsign, Softplus, Affine
 * and ScaledTanh, with activation_alpha / activation_beta taken by position
 * in the activations list (ONNX's defaults where absent).
 *
 * A direction whose cell the RECURRENCE task runs (the default
 * activations, no clip, no sequence_lens, no peepholes, no input_forget:
 * what torch.nn.LSTM / GRU / RNN export) becomes, after the same hoisted
 * MatMul, one Recurrence node (ops.def) instead of the unrolled steps: one
 * task per direction whose state stays in the UB, where the unrolled form
 * runs a dozen small tasks per step.
 */
#include <inttypes.h>
#include <string.h>

#include "common/elem.h"
#include "frontend/onnx_decomp.h"

enum { RNN_MAX_STEPS = 4096, RNN_ACTS = 3 };

typedef enum { KIND_RNN, KIND_GRU, KIND_LSTM } rnn_kind;

typedef struct act {
  char name[32];
  double alpha, beta;
} act;

typedef struct rnn {
  dc *b;
  rnn_kind kind;
  dtype dt;
  int64_t T, hidden, gates;
  double clip; /* 0: none */
  int input_forget, linear_before_reset;
  int fused; /* 1: each direction is one Recurrence node */
  act acts[2][RNN_ACTS];
} rnn;

static ir_value *scalar(rnn *r, double v) { return r->b->st ? NULL : dc_scalar(r->b, r->dt, v); }

/* a(x) for one of the activations the recurrence names. */
static ir_value *apply(rnn *r, const act *a, ir_value *x) {
  dc *b = r->b;
  if (b->st) return NULL;
  if (r->clip > 0) x = dc_clip(r->b, x, -r->clip, r->clip);
  const char *n = a->name;
  if (!strcmp(n, "Sigmoid")) return dc_op1(b, IR_OP_SIGMOID, x);
  if (!strcmp(n, "Tanh")) return dc_op1(b, IR_OP_TANH, x);
  if (!strcmp(n, "Relu")) return dc_op1(b, IR_OP_RELU, x);
  if (!strcmp(n, "Softplus")) return dc_op1(b, IR_OP_SOFTPLUS, x);
  if (!strcmp(n, "Softsign"))
    return dc_op2(b, IR_OP_DIV, x, dc_op2(b, IR_OP_ADD, scalar(r, 1), dc_op1(b, IR_OP_ABS, x)));
  if (!strcmp(n, "Affine"))
    return dc_op2(b, IR_OP_ADD, dc_op2(b, IR_OP_MUL, x, scalar(r, a->alpha)), scalar(r, a->beta));
  if (!strcmp(n, "ScaledTanh"))
    return dc_op2(b, IR_OP_MUL, dc_op1(b, IR_OP_TANH, dc_op2(b, IR_OP_MUL, x, scalar(r, a->beta))),
                  scalar(r, a->alpha));
  if (!strcmp(n, "HardSigmoid"))
    return dc_clip(
        r->b, dc_op2(b, IR_OP_ADD, dc_op2(b, IR_OP_MUL, x, scalar(r, a->alpha)), scalar(r, a->beta)), 0, 1);
  if (!strcmp(n, "LeakyRelu"))
    return dc_where(b, dc_op2(b, IR_OP_LESS, x, scalar(r, 0)), dc_op2(b, IR_OP_MUL, x, scalar(r, a->alpha)),
                    x);
  if (!strcmp(n, "ThresholdedRelu"))
    return dc_where(b, dc_op2(b, IR_OP_GREATER, x, scalar(r, a->alpha)), x, scalar(r, 0));
  if (!strcmp(n, "Elu")) {
    ir_value *em1 = dc_op2(b, IR_OP_SUB, dc_op1(b, IR_OP_EXP, x), scalar(r, 1));
    return dc_where(b, dc_op2(b, IR_OP_LESS, x, scalar(r, 0)), dc_op2(b, IR_OP_MUL, em1, scalar(r, a->alpha)),
                    x);
  }
  return dc_fail(b, ST_ERR_UNSUPPORTED,
                 "activation '%s' is not supported (Sigmoid, Tanh, Relu, HardSigmoid, "
                 "LeakyRelu, ThresholdedRelu, Elu, Softsign, Softplus, Affine, ScaledTanh are)",
                 n);
}

static void act_defaults(act *a) {
  a->alpha = 1.0, a->beta = 0.0;
  if (!strcmp(a->name, "LeakyRelu")) a->alpha = 0.01;
  if (!strcmp(a->name, "HardSigmoid")) a->alpha = 0.2, a->beta = 0.5;
  if (!strcmp(a->name, "ScaledTanh")) a->beta = 1.0;
}

/* The activations per direction: the attribute's, else the op's defaults. */
static void read_acts(rnn *r, int dirs) {
  static const char *const defaults[3][RNN_ACTS] = {
      {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  const int per = r->kind == KIND_RNN ? 1 : r->kind == KIND_GRU ? 2 : 3;
  const onnx_node *nd = r->b->nd;
  const Onnx__AttributeProto *names = onnx_attr(nd, "activations");
  const Onnx__AttributeProto *alpha = onnx_attr(nd, "activation_alpha"),
                             *beta = onnx_attr(nd, "activation_beta");
  if (names && (int)names->n_strings != per * dirs) {
    dc_fail(r->b, ST_ERR_INVALID, "attribute 'activations' has %zu names; expected %d (%d per direction)",
            names->n_strings, per * dirs, per);
    return;
  }
  for (int d = 0; d < dirs; d++)
    for (int i = 0; i < per; i++) {
      act *a = &r->acts[d][i];
      size_t k = (size_t)(d * per + i);
      if (names) {
        size_t len = names->strings[k].len < sizeof a->name - 1 ? names->strings[k].len : sizeof a->name - 1;
        memcpy(a->name, names->strings[k].data, len);
        a->name[len] = '\0';
      } else {
        strcpy(a->name, defaults[r->kind][i]);
      }
      act_defaults(a);
      if (alpha && k < alpha->n_floats) a->alpha = alpha->floats[k];
      if (beta && k < beta->n_floats) a->beta = beta->floats[k];
    }
}

/* Columns [k*H, (k+1)*H) of v's last axis. */
static ir_value *block(rnn *r, ir_value *v, int64_t k) {
  int64_t s = k * r->hidden, e = (k + 1) * r->hidden, axis = -1;
  return dc_slice(r->b, v, 1, &s, &e, &axis);
}

/* Row d of a per-direction input ([D, ...] -> [...]). */
static ir_value *dir_row(rnn *r, ir_value *v, int64_t d) {
  return v ? dc_gather(r->b, v, dc_scalar(r->b, DT_INT64, (double)d), 0) : NULL;
}

/* m^T for a 2-D m: made once per direction, outside the steps, so a
 * constant weight folds into one transposed copy, not one per step. */
static ir_value *transposed(rnn *r, ir_value *m) {
  static const int64_t perm[2] = {1, 0};
  return m ? dc_transpose(r->b, m, 2, perm) : NULL;
}

/* new where the step is inside the sequence, old past its end; mask is [B, 1] of dt (1 or 0). */
static ir_value *hold(rnn *r, ir_value *mask, ir_value *next, ir_value *prev) {
  if (!mask) return next;
  ir_value *keep = dc_op2(r->b, IR_OP_SUB, scalar(r, 1), mask);
  return dc_op2(r->b, IR_OP_ADD, dc_op2(r->b, IR_OP_MUL, next, mask), dc_op2(r->b, IR_OP_MUL, prev, keep));
}

/* One direction: Y [T, B, H] (in time order; y holds T step slots), final
 * H (and C). */
static void direction(rnn *r, int64_t d, int reverse, ir_value *x, ir_value *w, ir_value *rw, ir_value *bias,
                      ir_value *lens, ir_value *h0, ir_value *c0, ir_value *peep, ir_value **y,
                      ir_value **y_out, ir_value **h_out, ir_value **c_out) {
  dc *b = r->b;
  const int64_t H = r->hidden, G = r->gates;
  ir_value *wd = dir_row(r, w, d), *rd = dir_row(r, rw, d), *bd = dir_row(r, bias, d);
  /* [T*B, I] x [I, G*H] + Wb: one matrix product over every step, not T
   * products of B rows, its bias added on the 2-D product so that it runs
   * in the MatMul's epilogue */
  const int64_t flat[2] = {-1, w->dims[2]},
                steps[3] = {r->T, -1, G * H}; /* x may be a transpose, shapeless yet */
  ir_value *xw = dc_op2(b, IR_OP_MATMUL, dc_reshape_to(b, x, 2, flat), transposed(r, wd));
  ir_value *rt = r->kind == KIND_GRU || r->fused ? NULL : transposed(r, rd);
  ir_value *wb = NULL, *rb = NULL;
  if (bd) {
    int64_t s0 = 0, e0 = G * H, s1 = G * H, e1 = 2 * G * H, axis = 0;
    wb = dc_slice(b, bd, 1, &s0, &e0, &axis);
    rb = dc_slice(b, bd, 1, &s1, &e1, &axis);
    xw = dc_op2(b, IR_OP_ADD, xw, wb);
  }
  xw = dc_reshape_to(b, xw, 3, steps);
  ir_value *h = dir_row(r, h0, d), *c = dir_row(r, c0, d);
  if (r->fused) {
    ir_value *in[5] = {xw, transposed(r, rd), rb, h, c};
    const int cell = r->kind == KIND_LSTM ? 0 : r->kind == KIND_GRU ? 1 : 2;
    ir_node *n = dc_node_outs(b, IR_OP_RECURRENCE, r->kind == KIND_LSTM ? 5 : 4, in, cell == 0 ? 3 : 2);
    dc_set_int(b, n, "cell", cell);
    dc_set_int(b, n, "reverse", reverse);
    if (r->linear_before_reset) dc_set_int(b, n, "linear_before_reset", 1);
    if (b->st) return;
    *y_out = n->out[0], *h_out = n->out[1], *c_out = cell == 0 ? n->out[2] : NULL;
    return;
  }
  ir_value *pd = dir_row(r, peep, d);
  ir_value *pi = pd ? block(r, pd, 0) : NULL, *po = pd ? block(r, pd, 1) : NULL,
           *pf = pd ? block(r, pd, 2) : NULL;
  /* GRU's h gate needs R's h rows apart from z and r */
  ir_value *rzr = NULL, *rhh = NULL, *rbzr = NULL, *rbh = NULL;
  if (r->kind == KIND_GRU) {
    int64_t s0 = 0, e0 = 2 * H, s1 = 2 * H, e1 = 3 * H, axis0 = 0, axisl = -1;
    rzr = transposed(r, dc_slice(b, rd, 1, &s0, &e0, &axis0));
    rhh = transposed(r, dc_slice(b, rd, 1, &s1, &e1, &axis0));
    if (rb) rbzr = dc_slice(b, rb, 1, &s0, &e0, &axisl), rbh = dc_slice(b, rb, 1, &s1, &e1, &axisl);
  }
  const act *a = r->acts[d];
  for (int64_t k = 0; k < r->T && !b->st; k++) {
    const int64_t t = reverse ? r->T - 1 - k : k;
    ir_value *xt = dc_gather(b, xw, dc_scalar(b, DT_INT64, (double)t), 0); /* [B, G*H] */
    ir_value *mask = NULL;
    if (lens)
      mask = dc_unsqueeze(
          b, dc_cast(b, dc_op2(b, IR_OP_LESS, dc_scalar(b, lens->dtype, (double)t), lens), r->dt), 1,
          (const int64_t[]){1});
    ir_value *hn = NULL, *cn = NULL;
    if (r->kind == KIND_RNN) {
      ir_value *g = xt;
      if (h) g = dc_op2(b, IR_OP_ADD, g, dc_op2(b, IR_OP_MATMUL, h, rt));
      if (rb) g = dc_op2(b, IR_OP_ADD, g, rb);
      hn = apply(r, &a[0], g);
    } else if (r->kind == KIND_GRU) {
      int64_t s = 0, e = 2 * H, axis = -1;
      ir_value *gzr = dc_slice(b, xt, 1, &s, &e, &axis), *gh = block(r, xt, 2);
      if (h) gzr = dc_op2(b, IR_OP_ADD, gzr, dc_op2(b, IR_OP_MATMUL, h, rzr));
      if (rbzr) gzr = dc_op2(b, IR_OP_ADD, gzr, rbzr);
      ir_value *z = apply(r, &a[0], block(r, gzr, 0)), *rr = apply(r, &a[0], block(r, gzr, 1));
      ir_value *hh = NULL;
      if (h && r->linear_before_reset) {
        ir_value *lin = dc_op2(b, IR_OP_MATMUL, h, rhh);
        if (rbh) lin = dc_op2(b, IR_OP_ADD, lin, rbh);
        hh = dc_op2(b, IR_OP_MUL, rr, lin);
      } else if (h) {
        hh = dc_op2(b, IR_OP_MATMUL, dc_op2(b, IR_OP_MUL, rr, h), rhh);
        if (rbh) hh = dc_op2(b, IR_OP_ADD, hh, rbh);
      } else if (rbh) {
        hh = r->linear_before_reset ? dc_op2(b, IR_OP_MUL, rr, rbh) : rbh;
      }
      ir_value *ht = apply(r, &a[1], hh ? dc_op2(b, IR_OP_ADD, gh, hh) : gh);
      ir_value *zt = dc_op2(b, IR_OP_MUL, dc_op2(b, IR_OP_SUB, scalar(r, 1), z), ht);
      hn = h ? dc_op2(b, IR_OP_ADD, zt, dc_op2(b, IR_OP_MUL, z, h)) : zt;
    } else {
      ir_value *g = xt;
      if (h) g = dc_op2(b, IR_OP_ADD, g, dc_op2(b, IR_OP_MATMUL, h, rt));
      if (rb) g = dc_op2(b, IR_OP_ADD, g, rb);
      ir_value *gi = block(r, g, 0), *go = block(r, g, 1), *gf = block(r, g, 2), *gc = block(r, g, 3);
      if (pi && c) gi = dc_op2(b, IR_OP_ADD, gi, dc_op2(b, IR_OP_MUL, pi, c));
      if (pf && c) gf = dc_op2(b, IR_OP_ADD, gf, dc_op2(b, IR_OP_MUL, pf, c));
      ir_value *i = apply(r, &a[0], gi);
      ir_value *f = r->input_forget ? dc_op2(b, IR_OP_SUB, scalar(r, 1), i) : apply(r, &a[0], gf);
      ir_value *ic = dc_op2(b, IR_OP_MUL, i, apply(r, &a[1], gc));
      cn = c ? dc_op2(b, IR_OP_ADD, dc_op2(b, IR_OP_MUL, f, c), ic) : ic;
      if (po) go = dc_op2(b, IR_OP_ADD, go, dc_op2(b, IR_OP_MUL, po, cn));
      hn = dc_op2(b, IR_OP_MUL, apply(r, &a[0], go), apply(r, &a[2], cn));
    }
    if (b->st) return;
    /* Past the sequence's end: Y is 0 and the state holds (an absent state is 0). */
    y[t] = mask ? dc_op2(b, IR_OP_MUL, hn, mask) : hn;
    h = h ? hold(r, mask, hn, h) : y[t];
    if (r->kind == KIND_LSTM) c = c ? hold(r, mask, cn, c) : (mask ? dc_op2(b, IR_OP_MUL, cn, mask) : cn);
  }
  static const int64_t ax0[1] = {0};
  for (int64_t t = 0; t < r->T && !b->st; t++)
    y[t] = dc_unsqueeze(b, y[t], 1, ax0);
  *y_out = r->T == 1 ? y[0] : dc_concat(b, 0, (int)r->T, y); /* [T, B, H] */
  *h_out = h;
  *c_out = c;
}

/* Whether RECURRENCE runs this op's cells (rnn.fused). */
static int fusable(const rnn *r, int dirs, const ir_value *lens, const ir_value *peep) {
  static const char *const want[3][RNN_ACTS] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  const int per = r->kind == KIND_RNN ? 1 : r->kind == KIND_GRU ? 2 : 3;
  if (r->clip > 0 || lens || peep || r->input_forget) return 0;
  for (int d = 0; d < dirs; d++)
    for (int i = 0; i < per; i++)
      if (strcmp(r->acts[d][i].name, want[r->kind][i])) return 0;
  return 1;
}

/* Whether sequence_lens is a constant giving every batch entry all T steps
 * (a packed sequence of full length exports so): then it masks nothing. */
static int full_lengths(const ir_value *lens, int64_t T) {
  int64_t n = lens ? ir_value_elements(lens) : -1;
  if (n < 1 || !lens->data) return 0;
  for (int64_t i = 0; i < n; i++)
    if (elem_get(lens->data, lens->dtype, (size_t)i) != (double)T) return 0;
  return 1;
}

static status decomp(onnx_node *nd, rnn_kind kind) {
  dc b;
  dc_begin(&b, nd);
  rnn r = {.b = &b, .kind = kind, .gates = kind == KIND_RNN ? 1 : kind == KIND_GRU ? 3 : 4};
  ir_value *x = dc_in(&b, 0), *w = dc_in(&b, 1), *rw = dc_in(&b, 2), *bias = dc_in(&b, 3),
           *lens = dc_in(&b, 4);
  ir_value *h0 = dc_in(&b, 5), *c0 = kind == KIND_LSTM ? dc_in(&b, 6) : NULL;
  ir_value *peep = kind == KIND_LSTM ? dc_in(&b, 7) : NULL;
  r.dt = dc_dtype(&b, x);
  if (b.st) return dc_end(&b);
  if (r.dt != DT_FLOAT32 && r.dt != DT_FLOAT16)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "input '%s' has data type %s; only float32 and float16 are supported", x->name,
                     onnx_dtype_name(r.dt));
  int64_t layout = dc_attr_int(&b, "layout", 0);
  if (layout != 0 && layout != 1)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'layout' = %" PRId64 " must be 0 or 1", layout);
  if (x->rank != 3 || x->dims[0] < 0 || x->dims[1] < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "input '%s' needs a known shape [%s, input_size] at import (fix it "
                     "with --input_shape)",
                     x->name, layout ? "batch, seq_length" : "seq_length, batch");
  if (w->rank != 3 || w->dims[1] < 1 || rw->rank != 3 || rw->dims[2] < 1)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "inputs W and R need known shapes [num_directions, gates * hidden, "
                     "...] at import");
  r.T = x->dims[layout ? 1 : 0];
  r.hidden = dc_attr_int(&b, "hidden_size", rw->dims[2]);
  if (full_lengths(lens, r.T)) lens = NULL; /* masks no step */
  if (r.T < 1 || r.T > RNN_MAX_STEPS)
    return dc_refuse(&b, ST_ERR_LIMIT, "seq_length %" PRId64 " is outside 1..%d (the recurrence is unrolled)",
                     r.T, RNN_MAX_STEPS);
  if (r.hidden != rw->dims[2] || w->dims[1] != r.gates * r.hidden)
    return dc_refuse(&b, ST_ERR_INVALID,
                     "hidden_size %" PRId64 " does not match W [.., %" PRId64 ", ..] and R [.., "
                     ".., %" PRId64 "] (%" PRId64 " gates)",
                     r.hidden, w->dims[1], rw->dims[2], r.gates);
  char dirname[32];
  onnx_attr_string(nd, "direction", "forward", dirname, sizeof dirname);
  int dirs = 1, rev0 = 0;
  if (!strcmp(dirname, "reverse"))
    rev0 = 1;
  else if (!strcmp(dirname, "bidirectional"))
    dirs = 2;
  else if (strcmp(dirname, "forward"))
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'direction' = '%s' (forward, reverse or bidirectional)",
                     dirname);
  if (w->dims[0] != dirs)
    return dc_refuse(&b, ST_ERR_INVALID, "W has %" PRId64 " directions; direction '%s' needs %d", w->dims[0],
                     dirname, dirs);
  r.clip = dc_attr_float(&b, "clip", 0);
  if (r.clip < 0) return dc_refuse(&b, ST_ERR_INVALID, "attribute 'clip' = %g must be positive", r.clip);
  r.input_forget = (int)dc_attr_int(&b, "input_forget", 0);
  r.linear_before_reset = (int)dc_attr_int(&b, "linear_before_reset", 0);
  read_acts(&r, dirs);
  if (b.st) return dc_end(&b);

  static const int64_t tbi[3] = {1, 0, 2};
  if (layout) x = dc_transpose(&b, x, 3, tbi); /* [T, B, I] */
  if (layout && h0) h0 = dc_transpose(&b, h0, 3, tbi);
  if (layout && c0) c0 = dc_transpose(&b, c0, 3, tbi);
  ir_value **y = arena_alloc(&b.g->arena, sizeof *y * (size_t)r.T * 2);
  if (!y) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  ir_value *hs[2] = {NULL, NULL}, *cs[2] = {NULL, NULL}, *ys[2] = {NULL, NULL};
  r.fused = fusable(&r, dirs, lens, peep);
  for (int d = 0; d < dirs && !b.st; d++) {
    ir_value **yd = y + (size_t)d * (size_t)r.T;
    direction(&r, d, d == 1 || rev0, x, w, rw, bias, lens, h0, c0, peep, yd, &ys[d], &hs[d], &cs[d]);
    if (b.st) break;
    static const int64_t ax0[1] = {0};
    ys[d] = dc_unsqueeze(&b, ys[d], 1, (const int64_t[]){1}); /* [T, 1, B, H] */
    hs[d] = dc_unsqueeze(&b, hs[d], 1, ax0);
    if (cs[d]) cs[d] = dc_unsqueeze(&b, cs[d], 1, ax0);
  }
  if (b.st) return dc_end(&b);
  ir_value *yall = dirs == 2 ? dc_concat(&b, 1, 2, ys) : ys[0];
  ir_value *hall = dirs == 2 ? dc_concat(&b, 0, 2, hs) : hs[0];
  ir_value *call = kind == KIND_LSTM ? (dirs == 2 ? dc_concat(&b, 0, 2, cs) : cs[0]) : NULL;
  if (layout) {
    static const int64_t y_perm[4] = {2, 0, 1, 3};
    yall = dc_transpose(&b, yall, 4, y_perm);
    hall = dc_transpose(&b, hall, 3, tbi);
    if (call) call = dc_transpose(&b, call, 3, tbi);
  }
  dc_output(&b, 0, yall);
  dc_output(&b, 1, hall);
  if (call) dc_output(&b, 2, call);
  return dc_end(&b);
}

status onnx_decomp_rnn(onnx_node *nd, ir_node *none) {
  (void)none;
  return decomp(nd, KIND_RNN);
}

status onnx_decomp_gru(onnx_node *nd, ir_node *none) {
  (void)none;
  return decomp(nd, KIND_GRU);
}

status onnx_decomp_lstm(onnx_node *nd, ir_node *none) {
  (void)none;
  return decomp(nd, KIND_LSTM);
}
