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
 * masked must give NaN or 0 as the reference does. ATTENTION_SEED picks
 * the seed. ctest runs this file on every kernel path.
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
  for (size_t i = 0; i < n; i++)
    got[i] = rt_get(k.data[ys], c.ydt, i);

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
          "zero %d biases %d dtype %d/%d tiles %lld/%lld: y[%zu] = %g, want %g",
          index, c.nbd, (long long)c.sq, (long long)c.skv, (long long)c.d, (long long)c.dv, c.k_trans,
          c.causal, (long long)c.off, c.zero, c.nbias, c.q.dt, c.ydt, (long long)c.tq, (long long)c.tkv, at,
          (double)got[at], (double)ref[at]);
  }
  free(got), free(ref);
  er_free(&e);
  kc_free(&k);
  free_case(&c);
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
  kc_free(&c);
}

int main(void) {
  const char *env = getenv("ATTENTION_CASES"), *seed = getenv("ATTENTION_SEED");
  int cases = env ? atoi(env) : 300;
  if (seed) rng = (uint32_t)strtoul(seed, NULL, 10);
  test_note("kernel paths: %s, %d cases, seed %u", rt_cpu()->name, cases, rng);
  for (int i = 0; i < cases; i++)
    run_case(i);
  test_check_rules();
  return test_summary("attention");
}
