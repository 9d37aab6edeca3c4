/* test_count.c - counted outputs (ir/count.h, om_format.h's COUNTS): an
 * output whose extent along one axis is known only after execution.
 *
 * One model, x f32 [3, 5], cond bool [5], k i64 [1], all run-time inputs:
 *   nz = NonZero(x)                       i64 [2, <=15]
 *   cz = Compress(x, cond, axis 1)        f32 [3, <=5]
 *   tv, ti = TopK(x, k, axis 1)           f32 / i64 [3, <=5]
 *   nzr = Relu(Transpose(Cast(nz)))       f32 [<=15, 2]: a count carried
 *   tm = ReduceMax(tv, axes 0, keepdims 0) f32 [<=5]: carried across a reduction
 *   tp = Softmax(tv, axis 0)              f32 [3, <=5]: and across a Softmax
 *   tc = Concat(tv, x, axis 0)            f32 [6, <=5]: and a Concat
 * compiled in both precision modes and run through libomrt on random inputs
 * with empty results (x all zero, cond all false, k = 0), full ones (x
 * without zeros, cond all true, k = 5) and k beyond the axis (clamped): the
 * actual dims (omrt_context_output_dims) equal the counts computed here,
 * the compacted outputs equal the reference evaluator's valid part, and the
 * evaluator's padding of the producers' outputs (NonZero, TopK) is zero
 * (Compress's Gather reads index 0 there). libascendcl's aclmdlGetCurOutputDims gives
 * the same dims. NonMaxSuppression likewise (test_nms). Refused at compile
 * time, one line naming node and axis: a
 * NonZero over 2^32 elements, a ReduceMax and a Softmax over a counted axis.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "driver/compile.h"
#include "ir/eval.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "passes/pass.h"
#include "support.h"

enum { R = 3, C = 5, N = R * C, NOUT = 8 };

static void model(mb *m) {
  mb_init(m, 13);
  mb_input(m, "x", 1, 2, (int64_t[]){R, C}, NULL);
  mb_input(m, "cond", 9, 1, (int64_t[]){C}, NULL);
  mb_input(m, "k", 7, 1, (int64_t[]){1}, NULL);
  mb_node(m, "NonZero", "nonzero", "x", "nz");
  attr_int(m, mb_node(m, "Compress", "compress", "x,cond", "cz"), "axis", 1);
  attr_int(m, mb_node(m, "TopK", "topk", "x,k", "tv,ti"), "axis", 1);
  attr_int(m, mb_node(m, "Cast", "cast", "nz", "nzf"), "to", 1);
  attr_ints(m, mb_node(m, "Transpose", "transpose", "nzf", "nzt"), "perm", 2, (int64_t[]){1, 0});
  mb_node(m, "Relu", "relu", "nzt", "nzr");
  Onnx__NodeProto *rm = mb_node(m, "ReduceMax", "max_across", "tv", "tm");
  attr_ints(m, rm, "axes", 1, (int64_t[]){0});
  attr_int(m, rm, "keepdims", 0);
  attr_int(m, mb_node(m, "Softmax", "softmax_across", "tv", "tp"), "axis", 0);
  attr_int(m, mb_node(m, "Concat", "concat_across", "tv,x", "tc"), "axis", 0);
  mb_output(m, "nz");
  mb_output(m, "cz");
  mb_output(m, "tv");
  mb_output(m, "ti");
  mb_output(m, "nzr");
  mb_output(m, "tm");
  mb_output(m, "tp");
  mb_output(m, "tc");
}

/* The expected counts of outputs 0..4 for these inputs. */
static void expected_counts(const float *x, const uint8_t *cond, int64_t k, int64_t want[NOUT]) {
  int64_t nz = 0, cz = 0;
  for (int i = 0; i < N; i++)
    nz += x[i] != 0;
  for (int i = 0; i < C; i++)
    cz += cond[i] != 0;
  for (int o = 2; o < NOUT; o++) /* TopK's and what carries its count */
    want[o] = k < 0 ? 0 : k > C ? C : k;
  want[0] = want[4] = nz, want[1] = cz;
}

/* Output o of the evaluator (at its bound, counted along `axis` by n)
 * against the runtime's compacted `got` of dims `d`: the valid part equal
 * within tol x |ref| + tol (0: exactly), the padding zero. */
static void compare(int o, const omrt_tensor_desc *d, const void *got, const void *ref, const int64_t *bound,
                    double tol, int zero_pad) {
  int axis = d->count_axis;
  int64_t outer = 1, inner = 1, n = d->dims[axis], B = bound[axis];
  for (int i = 0; i < d->rank; i++)
    if (i < axis)
      outer *= d->dims[i];
    else if (i > axis)
      inner *= d->dims[i];
  int bad = 0;
  for (int64_t a = 0; a < outer; a++)
    for (int64_t j = 0; j < B; j++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t r = (a * B + j) * inner + i, g = (a * n + j) * inner + i;
        double rv = d->dtype == OMRT_INT64 ? (double)((const int64_t *)ref)[r] : ((const float *)ref)[r];
        if (j >= n) {
          bad += zero_pad && rv != 0; /* a producer's padding */
          continue;
        }
        double gv = d->dtype == OMRT_INT64 ? (double)((const int64_t *)got)[g] : ((const float *)got)[g];
        bad += fabs(gv - rv) > tol * fabs(rv) + tol;
      }
  CHECK_EQ_INT(bad, 0);
  if (bad) test_note("  output %d: %d elements differ", o, bad);
}

static void run_case(const void *om, size_t size, int fp16, const float *x, const uint8_t *cond, int64_t k) {
  mb m;
  model(&m);
  ir_graph *g = EXPECT_OK(&m, ".", NULL);
  mb_free(&m);
  arena a;
  arena_init(&a, 0);
  void *ref[NOUT];
  const void *in[3] = {x, cond, &k};
  CHECK(g && mb_eval(g, in, ref, &a) == 0);
  int64_t bounds[NOUT][2] = {{2, N}, {R, C}, {R, C}, {R, C}, {N, 2}, {C, 0}, {R, C}, {2 * R, C}};

  omrt_model *rm;
  omrt_context *ctx;
  CHECK_EQ_INT(omrt_model_load_memory(om, size, NULL, &rm), OMRT_OK);
  CHECK_EQ_INT(omrt_context_new(rm, &ctx), OMRT_OK);
  static int64_t out_i[2][64];
  static float out_f[6][64];
  void *out[NOUT] = {out_i[0], out_f[0], out_f[1], out_i[1], out_f[2], out_f[3], out_f[4], out_f[5]};
  CHECK_EQ_INT(omrt_execute(ctx, in, out), OMRT_OK);
  int64_t want[NOUT];
  expected_counts(x, cond, k, want);
  static const int axes[NOUT] = {1, 1, 1, 1, 0, 0, 1, 1};
  for (int o = 0; o < NOUT; o++) {
    omrt_tensor_desc d, md;
    CHECK_EQ_INT(omrt_context_output_dims(ctx, o, &d), OMRT_OK);
    CHECK_EQ_INT(omrt_model_output(rm, o, &md), OMRT_OK);
    CHECK_EQ_INT(d.count_axis, axes[o]);
    CHECK_EQ_INT(md.count_axis, axes[o]);
    CHECK_EQ_INT((int)md.dims[axes[o]], (int)bounds[o][axes[o]]);
    CHECK_EQ_INT((int)d.dims[axes[o]], (int)want[o]);
    if (d.dims[axes[o]] != want[o])
      test_note("  output %d: count %lld, want %lld", o, (long long)d.dims[axes[o]], (long long)want[o]);
    CHECK_EQ_INT((int)d.bytes, (int)(md.bytes / (size_t)bounds[o][axes[o]] * (size_t)want[o]));
    /* fp16 rounding; Softmax's exp in float32 against the evaluator's double */
    double tol = fp16 && (o == 1 || o == 2 || o >= 5) ? 1e-3 : o == 6 ? 1e-6 : 0;
    if (g) compare(o, &d, out[o], ref[o], bounds[o], tol, o == 0 || o == 2 || o == 3);
  }
  omrt_context_free(ctx);
  omrt_model_free(rm);
  arena_free(&a);
  ir_graph_free(g);
}

static void test_runs(om_precision p) {
  mb m;
  model(&m);
  size_t size = 0;
  void *om = mb_compile_in(&m, "count.onnx", p, &size);
  CHECK(om != NULL);
  if (!om) return;
  int fp16 = p == OM_PRECISION_FORCE_FP16;
  float x[N];
  uint8_t cond[C];
  unsigned seed = 7;
  for (int t = 0; t < 12; t++) {
    int kind = t % 4; /* random, empty, full, k past the axis */
    for (int i = 0; i < N; i++) {
      seed = seed * 1103515245u + 12345u;
      int r = (int)(seed >> 16) % 7;
      x[i] = kind == 1 ? 0.0f : kind == 2 ? (float)(r + 1) * 0.5f : r < 3 ? 0.0f : (float)(r - 4) * 0.75f;
    }
    for (int i = 0; i < C; i++)
      cond[i] = kind == 1 ? 0 : kind == 2 ? 1 : (uint8_t)((seed >> (i + 3)) & 1);
    int64_t k = kind == 1 ? 0 : kind == 2 ? C : kind == 3 ? C + 4 : (int64_t)(seed >> 20) % (C + 1);
    run_case(om, size, fp16, x, cond, k);
  }
  free(om);
}

/* libascendcl: aclmdlGetCurOutputDims gives the run's actual dims,
 * aclmdlGetOutputDims the bound. */
static void test_acl(void) {
  mb m;
  model(&m);
  size_t size = 0;
  void *om = mb_compile_in(&m, "count.onnx", OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE, &size);
  CHECK(om != NULL);
  if (!om) return;
  CHECK_EQ_INT(aclInit(NULL), ACL_SUCCESS);
  CHECK_EQ_INT(aclrtSetDevice(0), ACL_SUCCESS);
  uint32_t id;
  CHECK_EQ_INT(aclmdlLoadFromMem(om, size, &id), ACL_SUCCESS);
  float x[N] = {0, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 4};
  uint8_t cond[C] = {1, 0, 0, 1, 1};
  int64_t k = 2;
  const void *host[3] = {x, cond, &k};
  size_t in_bytes[3] = {sizeof x, sizeof cond, sizeof k},
         out_bytes[NOUT] = {2 * N * 8, N * 4, N * 4, N * 8, N * 8, C * 4, N * 4, 2 * N * 4};
  aclmdlDataset *in = aclmdlCreateDataset(), *out = aclmdlCreateDataset();
  void *dev[3 + NOUT];
  for (int i = 0; i < 3 + NOUT; i++) {
    size_t b = i < 3 ? in_bytes[i] : out_bytes[i - 3];
    CHECK_EQ_INT(aclrtMalloc(&dev[i], b, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    if (i < 3) CHECK_EQ_INT(aclrtMemcpy(dev[i], b, host[i], b, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    CHECK_EQ_INT(aclmdlAddDatasetBuffer(i < 3 ? in : out, aclCreateDataBuffer(dev[i], b)), ACL_SUCCESS);
  }
  aclmdlDesc *d = aclmdlCreateDesc();
  CHECK_EQ_INT(aclmdlGetDesc(d, id), ACL_SUCCESS);
  CHECK_EQ_INT(aclmdlExecute(id, in, out), ACL_SUCCESS);
  aclmdlIODims dims;
  CHECK_EQ_INT(aclmdlGetOutputDims(d, 0, &dims), ACL_SUCCESS);
  CHECK_EQ_INT((int)dims.dims[1], N);
  CHECK_EQ_INT(aclmdlGetCurOutputDims(d, 0, &dims), ACL_SUCCESS);
  CHECK_EQ_INT((int)dims.dimCount, 2);
  CHECK_EQ_INT((int)dims.dims[0], 2);
  CHECK_EQ_INT((int)dims.dims[1], 4);
  CHECK_EQ_INT(aclmdlGetCurOutputDims(d, 1, &dims), ACL_SUCCESS);
  CHECK_EQ_INT((int)dims.dims[1], 3);
  CHECK_EQ_INT(aclmdlGetCurOutputDims(d, 2, &dims), ACL_SUCCESS);
  CHECK_EQ_INT((int)dims.dims[1], 2);
  int64_t nz[8];
  CHECK_EQ_INT(aclrtMemcpy(nz, sizeof nz, dev[3], sizeof nz, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  static const int64_t want_nz[8] = {0, 0, 1, 2, 1, 3, 2, 4}; /* [2, 4], compacted */
  CHECK(memcmp(nz, want_nz, sizeof nz) == 0);
  CHECK_EQ_INT(aclmdlGetCurOutputDims(d, 9, &dims), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(aclmdlDestroyDesc(d), ACL_SUCCESS);
  for (int k2 = 0; k2 < 2; k2++) {
    aclmdlDataset *ds = k2 ? out : in;
    for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(ds); i++)
      CHECK_EQ_INT(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(ds, i)), ACL_SUCCESS);
    CHECK_EQ_INT(aclmdlDestroyDataset(ds), ACL_SUCCESS);
  }
  for (int i = 0; i < 3 + NOUT; i++)
    CHECK_EQ_INT(aclrtFree(dev[i]), ACL_SUCCESS);
  CHECK_EQ_INT(aclmdlUnload(id), ACL_SUCCESS);
  CHECK_EQ_INT(aclrtResetDevice(0), ACL_SUCCESS);
  CHECK_EQ_INT(aclFinalize(), ACL_SUCCESS);
  free(om);
}

/* NonMaxSuppression, boxes [2, 6, 4], scores [2, 2, 6], run-time
 * thresholds, max_output_boxes_per_class `max` (a constant): against the
 * evaluator on random boxes in both box formats, with thresholds that keep
 * nothing and everything; 2^62 boxes per class bound the output by the
 * boxes there are. */
static void test_nms(int64_t max, int center) {
  enum { B = 2, NB = 6, NC = 2 };
  mb m;
  mb_init(&m, 11);
  mb_input(&m, "boxes", 1, 3, (int64_t[]){B, NB, 4}, NULL);
  mb_input(&m, "scores", 1, 3, (int64_t[]){B, NC, NB}, NULL);
  mb_input(&m, "iou", 1, 1, (int64_t[]){1}, NULL);
  mb_input(&m, "score", 1, 1, (int64_t[]){1}, NULL);
  mb_init_raw(&m, "max", 7, 1, (int64_t[]){1}, &max, sizeof max);
  attr_int(&m, mb_node(&m, "NonMaxSuppression", "nms", "boxes,scores,max,iou,score", "sel"),
           "center_point_box", center);
  mb_output(&m, "sel");
  ir_graph *g = EXPECT_OK(&m, ".", NULL);
  size_t size = 0;
  void *om = mb_compile_in(&m, "count.onnx", OM_PRECISION_FORCE_FP16, &size);
  CHECK(om && g);
  if (!om || !g) {
    free(om);
    ir_graph_free(g);
    return;
  }
  int64_t bound = B * NC * (max < NB ? max : NB);
  omrt_model *rm;
  omrt_context *ctx;
  CHECK_EQ_INT(omrt_model_load_memory(om, size, NULL, &rm), OMRT_OK);
  CHECK_EQ_INT(omrt_context_new(rm, &ctx), OMRT_OK);
  omrt_tensor_desc md;
  CHECK_EQ_INT(omrt_model_output(rm, 0, &md), OMRT_OK);
  CHECK_EQ_INT((int)md.dims[0], (int)bound);
  unsigned seed = 11;
  for (int t = 0; t < 8; t++) {
    float boxes[B * NB * 4], scores[B * NC * NB], iou = t % 4 == 1 ? 1.0f : 0.3f + 0.1f * (float)(t % 3),
                                                  score = t % 4 == 2   ? 2.0f
                                                          : t % 4 == 3 ? -1.0f
                                                                       : 0.2f;
    for (int i = 0; i < B * NB * 4; i++)
      seed = seed * 1103515245u + 12345u,
      boxes[i] = (float)((seed >> 16) % 8) * (i % 4 >= 2 && center ? 0.5f : 1.0f);
    for (int i = 0; i < B * NC * NB; i++)
      seed = seed * 1103515245u + 12345u, scores[i] = (float)((seed >> 16) % 10) * 0.1f;
    const void *in[4] = {boxes, scores, &iou, &score};
    static int64_t got[2 * 2 * 6 * 3];
    void *out[1] = {got};
    CHECK_EQ_INT(omrt_execute(ctx, in, out), OMRT_OK);
    arena a;
    arena_init(&a, 0);
    void *ref[1];
    CHECK(mb_eval(g, in, ref, &a) == 0);
    omrt_tensor_desc d;
    CHECK_EQ_INT(omrt_context_output_dims(ctx, 0, &d), OMRT_OK);
    CHECK(d.dims[0] >= 0 && d.dims[0] <= bound && d.dims[1] == 3);
    if (t % 4 == 2) CHECK_EQ_INT((int)d.dims[0], 0); /* no score above 2 */
    CHECK(memcmp(got, ref[0], (size_t)d.dims[0] * 3 * sizeof *got) == 0);
    for (int64_t i = d.dims[0] * 3; i < bound * 3; i++)
      CHECK_EQ_INT((int)((const int64_t *)ref[0])[i], 0);
    arena_free(&a);
  }
  omrt_context_free(ctx);
  omrt_model_free(rm);
  ir_graph_free(g);
  free(om);
}

static void test_refused(void) {
  mb m;
  mb_init(&m, 13); /* NonZero over 2^32 elements */
  mb_input(&m, "x", 9, 2, (int64_t[]){65536, 65536}, NULL);
  mb_node(&m, "NonZero", "big_nonzero", "x", "y");
  mb_output(&m, "y");
  mb_expect_refused(&m, "'big_nonzero' (NonZero)", "4294967296");

  mb_init(&m, 13); /* a reduction over the counted axis */
  mb_input(&m, "x", 1, 2, (int64_t[]){R, C}, NULL);
  mb_node(&m, "NonZero", "nonzero", "x", "nz");
  attr_ints(&m, mb_node(&m, "ReduceMax", "max_counted", "nz", "s"), "axes", 1, (int64_t[]){1});
  mb_output(&m, "s");
  mb_expect_refused(&m, "'max_counted'", "axis 1");

  mb_init(&m, 13); /* Softmax over TopK's counted axis */
  mb_input(&m, "x", 1, 2, (int64_t[]){R, C}, NULL);
  mb_input(&m, "k", 7, 1, (int64_t[]){1}, NULL);
  attr_int(&m, mb_node(&m, "TopK", "topk", "x,k", "tv,ti"), "axis", 1);
  attr_int(&m, mb_node(&m, "Softmax", "softmax_counted", "tv", "p"), "axis", 1);
  mb_output(&m, "p");
  mb_expect_refused(&m, "'softmax_counted' (Softmax)", "counted by");
}

int main(void) {
  test_runs(OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
  test_runs(OM_PRECISION_FORCE_FP16);
  test_acl();
  test_nms(3, 0);
  test_nms(2, 1);
  test_nms((int64_t)1 << 62, 0);
  test_refused();
  return test_summary("count");
}
