/* eval.c - the reference evaluator (see eval.h).
 *
 * One function per op family, each a direct transcription of the ONNX
 * definition over C-order buffers. Float ops read their inputs through
 * float_in() (the buffer itself for f32, a converted copy for f16/f64),
 * compute into an f32 buffer with f64 accumulators, and finish with
 * float_out(), which converts to the output dtype. Integer arithmetic
 * (Add/Sub/Mul/Div on i64, i32, ...) is done in int64. Data movement ops copy
 * bytes, so they work for every dtype. Shapes come from the values: ir_eval_node
 * checks that every input and output has a known ND shape and that the dims a
 * kernel relies on agree, so a wrong graph gives an error, never a wild read.
 * Scratch and results come from the caller's arena.
 */
#include "ir/eval.h"
#include "ir/conv.h"
#include "ir/pool.h"
#include "ir/resize.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/dtype_cvt.h"
#include "common/elem.h"
#include "common/fp16.h"
#include "common/om_format.h"
#include "ir/eval_elem.h"
#include "ir/count.h"
#include "ir/eval_index.h"
#include "ir/eval_quant.h"
#include "ir/eval_internal.h"
#include "ir/fused.h"
#include "ir/view.h"
#include "ir/ir_vprog.h"

/* ---- buffers ---- */

static void *alloc_out(ev *e, int j) {
  int64_t bytes = ir_value_bytes(e->n->out[j]);
  e->out[j] = arena_alloc_aligned(e->a, bytes > 0 ? (size_t)bytes : 1, 64);
  return e->out[j];
}

/* Input i as f32: the buffer itself when it already is f32, else a copy. */
static const float *float_in(ev *e, int i) {
  const ir_value *v = e->n->in[i];
  if (v->dtype == DT_FLOAT32) return e->in[i];
  int64_t n = ir_value_elements(v);
  float *f = arena_array(e->a, (size_t)n, sizeof *f);
  if (f)
    for (int64_t k = 0; k < n; k++)
      f[k] = (float)elem_get(e->in[i], v->dtype, k);
  return f;
}

/* An f32 scratch buffer shaped like output j. */
static float *float_scratch(ev *e, int j) {
  return arena_array(e->a, (size_t)ir_value_elements(e->n->out[j]), sizeof(float));
}

/* Stores an f32 result as output j in that value's dtype. */
static status float_out(ev *e, int j, float *y) {
  const ir_value *v = e->n->out[j];
  if (v->dtype == DT_FLOAT32) {
    e->out[j] = y;
    return ST_OK;
  }
  void *p = alloc_out(e, j);
  if (!p) return nomem(e);
  int64_t n = ir_value_elements(v);
  for (int64_t k = 0; k < n; k++)
    elem_put(p, v->dtype, k, y[k]);
  return ST_OK;
}

static status need_float(ev *e, int i) {
  const ir_value *v = e->n->in[i];
  if (!is_float(v->dtype))
    return fail(e, ST_ERR_UNSUPPORTED, "input %d '%s' has dtype %s; expected f32, f16 or f64", i, v->name,
                dtype_name(v->dtype));
  return ST_OK;
}

static status need_rank(ev *e, const ir_value *v, int rank) {
  if (v->rank != rank)
    return fail(e, ST_ERR_INVALID, "'%s' has rank %d, expected %d", v->name, v->rank, rank);
  return ST_OK;
}

static int64_t prod(const int64_t *dims, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++)
    p *= dims[i];
  return p;
}

static int norm_axis(int64_t axis, int rank) { return (int)(axis < 0 ? axis + rank : axis); }

/* ---- elementwise and broadcasting ---- */

/* Strides of `in` over the dims of `out` (0 where `in` broadcasts); -1 when
 * `in` does not broadcast to `out`. */
static int bcast_strides(const ir_value *in, const ir_value *out, int64_t *st) {
  if (in->rank > out->rank) return -1;
  int off = out->rank - in->rank;
  int64_t s = 1;
  for (int i = out->rank - 1; i >= 0; i--) {
    int k = i - off;
    if (k < 0) {
      st[i] = 0;
      continue;
    }
    if (in->dims[k] != out->dims[i] && in->dims[k] != 1) return -1;
    st[i] = in->dims[k] == 1 ? 0 : s;
    s *= in->dims[k];
  }
  return 0;
}

/* Advances a multi-index over `dims` and the two offsets that follow it. */
static void bump(int rank, const int64_t *dims, int64_t *idx, const int64_t *sa, int64_t *oa,
                 const int64_t *sb, int64_t *ob) {
  for (int k = rank - 1; k >= 0; k--) {
    idx[k]++;
    *oa += sa[k];
    *ob += sb[k];
    if (idx[k] < dims[k]) return;
    *oa -= sa[k] * dims[k];
    *ob -= sb[k] * dims[k];
    idx[k] = 0;
  }
}

/* ---- cube ops ---- */

/* A fused activation (attr act, passes/fuse.c): relu and clip as bounds,
 * relu [0, inf), clip [clip_min, clip_max], none (-inf, inf); a MatMul's
 * gelu, gelu_tanh and silu as *fn_out (0: bounds only), in double. */
enum { EV_ACT_GELU = 1, EV_ACT_GELU_TANH, EV_ACT_SILU };

static double act_fn(int fn, double v) {
  if (fn == EV_ACT_GELU) return 0.5 * v * (1 + erf(v * M_SQRT1_2));
  if (fn == EV_ACT_GELU_TANH) return 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  if (fn == EV_ACT_SILU) return v / (1 + exp(-v));
  return v;
}

static status act_bounds(ev *e, double *lo_out, double *hi_out, int *fn_out) {
  const char *act = ir_attr_string(e->n, "act", NULL);
  *lo_out = -INFINITY, *hi_out = INFINITY, *fn_out = 0;
  if (act && e->n->op == IR_OP_MATMUL && strcmp(act, "gelu") == 0) {
    *fn_out = EV_ACT_GELU;
  } else if (act && e->n->op == IR_OP_MATMUL && strcmp(act, "gelu_tanh") == 0) {
    *fn_out = EV_ACT_GELU_TANH;
  } else if (act && e->n->op == IR_OP_MATMUL && strcmp(act, "silu") == 0) {
    *fn_out = EV_ACT_SILU;
  } else if (act && strcmp(act, "relu") == 0) {
    *lo_out = 0;
  } else if (act && strcmp(act, "clip") == 0) {
    *lo_out = ir_attr_float(e->n, "clip_min", -INFINITY);
    *hi_out = ir_attr_float(e->n, "clip_max", INFINITY);
  } else if (act) {
    return fail(e, ST_ERR_UNSUPPORTED, "act \"%s\"", act);
  }
  return ST_OK;
}

static status eval_batchnorm(ev *e) {
  const ir_value *X = e->n->in[0];
  if (X->rank < 2) return fail(e, ST_ERR_INVALID, "input '%s' has rank %d, expected >= 2", X->name, X->rank);
  int64_t C = X->dims[1], inner = prod(X->dims, 2, X->rank), outer = X->dims[0];
  for (int i = 1; i < 5; i++)
    if (ir_value_elements(e->n->in[i]) != C)
      return fail(e, ST_ERR_INVALID, "input %d '%s' is not [%lld]", i, e->n->in[i]->name, (long long)C);
  const float *x = float_in(e, 0), *s = float_in(e, 1), *b = float_in(e, 2), *m = float_in(e, 3),
              *v = float_in(e, 4);
  float *y = float_scratch(e, 0);
  if (!x || !s || !b || !m || !v || !y) return nomem(e);
  double eps = ir_attr_float(e->n, "epsilon", 1e-5);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t c = 0; c < C; c++) {
      double k = s[c] / sqrt((double)v[c] + eps);
      for (int64_t i = 0; i < inner; i++) {
        int64_t at = (o * C + c) * inner + i;
        y[at] = (float)((x[at] - (double)m[c]) * k + b[c]);
      }
    }
  return float_out(e, 0, y);
}

/* Aipp (om_format.h's AIPP task): the raw images in[0] by the record in[1],
 * transcribed from CANN's documented order: swap, crop, CSC in integers
 * with >> 8 and the clamp, (x - mean - min) * var_reci in f32, padding. */
static status eval_aipp(ev *e) {
  const ir_value *Y = e->n->out[0], *S = e->n->in[0];
  const int64_t N = Y->dims[0], C = Y->dims[1], H = Y->dims[2], W = Y->dims[3];
  const uint64_t rec_bytes = (uint64_t)ir_value_elements(e->n->in[1]);
  if (rec_bytes != OM_AIPP_PARAMS_BYTES && rec_bytes != (uint64_t)N * OM_AIPP_PARAMS_BYTES)
    return fail(e, ST_ERR_INVALID, "params '%s' is not one %d-byte record or one per image",
                e->n->in[1]->name, OM_AIPP_PARAMS_BYTES);
  float *y = float_scratch(e, 0);
  if (!y) return nomem(e);
  const uint8_t *src = e->in[0];
  om_aipp_params p0;
  memcpy(&p0, e->in[1], sizeof p0); /* the images' format and size */
  const uint64_t img = om_aipp_image_bytes(p0.input_format, (uint64_t)p0.src_w, (uint64_t)p0.src_h);
  for (int64_t n = 0; n < N; n++) {
    om_aipp_params p;
    memcpy(&p, (const uint8_t *)e->in[1] + om_aipp_record(rec_bytes, (uint64_t)n) * OM_AIPP_PARAMS_BYTES,
           sizeof p);
    if (!img || !om_aipp_same_images(&p, &p0) || C > 3 || C < 1 || p.crop_x < 0 || p.crop_y < 0 ||
        p.crop_w + p.pad_left + p.pad_right != W || p.crop_h + p.pad_top + p.pad_bottom != H ||
        p.crop_x + p.crop_w > p.src_w || p.crop_y + p.crop_h > p.src_h ||
        (uint64_t)N * img > (uint64_t)ir_value_elements(S))
      return fail(e, ST_ERR_INVALID, "the AIPP record of image %lld does not fit the images or the output",
                  (long long)n);
    for (int64_t h = 0; h < H; h++)
      for (int64_t w = 0; w < W; w++) {
        int32_t q[3] = {0, 0, 0};
        const int pad = h < p.pad_top || h >= H - p.pad_bottom || w < p.pad_left || w >= W - p.pad_right;
        if (!pad)
          om_aipp_pixel(&p, src + (uint64_t)n * img, (int32_t)(p.crop_x + w - p.pad_left),
                        (int32_t)(p.crop_y + h - p.pad_top), q);
        for (int64_t c = 0; c < C; c++)
          y[((n * C + c) * H + h) * W + w] =
              pad ? p.pad_value : ((float)(q[c] - p.mean[c]) - p.min[c]) * p.var_reci[c];
      }
  }
  return float_out(e, 0, y);
}

static status eval_softmax(ev *e) {
  const ir_value *X = e->n->in[0];
  int axis = norm_axis(ir_attr_int(e->n, "axis", -1), X->rank);
  if (axis < 0 || axis >= (X->rank ? X->rank : 1))
    return fail(e, ST_ERR_INVALID, "axis %lld out of range for rank %d",
                (long long)ir_attr_int(e->n, "axis", -1), X->rank);
  int64_t outer = prod(X->dims, 0, axis), len, inner;
  if (ir_attr_int(e->n, "coerce_2d", 0)) {
    len = prod(X->dims, axis, X->rank);
    inner = 1;
  } else {
    len = X->rank ? X->dims[axis] : 1;
    inner = prod(X->dims, axis + 1, X->rank);
  }
  int is_log = ir_attr_int(e->n, "log", 0) != 0;
  const float *x = float_in(e, 0);
  float *y = float_scratch(e, 0);
  if (!x || !y) return nomem(e);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const float *xs = x + o * len * inner + i;
      float *ys = y + o * len * inner + i;
      double mx = -INFINITY, sum = 0;
      for (int64_t k = 0; k < len; k++)
        mx = xs[k * inner] > mx ? xs[k * inner] : mx;
      for (int64_t k = 0; k < len; k++)
        sum += exp(xs[k * inner] - mx);
      for (int64_t k = 0; k < len; k++)
        ys[k * inner] = (float)(is_log ? xs[k * inner] - mx - log(sum) : exp(xs[k * inner] - mx) / sum);
    }
  return float_out(e, 0, y);
}

/* The sums of one output row of a matrix product: acc[n] = sum over k of
 * (double)a[k * ask] * b[k * bsk + n * bsn], n < N. Each sum takes its
 * products in k order, as a dot product would, but k is the outer loop so
 * that a contiguous b (bsn 1) is read row by row instead of down its
 * columns (a BERT-base calibration run: most of its time was those column
 * walks); the order of the adds is the same, so the sums are too. A b
 * with bsn != 1 is first copied into pack (K x N floats), once per b
 * (*packed_b remembers which). */
static void row_sums(const float *a, int64_t ask, const float *b, int64_t bsk, int64_t bsn, int64_t K,
                     int64_t N, float *pack, const float **packed_b, double *acc) {
  if (bsn != 1) {
    if (*packed_b != b) {
      for (int64_t k = 0; k < K; k++)
        for (int64_t n = 0; n < N; n++)
          pack[k * N + n] = b[k * bsk + n * bsn];
      *packed_b = b;
    }
    b = pack, bsk = N;
  }
  for (int64_t n = 0; n < N; n++)
    acc[n] = 0;
  for (int64_t k = 0; k < K; k++) {
    const double av = a[k * ask];
    const float *br = b + k * bsk;
    for (int64_t n = 0; n < N; n++)
      acc[n] += av * br[n];
  }
}

static status eval_gemm(ev *e) {
  const ir_node *n = e->n;
  const ir_value *A = n->in[0], *B = n->in[1], *Cv = n->nin > 2 ? n->in[2] : NULL, *Y = n->out[0];
  status st;
  if ((st = need_rank(e, A, 2)) || (st = need_rank(e, B, 2)) || (st = need_rank(e, Y, 2))) return st;
  int ta = ir_attr_int(n, "transA", 0) != 0, tb = ir_attr_int(n, "transB", 0) != 0;
  int64_t M = Y->dims[0], N = Y->dims[1], K = ta ? A->dims[0] : A->dims[1];
  if ((ta ? A->dims[1] : A->dims[0]) != M || (tb ? B->dims[1] : B->dims[0]) != K ||
      (tb ? B->dims[0] : B->dims[1]) != N)
    return fail(e, ST_ERR_INVALID, "A, B and output dims disagree");
  int64_t sc[2] = {0, 0}, idx[2] = {0, 0}, oc = 0, unused = 0;
  if (Cv && bcast_strides(Cv, Y, sc))
    return fail(e, ST_ERR_INVALID, "C '%s' does not broadcast to [M,N]", Cv->name);
  double alpha = ir_attr_float(n, "alpha", 1.0), beta = ir_attr_float(n, "beta", 1.0);
  const float *a = float_in(e, 0), *b = float_in(e, 1), *c = Cv ? float_in(e, 2) : NULL, *packed = NULL;
  float *y = float_scratch(e, 0), *pack = tb ? arena_array(e->a, (size_t)(K * N) + 1, sizeof *pack) : NULL;
  double *acc = arena_array(e->a, (size_t)N + 1, sizeof *acc);
  if (!a || !b || !y || (Cv && !c) || (tb && !pack) || !acc) return nomem(e);
  for (int64_t m = 0; m < M; m++) {
    row_sums(a + (ta ? m : m * K), ta ? M : 1, b, tb ? 1 : N, tb ? K : 1, K, N, pack, &packed, acc);
    for (int64_t nn = 0; nn < N; nn++, bump(2, Y->dims, idx, sc, &oc, sc, &unused))
      y[m * N + nn] = (float)(alpha * acc[nn] + (c ? beta * c[oc] : 0));
  }
  return float_out(e, 0, y);
}

/* A MatMul operand's view (ops.def: permA / permB, a folded Transpose):
 * its dims and element strides, stored dim perm[d] as dim d. -1 when the
 * attribute is no permutation of the operand's dims. */
static int operand_view(const ir_node *n, int j, int64_t *dims, int64_t *strides) {
  const ir_value *v = n->in[j];
  int64_t perm[MAX_RANK + 1], st[MAX_RANK], s = 1;
  int count = ir_attr_ints(n, j ? "permB" : "permA", perm, MAX_RANK + 1);
  unsigned seen = 0;
  if (count >= 0 && count != v->rank) return -1;
  for (int d = v->rank - 1; d >= 0; d--)
    st[d] = s, s *= v->dims[d];
  for (int d = 0; d < v->rank; d++) {
    int64_t p = count >= 0 ? perm[d] : d;
    if (p < 0 || p >= v->rank || (seen >> p) & 1u) return -1;
    seen |= 1u << p;
    dims[d] = v->dims[p], strides[d] = st[p];
  }
  return 0;
}

/* MatMul, as imported and as passes make it (ops.def): y = act(alpha *
 * op(A) x op(B) + bias + beta * c), batch dims broadcast numpy-style. */
static status eval_matmul(ev *e) {
  const ir_node *n = e->n;
  const ir_value *A = n->in[0], *B = n->in[1], *Y = n->out[0];
  const ir_value *Bv = n->nin > 2 ? n->in[2] : NULL, *Cv = n->nin > 3 ? n->in[3] : NULL;
  int ra = A->rank, rb = B->rank, ta = ir_attr_int(n, "transA", 0) != 0,
      tb = ir_attr_int(n, "transB", 0) != 0;
  int64_t ad[MAX_RANK], as[MAX_RANK], bd[MAX_RANK], bs[MAX_RANK];
  if (ra < 1 || rb < 1) return fail(e, ST_ERR_INVALID, "MatMul of a scalar");
  if ((ta && ra < 2) || (tb && rb < 2)) return fail(e, ST_ERR_INVALID, "transA/transB on a rank-1 input");
  if (operand_view(n, 0, ad, as) || operand_view(n, 1, bd, bs))
    return fail(e, ST_ERR_INVALID, "permA or permB is no permutation of its input's dims");
  int64_t M = ra >= 2 ? ad[ra - 2 + ta] : 1, K = ra >= 2 ? ad[ra - 1 - ta] : ad[0];
  int64_t Kb = rb >= 2 ? bd[rb - 2 + tb] : bd[0], N = rb >= 2 ? bd[rb - 1 - tb] : 1;
  if (K != Kb) return fail(e, ST_ERR_INVALID, "inner dims %lld and %lld differ", (long long)K, (long long)Kb);
  int64_t a_sm = ra >= 2 ? as[ra - 2 + ta] : 0, a_sk = ra >= 2 ? as[ra - 1 - ta] : as[0];
  int64_t b_sk = rb >= 2 ? bs[rb - 2 + tb] : bs[0], b_sn = rb >= 2 ? bs[rb - 1 - tb] : 0;
  /* batch dims: everything of Y before its matrix dims, A and B broadcast to it */
  int yb = Y->rank - (ra >= 2) - (rb >= 2), abat = ra >= 2 ? ra - 2 : 0, bbat = rb >= 2 ? rb - 2 : 0;
  if (yb < 0 || yb < abat || yb < bbat)
    return fail(e, ST_ERR_INVALID, "output rank %d does not fit", Y->rank);
  int64_t sa[MAX_RANK] = {0}, sb[MAX_RANK] = {0}, idx[MAX_RANK] = {0};
  for (int i = yb - 1, s = 0; i >= 0; i--, s++) {
    int64_t da = s < abat ? ad[abat - 1 - s] : 1, db = s < bbat ? bd[bbat - 1 - s] : 1;
    if ((da != 1 && da != Y->dims[i]) || (db != 1 && db != Y->dims[i]))
      return fail(e, ST_ERR_INVALID, "batch dims of '%s' and '%s' do not broadcast", A->name, B->name);
    sa[i] = da == 1 ? 0 : as[abat - 1 - s];
    sb[i] = db == 1 ? 0 : bs[bbat - 1 - s];
  }
  int64_t batches = prod(Y->dims, 0, yb), oa = 0, ob = 0, sc[MAX_RANK] = {0}, cidx[MAX_RANK] = {0}, oc = 0,
          unused = 0;
  if (batches * M * N != ir_value_elements(Y))
    return fail(e, ST_ERR_INVALID, "output '%s' has the wrong size", Y->name);
  if (Bv && ir_value_elements(Bv) != N)
    return fail(e, ST_ERR_INVALID, "bias '%s' is not [%lld]", Bv->name, (long long)N);
  if (Cv && bcast_strides(Cv, Y, sc))
    return fail(e, ST_ERR_INVALID, "c '%s' does not broadcast to y", Cv->name);
  double alpha = ir_attr_float(n, "alpha", 1.0), beta = ir_attr_float(n, "beta", 1.0), lo, hi;
  int fn;
  status st = act_bounds(e, &lo, &hi, &fn);
  if (st) return st;
  const float *a = float_in(e, 0), *b = float_in(e, 1), *bias = Bv ? float_in(e, 2) : NULL,
              *c = Cv ? float_in(e, 3) : NULL;
  float *y = float_scratch(e, 0),
        *pack = b_sn != 1 ? arena_array(e->a, (size_t)(K * N) + 1, sizeof *pack) : NULL;
  const float *packed = NULL;
  double *acc = arena_array(e->a, (size_t)N + 1, sizeof *acc);
  if (!a || !b || !y || (Bv && !bias) || (Cv && !c) || (b_sn != 1 && !pack) || !acc) return nomem(e);
  for (int64_t bt = 0; bt < batches; bt++, bump(yb, Y->dims, idx, sa, &oa, sb, &ob))
    for (int64_t m = 0; m < M; m++) {
      row_sums(a + oa + m * a_sm, a_sk, b + ob, b_sk, b_sn, K, N, pack, &packed, acc);
      for (int64_t nn = 0; nn < N; nn++) {
        double v = act_fn(fn, alpha * acc[nn] + (bias ? bias[nn] : 0) + (c ? beta * c[oc] : 0));
        y[(bt * M + m) * N + nn] = (float)(v < lo ? lo : v > hi ? hi : v);
        bump(Y->rank, Y->dims, cidx, sc, &oc, sc, &unused);
      }
    }
  return float_out(e, 0, y);
}

/* ---- data movement ---- */

static status eval_copy(ev *e) {
  const ir_value *X = e->n->in[0], *Y = e->n->out[0];
  if (ir_value_elements(X) != ir_value_elements(Y) || X->dtype != Y->dtype)
    return fail(e, ST_ERR_INVALID, "'%s' and '%s' differ in size or dtype", X->name, Y->name);
  void *y = alloc_out(e, 0);
  if (!y) return nomem(e);
  memcpy(y, e->in[0], (size_t)ir_value_bytes(X));
  return ST_OK;
}

static status eval_shape(ev *e) {
  const ir_value *X = e->n->in[0], *Y = e->n->out[0];
  int64_t start = ir_attr_int(e->n, "start", 0), end = ir_attr_int(e->n, "end", X->rank);
  if (start < 0) start += X->rank;
  if (end < 0) end += X->rank;
  start = start < 0 ? 0 : start > X->rank ? X->rank : start;
  end = end < 0 ? 0 : end > X->rank ? X->rank : end;
  int64_t len = end > start ? end - start : 0;
  if (Y->dtype != DT_INT64 || ir_value_elements(Y) != len)
    return fail(e, ST_ERR_INVALID, "output '%s' is not i64[%lld]", Y->name, (long long)len);
  int64_t *y = alloc_out(e, 0);
  if (!y) return nomem(e);
  for (int64_t i = 0; i < len; i++)
    y[i] = X->dims[start + i];
  return ST_OK;
}

static status eval_gather(ev *e) {
  const ir_value *X = e->n->in[0], *I = e->n->in[1], *Y = e->n->out[0];
  if (X->rank < 1) return fail(e, ST_ERR_INVALID, "data '%s' is a scalar", X->name);
  int axis = norm_axis(ir_attr_int(e->n, "axis", 0), X->rank);
  if (axis < 0 || axis >= X->rank) return fail(e, ST_ERR_INVALID, "axis out of range for rank %d", X->rank);
  if (I->dtype != DT_INT64 && I->dtype != DT_INT32)
    return fail(e, ST_ERR_INVALID, "indices '%s' are %s, expected i64 or i32", I->name, dtype_name(I->dtype));
  int64_t outer = prod(X->dims, 0, axis), len = X->dims[axis], nidx = ir_value_elements(I);
  size_t es = dtype_size(X->dtype), inner = (size_t)prod(X->dims, axis + 1, X->rank) * es;
  if (Y->dtype != X->dtype || ir_value_elements(Y) != outer * nidx * prod(X->dims, axis + 1, X->rank))
    return fail(e, ST_ERR_INVALID, "output '%s' has the wrong size or dtype", Y->name);
  unsigned char *y = alloc_out(e, 0);
  const unsigned char *x = e->in[0];
  if (!y) return nomem(e);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < nidx; j++) {
      int64_t k = elem_get_int(e->in[1], I->dtype, j);
      if (k < -len || k >= len)
        return fail(e, ST_ERR_INVALID, "index %lld out of range [%lld, %lld)", (long long)k, (long long)-len,
                    (long long)len);
      if (k < 0) k += len;
      memcpy(y + (size_t)(o * nidx + j) * inner, x + (size_t)(o * len + k) * inner, inner);
    }
  return ST_OK;
}

static status eval_gather_elements(ev *e) {
  const ir_value *X = e->n->in[0], *I = e->n->in[1], *Y = e->n->out[0];
  int axis = norm_axis(ir_attr_int(e->n, "axis", 0), X->rank);
  if (axis < 0 || axis >= X->rank || I->rank != X->rank || (I->dtype != DT_INT64 && I->dtype != DT_INT32))
    return fail(e, ST_ERR_INVALID, "axis, indices rank or indices dtype invalid");
  if (Y->dtype != X->dtype || Y->rank != I->rank || ir_value_elements(Y) != ir_value_elements(I))
    return fail(e, ST_ERR_INVALID, "output '%s' does not have the indices' shape", Y->name);
  size_t es = dtype_size(X->dtype);
  int64_t len = X->dims[axis];
  unsigned char *y = alloc_out(e, 0);
  if (!y) return nomem(e);
  for (int64_t i = 0; i < ir_value_elements(Y); i++) {
    int64_t k = elem_get_int(e->in[1], I->dtype, i), rest = i, at = 0, scale = 1;
    if (k < -len || k >= len)
      return fail(e, ST_ERR_INVALID, "index %lld out of range [%lld, %lld)", (long long)k, (long long)-len,
                  (long long)len);
    if (k < 0) k += len;
    for (int d = I->rank - 1; d >= 0; d--) {
      int64_t c = rest % I->dims[d];
      rest /= I->dims[d];
      if (d != axis && c >= X->dims[d])
        return fail(e, ST_ERR_INVALID, "indices exceed the data outside the axis");
      at += (d == axis ? k : c) * scale;
      scale *= X->dims[d];
    }
    memcpy(y + (size_t)i * es, (const unsigned char *)e->in[0] + (size_t)at * es, es);
  }
  return ST_OK;
}

/* Pad: ONNX's four modes; -1 = outside x in constant mode. */
static int64_t pad_src(int mode, int64_t i, int64_t D) {
  if (i >= 0 && i < D) return i;
  if (mode == 1) {
    int64_t p = 2 * (D - 1), r = p ? i % p : 0;
    r = r < 0 ? r + p : r;
    return r < D ? r : p - r;
  }
  if (mode == 2) return i < 0 ? 0 : D - 1;
  if (mode == 3) return (i % D + D) % D;
  return -1;
}

static status eval_pad(ev *e) {
  const ir_value *X = e->n->in[0], *Y = e->n->out[0];
  static const char *const modes[] = {"constant", "reflect", "edge", "wrap"};
  int mode = -1;
  for (int i = 0; i < 4; i++)
    if (!strcmp(ir_attr_string(e->n, "mode", "constant"), modes[i])) mode = i;
  int64_t pads[2 * MAX_RANK + 1];
  if (mode < 0 || ir_attr_ints(e->n, "pads", pads, 2 * MAX_RANK + 1) != 2 * X->rank || Y->rank != X->rank ||
      Y->dtype != X->dtype)
    return fail(e, ST_ERR_INVALID, "bad mode or pads, or output '%s' does not match", Y->name);
  for (int d = 0; d < X->rank; d++) {
    if (Y->dims[d] != X->dims[d] + pads[d] + pads[X->rank + d])
      return fail(e, ST_ERR_INVALID, "output dims do not match the pads");
    if (mode != 0 && Y->dims[d] > 0 && (X->dims[d] < (mode == 1 ? 2 : 1)) &&
        (pads[d] > 0 || pads[X->rank + d] > 0))
      return fail(e, ST_ERR_INVALID, "%s padding of an extent-%lld dim", modes[mode], (long long)X->dims[d]);
  }
  size_t es = dtype_size(Y->dtype);
  unsigned char *y = alloc_out(e, 0), value[8];
  if (!y) return nomem(e);
  elem_put(value, Y->dtype, 0, ir_attr_float(e->n, "value", 0.0));
  for (int64_t i = 0; i < ir_value_elements(Y); i++) {
    int64_t rest = i, at = 0, scale = 1;
    for (int d = Y->rank - 1; d >= 0 && at >= 0; d--) {
      int64_t src = pad_src(mode, rest % Y->dims[d] - pads[d], X->dims[d]);
      rest /= Y->dims[d];
      at = src < 0 ? -1 : at + src * scale;
      scale *= X->dims[d];
    }
    memcpy(y + (size_t)i * es, at < 0 ? value : (const unsigned char *)e->in[0] + (size_t)at * es, es);
  }
  return ST_OK;
}

static status eval_concat(ev *e) {
  const ir_value *Y = e->n->out[0];
  int axis = norm_axis(ir_attr_int(e->n, "axis", 0), Y->rank);
  if (axis < 0 || axis >= Y->rank) return fail(e, ST_ERR_INVALID, "axis out of range for rank %d", Y->rank);
  size_t es = dtype_size(Y->dtype);
  int64_t outer = prod(Y->dims, 0, axis), inner = prod(Y->dims, axis + 1, Y->rank), total = 0;
  for (int i = 0; i < e->n->nin; i++) {
    const ir_value *X = e->n->in[i];
    if (X->rank != Y->rank || X->dtype != Y->dtype || prod(X->dims, 0, axis) != outer ||
        prod(X->dims, axis + 1, X->rank) != inner)
      return fail(e, ST_ERR_INVALID, "input %d '%s' does not match the output", i, X->name);
    total += X->dims[axis];
  }
  if (total != Y->dims[axis])
    return fail(e, ST_ERR_INVALID, "inputs add up to %lld along the axis", (long long)total);
  unsigned char *y = alloc_out(e, 0);
  if (!y) return nomem(e);
  size_t at = 0;
  for (int64_t o = 0; o < outer; o++)
    for (int i = 0; i < e->n->nin; i++) {
      size_t chunk = (size_t)(e->n->in[i]->dims[axis] * inner) * es;
      memcpy(y + at, (const unsigned char *)e->in[i] + (size_t)o * chunk, chunk);
      at += chunk;
    }
  return ST_OK;
}

static status eval_cast(ev *e) {
  const ir_value *X = e->n->in[0], *Y = e->n->out[0];
  if (ir_value_elements(X) != ir_value_elements(Y))
    return fail(e, ST_ERR_INVALID, "input and output sizes differ");
  void *y = alloc_out(e, 0);
  if (!y) return nomem(e);
  int64_t n = ir_value_elements(Y);
  for (int64_t i = 0; i < n; i++) {
    if (is_float(X->dtype))
      elem_put(y, Y->dtype, i, elem_get(e->in[0], X->dtype, i));
    else
      elem_put_int(y, Y->dtype, i, elem_get_int(e->in[0], X->dtype, i));
  }
  return ST_OK;
}

/* Convert: common/dtype_cvt.h, as libomrt's TRANSDATA runs it. */
static status eval_convert(ev *e) {
  const ir_node *n = e->n;
  const ir_value *X = n->in[0], *Y = n->out[0];
  if (ir_value_elements(X) != ir_value_elements(Y))
    return fail(e, ST_ERR_INVALID, "input and output sizes differ");
  void *y = alloc_out(e, 0);
  if (!y) return nomem(e);
  cvt_run(y, Y->dtype, 0, e->in[0], X->dtype, 0, (size_t)ir_value_elements(Y),
          (int)ir_attr_int(n, "saturate", 1), (int)ir_attr_int(n, "round_mode", CVT_ROUND_UP));
  return ST_OK;
}

/* Transpose, Slice, Split, Expand, Tile, DepthToSpace, SpaceToDepth: the
 * strided view of ir/view.h (one per output), copied element by element in
 * any dtype. */
static status eval_view_out(ev *e, int k) {
  const ir_value *X = e->n->in[0], *Y = e->n->out[k];
  ir_view v;
  char err[256];
  if (ir_view_build(e->n, k, X->rank, X->dims, &v, err, sizeof err))
    return fail(e, ST_ERR_INVALID, "%s", err);
  int64_t count = prod(v.dims, 0, v.rank), xcount = ir_value_elements(X);
  if (Y->dtype != X->dtype || ir_value_elements(Y) != count)
    return fail(e, ST_ERR_INVALID, "output '%s' does not match the view of '%s'", Y->name, X->name);
  size_t es = dtype_size(X->dtype);
  unsigned char *y = alloc_out(e, k);
  const unsigned char *x = e->in[0];
  if (!y) return nomem(e);
  for (int64_t i = 0; i < count; i++) {
    int64_t rest = i, at = v.offset;
    for (int d = v.rank - 1; d >= 0; d--) {
      at += rest % v.dims[d] * v.strides[d];
      rest /= v.dims[d];
    }
    if (at < 0 || at >= xcount)
      return fail(e, ST_ERR_INVALID, "view reads element %lld outside '%s'", (long long)at, X->name);
    memcpy(y + (size_t)i * es, x + (size_t)at * es, es);
  }
  return ST_OK;
}

static status eval_view(ev *e) {
  for (int k = 0; k < e->n->nout; k++) {
    status st = eval_view_out(e, k);
    if (st) return st;
  }
  return ST_OK;
}

/* ---- reductions ---- */

int ir_reduce_mode(const ir_node *n) {
  static const char *const names[OM_REDUCE_OP_COUNT] = {"sum",       "mean",      "max",    "min",
                                                        "prod",      "l1",        "l2",     "logsum",
                                                        "logsumexp", "sumsquare", "argmax", "argmin"};
  const char *mode = ir_attr_string(n, "mode", "");
  for (int i = 0; i < OM_REDUCE_OP_COUNT; i++)
    if (!strcmp(mode, names[i])) return i;
  return -1;
}

int ir_reduce_mask(const ir_node *n, int rank, uint32_t *mask_out) {
  int64_t axes[MAX_RANK + 1];
  int count = ir_attr_ints(n, "axes", axes, MAX_RANK + 1);
  uint32_t mask = 0;
  if (ir_attr_int(n, "noop", 0))
    count = 0;
  else if (count < 0)
    mask = rank >= 32 ? 0 : (1u << rank) - 1u;
  if (count > MAX_RANK) return -1;
  for (int i = 0; i < count; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank || (mask >> a) & 1u) return -1;
    mask |= 1u << a;
  }
  *mask_out = mask;
  return 0;
}

/* The ONNX definitions, in double; an empty reduction gives the identity. */
static status eval_reduce(ev *e) {
  const ir_value *X = e->n->in[0], *Y = e->n->out[0];
  int mode = ir_reduce_mode(e->n);
  uint32_t mask;
  if (mode < 0) return fail(e, ST_ERR_INVALID, "unknown mode '%s'", ir_attr_string(e->n, "mode", ""));
  if (ir_reduce_mask(e->n, X->rank, &mask))
    return fail(e, ST_ERR_INVALID, "axes out of range or repeated for rank %d", X->rank);
  int is_arg = mode == OM_REDUCE_ARGMAX || mode == OM_REDUCE_ARGMIN,
      last = ir_attr_int(e->n, "select_last_index", 0) != 0;
  int64_t ycount = 1, count = 1;
  for (int d = 0; d < X->rank; d++) {
    if ((mask >> d) & 1u)
      count *= X->dims[d];
    else
      ycount *= X->dims[d];
  }
  if (ir_value_elements(Y) != ycount)
    return fail(e, ST_ERR_INVALID, "output '%s' has the wrong size", Y->name);
  if (is_arg && (Y->dtype != DT_INT64 || __builtin_popcount(mask) != 1 || count < 1))
    return fail(e, ST_ERR_INVALID, "an arg-extremum needs one non-empty axis and an i64 output");
  if (!is_arg && Y->dtype != X->dtype)
    return fail(e, ST_ERR_INVALID, "output '%s' has another dtype", Y->name);
  int fl = is_float(X->dtype);
  void *y = alloc_out(e, 0);
  if (!y) return nomem(e);
  int64_t idx[MAX_RANK];
  for (int64_t o = 0; o < ycount; o++) {
    /* kept coordinates of y element o, reduced ones from 0 */
    int64_t rest = o;
    for (int d = X->rank - 1; d >= 0; d--) {
      if ((mask >> d) & 1u)
        idx[d] = 0;
      else
        idx[d] = rest % X->dims[d], rest /= X->dims[d];
    }
    double acc = mode == OM_REDUCE_PROD  ? 1
                 : mode == OM_REDUCE_MAX ? -INFINITY
                 : mode == OM_REDUCE_MIN ? INFINITY
                                         : 0;
    int64_t iacc = mode == OM_REDUCE_PROD ? 1 : 0, best = 0, bestk = 0;
    double mx = -INFINITY, bv = 0;
    for (int pass = mode == OM_REDUCE_LOGSUMEXP ? 0 : 1; pass < 2; pass++)
      for (int64_t k = 0; k < count; k++) {
        int64_t r = k, at = 0;
        for (int d = X->rank - 1; d >= 0; d--)
          if ((mask >> d) & 1u) idx[d] = r % X->dims[d], r /= X->dims[d];
        for (int d = 0; d < X->rank; d++)
          at = at * X->dims[d] + idx[d];
        double v = elem_get(e->in[0], X->dtype, at);
        int64_t iv = elem_get_int(e->in[0], X->dtype, at);
        if (pass == 0) {
          mx = v > mx ? v : mx;
          continue;
        }
        if (is_arg) {
          double cmp = fl ? v - bv : (double)((iv > best) - (iv < best));
          if (k == 0 || (mode == OM_REDUCE_ARGMAX ? cmp > 0 : cmp < 0) || (last && cmp == 0))
            bv = v, best = iv, bestk = k;
          continue;
        }
        switch (mode) {
        case OM_REDUCE_MAX:
          acc = v > acc || isnan(v) ? v : acc;
          iacc = k == 0 || iv > iacc ? iv : iacc;
          break;
        case OM_REDUCE_MIN:
          acc = v < acc || isnan(v) ? v : acc;
          iacc = k == 0 || iv < iacc ? iv : iacc;
          break;
        case OM_REDUCE_PROD:
          acc *= v;
          iacc = (int64_t)((uint64_t)iacc * (uint64_t)iv);
          break;
        case OM_REDUCE_L1:
          acc += fabs(v);
          iacc = (int64_t)((uint64_t)iacc + (uint64_t)(iv < 0 ? -iv : iv));
          break;
        case OM_REDUCE_L2:
        case OM_REDUCE_SUMSQUARE:
          acc += v * v;
          iacc = (int64_t)((uint64_t)iacc + (uint64_t)iv * (uint64_t)iv);
          break;
        case OM_REDUCE_LOGSUMEXP: acc += isinf(mx) ? 0 : exp(v - mx); break;
        default:
          acc += v;
          iacc = (int64_t)((uint64_t)iacc + (uint64_t)iv);
          break;
        }
      }
    if (is_arg) {
      elem_put_int(y, DT_INT64, o, bestk);
      continue;
    }
    switch (mode) {
    case OM_REDUCE_MEAN: acc /= (double)count; break;
    case OM_REDUCE_L2: acc = sqrt(acc); break;
    case OM_REDUCE_LOGSUM: acc = log(acc); break;
    case OM_REDUCE_LOGSUMEXP: acc = isinf(mx) ? mx : mx + log(acc); break;
    default: break;
    }
    if (fl)
      elem_put(y, Y->dtype, o, acc);
    else if (count == 0 &&
             (mode == OM_REDUCE_MAX || mode == OM_REDUCE_MIN)) /* the dtype's lowest / highest */
      elem_put_int(y, Y->dtype, o,
                   Y->dtype == DT_INT64   ? (acc < 0 ? INT64_MIN : INT64_MAX)
                   : Y->dtype == DT_INT32 ? (acc < 0 ? INT32_MIN : INT32_MAX)
                   : Y->dtype == DT_INT8  ? (acc < 0 ? INT8_MIN : INT8_MAX)
                   : acc < 0              ? 0
                   : Y->dtype == DT_BOOL  ? 1
                                          : UINT8_MAX);
    else
      elem_put_int(y, Y->dtype, o, iacc);
  }
  return ST_OK;
}

int ir_eval_supported(ir_op op) { return op != IR_OP_TRANSDATA && op < IR_OP_COUNT; }

/* 1 when every stride of v (a product of trailing dims) fits in int64. An
 * empty value's other dims are not bounded by its size (0 x 2^62 x 3), and
 * the evaluators compute strides before looping over the elements, so an
 * empty dim counts 1 here. */
static int strides_fit(const ir_value *v) {
  int64_t s = 1;
  for (int i = 0; i < v->rank; i++)
    if (__builtin_mul_overflow(s, v->dims[i] > 1 ? v->dims[i] : 1, &s)) return 0;
  return 1;
}

/* Every required input and every output is present with a known ND shape
 * whose strides fit in int64 (else ST_ERR_UNSUPPORTED: folding leaves the
 * node) and a sized dtype; ops that keep the element count keep it. */
static status check_values(ev *e) {
  const ir_node *n = e->n;
  for (int k = 0; k < n->nin + n->nout; k++) {
    const ir_value *v = k < n->nin ? n->in[k] : n->out[k - n->nin];
    if (!v && (k >= n->nin || k < ir_ops[n->op].min_in || n->op == IR_OP_CONCAT))
      return fail(e, ST_ERR_INVALID, "%s %d is missing", k < n->nin ? "input" : "output",
                  k < n->nin ? k : k - n->nin);
    if (!v) continue;
    if (v->rank < 0 || ir_value_bytes(v) < 0)
      return fail(e, ST_ERR_INVALID, "'%s' has an unknown shape or dtype", v->name);
    if (v->layout != LAYOUT_ND)
      return fail(e, ST_ERR_UNSUPPORTED, "'%s' is in layout %s; the evaluator takes ND", v->name,
                  layout_name(v->layout));
    if (!strides_fit(v))
      return fail(e, ST_ERR_UNSUPPORTED, "'%s' is empty and its other dims multiply past 2^63", v->name);
    if (k < n->nin && !e->in[k] && n->op != IR_OP_SHAPE && n->op != IR_OP_SIZE)
      return fail(e, ST_ERR_INVALID, "input %d '%s' has no data", k, v->name);
  }
  switch (n->op) {
  case IR_OP_BATCHNORM:
  case IR_OP_RELU:
  case IR_OP_SIGMOID:
  case IR_OP_CLIP:
  case IR_OP_SOFTMAX:
    if (ir_value_elements(n->in[0]) != ir_value_elements(n->out[0]))
      return fail(e, ST_ERR_INVALID, "input '%s' and output '%s' differ in size", n->in[0]->name,
                  n->out[0]->name);
    break;
  default: break;
  }
  return ST_OK;
}

status ir_eval_node(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d) {
  ev e = {n, inputs, outputs_out, a, d};
  status st = check_values(&e);
  if (st) return st;
  /* Empty outputs need no computation, and the evaluators' outer loops would
   * still run over their other dims (a Softmax over [2^40, 0]). */
  int empty = n->nout > 0;
  for (int j = 0; j < n->nout && empty; j++)
    empty = ir_value_elements(n->out[j]) == 0;
  for (int j = 0; j < n->nout && empty; j++)
    if (!alloc_out(&e, j)) return nomem(&e);
  if (empty) return ST_OK;
  switch (n->op) {
  case IR_OP_CONV:
  case IR_OP_BATCHNORM:
  case IR_OP_AVGPOOL:
  case IR_OP_GLOBALAVGPOOL:
  case IR_OP_LPPOOL:
  case IR_OP_GLOBALLPPOOL:
  case IR_OP_SOFTMAX:
  case IR_OP_GEMM:
  case IR_OP_MATMUL:
    for (int i = 0; i < n->nin; i++)
      if (n->in[i] && (st = need_float(&e, i))) return st;
    break;
  default: break;
  }
  switch (n->op) {
  case IR_OP_CONV: return ir_eval_conv(n, inputs, outputs_out, a, d); /* ir/conv.c: 2-D or 3-D */
  case IR_OP_BATCHNORM: return eval_batchnorm(&e);
  case IR_OP_MAXPOOL:
  case IR_OP_AVGPOOL:
  case IR_OP_GLOBALAVGPOOL:
  case IR_OP_GLOBALMAXPOOL:
  case IR_OP_LPPOOL:
  case IR_OP_GLOBALLPPOOL:
    return ir_eval_pool(n, inputs, outputs_out, a,
                        d); /* ir/pool.c: 1 to 3 spatial dims, MaxPool also i8/u8 */
  case IR_OP_RESIZE:
    if (n->nin != 1) return fail(&e, ST_ERR_UNSUPPORTED, "a Resize with its tables is not evaluated");
    return ir_eval_resize(n, inputs, outputs_out, a, d);
  case IR_OP_FLATTEN:
  case IR_OP_RESHAPE:
  case IR_OP_SQUEEZE:
  case IR_OP_UNSQUEEZE:
  case IR_OP_IDENTITY: return eval_copy(&e);
  case IR_OP_SHAPE: return eval_shape(&e);
  case IR_OP_SIZE: {
    int64_t *y = alloc_out(&e, 0);
    if (!y) return nomem(&e);
    if (n->out[0]->dtype != DT_INT64 || ir_value_elements(n->out[0]) != 1)
      return fail(&e, ST_ERR_INVALID, "output '%s' is not an i64 scalar", n->out[0]->name);
    *y = ir_value_elements(n->in[0]);
    return ST_OK;
  }
  case IR_OP_RANGE: {
    const ir_value *Y = n->out[0];
    if (Y->rank != 1 || Y->dtype != n->in[0]->dtype)
      return fail(&e, ST_ERR_INVALID, "output '%s' is not 1-D of the inputs' dtype", Y->name);
    void *y = alloc_out(&e, 0);
    if (!y) return nomem(&e);
    if (is_float(Y->dtype)) {
      double start = elem_get(e.in[0], n->in[0]->dtype, 0), delta = elem_get(e.in[2], n->in[2]->dtype, 0);
      for (int64_t i = 0; i < Y->dims[0]; i++)
        elem_put(y, Y->dtype, i, start + (double)i * delta);
    } else { /* exact in 64 bits, as ONNX's integer Range */
      int64_t start = elem_get_int(e.in[0], n->in[0]->dtype, 0),
              delta = elem_get_int(e.in[2], n->in[2]->dtype, 0);
      for (int64_t i = 0; i < Y->dims[0]; i++)
        elem_put_int(y, Y->dtype, i, (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta));
    }
    return ST_OK;
  }
  case IR_OP_CONSTANTOFSHAPE: {
    const ir_value *V = n->in[1], *Y = n->out[0];
    if (V->dtype != Y->dtype || ir_value_elements(V) != 1)
      return fail(&e, ST_ERR_INVALID, "value '%s' is not one element of the output's dtype", V->name);
    unsigned char *y = alloc_out(&e, 0);
    if (!y) return nomem(&e);
    size_t es = dtype_size(Y->dtype);
    for (int64_t i = 0; i < ir_value_elements(Y); i++)
      memcpy(y + (size_t)i * es, e.in[1], es);
    return ST_OK;
  }
  case IR_OP_GATHER: return eval_gather(&e);
  case IR_OP_GATHERELEMENTS: return eval_gather_elements(&e);
  case IR_OP_PAD: return eval_pad(&e);
  case IR_OP_CONCAT: return eval_concat(&e);
  case IR_OP_CAST: return eval_cast(&e);
  case IR_OP_CONVERT: return eval_convert(&e);
  case IR_OP_BITCAST: {
    const ir_value *X = n->in[0], *Y = n->out[0];
    if (ir_value_bytes(X) != ir_value_bytes(Y))
      return fail(&e, ST_ERR_INVALID, "input and output sizes differ");
    void *y = alloc_out(&e, 0);
    if (!y) return nomem(&e);
    memcpy(y, e.in[0], (size_t)ir_value_bytes(Y));
    return ST_OK;
  }
  case IR_OP_SOFTMAX: return eval_softmax(&e);
  case IR_OP_GEMM: return eval_gemm(&e);
  case IR_OP_MATMUL: return eval_matmul(&e);
  case IR_OP_VECPROG: return ir_vprog_eval(n, inputs, outputs_out, a, d);
  case IR_OP_REDUCE: return eval_reduce(&e);
  case IR_OP_AIPP: return eval_aipp(&e);
  case IR_OP_TRANSPOSE:
  case IR_OP_SLICE:
  case IR_OP_EXPAND:
  case IR_OP_TILE:
  case IR_OP_DEPTHTOSPACE:
  case IR_OP_SPACETODEPTH:
  case IR_OP_SPLIT: return eval_view(&e);
  default:
    if (ir_eval_is_quant(n->op)) return ir_eval_quant(n, inputs, outputs_out, a, d);
    if (ir_eval_is_elementwise(n->op)) return ir_eval_elementwise(n, inputs, outputs_out, a, d);
    if (ir_eval_is_index(n->op)) return ir_eval_index(n, inputs, outputs_out, a, d);
    if (ir_count_is_producer(n)) return ir_count_eval(n, inputs, outputs_out, a, d);
    if (ir_fused_op(n->op)) return ir_eval_fused(n, inputs, outputs_out, a, d); /* ir/eval_fused.c */
    return fail(&e, ST_ERR_UNSUPPORTED, "the reference evaluator does not implement this op");
  }
}

status ir_eval_graph(const ir_graph *g, const void *const *inputs, void **outputs_out, arena *a, diag *d) {
  const void **vals = arena_array(a, (size_t)g->nvalues, sizeof *vals);
  if (!vals) return diag_set(d, ST_ERR_NOMEM, "out of memory evaluating graph '%s'", g->name);
  status st = ir_eval_graph_values(g, inputs, vals, a, d);
  for (int i = 0; !st && i < g->noutputs; i++) {
    outputs_out[i] = (void *)vals[g->outputs[i]->id];
    if (!outputs_out[i])
      return diag_set(d, ST_ERR_INVALID, "graph output '%s' was not computed", g->outputs[i]->name);
  }
  return st;
}

status ir_eval_graph_values(const ir_graph *g, const void *const *inputs, const void **vals, arena *a,
                            diag *d) {
  for (int i = 0; i < g->nvalues; i++)
    vals[i] = g->values[i]->data;
  for (int i = 0; i < g->ninputs; i++)
    vals[g->inputs[i]->id] = inputs[i];
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = g->nodes[i];
    if (n->dead) continue;
    const void **in = arena_array(a, (size_t)n->nin, sizeof *in);
    void **out = arena_array(a, (size_t)n->nout, sizeof *out);
    if (!in || !out) return diag_set(d, ST_ERR_NOMEM, "out of memory evaluating graph '%s'", g->name);
    for (int j = 0; j < n->nin; j++)
      in[j] = n->in[j] ? vals[n->in[j]->id] : NULL;
    status st = ir_eval_node(n, in, out, a, d);
    if (st) return st;
    for (int j = 0; j < n->nout; j++)
      if (n->out[j]) vals[n->out[j]->id] = out[j];
  }
  return ST_OK;
}
