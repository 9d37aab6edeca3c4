/* test_count_consumers.c - the consumers that take a counted value (ir/count.h)
 * the way a detector's postprocessing does (torchvision's SSD: per class,
 * the scores above a threshold, their top k, the boxes of those):
 *
 *   pos = NonZero(x > 0) -> Transpose       i64 [<=N, 1]
 *   s = GatherND(x, pos)                    f32 [<=N]     counted indices
 *   b = GatherND(boxes, pos)                f32 [<=N, 4]
 *   sh = Shape(s)                           i64 [1]       the count, at run time
 *   k = ReduceMin(Concat([3], sh))          i64 [1]       min(3, count)
 *   tv, ti = TopK(s, k)                     [<=3]         TopK over the counted axis (k <= 3)
 *   tb = Gather(b, ti)                      f32 [<=3, 4]  counted data, counted indices
 *   lab = ConstantOfShape(Shape(tv), 7)     i64 [<=3]     a counted fill
 *   sv, si = TopK(s, 2)                     [<=N]         a constant k over the count
 *   sz = Size(b), shb = Shape(b)            4 x count, [count, 4]
 *   cat = Concat(tv, x, s)                  f32 [<=3 + N + N]  valid rows packed
 *   sel = NonMaxSuppression(b, s)           i64 [<=N, 3]  over the valid boxes only
 *   mid = s[1:4]                            f32 [<=3]     Slice along the counted axis
 *   bmax = ReduceMax(b), ssum = ReduceSum(s)  f32 []      over the valid rows
 *   ifo = If(Size(s) == 0, f32 [0], s)      f32 [<=N]     a run-time If, empty or counted
 *
 * compiled in both precision modes and run through libomrt on inputs with
 * no, some and all x positive: every count is the one computed here, the
 * valid parts equal the reference evaluator's, and the top values are the
 * largest positive x in order with their boxes. Refused with one line naming
 * node and axis: GatherND addressing counted data along its counted axis,
 * and Tile repeating it; a Slice whose end is the count plus one, naming the
 * NonZero the end depends on. test_shape_reads: Gather of a static dim of a counted
 * value's Shape is a constant, and a Slice up to its own count keeps it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/compile.h"
#include "ir/eval.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "passes/pass.h"
#include "support.h"

enum { N = 8, NOUT = 18 };
enum {
  O_S,
  O_SH,
  O_TV,
  O_TI,
  O_TB,
  O_LAB,
  O_SV,
  O_SI,
  O_SZ,
  O_SHB,
  O_B,
  O_K,
  O_CAT,
  O_SEL,
  O_MID,
  O_BMAX,
  O_SSUM,
  O_IF
};

static void fill_attr(mb *m, Onnx__NodeProto *n, int64_t v) {
  Onnx__AttributeProto *a = mb_attr(m, n, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  a->t = mb_tensor(m, NULL, 7, 1, (int64_t[]){1});
  set_raw(m, a->t, &v, sizeof v);
}

/* If(Size(s) == 0) then an empty f32 [0] else s: counted by the taken branch. */
static void if_empty(mb *m, mb *tb, mb *eb) {
  int64_t zero = 0;
  mb_init_raw(m, "zero_i", 7, 0, NULL, &zero, sizeof zero);
  mb_node(m, "Size", "size_of_s", "s", "ns");
  mb_node(m, "Equal", "no_scores", "ns,zero_i", "none");
  mb_init(tb, 13);
  mb_init_raw(tb, "empty", 1, 1, (int64_t[]){0}, NULL, 0);
  mb_node(tb, "Identity", NULL, "empty", "t_out");
  mb_output(tb, "t_out");
  mb_one_node_graph(eb, "Identity", "s", "e_out");
  mb_if(m, "if_any", "none", "ifo", tb, eb);
}

static mb then_b, else_b; /* the If's branches, alive as long as the model */

static void model(mb *m) {
  mb_init(m, 13);
  mb_input(m, "x", 1, 1, (int64_t[]){N}, NULL);
  mb_input(m, "boxes", 1, 2, (int64_t[]){N, 4}, NULL);
  float zero = 0.0f;
  int64_t three = 3, two = 2;
  mb_init_raw(m, "zero", 1, 0, NULL, &zero, sizeof zero);
  mb_init_raw(m, "three", 7, 1, (int64_t[]){1}, &three, sizeof three);
  mb_init_raw(m, "two", 7, 1, (int64_t[]){1}, &two, sizeof two);
  mb_node(m, "Greater", "above", "x,zero", "mask");
  mb_node(m, "NonZero", "nonzero", "mask", "nz");
  attr_ints(m, mb_node(m, "Transpose", "positions", "nz", "pos"), "perm", 2, (int64_t[]){1, 0});
  mb_node(m, "GatherND", "scores", "x,pos", "s");
  mb_node(m, "GatherND", "boxes_kept", "boxes,pos", "b");
  mb_node(m, "Shape", "count_of_s", "s", "sh");
  attr_int(m, mb_node(m, "Concat", "k_cands", "three,sh", "kc"), "axis", 0);
  Onnx__NodeProto *rm = mb_node(m, "ReduceMin", "k_min", "kc", "k");
  attr_ints(m, rm, "axes", 1, (int64_t[]){0});
  attr_int(m, rm, "keepdims", 1);
  attr_int(m, mb_node(m, "TopK", "topk", "s,k", "tv,ti"), "axis", 0);
  attr_int(m, mb_node(m, "Gather", "top_boxes", "b,ti", "tb"), "axis", 0);
  mb_node(m, "Shape", "count_of_tv", "tv", "sh2");
  fill_attr(m, mb_node(m, "ConstantOfShape", "labels", "sh2", "lab"), 7);
  attr_int(m, mb_node(m, "TopK", "top2", "s,two", "sv,si"), "axis", -1);
  mb_node(m, "Size", "size_of_b", "b", "sz");
  mb_node(m, "Shape", "shape_of_b", "b", "shb");
  attr_int(m, mb_node(m, "Concat", "cat", "tv,x,s", "cat"), "axis", 0);
  int64_t most = 100;
  float iou = 0.5f;
  mb_init_raw(m, "most", 7, 1, (int64_t[]){1}, &most, sizeof most);
  mb_init_raw(m, "iou", 1, 1, (int64_t[]){1}, &iou, sizeof iou);
  mb_init_raw(m, "ax0", 7, 1, (int64_t[]){1}, (int64_t[]){0}, sizeof(int64_t));
  mb_init_raw(m, "ax01", 7, 1, (int64_t[]){2}, (int64_t[]){0, 1}, 2 * sizeof(int64_t));
  mb_node(m, "Unsqueeze", "batch_boxes", "b,ax0", "b3");
  mb_node(m, "Unsqueeze", "batch_scores", "s,ax01", "s3");
  mb_node(m, "NonMaxSuppression", "nms", "b3,s3,most,iou", "sel");
  int64_t one = 1, four = 4;
  mb_init_raw(m, "one", 7, 1, (int64_t[]){1}, &one, sizeof one);
  mb_init_raw(m, "four", 7, 1, (int64_t[]){1}, &four, sizeof four);
  mb_node(m, "Slice", "middle", "s,one,four,ax0", "mid");
  attr_int(m, mb_node(m, "ReduceMax", "box_max", "b", "bmax"), "keepdims", 0);
  attr_int(m, mb_node(m, "ReduceSum", "score_sum", "s", "ssum"), "keepdims", 0);
  if_empty(m, &then_b, &else_b);
  static const char *const outs[NOUT] = {"s",   "sh", "tv", "ti",  "tb",  "lab", "sv",   "si",   "sz",
                                         "shb", "b",  "k",  "cat", "sel", "mid", "bmax", "ssum", "ifo"};
  for (int o = 0; o < NOUT; o++)
    mb_output(m, outs[o]);
}

static void model_free(mb *m) {
  mb_free(m);
  mb_free(&then_b);
  mb_free(&else_b);
}

static void *compile(mb *m, om_precision p, size_t *size) {
  void *om = mb_compile_in(m, "count.onnx", p, size); /* frees m */
  mb_free(&then_b);
  mb_free(&else_b);
  return om;
}

/* Per output: its count axis (-1: dense), dtype i64, elements per entry
 * along the axis (dense: want[] holds the elements). */
static const int axes[NOUT] = {0, -1, 0, 0, 0, 0, 0, 0, -1, -1, 0, -1, 0, 0, 0, -1, -1, 0};
static const int is_i64[NOUT] = {0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 0};
static const int inner[NOUT] = {1, 1, 1, 1, 4, 1, 1, 1, 1, 1, 4, 1, 1, 3, 1, 1, 1, 1};

static double get(const void *p, int i64, int64_t i) {
  return i64 ? (double)((const int64_t *)p)[i] : ((const float *)p)[i];
}

static void run_case(omrt_model *rm, const float *x, const float *boxes, int fp16) {
  mb m;
  model(&m);
  ir_graph *g = EXPECT_OK(&m, ".", NULL);
  model_free(&m);
  arena a;
  arena_init(&a, 0);
  void *ref[NOUT] = {0};
  const void *in[2] = {x, boxes};
  CHECK(g && mb_eval(g, in, ref, &a) == 0);
  int64_t c = 0, order[N];
  for (int i = 0; i < N; i++)
    if (x[i] > 0) order[c++] = i;
  for (int i = 1; i < c; i++) /* the positive x, largest first (distinct values) */
    for (int j = i; j > 0 && x[order[j]] > x[order[j - 1]]; j--) {
      int64_t t = order[j];
      order[j] = order[j - 1], order[j - 1] = t;
    }
  int64_t k3 = c < 3 ? c : 3, k2 = c < 2 ? c : 2;
  /* NonMaxSuppression's count (-1): checked below, on its own */
  int64_t mid = (c < 4 ? c : 4) - 1;
  mid = mid < 0 ? 0 : mid;
  const int64_t want[NOUT] = {c, 1, k3, k3, k3, k3, k2, k2, 1, 2, c, 1, k3 + N + c, -1, mid, 1, 1, c};

  int64_t nsel = -1;
  omrt_context *ctx;
  CHECK_EQ_INT(omrt_context_new(rm, &ctx), OMRT_OK);
  static int64_t buf[NOUT][N * 4 + 8];
  void *out[NOUT];
  for (int o = 0; o < NOUT; o++)
    out[o] = buf[o];
  CHECK_EQ_INT(omrt_execute(ctx, in, out), OMRT_OK);
  for (int o = 0; o < NOUT; o++) {
    omrt_tensor_desc d;
    CHECK_EQ_INT(omrt_context_output_dims(ctx, o, &d), OMRT_OK);
    CHECK_EQ_INT(d.count_axis, axes[o]);
    int64_t n = axes[o] >= 0 ? d.dims[axes[o]] : want[o];
    if (o == O_SEL) nsel = n;
    CHECKF(n == want[o] || o == O_SEL, "  output %d: count %lld, want %lld", o, (long long)n,
           (long long)want[o]);
    double tol = fp16 && !is_i64[o] ? 1e-3 : 0;
    int bad = 0;
    for (int64_t i = 0; g && i < n * inner[o]; i++)
      bad += fabs(get(out[o], is_i64[o], i) - get(ref[o], is_i64[o], i)) > tol;
    CHECKF(bad == 0, "  output %d: %d elements differ from the evaluator", o, bad);
  }
  const int64_t *sh = out[O_SH], *sz = out[O_SZ], *shb = out[O_SHB], *lab = out[O_LAB], *ti = out[O_TI];
  CHECK(sh[0] == c && sz[0] == 4 * c && shb[0] == c && shb[1] == 4);
  const float *tv = out[O_TV], *tb = out[O_TB], *sv = out[O_SV];
  for (int64_t r = 0; r < k3; r++) {
    CHECK(lab[r] == 7 && tv[r] == x[order[r]] && ((const float *)out[O_S])[ti[r]] == tv[r]);
    CHECK(memcmp(tb + r * 4, boxes + order[r] * 4, 4 * sizeof *tb) == 0);
  }
  for (int64_t r = 0; r < k2; r++)
    CHECK(sv[r] == x[order[r]]);
  /* NMS over the valid boxes only: none without boxes, the best one at least otherwise, each once */
  const int64_t *sel = out[O_SEL], *sel_ref = ref[O_SEL];
  CHECK(c == 0 ? nsel == 0 : nsel >= 1 && nsel <= c);
  for (int64_t r = 0; r < nsel; r++) {
    CHECK(sel[r * 3] == 0 && sel[r * 3 + 1] == 0 && sel[r * 3 + 2] >= 0 && sel[r * 3 + 2] < c);
    for (int64_t q = 0; q < r; q++)
      CHECK(sel[q * 3 + 2] != sel[r * 3 + 2]);
  }
  for (int64_t i = nsel * 3; g && nsel >= 0 && i < N * 3; i++) /* the evaluator's count is the same */
    CHECK(sel_ref[i] == 0);
  CHECK(!g || nsel == 0 || sel_ref[(nsel - 1) * 3 + 2] == sel[(nsel - 1) * 3 + 2]);
  float bmax = -INFINITY, ssum = 0; /* over the valid rows only */
  for (int64_t r = 0; r < c; r++) {
    ssum += x[order[r]];
    for (int i = 0; i < 4; i++)
      bmax = boxes[order[r] * 4 + i] > bmax ? boxes[order[r] * 4 + i] : bmax;
  }
  CHECK(*(const float *)out[O_BMAX] == bmax && fabsf(*(const float *)out[O_SSUM] - ssum) <= 1e-2f);
  CHECK(memcmp(out[O_IF], out[O_S], (size_t)c * sizeof(float)) == 0);
  CHECK(memcmp(out[O_MID], (const float *)out[O_S] + 1, (size_t)mid * sizeof(float)) == 0);
  const float *cat = out[O_CAT]; /* tv's valid rows, x, s's valid rows, back to back */
  CHECK(memcmp(cat, tv, (size_t)k3 * sizeof *cat) == 0 && memcmp(cat + k3, x, N * sizeof *cat) == 0);
  CHECK(memcmp(cat + k3 + N, out[O_S], (size_t)c * sizeof *cat) == 0);
  omrt_context_free(ctx);
  arena_free(&a);
  ir_graph_free(g);
}

static void test_runs(om_precision p) {
  mb m;
  model(&m);
  size_t size = 0;
  void *om = compile(&m, p, &size);
  CHECK(om != NULL);
  if (!om) return;
  omrt_model *rm;
  CHECK_EQ_INT(omrt_model_load_memory(om, size, NULL, &rm), OMRT_OK);
  /* k = min(3, count) bounds TopK's outputs, what carries their count, and
   * their part of the packing Concat at 3, not N */
  static const int bounded[] = {O_TV, O_TI, O_TB, O_LAB};
  for (int i = 0; i < 4; i++) {
    omrt_tensor_desc md;
    CHECK_EQ_INT(omrt_model_output(rm, bounded[i], &md), OMRT_OK);
    CHECKF(md.dims[0] == 3, "  output %d: bound %lld, want 3", bounded[i], (long long)md.dims[0]);
  }
  omrt_tensor_desc cd;
  CHECK_EQ_INT(omrt_model_output(rm, O_CAT, &cd), OMRT_OK);
  CHECK(cd.dims[0] == 3 + N + N);
  unsigned seed = 5;
  for (int t = 0; t < 9; t++) {
    float x[N], boxes[N * 4];
    int perm[N];
    for (int i = 0; i < N; i++)
      perm[i] = i;
    for (int i = N - 1; i > 0; i--) { /* distinct magnitudes, exact in fp16 */
      seed = seed * 1103515245u + 12345u;
      int j = (int)((seed >> 16) % (unsigned)(i + 1)), tmp = perm[i];
      perm[i] = perm[j], perm[j] = tmp;
    }
    for (int i = 0; i < N; i++) {
      seed = seed * 1103515245u + 12345u;
      int sign = t % 3 == 0 ? -1 : t % 3 == 1 ? 1 : ((seed >> 20) & 1) ? 1 : -1;
      x[i] = (float)sign * (0.25f + 0.5f * (float)perm[i]);
    }
    for (int i = 0; i < N * 4; i++)
      seed = seed * 1103515245u + 12345u, boxes[i] = (float)((seed >> 16) % 64) * 0.5f;
    run_case(rm, x, boxes, p == OM_PRECISION_FORCE_FP16);
  }
  omrt_model_free(rm);
  free(om);
}

static void counted_scores(mb *m) {
  mb_init(m, 13);
  mb_input(m, "x", 1, 1, (int64_t[]){N}, NULL);
  float zero = 0.0f;
  mb_init_raw(m, "zero", 1, 0, NULL, &zero, sizeof zero);
  mb_node(m, "Greater", "above", "x,zero", "mask");
  mb_node(m, "NonZero", "nonzero", "mask", "nz");
  attr_ints(m, mb_node(m, "Transpose", "positions", "nz", "pos"), "perm", 2, (int64_t[]){1, 0});
  mb_node(m, "GatherND", "scores", "x,pos", "s");
}

static void test_refused(void) {
  mb m;
  counted_scores(&m); /* GatherND addressing the counted axis with constant indices */
  int64_t idx[2] = {0, 1};
  mb_init_raw(&m, "idx", 7, 2, (int64_t[]){2, 1}, idx, sizeof idx);
  mb_node(&m, "GatherND", "pick_counted", "s,idx", "y");
  mb_output(&m, "y");
  mb_expect_refused(&m, "'pick_counted' (GatherND)", "axis 0");

  counted_scores(&m); /* Tile repeating the counted axis: the padding would land inside */
  int64_t two = 2;
  mb_init_raw(&m, "reps", 7, 1, (int64_t[]){1}, &two, sizeof two);
  mb_node(&m, "Tile", "tile_counted", "s,reps", "y");
  mb_output(&m, "y");
  mb_expect_refused(&m, "'tile_counted' (Tile)", "axis 0");

  counted_scores(&m); /* a Slice to the count plus one (a detector's proposals): names the NonZero */
  int64_t zero64 = 0, one = 1;
  mb_init_raw(&m, "i0", 7, 1, (int64_t[]){1}, &zero64, sizeof zero64);
  mb_init_raw(&m, "one", 7, 1, (int64_t[]){1}, &one, sizeof one);
  mb_node(&m, "Shape", "shape_of_s", "s", "sh");
  mb_node(&m, "Add", "count_plus_one", "sh,one", "end");
  mb_node(&m, "Slice", "slice_past_count", "x,i0,end,i0", "y");
  mb_output(&m, "y");
  mb_expect_refused(&m, "'slice_past_count' (Slice)", "through node 'nonzero' (NonZero)");
}

/* An export's reads of a counted value's Shape, each of which failed with
 * "must be known at compile time" before: Gather of the static dim 1
 * (w = x[:b.shape[1]], and the "squeeze if this dim is 1" test of a torchvision
 * detector's RoI pooling) folds to a constant, and a Slice of b's own
 * counted axis up to b.shape[0] (a batch of one's piece of a per-image
 * split) keeps b's valid rows and count. */
static void test_shape_reads(void) {
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", 1, 1, (int64_t[]){N}, NULL);
  mb_input(&m, "boxes", 1, 2, (int64_t[]){N, 4}, NULL);
  float zero = 0.0f;
  mb_init_raw(&m, "zero", 1, 0, NULL, &zero, sizeof zero);
  mb_init_raw(&m, "i0", 7, 1, (int64_t[]){1}, (int64_t[]){0}, sizeof(int64_t));
  mb_init_raw(&m, "i1", 7, 1, (int64_t[]){1}, (int64_t[]){1}, sizeof(int64_t));
  mb_node(&m, "Greater", "above", "x,zero", "mask");
  mb_node(&m, "NonZero", "nonzero", "mask", "nz");
  attr_ints(&m, mb_node(&m, "Transpose", "positions", "nz", "pos"), "perm", 2, (int64_t[]){1, 0});
  mb_node(&m, "GatherND", "boxes_kept", "boxes,pos", "b");
  mb_node(&m, "Shape", "shape_of_b", "b", "sh");
  attr_int(&m, mb_node(&m, "Gather", "dim1", "sh,i1", "d1"), "axis", 0);
  attr_int(&m, mb_node(&m, "Gather", "dim0", "sh,i0", "d0"), "axis", 0);
  mb_node(&m, "Slice", "x_to_dim1", "x,i0,d1,i0", "w");
  mb_node(&m, "Slice", "b_to_count", "b,i0,d0,i0", "bb");
  mb_output(&m, "w");
  mb_output(&m, "bb");
  size_t size = 0;
  void *om = mb_compile_in(&m, "shape_reads.onnx", OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE, &size); /* frees m */
  CHECK(om != NULL);
  if (!om) return;
  omrt_model *rm;
  CHECK_EQ_INT(omrt_model_load_memory(om, size, NULL, &rm), OMRT_OK);
  float x[N] = {-1, 2, -3, 4, 5, -6, -7, 8}, boxes[N * 4], w[4], bb[N * 4];
  for (int i = 0; i < N * 4; i++)
    boxes[i] = (float)i;
  omrt_context *ctx;
  CHECK_EQ_INT(omrt_context_new(rm, &ctx), OMRT_OK);
  const void *in[2] = {x, boxes};
  void *out[2] = {w, bb};
  CHECK_EQ_INT(omrt_execute(ctx, in, out), OMRT_OK);
  omrt_tensor_desc d;
  CHECK_EQ_INT(omrt_context_output_dims(ctx, 0, &d), OMRT_OK);
  CHECK(d.count_axis == -1 && d.rank == 1 && d.dims[0] == 4 && memcmp(w, x, sizeof w) == 0);
  CHECK_EQ_INT(omrt_context_output_dims(ctx, 1, &d), OMRT_OK);
  CHECK(d.count_axis == 0 && d.dims[0] == 4 && d.dims[1] == 4);
  static const int kept[4] = {1, 3, 4, 7};
  for (int r = 0; r < 4; r++)
    CHECKF(memcmp(bb + r * 4, boxes + kept[r] * 4, 4 * sizeof *bb) == 0, "  row %d is not box %d", r,
           kept[r]);
  omrt_context_free(ctx);
  omrt_model_free(rm);
  free(om);
}

int main(void) {
  test_runs(OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
  test_runs(OM_PRECISION_FORCE_FP16);
  test_refused();
  test_shape_reads();
  return test_summary("count_consumers");
}
