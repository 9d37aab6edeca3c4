/* eval_fused.c - the reference evaluation of the fused ops (ir/fused.h),
 * the definitions of ir/ops.def written for clarity: f32 values, f64
 * accumulators, each result rounded once to its output's dtype.
 *   LayerNorm  row by row: s = x + residual rounded to x's dtype (the
 *              Add's result), mean and population variance of s in f64,
 *              y = (s - mean) / sqrt(var + epsilon) * scale + bias.
 *   FusedAttention  per batch and query: the scores scale * q.k (f64
 *              dot products, rounded to f32 as a MatMul's result), plus
 *              the biases, -inf where causal hides the key, a softmax in
 *              f64, times v; a query with every score -inf gives NaN (the
 *              softmax's 0/0) or, with zero_masked, 0.
 *   Recurrence per batch row and step: g = xw[t] + h rt + rb (f64 dot
 *              products, rounded to f32 as the cube's accumulator), the
 *              gates with exact sigmoid and tanh, c kept in f32, h rounded
 *              to y's dtype each step (ops.def).
 */
#include "ir/fused.h"

#include <math.h>
#include <string.h>

#include "common/fp16.h"
#include "ir/eval.h"
#include "ir/eval_internal.h"
#include "ir/view.h"

/* Input i as f32 values (a copy in the arena), or NULL when absent. */
static float *floats_in(ev *e, int i) {
  const ir_value *v = i < e->n->nin ? e->n->in[i] : NULL;
  if (!v) return NULL;
  int64_t n = ir_value_elements(v);
  float *f = arena_array(e->a, (size_t)(n > 0 ? n : 1), sizeof *f);
  if (f)
    for (int64_t k = 0; k < n; k++)
      f[k] = (float)elem_get(e->in[i], v->dtype, k);
  return f;
}

/* Output j from f32 values. */
static status floats_out(ev *e, int j, const float *y) {
  const ir_value *v = e->n->out[j];
  int64_t n = ir_value_elements(v), bytes = ir_value_bytes(v);
  e->out[j] = arena_alloc_aligned(e->a, bytes > 0 ? (size_t)bytes : 1, 64);
  if (!e->out[j]) return nomem(e);
  for (int64_t k = 0; k < n; k++)
    elem_put(e->out[j], v->dtype, k, y[k]);
  return ST_OK;
}

static float round_to(int dt, float v) { return dt == DT_FLOAT16 ? half_to_float(float_to_half(v)) : v; }

static status eval_layernorm(ev *e) {
  const ir_node *n = e->n;
  const ir_value *x = n->in[0];
  int axis = (int)ir_attr_int(n, "axis", -1), rms = ir_attr_int(n, "rms", 0) != 0;
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return fail(e, ST_ERR_INVALID, "axis out of range");
  double eps = ir_attr_float(n, "epsilon", 1e-5);
  int64_t d = 1, count = ir_value_elements(x);
  for (int i = axis; i < x->rank; i++)
    d *= x->dims[i];
  float *s = floats_in(e, 0), *scale = floats_in(e, 1), *bias = floats_in(e, 2), *res = floats_in(e, 3);
  float *y = arena_array(e->a, (size_t)(count > 0 ? count : 1), sizeof *y);
  if (!s || !y || (n->nin > 1 && n->in[1] && !scale) || (n->nin > 2 && n->in[2] && !bias) ||
      (n->nin > 3 && n->in[3] && !res))
    return nomem(e);
  if (res)
    for (int64_t k = 0; k < count; k++)
      s[k] = round_to(x->dtype, s[k] + res[k]);
  for (int64_t r = 0; d > 0 && r < count / d; r++) {
    const float *row = s + r * d;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < d && !rms; i++)
      mean += row[i];
    mean = rms ? 0 : mean / (double)d;
    for (int64_t i = 0; i < d; i++)
      var += (row[i] - mean) * (row[i] - mean);
    double inv = 1 / sqrt(var / (double)d + eps);
    for (int64_t i = 0; i < d; i++)
      y[r * d + i] = (float)((row[i] - mean) * inv * (scale ? scale[i] : 1.0) + (bias ? bias[i] : 0.0));
  }
  status st = floats_out(e, 0, y);
  return st || n->nout < 2 ? st : floats_out(e, 1, s);
}

/* Element strides of v along y's `nb` batch dims and the two score dims
 * (sq_dim, skv_dim: the strides of v's last two dims when v is a bias,
 * right-aligned, 0 where v broadcasts). */
static void bstrides(const ir_value *v, int nb, int matrix, int64_t *s) {
  int64_t step = 1;
  for (int i = 0; i < nb + 2; i++)
    s[i] = 0;
  int first = matrix ? nb : nb + 2; /* matrix operands: only their batch dims broadcast */
  for (int j = v->rank - 1, at = nb + 1; j >= 0; j--, at--) {
    if (at >= 0 && (at < first || !matrix)) s[at] = v->dims[j] == 1 ? 0 : step;
    step *= v->dims[j];
  }
}

/* A view's strides along y's nb batch dims (right-aligned, 0 where its dim
 * is 1 or missing), then along its last two dims, into s[nb + 2]. */
static void vstrides(const ir_view *v, int nb, int64_t *s) {
  for (int i = 0; i < nb + 2; i++)
    s[i] = 0;
  for (int j = v->rank - 1, at = nb + 1; j >= 0 && at >= 0; j--, at--)
    s[at] = v->dims[j] == 1 && j < v->rank - 2 ? 0 : v->strides[j];
}

static status eval_attention(ev *e) {
  const ir_node *n = e->n;
  ir_view op[4]; /* q, k, v, y as the node reads and writes them (ir/view.h) */
  for (int t = 0; t < 4; t++)
    if (ir_attn_operand(n, t, &op[t])) return fail(e, ST_ERR_INVALID, "malformed %s", ir_attn_view_attr[t]);
  const ir_view *q = &op[0], *v = &op[2], *y = &op[3];
  const int nb = y->rank - 2, kt = ir_attr_int(n, "k_trans", 0) != 0,
            causal = ir_attr_int(n, "causal", 0) != 0;
  const int zero = ir_attr_int(n, "zero_masked", 0) != 0;
  const int64_t off = ir_attr_int(n, "causal_offset", 0);
  const double scale = ir_attr_float(n, "scale", 1.0);
  const int64_t sq = q->dims[q->rank - 2], d = q->dims[q->rank - 1], skv = v->dims[v->rank - 2];
  const int64_t dv = v->dims[v->rank - 1];
  int64_t batch = 1, st[5][MAX_RANK + 2], sy[MAX_RANK + 2], o0[5] = {0};
  for (int i = 0; i < nb; i++)
    batch *= y->dims[i];
  const float *in[5];
  for (int i = 0; i < 5; i++) {
    in[i] = floats_in(e, i);
    if (i < n->nin && n->in[i] && !in[i]) return nomem(e);
    if (in[i] && i < 3) vstrides(&op[i], nb, st[i]), o0[i] = op[i].offset;
    if (in[i] && i >= 3) bstrides(n->in[i], nb, 0, st[i]);
  }
  vstrides(y, nb, sy);
  const int64_t ny = ir_value_elements(n->out[0]);
  float *out = arena_array(e->a, (size_t)(ny > 0 ? ny : 1), sizeof *out);
  double *p = arena_array(e->a, (size_t)skv, sizeof *p);
  if (!out || !p) return nomem(e);
  for (int64_t b = 0; b < batch; b++) {
    int64_t o[5], oy = y->offset, rem = b;
    memcpy(o, o0, sizeof o);
    for (int i = nb - 1; i >= 0; i--) {
      int64_t idx = rem % y->dims[i];
      rem /= y->dims[i];
      for (int t = 0; t < 5; t++)
        if (in[t]) o[t] += idx * st[t][i];
      oy += idx * sy[i];
    }
    const int64_t *sk = st[1];
    for (int64_t i = 0; i < sq; i++) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < skv; j++) {
        double acc = 0;
        for (int64_t c = 0; c < d; c++)
          acc += (double)in[0][o[0] + i * st[0][nb] + c * st[0][nb + 1]] *
                 in[1][o[1] + (kt ? c * sk[nb] + j * sk[nb + 1] : j * sk[nb] + c * sk[nb + 1])];
        double sc = (float)(scale * acc);
        for (int t = 3; t < 5; t++)
          if (in[t]) sc += in[t][o[t] + i * st[t][nb] + j * st[t][nb + 1]];
        if (causal && j > i + off) sc = -INFINITY;
        p[j] = sc;
        mx = sc > mx ? sc : mx;
      }
      for (int64_t j = 0; j < skv; j++)
        sum += p[j] = exp(p[j] - mx);
      for (int64_t c = 0; c < dv; c++) {
        double acc = 0;
        for (int64_t j = 0; j < skv; j++)
          acc += p[j] * in[2][o[2] + j * st[2][nb] + c * st[2][nb + 1]];
        out[oy + i * sy[nb] + c * sy[nb + 1]] = mx == -INFINITY && zero ? 0.0f : (float)(acc / sum);
      }
    }
  }
  return floats_out(e, 0, out);
}

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

/* One direction of an LSTM, GRU or RNN (ops.def's Recurrence). */
static status eval_recurrence(ev *e) {
  const ir_node *n = e->n;
  const int cell = (int)ir_attr_int(n, "cell", 0), rev = ir_attr_int(n, "reverse", 0) != 0;
  const int lbr = ir_attr_int(n, "linear_before_reset", 0) != 0;
  const int64_t T = n->in[0]->dims[0], B = n->in[0]->dims[1], H = n->in[1]->dims[0];
  const int64_t G = cell == 0 ? 4 : cell == 1 ? 3 : 1, GH = G * H;
  const int dt = n->out[0]->dtype;
  float *xw = floats_in(e, 0), *rt = floats_in(e, 1), *rb = floats_in(e, 2), *h0 = floats_in(e, 3),
        *c0 = floats_in(e, 4);
  float *y = arena_array(e->a, (size_t)(T * B * H), sizeof *y), *yh = arena_array(e->a, (size_t)(B * H), 4),
        *yc = arena_array(e->a, (size_t)(B * H), 4);
  float *g = arena_array(e->a, (size_t)GH, 4), *h = arena_array(e->a, (size_t)H, 4),
        *c = arena_array(e->a, (size_t)H, 4), *rh = arena_array(e->a, (size_t)H, 4);
  if (!xw || !rt || !y || !yh || !yc || !g || !h || !c || !rh) return nomem(e);
  for (int64_t b = 0; b < B; b++) {
    for (int64_t j = 0; j < H; j++)
      h[j] = h0 ? h0[b * H + j] : 0.0f, c[j] = c0 ? c0[b * H + j] : 0.0f;
    for (int64_t k = 0; k < T; k++) {
      const int64_t t = rev ? T - 1 - k : k;
      const float *x = xw + (t * B + b) * GH;
      const int64_t hcols = cell == 1 ? 2 * H : GH; /* GRU: h's gate apart */
      for (int64_t j = 0; j < GH; j++) {
        double acc = 0;
        for (int64_t i = 0; i < H && j < hcols; i++)
          acc += (double)h[i] * rt[i * GH + j];
        g[j] = (float)acc;
      }
      float *yt = y + (t * B + b) * H;
      for (int64_t j = 0; j < H; j++) {
        double a[4];
        for (int64_t q = 0; q < G; q++)
          a[q] = (double)x[q * H + j] + g[q * H + j] + (rb ? rb[q * H + j] : 0);
        if (cell == 0) {
          c[j] = (float)(sigm(a[2]) * c[j] + sigm(a[0]) * tanh(a[3]));
          yt[j] = round_to(dt, (float)(sigm(a[1]) * tanh(c[j])));
        } else if (cell == 1) {
          g[j] = (float)sigm(a[0]), rh[j] = (float)sigm(a[1]); /* z, r */
        } else {
          yt[j] = round_to(dt, (float)tanh(a[0]));
        }
      }
      if (cell == 1) { /* n's product: h rt_h (lbr) or (r h) rt_h */
        for (int64_t j = 0; j < H; j++) {
          double acc = 0;
          for (int64_t i = 0; i < H; i++)
            acc += (double)(lbr ? h[i] : round_to(dt, rh[i] * h[i])) * rt[i * GH + 2 * H + j];
          g[H + j] = (float)acc; /* h rt's r block is used up */
        }
        for (int64_t j = 0; j < H; j++) {
          double rbh = rb ? rb[2 * H + j] : 0, p = g[H + j];
          double nn = tanh(x[2 * H + j] + (lbr ? rh[j] * (p + rbh) : p + rbh));
          yt[j] = round_to(dt, (float)((1 - g[j]) * nn + g[j] * h[j]));
        }
      }
      memcpy(h, yt, sizeof *h * (size_t)H);
    }
    for (int64_t j = 0; j < H; j++)
      yh[b * H + j] = h[j], yc[b * H + j] = c[j];
  }
  status st = floats_out(e, 0, y);
  if (st == ST_OK) st = floats_out(e, 1, yh);
  if (st == ST_OK && n->nout > 2) st = floats_out(e, 2, yc);
  return st;
}

status ir_eval_fused(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d) {
  ev e = {n, inputs, outputs_out, a, d};
  switch (n->op) {
  case IR_OP_LAYERNORM: return eval_layernorm(&e);
  case IR_OP_ATTENTION: return eval_attention(&e);
  case IR_OP_RECURRENCE: return eval_recurrence(&e);
  default: return fail(&e, ST_ERR_UNSUPPORTED, "not a fused op");
  }
}
