/* test_dynquant.c - DYNQUANT, DynamicQuantizeLinear as one task, against
 * the reference evaluator's DynQuant (ir/eval_quant.c: common/quant.h's
 * scalar arithmetic), bit for bit: lengths around the SIMD widths (1 .. 16
 * and 64 + 1) and past 2^16, all-positive, all-negative and mixed x, all
 * zeros (scale 0), negative zeros, x / scale and -lo / scale exactly half
 * way between integers (rounding half to even, the zero point's too),
 * infinities and NaNs. Each case runs the task with 1, 2 and 3 blocks (the
 * ctest variant forces OMRT_PORTABLE=1), on f32 x and on f16 x (against
 * the evaluator on its f32 values), and the range and quantize loops on
 * both paths (portable, SSE2). Also the load-time check's refusals,
 * each naming the field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"
#include "common/quant.h"
#include "ir/eval.h"
#include "ir/shape.h"
#include "kcase.h"

static uint32_t rng = 77;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

enum { X = OM_DYNQUANT_T_X, Y = OM_DYNQUANT_T_Y, S = OM_DYNQUANT_T_SCALE, Z = OM_DYNQUANT_T_ZP };
enum { RANDOM, POSITIVE, NEGATIVE, ZEROS, NEG_ZEROS, TIES, INF, NEG_INF, NAN_AT };

typedef struct qcase {
  int64_t n;
  int kind;
} qcase;

static const char *kind_name[] = {"random", "positive", "negative", "zeros", "-0",
                                  "ties",   "inf",      "-inf",     "nan"};

static void fill(const qcase *q, float *x) {
  for (int64_t i = 0; i < q->n; i++) {
    const float r = (float)((int32_t)(next() % 20001) - 10000) * 0.00731f;
    switch (q->kind) {
    case POSITIVE: x[i] = fabsf(r) + 0.5f; break;
    case NEGATIVE: x[i] = -fabsf(r) - 0.25f; break;
    case ZEROS: x[i] = 0; break;
    case NEG_ZEROS: x[i] = i % 3 ? -0.0f : 0.0f; break;
    case TIES: /* scale 2^-4: lo = -2.5 * 2^-4 (zp 2.5 -> 2), x = (k + 0.5) * 2^-4 */
      x[i] = ((float)(int32_t)(next() % 250) - 2 + 0.5f) * 0.0625f;
      break;
    default: x[i] = r; break;
    }
  }
  if (q->kind == TIES) {
    x[0] = -2.5f * 0.0625f;
    x[q->n - 1] = 252.5f * 0.0625f;
  }
  if (q->kind == INF) x[q->n / 2] = INFINITY;
  if (q->kind == NEG_INF) x[q->n - 1] = -INFINITY;
  if (q->kind == NAN_AT) x[(q->n * 2) / 3] = NAN;
}

/* The evaluator's y, scale and zp for x ([n]); 0 when it fails. */
static int reference(const qcase *q, const float *x, void **out, arena *a) {
  ir_graph *g = ir_graph_new("dynquant", 0);
  ir_value *xv = ir_value_new(g, "x", DT_FLOAT32);
  ir_value_set_shape(xv, 1, &q->n);
  ir_value *outs[3] = {ir_value_new(g, "y", DT_UINT8), ir_value_new(g, "s", DT_FLOAT32),
                       ir_value_new(g, "z", DT_UINT8)};
  ir_node *nd = ir_node_new(g, IR_OP_DYNQUANT, "dq", 1, &xv, 3, outs);
  diag d;
  diag_init(&d);
  int ok = 0;
  if (ir_shape_infer_node(g, nd, NULL, &d) != ST_OK) {
    test_note("shape: %s", d.msg);
  } else {
    const void *ins[1] = {x};
    ok = ir_eval_node(nd, ins, out, a, &d) == ST_OK;
    if (!ok) test_note("eval: %s", d.msg);
    CHECK(outs[1]->rank == 0 && outs[2]->rank == 0 && outs[0]->rank == 1 && outs[0]->dims[0] == q->n);
  }
  ir_graph_free(g);
  return ok;
}

static void setup(kcase *c, int64_t n, uint32_t block_dim, int xdt) {
  const int64_t one = 1;
  kc_setup(c, OM_TASK_DYNQUANT, block_dim, OM_DYNQUANT_NTENSORS);
  kc_set(c, X, xdt, 1, &n);
  kc_set(c, Y, DT_UINT8, 1, &n);
  kc_set(c, S, DT_FLOAT32, 0, &one);
  kc_set(c, Z, DT_UINT8, 0, &one);
}

static void compare(const char *path, const qcase *q, const uint8_t *y, float s, uint8_t z, void **want) {
  int64_t bad = 0, first = 0;
  for (int64_t i = 0; i < q->n; i++)
    if (y[i] != ((const uint8_t *)want[0])[i] && !bad++) first = i;
  const int same_s = !memcmp(&s, want[1], 4), same_z = z == *(const uint8_t *)want[2];
  CHECK(bad == 0 && same_s && same_z);
  if (bad || !same_s || !same_z)
    test_note("  %s: n %lld %s: %lld differ (first %lld: %u, want %u), scale %g want %g, zp %u want %u", path,
              (long long)q->n, kind_name[q->kind], (long long)bad, (long long)first, y[first],
              ((const uint8_t *)want[0])[first], (double)s, (double)*(const float *)want[1], z,
              *(const uint8_t *)want[2]);
}

/* The task with 1, 2 and 3 blocks on x (f32) or on its f16 bits xh. */
static void run_task(const qcase *q, const float *x, const uint16_t *xh, void **want) {
  for (uint32_t blocks = 1; blocks <= 3; blocks++) {
    kcase c;
    setup(&c, q->n, blocks, xh ? DT_FLOAT16 : DT_FLOAT32);
    if (xh)
      memcpy(c.data[X], xh, sizeof(uint16_t) * (size_t)q->n);
    else
      memcpy(c.data[X], x, sizeof(float) * (size_t)q->n);
    const omrt_status st = kc_check(&c);
    CHECK_EQ_INT(st, q->n < 64 * (int64_t)blocks - 63 ? OMRT_ERR_FORMAT : OMRT_OK);
    if (st == OMRT_OK) {
      kc_run_blocks(&c, kc_core());
      char path[32];
      snprintf(path, sizeof path, "task %s, %u blocks", xh ? "f16" : "f32", blocks);
      compare(path, q, c.data[Y], *(float *)c.data[S], *(uint8_t *)c.data[Z], want);
    }
    kc_free(&c);
  }
}

static void run_case(const qcase *q) {
  arena a;
  arena_init(&a, 0);
  float *x = malloc(sizeof(float) * (size_t)q->n);
  uint16_t *xh = malloc(sizeof(uint16_t) * (size_t)q->n);
  uint8_t *y = malloc((size_t)q->n);
  fill(q, x);
  void *want[3] = {0};
  CHECK(reference(q, x, want, &a));
  if (!want[0]) goto done;
  if (q->kind == TIES) CHECK(*(const float *)want[1] == 0.0625f && *(const uint8_t *)want[2] == 2);
  run_task(q, x, NULL, want);
  for (int simd = 0; simd <= 1; simd++) { /* both paths, whatever the CPU detection chose */
    float lo, hi, s;
    int32_t zp;
    rt_dynquant_range(x, (uint64_t)q->n, simd, &lo, &hi);
    q_dynamic_params(lo, hi, &s, &zp);
    memset(y, 0x7f, (size_t)q->n);
    rt_dynquant_quantize(x, (uint64_t)q->n, s, zp, simd, y);
    compare(simd ? "sse2 loops" : "portable loops", q, y, s, (uint8_t)zp, want);
  }
  for (int64_t i = 0; i < q->n; i++) /* f16 x: the evaluator on its f32 values */
    xh[i] = float_to_half(x[i]), x[i] = half_to_float(xh[i]);
  CHECK(reference(q, x, want, &a));
  if (want[0]) run_task(q, x, xh, want);
done:
  free(x), free(xh), free(y);
  arena_free(&a);
}

static void test_rejects(void) {
  kcase c;
  const int64_t n = 200, two = 2, m = 199;
  setup(&c, n, 1, DT_FLOAT32);
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  c.task.block_dim = 5; /* 4 runs of 64 */
  expect_reject(&c, "more blocks than runs", "block_dim");
  setup(&c, n, 1, DT_FLOAT32);
  kc_set(&c, Y, DT_INT8, 1, &n);
  expect_reject(&c, "i8 y", "y");
  setup(&c, n, 1, DT_FLOAT32);
  kc_set(&c, Y, DT_UINT8, 1, &m);
  expect_reject(&c, "y of other dims", "dims");
  setup(&c, n, 1, DT_FLOAT32);
  kc_set(&c, S, DT_FLOAT32, 1, &two);
  expect_reject(&c, "scale of 2 elements", "scale and zp have 2");
  setup(&c, n, 1, DT_FLOAT32);
  kc_set(&c, X, DT_INT32, 1, &n);
  expect_reject(&c, "i32 x", "x");
  kc_free(&c);
}

int main(void) {
  static const int64_t lens[] = {1, 7, 8, 15, 16, 17, 65, 1000, 70001};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
    for (int k = RANDOM; k <= NAN_AT; k++) {
      const qcase q = {lens[i], k};
      if (k == TIES && q.n < 2) continue;
      run_case(&q);
    }
  test_rejects();
  test_note("paths: %s", rt_cpu()->name);
  return test_summary("test_dynquant");
}
