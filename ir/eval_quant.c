/* eval_quant.c - the reference evaluator's quantized ops (ir/eval_quant.h):
 * QuantizeLinear and DequantizeLinear, element by element with
 * common/quant.h's arithmetic (the vector expansion, ir/vexpand.c, computes
 * the same), and QConv, the int8 convolution: exact int32 sums, then
 * q_requant (and with a residual, q_eltwise), the integer arithmetic
 * libomrt's QCONV2D kernels reproduce bit for bit; and QEltwise, q_eltwise per element (the QELTWISE kernels'
 * arithmetic), QLut, a table lookup per byte, and DynQuant (x's range,
 * q_dynamic_params, q_quantize: the DYNQUANT kernel's arithmetic). Inputs are
 * C-order ND buffers; a scale or zero point broadcasts numpy-style against
 * x (ops.def), so per tensor, per axis and blocked parameters are one case.
 */
#include "ir/eval_quant.h"

#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "common/matmul_geom.h"
#include "common/quant.h"
#include "ir/conv.h"
#include "ir/eval_internal.h"

int ir_eval_is_quant(ir_op op) {
  return op == IR_OP_QUANTIZE || op == IR_OP_DEQUANTIZE || op == IR_OP_QCONV || op == IR_OP_QELTWISE ||
         op == IR_OP_QLUT || op == IR_OP_QMATMUL || op == IR_OP_DYNQUANT;
}

/* A QConv's residual epilogue (in[4], ops.def), read and checked against
 * y's dims and dtype (the attribute "to"). */
typedef struct qres_params {
  int mul;
  int32_t rzp, ozp;
  float cs, rs, os;
} qres_params;

static int qres_read(const ir_node *n, const int64_t *ydims, qres_params *p, char *err, size_t cap) {
  const ir_value *r = n->in[4];
  const char *op = ir_attr_string(n, "r_op", "");
  *p = (qres_params){.mul = !strcmp(op, "mul"),
                     .rzp = (int32_t)ir_attr_int(n, "r_zp", 0),
                     .ozp = (int32_t)ir_attr_int(n, "o_zp", 0),
                     .cs = (float)ir_attr_float(n, "c_scale", 0.0),
                     .rs = (float)ir_attr_float(n, "r_scale", 0.0),
                     .os = (float)ir_attr_float(n, "o_scale", 0.0)};
  if ((r->dtype != DT_UINT8 && r->dtype != DT_INT8) || r->rank != 4 ||
      memcmp(r->dims, ydims, 4 * sizeof(int64_t))) {
    snprintf(err, cap, "residual %s %s, expected u8/i8 of y's dims %s", dtype_name(r->dtype),
             ir_dims_str(r->rank, r->dims), ir_dims_str(4, ydims));
    return -1;
  }
  if (strcmp(op, "add") && strcmp(op, "mul")) {
    snprintf(err, cap, "r_op '%s' is neither add nor mul", op);
    return -1;
  }
  const float sc[3] = {p->cs, p->rs, p->os};
  static const char *const sname[3] = {"c_scale", "r_scale", "o_scale"};
  for (int i = 0; i < 3; i++)
    if (!(sc[i] > 0.0f) || isinf(sc[i])) {
      snprintf(err, cap, "%s %g is not a finite scale > 0", sname[i], (double)sc[i]);
      return -1;
    }
  int32_t rlo, rhi, ylo, yhi;
  q_range(r->dtype, &rlo, &rhi), q_range((int)ir_attr_int(n, "to", DT_UNDEFINED), &ylo, &yhi);
  if (p->rzp < rlo || p->rzp > rhi || p->ozp < ylo || p->ozp > yhi) {
    snprintf(err, cap, "r_zp %d or o_zp %d out of range", p->rzp, p->ozp);
    return -1;
  }
  return 0;
}

/* The run-time zero point form's inputs (ops.def): x u8, x_zp u8 of one
 * element, scale f32 of 1 or M elements, fbias f32 constant [M] (only with
 * scale), to i32 (no scale) or f32, f_lo <= f_hi. */
static int qconv_dyn_check(const ir_node *n, char *err, size_t cap) {
  const ir_value *x = n->in[0], *w = n->in[1], *z = n->in[2], *s = n->nin > 3 ? n->in[3] : NULL,
                 *fb = n->nin > 4 ? n->in[4] : NULL;
  const int64_t m = w->dims[0], ns = s ? ir_value_elements(s) : 0;
  const dtype dt = (dtype)ir_attr_int(n, "to", DT_UNDEFINED);
  if (x->dtype != DT_UINT8 || ir_value_elements(z) != 1 ||
      (s && (s->dtype != DT_FLOAT32 || (ns != 1 && ns != m))) ||
      (fb && (fb->dtype != DT_FLOAT32 || !fb->data || ir_value_elements(fb) != m)) ||
      dt != (s ? DT_FLOAT32 : DT_INT32) || (!s && (ir_attr_find(n, "f_lo") || ir_attr_find(n, "f_hi"))) ||
      !(ir_attr_float(n, "f_lo", -INFINITY) <= ir_attr_float(n, "f_hi", INFINITY))) {
    snprintf(err, cap,
             "expected x u8, x_zp u8 of one element, scale f32 of 1 or %lld elements, fbias f32 constant "
             "[%lld], to i32 without scale, else f32, f_lo <= f_hi",
             (long long)m, (long long)m);
    return -1;
  }
  return 0;
}

int ir_qconv_infer(const ir_node *n, int *rank_out, int64_t *dims_out, dtype *dt_out, char *err, size_t cap) {
  const ir_value *x = n->in[0], *w = n->in[1], *b = n->in[2], *m = n->nin > 3 ? n->in[3] : NULL;
  ir_conv c;
  if (ir_conv_read(n, 2, &c, err, cap)) return -1;
  const int dyn = ir_qconv_dynamic(n);
  if (dyn &&
      (w->dtype != DT_INT8 || w->rank != 4 || !w->data || x->rank != 4 || qconv_dyn_check(n, err, cap)))
    return -1;
  if (dyn) m = NULL;
  if (!dyn && (!m || (x->dtype != DT_UINT8 && x->dtype != DT_INT8) || x->rank != 4 || w->dtype != DT_INT8 ||
               w->rank != 4 || !w->data || b->dtype != DT_INT32 || m->dtype != DT_FLOAT32 || b->rank != 1 ||
               m->rank != 1 || b->dims[0] != w->dims[0] || m->dims[0] != w->dims[0])) {
    snprintf(err, cap,
             "expected x u8/i8 [N,C,H,W], w i8 constant [M,C/group,KH,KW], bias i32 [M], mult f32 [M]");
    return -1;
  }
  if (x->dims[1] % c.group || w->dims[0] % c.group || w->dims[1] * c.group != x->dims[1] ||
      w->dims[2] != c.k[0] || w->dims[3] != c.k[1]) {
    snprintf(err, cap, "x %s, w %s and group %lld do not match", ir_dims_str(x->rank, x->dims),
             ir_dims_str(w->rank, w->dims), (long long)c.group);
    return -1;
  }
  int32_t xlo, xhi, lo = (int32_t)ir_attr_int(n, "lo", 0), hi = (int32_t)ir_attr_int(n, "hi", -1);
  int64_t xzp = ir_attr_int(n, "x_zp", 0), yzp = ir_attr_int(n, "y_zp", 0);
  q_range(x->dtype, &xlo, &xhi);
  dtype dt = (dtype)ir_attr_int(n, "to", DT_UNDEFINED);
  int32_t ylo = 0, yhi = 0;
  if (dt != DT_FLOAT32) q_range(dt, &ylo, &yhi);
  if (dt == DT_FLOAT32 && n->nin > 4 && !dyn) {
    snprintf(err, cap, "an f32 y (the sums' float value) takes no residual");
    return -1;
  }
  if (!dyn && ((dt != DT_UINT8 && dt != DT_INT8 && dt != DT_FLOAT32) || xzp < xlo || xzp > xhi || lo > hi ||
               lo < ylo || hi > yhi || yzp < ylo || yzp > yhi)) {
    snprintf(err, cap, "to %d, x_zp %lld, y_zp %lld, lo %d or hi %d out of range", (int)dt, (long long)xzp,
             (long long)yzp, lo, hi);
    return -1;
  }
  int64_t ho = 0, wo = 0;
  for (int j = 0; j < 2; j++) {
    int64_t span = x->dims[2 + j] + c.pb[j] + c.pe[j] - c.dl[j] * (c.k[j] - 1) - 1;
    int64_t o = span < 0 ? 0 : span / c.s[j] + 1;
    if (j == 0)
      ho = o;
    else
      wo = o;
  }
  *rank_out = 4;
  dims_out[0] = x->dims[0], dims_out[1] = w->dims[0], dims_out[2] = ho, dims_out[3] = wo;
  *dt_out = dt;
  qres_params rp;
  return n->nin > 4 && !dyn ? qres_read(n, dims_out, &rp, err, cap) : 0;
}

/* A QEltwise's parameters, read and checked (ops.def). */
typedef struct qelt_params {
  int mul;
  int32_t azp, bzp, yzp, lo, hi;
  float as, bs, ys;
} qelt_params;

static int qelt_read(const ir_node *n, dtype *dt_out, qelt_params *p, char *err, size_t cap) {
  const ir_value *a = n->in[0], *b = n->in[1];
  const char *op = ir_attr_string(n, "op", "");
  const dtype dt = (dtype)ir_attr_int(n, "to", DT_UNDEFINED);
  *p = (qelt_params){.mul = !strcmp(op, "mul"),
                     .azp = (int32_t)ir_attr_int(n, "a_zp", 0),
                     .bzp = (int32_t)ir_attr_int(n, "b_zp", 0),
                     .yzp = (int32_t)ir_attr_int(n, "y_zp", 0),
                     .lo = (int32_t)ir_attr_int(n, "lo", 0),
                     .hi = (int32_t)ir_attr_int(n, "hi", -1),
                     .as = (float)ir_attr_float(n, "a_scale", 0.0),
                     .bs = (float)ir_attr_float(n, "b_scale", 0.0),
                     .ys = (float)ir_attr_float(n, "y_scale", 0.0)};
  if ((a->dtype != DT_UINT8 && a->dtype != DT_INT8) || (b->dtype != DT_UINT8 && b->dtype != DT_INT8) ||
      (dt != DT_UINT8 && dt != DT_INT8)) {
    snprintf(err, cap, "expected a, b and to u8 or i8, got %s, %s and to %d", dtype_name(a->dtype),
             dtype_name(b->dtype), (int)dt);
    return -1;
  }
  if (a->rank != b->rank || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank)) {
    snprintf(err, cap, "a %s and b %s differ in shape", ir_dims_str(a->rank, a->dims),
             ir_dims_str(b->rank, b->dims));
    return -1;
  }
  if (strcmp(op, "add") && strcmp(op, "mul")) {
    snprintf(err, cap, "op '%s' is neither add nor mul", op);
    return -1;
  }
  const float sc[3] = {p->as, p->bs, p->ys};
  static const char *const sname[3] = {"a_scale", "b_scale", "y_scale"};
  for (int i = 0; i < 3; i++)
    if (!(sc[i] > 0.0f) || isinf(sc[i])) {
      snprintf(err, cap, "%s %g is not a finite scale > 0", sname[i], (double)sc[i]);
      return -1;
    }
  int32_t alo, ahi, blo, bhi, ylo, yhi;
  q_range(a->dtype, &alo, &ahi), q_range(b->dtype, &blo, &bhi), q_range(dt, &ylo, &yhi);
  if (p->azp < alo || p->azp > ahi || p->bzp < blo || p->bzp > bhi || p->yzp < ylo || p->yzp > yhi ||
      p->lo > p->hi || p->lo < ylo || p->hi > yhi) {
    snprintf(err, cap, "a_zp %d, b_zp %d, y_zp %d, lo %d or hi %d out of range", p->azp, p->bzp, p->yzp,
             p->lo, p->hi);
    return -1;
  }
  *dt_out = dt;
  return 0;
}

int ir_qeltwise_infer(const ir_node *n, int *rank_out, int64_t *dims_out, dtype *dt_out, char *err,
                      size_t cap) {
  qelt_params p;
  if (qelt_read(n, dt_out, &p, err, cap)) return -1;
  *rank_out = n->in[0]->rank;
  memcpy(dims_out, n->in[0]->dims, sizeof(int64_t) * (size_t)n->in[0]->rank);
  return 0;
}

/* QEltwise: q_eltwise per element. */
static status eval_qeltwise(ev *e) {
  const ir_node *n = e->n;
  const ir_value *A = n->in[0], *B = n->in[1], *Y = n->out[0];
  qelt_params p;
  dtype dt;
  char err[256];
  if (qelt_read(n, &dt, &p, err, sizeof err)) return fail(e, ST_ERR_INVALID, "%s", err);
  void *y = arena_alloc_aligned(e->a, (size_t)ir_value_bytes(Y) + 1, 64);
  if (!y) return nomem(e);
  e->out[0] = y;
  const int64_t count = ir_value_elements(Y);
  for (int64_t i = 0; i < count; i++) {
    const int32_t a = (int32_t)elem_get_int(e->in[0], A->dtype, (size_t)i),
                  b = (int32_t)elem_get_int(e->in[1], B->dtype, (size_t)i);
    elem_put_int(y, Y->dtype, (size_t)i,
                 q_eltwise(a, p.azp, p.as, b, p.bzp, p.bs, p.mul, p.ys, p.yzp, p.lo, p.hi));
  }
  return ST_OK;
}

int ir_qlut_infer(const ir_node *n, int *rank_out, int64_t *dims_out, dtype *dt_out, char *err, size_t cap) {
  const ir_value *x = n->in[0], *t = n->in[1];
  if ((x->dtype != DT_UINT8 && x->dtype != DT_INT8) || (t->dtype != DT_UINT8 && t->dtype != DT_INT8) ||
      t->rank != 1 || t->dims[0] != 256) {
    snprintf(err, cap, "expected x u8/i8 and table u8/i8 [256], got %s and %s %s", dtype_name(x->dtype),
             dtype_name(t->dtype), ir_dims_str(t->rank, t->dims));
    return -1;
  }
  *rank_out = x->rank;
  memcpy(dims_out, x->dims, sizeof(int64_t) * (size_t)x->rank);
  *dt_out = t->dtype;
  return 0;
}

/* QLut: y[i] = table[x[i] as an unsigned byte]. */
static status eval_qlut(ev *e) {
  const ir_node *n = e->n;
  int rank;
  int64_t dims[MAX_RANK];
  dtype dt;
  char err[256];
  if (ir_qlut_infer(n, &rank, dims, &dt, err, sizeof err)) return fail(e, ST_ERR_INVALID, "%s", err);
  const int64_t count = ir_value_elements(n->out[0]);
  uint8_t *y = arena_alloc_aligned(e->a, (size_t)count + 1, 64);
  if (!y) return nomem(e);
  e->out[0] = y;
  const uint8_t *x = e->in[0], *t = e->in[1];
  for (int64_t i = 0; i < count; i++)
    y[i] = t[x[i]];
  return ST_OK;
}

/* A QMatMul operand's permutation (attr permA / permB, ops.def) into
 * perm[rank]: 1 when there is one, 0 none, -1 when it is no permutation
 * of the operand's dims. */
static int qmm_perm(const ir_node *n, int j, int *perm) {
  int64_t v[MAX_RANK + 1];
  const int count = ir_attr_ints(n, j ? "permB" : "permA", v, MAX_RANK + 1), rank = n->in[j]->rank;
  unsigned seen = 0;
  if (count < 0) return 0;
  if (count != rank) return -1;
  for (int d = 0; d < rank; d++) {
    if (v[d] < 0 || v[d] >= rank || (seen >> v[d]) & 1u) return -1;
    seen |= 1u << v[d];
    perm[d] = (int)v[d];
  }
  return 1;
}

/* The run-time w QMatMul's geometry (common/matmul_geom.h) for y of
 * rank ry and dims yd; -1 when a permutation is bad. */
static int qmm_geom(const ir_node *n, int ry, const int64_t *yd, mm_geom *g) {
  int pa[MAX_RANK], pb[MAX_RANK];
  const int ha = qmm_perm(n, 0, pa), hb = qmm_perm(n, 1, pb);
  if (ha < 0 || hb < 0) return -1;
  const mm_operand a = {n->in[0]->rank, n->in[0]->dims, ha ? pa : NULL, 0},
                   b = {n->in[1]->rank, n->in[1]->dims, hb ? pb : NULL, 0};
  mm_geom_init(&a, &b, 0, -1, NULL, ry, yd, g);
  return 0;
}

/* QMatMul with a run-time w (ops.def): two int8 activations. */
static int qmatmul_act_infer(const ir_node *n, int *rank_out, int64_t *dims_out, dtype *dt_out, char *err,
                             size_t cap) {
  const ir_value *x = n->in[0], *w = n->in[1], *z = n->in[2], *s = n->nin > 3 ? n->in[3] : NULL;
  int pa[MAX_RANK], pb[MAX_RANK];
  const int ha = qmm_perm(n, 0, pa), hb = qmm_perm(n, 1, pb);
  if ((x->dtype != DT_UINT8 && x->dtype != DT_INT8) || (w->dtype != DT_UINT8 && w->dtype != DT_INT8) ||
      x->rank < 2 || w->rank < 2 || !z || z->dtype != x->dtype || ir_value_elements(z) != 1 || ha < 0 ||
      hb < 0 || (n->nin > 4 && n->in[4])) {
    snprintf(err, cap,
             "expected x and w u8 or i8 of rank >= 2 (permA / permB permutations of their dims), x_zp of x's "
             "dtype and one element, no bias; got %s %s, %s %s, x_zp %s",
             dtype_name(x->dtype), ir_dims_str(x->rank, x->dims), dtype_name(w->dtype),
             ir_dims_str(w->rank, w->dims), z ? dtype_name(z->dtype) : "none");
    return -1;
  }
  int64_t xd[MAX_RANK], wd[MAX_RANK];
  for (int d = 0; d < x->rank; d++)
    xd[d] = x->dims[ha ? pa[d] : d];
  for (int d = 0; d < w->rank; d++)
    wd[d] = w->dims[hb ? pb[d] : d];
  const int64_t k = xd[x->rank - 1];
  if (wd[w->rank - 2] != k || k < 1 || k > 32768) {
    snprintf(err, cap, "x %s and w %s (as read): K differs or is not 1..32768", ir_dims_str(x->rank, xd),
             ir_dims_str(w->rank, wd));
    return -1;
  }
  const int ba = x->rank - 2, bb = w->rank - 2, rank = (ba > bb ? ba : bb) + 2;
  for (int d = 0; d < rank - 2; d++) {
    const int ia = d - (rank - 2 - ba), ib = d - (rank - 2 - bb);
    const int64_t da = ia >= 0 ? xd[ia] : 1, db = ib >= 0 ? wd[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      snprintf(err, cap, "batch dims of x %s and w %s do not broadcast", ir_dims_str(x->rank, xd),
               ir_dims_str(w->rank, wd));
      return -1;
    }
    dims_out[d] = da == 1 ? db : da;
  }
  dims_out[rank - 2] = xd[x->rank - 2], dims_out[rank - 1] = wd[w->rank - 1];
  *rank_out = rank;
  int32_t lo, hi, wlo, whi;
  const int64_t wz = ir_attr_int(n, "w_zp", 0), to = ir_attr_int(n, "to", DT_UNDEFINED);
  q_range((int)w->dtype, &wlo, &whi);
  if (wz < wlo || wz > whi || (s && (s->dtype != DT_FLOAT32 || ir_value_elements(s) != 1))) {
    snprintf(err, cap, "w_zp %lld outside w's range or scale not f32 of one element", (long long)wz);
    return -1;
  }
  *dt_out = s ? DT_FLOAT32 : DT_INT32;
  if (to == DT_UNDEFINED) return 0;
  q_range((int)to, &lo, &hi);
  const int64_t yz = ir_attr_int(n, "y_zp", 0), l = ir_attr_int(n, "lo", lo), h = ir_attr_int(n, "hi", hi);
  if ((to != DT_UINT8 && to != DT_INT8) || !s || yz < lo || yz > hi || l < lo || h > hi || l > h) {
    snprintf(err, cap, "to %s needs u8 or i8 with a scale, and y_zp %lld, lo %lld, hi %lld in its range",
             dtype_name((dtype)to), (long long)yz, (long long)l, (long long)h);
    return -1;
  }
  *dt_out = (dtype)to;
  return 0;
}

int ir_qmatmul_infer(const ir_node *n, int *rank_out, int64_t *dims_out, dtype *dt_out, char *err,
                     size_t cap) {
  const ir_value *x = n->in[0], *w = n->in[1], *z = n->in[2], *s = n->nin > 3 ? n->in[3] : NULL,
                 *b = n->nin > 4 ? n->in[4] : NULL;
  if (!w->data) return qmatmul_act_infer(n, rank_out, dims_out, dt_out, err, cap);
  const int64_t k = w->rank == 2 ? w->dims[0] : -1, m = w->rank == 2 ? w->dims[1] : -1;
  if (x->dtype != DT_UINT8 || w->dtype != DT_INT8 || w->rank != 2 || z->dtype != DT_UINT8 || x->rank < 1 ||
      x->dims[x->rank - 1] != k || ir_value_elements(z) != 1) {
    snprintf(err, cap, "expected x u8 [.., K], w i8 [K, N], x_zp u8 of one element, got %s %s, %s %s, %s %s",
             dtype_name(x->dtype), ir_dims_str(x->rank, x->dims), dtype_name(w->dtype),
             ir_dims_str(w->rank, w->dims), dtype_name(z->dtype), ir_dims_str(z->rank, z->dims));
    return -1;
  }
  const int64_t ns = s ? ir_value_elements(s) : 1, nb = b ? ir_value_elements(b) : m;
  if (s && (s->dtype != DT_FLOAT32 || (ns != 1 && (ns != m || s->dims[s->rank - 1] != m)) ||
            (b && (b->dtype != DT_FLOAT32 || nb != m || b->dims[b->rank - 1] != m)))) {
    snprintf(err, cap, "expected scale f32 of 1 or %lld elements and bias f32 [%lld], got %s %s and %s",
             (long long)m, (long long)m, dtype_name(s->dtype), ir_dims_str(s->rank, s->dims),
             b ? ir_dims_str(b->rank, b->dims) : "none");
    return -1;
  }
  *rank_out = x->rank;
  memcpy(dims_out, x->dims, sizeof(int64_t) * (size_t)x->rank);
  dims_out[x->rank - 1] = m;
  *dt_out = s ? DT_FLOAT32 : DT_INT32;
  return 0;
}

/* QMatMul with a run-time w: exact int64 sums over each batch index,
 * then y i32, its f32 product with the scale, or q_requant. */
static status eval_qmatmul_act(ev *e, int rank, const int64_t *dims, dtype dt) {
  const ir_node *n = e->n;
  mm_geom g;
  if (qmm_geom(n, rank, dims, &g)) return fail(e, ST_ERR_INVALID, "permA or permB is no permutation");
  const int64_t rows = ir_value_elements(n->out[0]) / (g.m * g.n > 0 ? g.m * g.n : 1);
  void *y = arena_alloc_aligned(e->a, (size_t)(rows * g.m * g.n) * 4 + 1, 64);
  if (!y) return nomem(e);
  e->out[0] = y;
  const int xt = (int)n->in[0]->dtype, wt = (int)n->in[1]->dtype;
  const int32_t xz = (int32_t)elem_get_int(e->in[2], xt, 0), wz = (int32_t)ir_attr_int(n, "w_zp", 0);
  const float s = n->nin > 3 ? *(const float *)e->in[3] : 0.0f;
  const int32_t yz = (int32_t)ir_attr_int(n, "y_zp", 0);
  int32_t lo, hi;
  q_range((int)dt, &lo, &hi);
  lo = (int32_t)ir_attr_int(n, "lo", lo), hi = (int32_t)ir_attr_int(n, "hi", hi);
  for (int64_t bt = 0; bt < rows; bt++) {
    int64_t oa = 0, ob = 0, rem = bt;
    for (int d = g.nbd - 1; d >= 0; d--) {
      const int64_t i = rem % g.bdims[d];
      rem /= g.bdims[d];
      oa += i * g.sa[d], ob += i * g.sb[d];
    }
    for (int64_t m = 0; m < g.m; m++)
      for (int64_t j = 0; j < g.n; j++) {
        int64_t acc = 0;
        for (int64_t k = 0; k < g.k; k++)
          acc += (elem_get_int(e->in[0], xt, (size_t)(oa + m * g.a_sm + k * g.a_sk)) - xz) *
                 (elem_get_int(e->in[1], wt, (size_t)(ob + k * g.b_sk + j * g.b_sn)) - wz);
        const size_t at = (size_t)((bt * g.m + m) * g.n + j);
        if (dt == DT_INT32)
          ((int32_t *)y)[at] = (int32_t)acc;
        else if (dt == DT_FLOAT32)
          ((float *)y)[at] = (float)(int32_t)acc * s;
        else
          elem_put_int(y, (int)dt, at, q_requant((int32_t)acc, s, yz, lo, hi));
      }
  }
  return ST_OK;
}

/* QMatMul: exact int64 sums, then the f32 steps one at a time. */
static status eval_qmatmul(ev *e) {
  const ir_node *n = e->n;
  int rank;
  int64_t dims[MAX_RANK];
  dtype dt;
  char err[256];
  if (ir_qmatmul_infer(n, &rank, dims, &dt, err, sizeof err)) return fail(e, ST_ERR_INVALID, "%s", err);
  if (!n->in[1]->data) return eval_qmatmul_act(e, rank, dims, dt);
  const int64_t k = n->in[1]->dims[0], m = n->in[1]->dims[1],
                rows = ir_value_elements(n->in[0]) / (k ? k : 1);
  const int64_t ns = n->nin > 3 ? ir_value_elements(n->in[3]) : 0;
  void *y = arena_alloc_aligned(e->a, (size_t)(rows * m) * 4 + 1, 64);
  if (!y) return nomem(e);
  e->out[0] = y;
  const uint8_t *x = e->in[0];
  const int8_t *w = e->in[1];
  const int32_t zp = *(const uint8_t *)e->in[2];
  const float *s = ns ? e->in[3] : NULL, *b = n->nin > 4 ? e->in[4] : NULL;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < m; j++) {
      int64_t acc = 0;
      for (int64_t i = 0; i < k; i++)
        acc += (int64_t)(x[r * k + i] - zp) * w[i * m + j];
      if (!s) {
        ((int32_t *)y)[r * m + j] = (int32_t)acc;
        continue;
      }
      float f = (float)(int32_t)acc;
      f = f * s[ns == 1 ? 0 : j];
      if (b) f = f + b[j];
      ((float *)y)[r * m + j] = f;
    }
  return ST_OK;
}

/* DynQuant: x's range (0 included), then q_dynamic_params and q_quantize
 * per element: the arithmetic the DYNQUANT kernel reproduces. */
static status eval_dynquant(ev *e) {
  const ir_node *n = e->n;
  const int64_t count = ir_value_elements(n->in[0]);
  float *x = arena_array(e->a, (size_t)count + 1, sizeof *x); /* f16: its exact f32 values */
  for (int64_t i = 0; x && i < count; i++)
    x[i] = (float)elem_get(e->in[0], n->in[0]->dtype, i);
  uint8_t *y = arena_alloc_aligned(e->a, (size_t)count + 1, 64);
  float *s = arena_alloc_aligned(e->a, sizeof(float), 64);
  uint8_t *z = arena_alloc_aligned(e->a, 1, 64);
  if (!x || !y || !s || !z) return nomem(e);
  int32_t zp;
  q_dynamic_params(q_extreme(x, count, 0, 0), q_extreme(x, count, 0, 1), s, &zp);
  *z = (uint8_t)zp;
  for (int64_t i = 0; i < count; i++)
    y[i] = (uint8_t)q_quantize(x[i], *s, zp, 0, 255);
  e->out[0] = y, e->out[1] = s, e->out[2] = z;
  return ST_OK;
}

/* QConv: NCHW, one output element at a time (then its residual's). */
static status eval_qconv(ev *e) {
  const ir_node *n = e->n;
  const ir_value *X = n->in[0], *W = n->in[1], *Y = n->out[0];
  ir_conv c;
  char err[256];
  if (ir_conv_read(n, 2, &c, err, sizeof err)) return fail(e, ST_ERR_INVALID, "%s", err);
  const int64_t N = X->dims[0], C = X->dims[1], H = X->dims[2], Wd = X->dims[3], M = Y->dims[1],
                Ho = Y->dims[2], Wo = Y->dims[3], cg = W->dims[1], mg = M / c.group;
  int32_t xzp = (int32_t)ir_attr_int(n, "x_zp", 0);
  const int32_t yzp = (int32_t)ir_attr_int(n, "y_zp", 0), lo = (int32_t)ir_attr_int(n, "lo", 0),
                hi = (int32_t)ir_attr_int(n, "hi", 255);
  const int dyn = ir_qconv_dynamic(n);
  const int32_t *bias = dyn ? NULL : e->in[2];
  const float *mult = n->nin > 3 ? e->in[3] : NULL, *fbias = dyn && n->nin > 4 ? e->in[4] : NULL;
  const int64_t sstep = dyn && mult && ir_value_elements(n->in[3]) > 1;
  const float flo = (float)ir_attr_float(n, "f_lo", -INFINITY),
              fhi = (float)ir_attr_float(n, "f_hi", INFINITY);
  const int clamp = ir_attr_find(n, "f_lo") || ir_attr_find(n, "f_hi");
  if (dyn) xzp = *(const uint8_t *)e->in[2];
  const ir_value *R = n->nin > 4 && !dyn ? n->in[4] : NULL;
  qres_params rp = {0};
  int32_t clo = lo, chi = hi; /* c's clamp: with a residual, y's dtype range */
  if (R) {
    if (qres_read(n, Y->dims, &rp, err, sizeof err)) return fail(e, ST_ERR_INVALID, "%s", err);
    q_range(Y->dtype, &clo, &chi);
  }
  void *y = arena_alloc_aligned(e->a, (size_t)ir_value_bytes(Y) + 1, 64);
  if (!y) return nomem(e);
  e->out[0] = y;
  for (int64_t in = 0; in < N; in++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t oh = 0; oh < Ho; oh++)
        for (int64_t ow = 0; ow < Wo; ow++) {
          int64_t acc = bias ? bias[m] : 0;
          for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t kh = 0; kh < c.k[0]; kh++)
              for (int64_t kw = 0; kw < c.k[1]; kw++) {
                int64_t ih = oh * c.s[0] - c.pb[0] + kh * c.dl[0], iw = ow * c.s[1] - c.pb[1] + kw * c.dl[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= Wd) continue;
                int64_t cx = m / mg * cg + ci;
                int32_t xv =
                    (int32_t)elem_get_int(e->in[0], X->dtype, (size_t)(((in * C + cx) * H + ih) * Wd + iw));
                int32_t wv = ((const int8_t *)e->in[1])[((m * cg + ci) * c.k[0] + kh) * c.k[1] + kw];
                acc += (int64_t)(xv - xzp) * wv;
              }
          size_t at = (size_t)(((in * M + m) * Ho + oh) * Wo + ow);
          if (Y->dtype == DT_INT32) { /* the run-time zero point form without a scale */
            ((int32_t *)y)[at] = (int32_t)acc;
            continue;
          }
          if (Y->dtype == DT_FLOAT32) { /* f32 y: the sums' float value */
            float f = (float)(int32_t)acc * mult[m * (dyn ? sstep : 1)];
            if (fbias) f = f + fbias[m];
            if (clamp) f = f < flo ? flo : f, f = f > fhi ? fhi : f;
            ((float *)y)[at] = f;
            continue;
          }
          int32_t v = q_requant((int32_t)acc, mult[m], yzp, clo, chi);
          if (R)
            v = q_eltwise(v, yzp, rp.cs, (int32_t)elem_get_int(e->in[4], R->dtype, at), rp.rzp, rp.rs, rp.mul,
                          rp.os, rp.ozp, lo, hi);
          elem_put_int(y, Y->dtype, at, v);
        }
  return ST_OK;
}

/* Offset into v of the element of `out`'s dims at multi-index idx (v
 * broadcasting numpy-style, right-aligned). */
static int64_t bcast_at(const ir_value *v, const ir_value *out, const int64_t *idx) {
  int64_t at = 0, off = out->rank - v->rank;
  for (int k = 0; k < v->rank; k++)
    at = at * v->dims[k] + (v->dims[k] == 1 ? 0 : idx[k + off]);
  return at;
}

static void next_index(const ir_value *v, int64_t *idx) {
  for (int k = v->rank - 1; k >= 0; k--) {
    if (++idx[k] < v->dims[k]) return;
    idx[k] = 0;
  }
}

static status eval_qdq(ev *e) {
  const ir_node *n = e->n;
  const ir_value *X = n->in[0], *S = n->in[1], *Z = n->nin > 2 ? n->in[2] : NULL, *Y = n->out[0];
  const int quant = n->op == IR_OP_QUANTIZE;
  if (X->rank != Y->rank || memcmp(X->dims, Y->dims, sizeof(int64_t) * (size_t)X->rank))
    return fail(e, ST_ERR_INVALID, "x '%s' and y '%s' differ in shape", X->name, Y->name);
  for (int i = 1; i < n->nin; i++) {
    const ir_value *p = n->in[i];
    int ok = p->rank <= X->rank;
    for (int k = 0; ok && k < p->rank; k++)
      ok = p->dims[k] == 1 || p->dims[k] == X->dims[k + X->rank - p->rank];
    if (!ok) return fail(e, ST_ERR_INVALID, "'%s' does not broadcast against x '%s'", p->name, X->name);
  }
  if (quant ? !elem_is_float(X->dtype) : elem_is_float(X->dtype))
    return fail(e, ST_ERR_UNSUPPORTED, "x '%s' has dtype %s", X->name, dtype_name(X->dtype));
  void *y = arena_alloc_aligned(e->a, (size_t)ir_value_bytes(Y) + 1, 64);
  if (!y) return nomem(e);
  e->out[0] = y;
  int32_t lo, hi;
  q_range(Y->dtype, &lo, &hi);
  int64_t idx[MAX_RANK] = {0}, count = ir_value_elements(Y);
  for (int64_t i = 0; i < count; i++, next_index(Y, idx)) {
    float s = (float)elem_get(e->in[1], S->dtype, bcast_at(S, Y, idx));
    int32_t zp = Z ? (int32_t)elem_get_int(e->in[2], Z->dtype, bcast_at(Z, Y, idx)) : 0;
    if (quant)
      elem_put_int(y, Y->dtype, i, q_quantize((float)elem_get(e->in[0], X->dtype, i), s, zp, lo, hi));
    else
      elem_put(y, Y->dtype, i, q_dequantize((int32_t)elem_get_int(e->in[0], X->dtype, i), zp, s));
  }
  return ST_OK;
}

status ir_eval_quant(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d) {
  ev e = {n, inputs, outputs_out, a, d};
  switch (n->op) {
  case IR_OP_QUANTIZE:
  case IR_OP_DEQUANTIZE: return eval_qdq(&e);
  case IR_OP_QCONV: return eval_qconv(&e);
  case IR_OP_QELTWISE: return eval_qeltwise(&e);
  case IR_OP_QLUT: return eval_qlut(&e);
  case IR_OP_QMATMUL: return eval_qmatmul(&e);
  case IR_OP_DYNQUANT: return eval_dynquant(&e);
  default: return fail(&e, ST_ERR_UNSUPPORTED, "not a quantized op");
  }
}
