/* test_attention.c - the ATTENTION task (runtime/kernels_attention.c)
 * against the reference evaluator's FusedAttention (ir/eval_fused.c,
 * through tests/unit/evalref.h), and its load-time check.
 *
 * ATTENTION_CASES (default 300) random cases: 0 to 2 batch dims with q, k
 * and v each broadcasting some of them, Sq and Skv from 1 to 100 (mostly
 * not multiples of 16), D and Dv from 1 to 128, k as [Skv, D] or as k^T,
 * zero to two biases broadcasting to the scores (a per-head position bias,
 * a key-padding mask of 0 / -inf per batch, a full [Sq, Skv] bias),
 * causal with offsets that hide whole rows, zero_masked on and off, f32
 * and f16 operands and outputs, small tiles (16 to 64) so every tile walks
 * several key blocks, and random block_dims. Rows whose every key is
 * masked must give NaN or 0 as the reference does. In half the cases some
 * of q, k, v and y are views (format 2.7): each sits at strided places of
 * a larger buffer, its dims nested in a random order with gaps between
 * rows (a head of the in-projection's output read as [H, S, D] out of
 * [S, H*D] is one such order), the rest of the buffer NaN for the inputs
 * (the kernel must read only the view) and left as it was for y (the
 * kernel must write only the view). ATTENTION_SEED picks the seed. ctest
 * runs this file on every kernel path.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "evalref.h"
#include "kcase.h"
#include "runtime/kernels.h"
#include "support.h"

static uint32_t rng = 4242;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}
static int irand(int n) { return (int)(next() % (uint32_t)n); }
static float frand(void) { return (float)(next() & 0xffffff) / 8388608.0f - 1.0f; }

static size_t count(int rank, const int64_t *dims) {
  size_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= (size_t)dims[i];
  return n;
}

typedef struct tensor {
  int rank, dt;
  int64_t dims[MAX_RANK];
  float *v; /* values, representable in dt */
} tensor;

static void fill(tensor *t, float scale) {
  size_t n = count(t->rank, t->dims);
  t->v = malloc((n ? n : 1) * sizeof *t->v);
  for (size_t i = 0; i < n; i++) {
    t->v[i] = frand() * scale;
    if (t->dt == DT_FLOAT16) t->v[i] = half_to_float(float_to_half(t->v[i]));
  }
}

typedef struct acase {
  int nbd;
  int64_t bdims[2];
  int64_t sq, skv, d, dv;
  int k_trans, causal, zero, ydt, bd, nbias;
  int64_t off, tq, tkv;
  float scale;
  tensor q, k, v, bias[2];
} acase;

/* An operand's batch dims: y's, some replaced by 1 (broadcast), and some
 * dropped from the left unless keep_rank (q keeps y's rank). */
static int batch_of(const acase *c, int64_t *dims, int keep_rank) {
  int drop = c->nbd && !keep_rank ? irand(c->nbd + 1) : 0, r = 0;
  for (int i = drop; i < c->nbd; i++)
    dims[r++] = irand(3) == 0 ? 1 : c->bdims[i];
  return r;
}

static void make_case(acase *c) {
  memset(c, 0, sizeof *c);
  c->nbd = irand(3);
  for (int i = 0; i < c->nbd; i++)
    c->bdims[i] = 1 + irand(3);
  c->sq = 1 + irand(irand(4) ? 40 : 100), c->skv = 1 + irand(irand(4) ? 40 : 100);
  c->d = 1 + irand(irand(3) ? 64 : 128), c->dv = 1 + irand(irand(3) ? 48 : 128);
  c->k_trans = irand(2), c->causal = irand(3) == 0, c->zero = irand(2);
  c->off = c->causal ? irand((int)(c->sq + c->skv + 1)) - c->sq : 0;
  int dt = irand(2) ? DT_FLOAT16 : DT_FLOAT32;
  c->ydt = irand(3) ? dt : DT_FLOAT32;
  c->scale = (float)(1.0 / sqrt((double)c->d)) * (irand(4) ? 1.0f : 2.5f);
  tensor *ops[3] = {&c->q, &c->k, &c->v};
  for (int t = 0; t < 3; t++) {
    int r = batch_of(c, ops[t]->dims, t == 0);
    int64_t rows = t == 0 ? c->sq : c->skv, cols = t == 2 ? c->dv : c->d;
    if (t == 1 && c->k_trans) rows = c->d, cols = c->skv;
    ops[t]->dims[r] = rows, ops[t]->dims[r + 1] = cols;
    ops[t]->rank = r + 2, ops[t]->dt = dt;
    fill(ops[t], 2.0f);
  }
  c->nbias = irand(3);
  for (int b = 0; b < c->nbias; b++) {
    tensor *t = &c->bias[b];
    int kind = irand(3);
    t->dt = irand(2) ? DT_FLOAT16 : DT_FLOAT32;
    if (kind == 0) { /* a position bias [heads.., Sq, Skv] */
      int r = batch_of(c, t->dims, 0);
      t->dims[r] = c->sq, t->dims[r + 1] = c->skv, t->rank = r + 2;
      fill(t, 1.5f);
    } else if (kind == 1) { /* key padding: [batch, 1, .., 1, Skv], -inf past a length */
      t->rank = c->nbd + 2;
      for (int i = 0; i < c->nbd; i++)
        t->dims[i] = i == 0 ? c->bdims[0] : 1;
      t->dims[c->nbd] = 1, t->dims[c->nbd + 1] = c->skv;
      fill(t, 0.0f);
      size_t rows = count(t->rank, t->dims) / (size_t)c->skv;
      for (size_t r = 0; r < rows; r++) {
        int64_t len = irand(5) == 0 ? 0 : 1 + irand((int)c->skv);
        for (int64_t j = len; j < c->skv; j++)
          t->v[r * (size_t)c->skv + (size_t)j] = -INFINITY;
      }
    } else { /* [Sq, Skv] or [Skv] */
      t->rank = irand(2) ? 2 : 1;
      t->dims[0] = t->rank == 2 ? c->sq : c->skv, t->dims[1] = c->skv;
      fill(t, 1.0f);
    }
  }
  c->tq = 16 * (1 + irand(4)), c->tkv = 16 * (1 + irand(4));
}

static void free_case(acase *c) {
  free(c->q.v), free(c->k.v), free(c->v.v), free(c->bias[0].v), free(c->bias[1].v);
}

static void put(kcase *k, int s, const tensor *t) {
  for (size_t i = 0; i < count(t->rank, t->dims); i++)
    rt_put(k->data[s], t->dt, i, t->v[i]);
}

/* The task for case c in kcase k; the y slot. */
static int build(const acase *c, kcase *k, uint32_t block_dim) {
  kc_setup(k, OM_TASK_ATTENTION, block_dim, 0);
  const tensor *ops[3] = {&c->q, &c->k, &c->v};
  for (int t = 0; t < 3; t++)
    put(k, kc_add(k, ops[t]->dt, LAYOUT_ND, ops[t]->rank, ops[t]->dims), ops[t]);
  for (int b = 0; b < 2; b++)
    if (b < c->nbias)
      put(k, kc_add(k, c->bias[b].dt, LAYOUT_ND, c->bias[b].rank, c->bias[b].dims), &c->bias[b]);
    else
      kc_none(k);
  int64_t yd[MAX_RANK];
  for (int i = 0; i < c->nbd; i++)
    yd[i] = c->bdims[i];
  yd[c->nbd] = c->sq, yd[c->nbd + 1] = c->dv;
  int ys = kc_add(k, c->ydt, LAYOUT_ND, c->nbd + 2, yd);
  int32_t *p = k->task.params;
  memcpy(&p[OM_ATTENTION_P_SCALE], &c->scale, 4);
  p[OM_ATTENTION_P_K_TRANS] = c->k_trans, p[OM_ATTENTION_P_CAUSAL] = c->causal;
  p[OM_ATTENTION_P_CAUSAL_OFFSET] = (int32_t)c->off, p[OM_ATTENTION_P_ZERO_MASKED] = c->zero;
  p[OM_ATTENTION_P_TILE_Q] = (int32_t)c->tq, p[OM_ATTENTION_P_TILE_KV] = (int32_t)c->tkv;
  return ys;
}

/* A view of slot s (om_format.h, ATTENTION views): strides nesting the
 * dims before the last in a random order, rows `gap` elements apart, and
 * the span a little past the last element. Its params into p[4]; the
 * buffer (span elements) replaces the slot's, filled with `fill` bytes,
 * t's values (when given) at the view's places. Returns the span. */
static int64_t make_view(kcase *k, int s, const tensor *t, int32_t *p) {
  const om_tensor *d = &k->t[s];
  const int r = (int)d->rank;
  int order[4] = {0, 1, 2, 3};
  for (int i = r - 2; i > 0; i--) { /* order[0] is the outermost */
    int j = irand(i + 1), x = order[i];
    order[i] = order[j], order[j] = x;
  }
  int64_t st = d->dims[r - 1] + irand(3) * irand(9), strides[4] = {0};
  strides[r - 1] = 1;
  for (int i = r - 2; i >= 0; i--) {
    strides[order[i]] = st;
    st = st * d->dims[order[i]] + irand(2) * irand(5);
  }
  int64_t last = 0;
  for (int i = 0; i < r; i++)
    last += (d->dims[i] - 1) * strides[i];
  const int64_t span = last + 1 + irand(7);
  const size_t es = dtype_size((int)d->dtype);
  free(k->data[s]);
  k->data[s] = aligned_alloc(64, ((size_t)span * es + 63) / 64 * 64 + 64);
  memset(k->data[s], t ? 0xff : 0x7f, (size_t)span * es); /* 0xff..: NaN in f16 and f32 */
  for (int i = 0; i < r - 1; i++)
    p[i] = (int32_t)strides[i];
  p[3] = (int32_t)span;
  if (t)
    for (size_t e = 0; e < count(r, d->dims); e++) {
      size_t rem = e, at = 0;
      for (int i = r - 1; i >= 0; i--)
        at += rem % (size_t)d->dims[i] * (size_t)strides[i], rem /= (size_t)d->dims[i];
      rt_put(k->data[s], (int)d->dtype, at, t->v[e]);
    }
  return span;
}

/* y's batch dims are the broadcast of q's, k's and v's (the reference
 * infers them so; q has y's rank): when none of the three has one of y's
 * dims, q takes y's batch dims whole. */
static void pin_batch(acase *c) {
  for (int i = 0; i < c->nbd; i++) {
    int seen = 0;
    tensor *ops[3] = {&c->q, &c->k, &c->v};
    for (int t = 0; t < 3; t++) {
      int at = i - (c->nbd - (ops[t]->rank - 2));
      seen |= at >= 0 && ops[t]->dims[at] == c->bdims[i];
    }
    if (!seen && c->bdims[i] != 1) {
      int64_t dims[MAX_RANK];
      for (int j = 0; j < c->nbd; j++)
        dims[j] = c->bdims[j];
      dims[c->nbd] = c->q.dims[c->q.rank - 2], dims[c->nbd + 1] = c->q.dims[c->q.rank - 1];
      free(c->q.v);
      c->q.rank = c->nbd + 2;
      memcpy(c->q.dims, dims, sizeof dims);
      fill(&c->q, 2.0f);
      return;
    }
  }
}

/* |got - ref| <= tol * (1 + |ref|), NaN where the reference has NaN. */
static int close_enough(const float *got, const float *ref, size_t n, double tol, size_t *bad_at) {
  for (size_t i = 0; i < n; i++) {
    int ok = isnan(ref[i]) ? isnan(got[i]) : fabs((double)got[i] - ref[i]) <= tol * (1 + fabs(ref[i]));
    if (!ok) {
      *bad_at = i;
      return 0;
    }
  }
  return 1;
}

static void run_case(int index) {
  acase c;
  make_case(&c);
  pin_batch(&c);
  uint64_t tiles = (uint64_t)((c.sq + c.tq - 1) / c.tq);
  for (int i = 0; i < c.nbd; i++)
    tiles *= (uint64_t)c.bdims[i];
  kcase k;
  int ys = build(&c, &k, (uint32_t)(1 + irand((int)(tiles < 7 ? tiles : 7))));
  int32_t *p = k.task.params;
  int views = irand(2) ? irand(16) : 0;
  int64_t yspan = 0;
  uint8_t *yold = NULL;
  const tensor *vt[3] = {&c.q, &c.k, &c.v};
  const int vslot[4] = {OM_ATTENTION_T_Q, OM_ATTENTION_T_K, OM_ATTENTION_T_V, OM_ATTENTION_T_Y};
  k.def.workspace_bytes = (uint64_t)1 << 40;
  for (uint32_t t = 0; t < k.task.ntensors; t++) /* apart in the workspace, as a package places them */
    k.t[t].offset = (uint64_t)t << 32;
  for (int t = 0; t < 4; t++)
    if (views >> t & 1) {
      int64_t span = make_view(&k, vslot[t], t < 3 ? vt[t] : NULL, &p[OM_ATTENTION_P_VIEW + 4 * t]);
      if (t == 3) yspan = span;
    }
  p[OM_ATTENTION_P_VIEWS] = views;
  if (yspan) {
    yold = malloc((size_t)yspan * dtype_size(c.ydt));
    memcpy(yold, k.data[ys], (size_t)yspan * dtype_size(c.ydt));
  }
  omrt_status s = kc_check(&k);
  CHECK_EQ_INT(s, OMRT_OK);
  if (s != OMRT_OK) {
    test_note("  case %d: %s", index, omrt_last_error());
    kc_free(&k), free_case(&c);
    return;
  }
  kc_run_blocks(&k, kc_core());
  size_t n = count((int)k.t[ys].rank, k.t[ys].dims);
  float *got = malloc(n * sizeof *got);
  const int yr = (int)k.t[ys].rank;
  const int32_t *yst = &p[OM_ATTENTION_P_VIEW + 4 * OM_ATTENTION_V_Y];
  for (size_t i = 0; i < n; i++) {
    size_t at = i;
    if (yspan) { /* element i of y's view, whose place then is no longer the old byte pattern */
      size_t rem = i;
      at = rem % (size_t)k.t[ys].dims[yr - 1], rem /= (size_t)k.t[ys].dims[yr - 1];
      for (int d = yr - 2; d >= 0; d--)
        at += rem % (size_t)k.t[ys].dims[d] * (size_t)yst[d], rem /= (size_t)k.t[ys].dims[d];
      memcpy(yold + at * dtype_size(c.ydt), (uint8_t *)k.data[ys] + at * dtype_size(c.ydt),
             dtype_size(c.ydt));
    }
    got[i] = rt_get(k.data[ys], c.ydt, at);
  }
  if (yspan) {
    int same = memcmp(yold, k.data[ys], (size_t)yspan * dtype_size(c.ydt)) == 0;
    test_check(same, __FILE__, __LINE__, "attention writes only y's view");
    if (!same) test_note("  case %d: bytes of y's buffer outside its view changed", index);
  }
  free(yold);

  er e;
  er_new(&e, IR_OP_ATTENTION, 1);
  const tensor *ops[5] = {&c.q, &c.k, &c.v, &c.bias[0], &c.bias[1]};
  for (int t = 0; t < 3 + c.nbias; t++)
    er_in(&e, DT_FLOAT32, ops[t]->rank, ops[t]->dims, ops[t]->v);
  ir_attr_set_float(e.g, e.n, "scale", c.scale);
  ir_attr_set_int(e.g, e.n, "k_trans", c.k_trans);
  ir_attr_set_int(e.g, e.n, "causal", c.causal);
  ir_attr_set_int(e.g, e.n, "causal_offset", c.off);
  ir_attr_set_int(e.g, e.n, "zero_masked", c.zero);
  float *ref = er_run(&e, 0);
  CHECK(ref != NULL);
  if (ref && ir_value_elements(e.out[0]) != (int64_t)n) {
    CHECK(!"reference and kernel outputs differ in size");
  } else if (ref) {
    double tol = c.q.dt == DT_FLOAT16 || c.ydt == DT_FLOAT16 ? 4e-3 : 2e-5;
    size_t at = 0;
    int ok = close_enough(got, ref, n, tol, &at);
    test_check(ok, __FILE__, __LINE__, "attention case matches the reference");
    if (!ok)
      test_note(
          "  case %d: batch %d dims, Sq %lld Skv %lld D %lld Dv %lld k_trans %d causal %d (offset %lld) "
          "zero %d biases %d dtype %d/%d tiles %lld/%lld views %d: y[%zu] = %g, want %g",
          index, c.nbd, (long long)c.sq, (long long)c.skv, (long long)c.d, (long long)c.dv, c.k_trans,
          c.causal, (long long)c.off, c.zero, c.nbias, c.q.dt, c.ydt, (long long)c.tq, (long long)c.tkv,
          views, at, (double)got[at], (double)ref[at]);
  }
  free(got), free(ref);
  er_free(&e);
  kc_free(&k);
  free_case(&c);
}

/* The host's one-pass scaled scores and max (rt_cpu()->attn_scale_max,
 * AVX-512) equal the scaling loop and rt_vmax bit for bit, NaN and -inf
 * scores included, for row lengths with and without a partial block. */
static void test_scale_max(void) {
  const rt_cpu_paths *cpu = rt_cpu();
  if (!cpu->attn_scale_max) return;
  enum { STRIDE = 64 * 16 };
  float *acc = malloc(8 * STRIDE * sizeof *acc), got[128], want[128];
  for (int n = 1; n <= 128; n += 1 + irand(9)) {
    for (int i = 0; i < 8 * STRIDE; i++)
      acc[i] = irand(50) == 0 ? (irand(2) ? NAN : -INFINITY) : frand() * 30.0f;
    const float scale = 0.125f + frand() * 0.01f;
    float m = cpu->attn_scale_max(got, acc, STRIDE, (size_t)n, scale);
    for (int j = 0; j < n; j++)
      want[j] = acc[j / 16 * STRIDE + j % 16] * scale;
    float mw = rt_vmax(want, (size_t)n);
    int same = memcmp(got, want, (size_t)n * sizeof *got) == 0 && memcmp(&m, &mw, sizeof m) == 0;
    test_check(same, __FILE__, __LINE__, "one-pass scaled scores and max equal the loop's");
    if (!same) test_note("  n %d: max %g, want %g", n, (double)m, (double)mw);
  }
  free(acc);
}

static void test_check_rules(void) {
  int64_t q[3] = {2, 5, 8}, kk[3] = {2, 7, 8}, v[3] = {2, 7, 4}, y[3] = {2, 5, 4}, bad[3] = {2, 7, 9};
  int64_t bias[2] = {5, 7}, badb[2] = {5, 6};
  kcase c;
  kc_setup(&c, OM_TASK_ATTENTION, 2, 0);
  kc_add(&c, DT_FLOAT16, LAYOUT_ND, 3, q);
  kc_add(&c, DT_FLOAT16, LAYOUT_ND, 3, kk);
  kc_add(&c, DT_FLOAT16, LAYOUT_ND, 3, v);
  kc_add(&c, DT_FLOAT32, LAYOUT_ND, 2, bias);
  kc_none(&c);
  kc_add(&c, DT_FLOAT16, LAYOUT_ND, 3, y);
  float scale = 0.5f;
  memcpy(&c.task.params[OM_ATTENTION_P_SCALE], &scale, 4);
  c.task.params[OM_ATTENTION_P_TILE_Q] = 16, c.task.params[OM_ATTENTION_P_TILE_KV] = 32;
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  c.task.block_dim = 3;
  expect_reject(&c, "attention block_dim above the tiles", "block_dim");
  c.task.block_dim = 2, c.task.params[OM_ATTENTION_P_TILE_KV] = 24;
  expect_reject(&c, "attention tile_kv not a multiple of 16", "params[6]");
  c.task.params[OM_ATTENTION_P_TILE_KV] = 16, c.task.params[OM_ATTENTION_P_TILE_Q] = 4096;
  expect_reject(&c, "attention tiles past L0C", "L0C");
  c.task.params[OM_ATTENTION_P_TILE_Q] = 16, c.task.params[OM_ATTENTION_P_TILE_KV] = 32;
  c.task.params[OM_ATTENTION_P_CAUSAL_OFFSET] = 3;
  expect_reject(&c, "attention causal_offset without causal", "causal_offset");
  c.task.params[OM_ATTENTION_P_CAUSAL_OFFSET] = 0, c.task.params[OM_ATTENTION_P_K_TRANS] = 1;
  expect_reject(&c, "attention k read transposed disagrees", "disagree");
  c.task.params[OM_ATTENTION_P_K_TRANS] = 0;
  kc_set(&c, OM_ATTENTION_T_K, DT_FLOAT16, 3, bad);
  expect_reject(&c, "attention k's D differs from q's", "disagree");
  kc_set(&c, OM_ATTENTION_T_K, DT_FLOAT32, 3, kk);
  expect_reject(&c, "attention k of another dtype", "dtypes");
  kc_set(&c, OM_ATTENTION_T_K, DT_FLOAT16, 3, kk);
  kc_set(&c, OM_ATTENTION_T_BIAS0, DT_FLOAT32, 2, badb);
  expect_reject(&c, "attention bias that does not broadcast", "bias0");
  scale = INFINITY;
  kc_set(&c, OM_ATTENTION_T_BIAS0, DT_FLOAT32, 2, bias);
  memcpy(&c.task.params[OM_ATTENTION_P_SCALE], &scale, 4);
  expect_reject(&c, "attention infinite scale", "scale");
  scale = 0.5f;
  memcpy(&c.task.params[OM_ATTENTION_P_SCALE], &scale, 4);
  /* views: q [2, 5, 8] as two heads of [5, 16] rows (strides 8, 16), span 80 */
  int32_t *qv = &c.task.params[OM_ATTENTION_P_VIEW];
  c.def.workspace_bytes = 1 << 20;
  for (int t = 0; t < OM_ATTENTION_NTENSORS; t++)
    c.t[t].offset = (uint64_t)t << 12;
  qv[0] = 8, qv[1] = 16, qv[3] = 80;
  expect_reject(&c, "attention view params without the views bit", "params[8]");
  c.task.params[OM_ATTENTION_P_VIEWS] = 1;
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  qv[3] = 79;
  expect_reject(&c, "attention view past its span", "params[11] span");
  qv[3] = 80, qv[2] = 4;
  expect_reject(&c, "attention view stride past the rank", "params[10]");
  qv[2] = 0, qv[1] = -16;
  expect_reject(&c, "attention view negative stride", "params[9]");
  qv[1] = 16, c.t[OM_ATTENTION_T_Y].offset = 100;
  expect_reject(&c, "attention y overlapping the span of q's view", "overlap");
  c.t[OM_ATTENTION_T_Y].offset = 5 << 12, c.def.workspace_bytes = 100;
  expect_reject(&c, "attention view span past the workspace", "workspace");
  c.def.workspace_bytes = 1 << 20, c.task.params[OM_ATTENTION_P_VIEWS] = 16;
  expect_reject(&c, "attention views bit past y", "params[7] views");
  kc_free(&c);
}

int main(void) {
  const char *env = getenv("ATTENTION_CASES"), *seed = getenv("ATTENTION_SEED");
  int cases = env ? atoi(env) : 300;
  if (seed) rng = (uint32_t)strtoul(seed, NULL, 10);
  test_note("kernel paths: %s, %d cases, seed %u", rt_cpu()->name, cases, rng);
  for (int i = 0; i < cases; i++)
    run_case(i);
  test_scale_max();
  test_check_rules();
  return test_summary("attention");
}
