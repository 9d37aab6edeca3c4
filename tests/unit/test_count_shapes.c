/* test_count_shapes.c - shape arithmetic on a count (frontend/onnx_counted.c)
 * the way torchvision's two-stage detectors compute with the number of
 * their proposals:
 *
 *   b = GatherND(boxes, NonZero(x > 0)^T)   f32 [<=N, 4]   counted by c
 *   n = Gather(Shape(b), 0), u = [n]        the count, a run-time scalar
 *   xs = x[:u + 0]                          f32 [<=N]      a dense prefix, counted
 *   rs = Reshape(b, [u, 2, 2])              f32 [<=N,2,2]
 *   f = ConstantOfShape([u, 3], 7)          i64 [<=N, 3]   a counted fill
 *   r = Range(0, n, 1)                      i64 [<=N]      0 .. c-1
 *   e = Expand([[1,2,3,4]], [u, 4])         f32 [<=N, 4]   copies of a row
 *   ei = Expand([[0,1,2,3,4]], [u, 5])[:, 1:]  i64 [<=N, 4]  labels as torchvision's box head makes them
 *   cc = Concat(b)                          b itself
 *   sc = ScatterElements(zeros like b, Expand((n-1-r)[:, None], Shape(b)), b)
 *                                           b's rows reversed
 *   nzz = NonZero(GatherND(x, pos) + 1)     [1, <=N]       the padding unread
 *   gm = Gemm(b, w, bias)                   f32 [<=N, 3]   per valid row
 *   fl = Reshape(b, [-1])                   f32 [<=4N]     counted by 4c
 *   cv = Conv(Reshape(b, [u,1,2,2]), w2)    f32 [<=N,2,2,2] per image of the batch
 *   pk = cv[r, b[:, 1] > 8]                 f32 [<=N,2,2]  one channel per image, picked as
 *        torchvision's mask_prob[index, labels] exports: Gather(Flatten(cv, 2),
 *        labels + r x 2), reshaped to [-1, 2, 2] and to [Shape(r), 2, 2]
 *
 * compiled in both precision modes and run through libomrt on inputs with
 * no, some and all x positive: every output is counted by c (fl by 4c), its valid part
 * equal to the reference evaluator's and to the values above. Refused with
 * one line naming the node and the count: a Reshape of a dense input to a
 * shape holding the count, a Range from 1 to the count, a Slice of rows 1 to
 * the count, a ScatterElements of counted indices and dense updates, a
 * Flatten merging the counted axis with one before it (Transpose(b) to [4c]), and an
 * If on the size of a Tile over the counted axis (named with its rule).
 * A second NonZero of one value shares the first one's count, and a node
 * sorts after the producers of its inputs' counts.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/compile.h"
#include "ir/eval.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "passes/pass.h"
#include "support.h"

enum { N = 8, NOUT = 13 };
enum { O_XS, O_RS, O_F, O_R, O_E, O_CC, O_SC, O_NZZ, O_GM, O_FL, O_CV, O_PK, O_EI };

static const char *const outs[NOUT] = {"xs",  "rs", "f",  "r",  "e",  "cc", "sc",
                                       "nzz", "gm", "fl", "cv", "pk", "ei"};
static const int axes[NOUT] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
static const int is_i64[NOUT] = {0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1};
static const int inner[NOUT] = {1, 4, 3, 1, 4, 4, 4, 1, 3, 1, 8, 4, 4};
static const int per[NOUT] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1, 1, 1}; /* the count is c x per */

static void i64_const(mb *m, const char *name, int rank, int64_t v) {
  mb_init_raw(m, name, 7, rank, rank ? (int64_t[]){1} : NULL, &v, sizeof v);
}

/* b counted by c = the number of positive x, and n, u its count. */
static void counted_boxes(mb *m) {
  mb_init(m, 13);
  mb_input(m, "x", 1, 1, (int64_t[]){N}, NULL);
  mb_input(m, "boxes", 1, 2, (int64_t[]){N, 4}, NULL);
  float zero = 0.0f;
  mb_init_raw(m, "zero", 1, 0, NULL, &zero, sizeof zero);
  i64_const(m, "i0", 0, 0);
  i64_const(m, "ax0", 1, 0);
  mb_node(m, "Greater", "above", "x,zero", "mask");
  mb_node(m, "NonZero", "nonzero", "mask", "nz");
  attr_ints(m, mb_node(m, "Transpose", "positions", "nz", "pos"), "perm", 2, (int64_t[]){1, 0});
  mb_node(m, "GatherND", "boxes_kept", "boxes,pos", "b");
  mb_node(m, "Shape", "shape_of_b", "b", "sh");
  attr_int(m, mb_node(m, "Gather", "count_of_b", "sh,i0", "n"), "axis", 0);
  mb_node(m, "Unsqueeze", "count_1d", "n,ax0", "u");
  i64_const(m, "i1", 0, 1);
  attr_int(m, mb_node(m, "Gather", "x1_of_b", "b,i1", "s_of_b"), "axis", 1);
}

static void model(mb *m) {
  counted_boxes(m);
  i64_const(m, "z1", 1, 0);
  i64_const(m, "one", 0, 1);
  i64_const(m, "c2", 1, 2);
  i64_const(m, "c3", 1, 3);
  i64_const(m, "c4", 1, 4);
  mb_node(m, "Add", "end_plus_0", "u,z1", "end");
  mb_node(m, "Slice", "x_to_count", "x,z1,end,ax0", "xs");
  attr_int(m, mb_node(m, "Concat", "shape_u22", "u,c2,c2", "s22"), "axis", 0);
  mb_node(m, "Reshape", "b_as_2x2", "b,s22", "rs");
  attr_int(m, mb_node(m, "Concat", "shape_u3", "u,c3", "s3"), "axis", 0);
  Onnx__NodeProto *cs = mb_node(m, "ConstantOfShape", "sevens", "s3", "f");
  Onnx__AttributeProto *a = mb_attr(m, cs, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  a->t = mb_tensor(m, NULL, 7, 1, (int64_t[]){1});
  int64_t seven = 7;
  set_raw(m, a->t, &seven, sizeof seven);
  mb_node(m, "Range", "iota_to_count", "i0,n,one", "r");
  float row[4] = {1, 2, 3, 4};
  mb_init_raw(m, "row", 1, 2, (int64_t[]){1, 4}, row, sizeof row);
  attr_int(m, mb_node(m, "Concat", "shape_u4", "u,c4", "s4"), "axis", 0);
  mb_node(m, "Expand", "rows_to_count", "row,s4", "e");
  attr_int(m, mb_node(m, "Concat", "cat_one", "b", "cc"), "axis", 0);
  /* sc: b scattered to rows n-1-r of zeros like b */
  mb_node(m, "Sub", "last", "n,one", "last");
  mb_node(m, "Sub", "reversed", "last,r", "rev");
  i64_const(m, "ax1", 1, 1);
  mb_node(m, "Unsqueeze", "rev_col", "rev,ax1", "revc");
  mb_node(m, "Expand", "rev_rows", "revc,sh", "idx");
  mb_node(m, "ConstantOfShape", "zeros_like_b", "sh", "zb");
  attr_int(m, mb_node(m, "ScatterElements", "scatter_rows", "zb,idx,b", "sc"), "axis", 0);
  mb_node(m, "GatherND", "scores", "x,pos", "s");
  float onef = 1.0f; /* s + 1: the padding past the count is nonzero too */
  mb_init_raw(m, "onef", 1, 0, NULL, &onef, sizeof onef);
  mb_node(m, "Add", "scores_plus_1", "s,onef", "s1");
  mb_node(m, "NonZero", "nonzero_of_scores", "s1", "nzz");
  float w[12], bias[3] = {0.5f, -1, 2};
  for (int i = 0; i < 12; i++)
    w[i] = (float)(i % 5) * 0.25f - 0.5f;
  mb_init_raw(m, "w", 1, 2, (int64_t[]){4, 3}, w, sizeof w);
  mb_init_raw(m, "bias", 1, 1, (int64_t[]){3}, bias, sizeof bias);
  mb_node(m, "Gemm", "box_head", "b,w,bias", "gm");
  i64_const(m, "c5", 1, 5);
  i64_const(m, "minus1", 1, -1);
  mb_node(m, "Reshape", "flat_boxes", "b,minus1", "fl");
  i64_const(m, "c1", 1, 1);
  attr_int(m, mb_node(m, "Concat", "shape_u122", "u,c1,c2,c2", "s122"), "axis", 0);
  mb_node(m, "Reshape", "b_as_images", "b,s122", "img");
  float w2[2] = {0.5f, -2.0f};
  mb_init_raw(m, "w2", 1, 4, (int64_t[]){2, 1, 1, 1}, w2, sizeof w2);
  mb_node(m, "Conv", "conv_images", "img,w2", "cv");
  /* pk: cv's channel b[:, 1] > 8 of each image, as mask_prob[index, labels] exports */
  float eight = 8.0f;
  mb_init_raw(m, "eight", 1, 0, NULL, &eight, sizeof eight);
  mb_node(m, "Greater", "label_test", "s_of_b,eight", "lab_b");
  attr_int(m, mb_node(m, "Cast", "labels", "lab_b", "lab"), "to", 7);
  attr_int(m, mb_node(m, "Flatten", "flat_channels", "cv", "cvf"), "axis", 2);
  mb_node(m, "Shape", "shape_of_cv", "cv", "shcv");
  attr_int(m, mb_node(m, "Gather", "channels_of_cv", "shcv,one", "ncv"), "axis", 0);
  mb_node(m, "Mul", "image_base", "r,ncv", "base");
  mb_node(m, "Add", "pick_rows", "lab,base", "lin");
  attr_int(m, mb_node(m, "Gather", "pick", "cvf,lin", "pkf"), "axis", 0);
  int64_t m122[3] = {-1, 2, 2};
  mb_init_raw(m, "m122", 7, 1, (int64_t[]){3}, m122, sizeof m122);
  mb_node(m, "Reshape", "pick_2x2", "pkf,m122", "pk2");
  mb_node(m, "Shape", "shape_of_lin", "lin", "shl");
  attr_int(m, mb_node(m, "Concat", "shape_l22", "shl,c2,c2", "sl22"), "axis", 0);
  mb_node(m, "Reshape", "pick_shaped", "pk2,sl22", "pk");
  /* the classes 0 .. 4 as torchvision counts them: Range(0, Shape(scores)[1]) */
  mb_node(m, "Concat", "cat_gm", "gm,gm", "gm6");
  attr_int(m, m->graph.node[m->graph.n_node - 1], "axis", 1);
  mb_node(m, "Slice", "scores5", "gm6,z1,c5,ax1", "gm5");
  mb_node(m, "Shape", "shape_of_scores", "gm5", "shs");
  attr_int(m, mb_node(m, "Gather", "classes_of_scores", "shs,one", "ncls"), "axis", 0);
  mb_node(m, "Range", "class_ids", "i0,ncls,one", "cls");
  int64_t row1[2] = {1, -1};
  mb_init_raw(m, "row1", 7, 1, (int64_t[]){2}, row1, sizeof row1);
  mb_node(m, "Reshape", "classes_row", "cls,row1", "classes");
  mb_node(m, "Expand", "labels_to_count", "classes,shs", "e5");
  i64_const(m, "big", 1, INT64_MAX);
  mb_node(m, "Slice", "labels_past_background", "e5,c1,big,ax1", "ei");
  for (int o = 0; o < NOUT; o++)
    mb_output(m, outs[o]);
}

static double get(const void *p, int i64, int64_t i) {
  return i64 ? (double)((const int64_t *)p)[i] : ((const float *)p)[i];
}

static void run_case(omrt_model *rm, const float *x, const float *boxes, int fp16) {
  mb m;
  model(&m);
  ir_graph *g = EXPECT_OK(&m, ".", NULL);
  mb_free(&m);
  arena a;
  arena_init(&a, 0);
  void *ref[NOUT] = {0};
  const void *in[2] = {x, boxes};
  CHECK(g && mb_eval(g, in, ref, &a) == 0);
  int64_t c = 0, kept[N];
  for (int i = 0; i < N; i++)
    if (x[i] > 0) kept[c++] = i;
  omrt_context *ctx;
  CHECK_EQ_INT(omrt_context_new(rm, &ctx), OMRT_OK);
  static int64_t buf[NOUT][N * 4 + 8];
  void *out[NOUT];
  for (int o = 0; o < NOUT; o++)
    out[o] = memset(buf[o], 0xff, sizeof buf[o]);
  CHECK_EQ_INT(omrt_execute(ctx, in, out), OMRT_OK);
  for (int o = 0; o < NOUT; o++) {
    omrt_tensor_desc d;
    CHECK_EQ_INT(omrt_context_output_dims(ctx, o, &d), OMRT_OK);
    CHECKF(d.count_axis == axes[o] && d.dims[axes[o]] == c * per[o],
           "  output %s: counted along %d, %lld, want %lld", outs[o], d.count_axis,
           (long long)d.dims[axes[o]], (long long)(c * per[o]));
    double tol = fp16 && !is_i64[o] ? 2e-2 : 0;
    int bad = 0;
    for (int64_t i = 0; g && i < c * per[o] * inner[o]; i++)
      bad += fabs(get(out[o], is_i64[o], i) - get(ref[o], is_i64[o], i)) > tol;
    CHECKF(bad == 0, "  output %s: %d elements differ from the evaluator", outs[o], bad);
  }
  const float *xs = out[O_XS], *rs = out[O_RS], *e = out[O_E], *cc = out[O_CC], *sc = out[O_SC],
              *fl = out[O_FL], *cv = out[O_CV], *pk = out[O_PK];
  const int64_t *f = out[O_F], *r = out[O_R], *nzz = out[O_NZZ], *ei = out[O_EI];
  for (int64_t i = 0; i < c; i++) {
    CHECK(xs[i] == x[i] && r[i] == i && nzz[i] == i);
    for (int k = 0; k < 3; k++)
      CHECK(f[i * 3 + k] == 7);
    for (int k = 0; k < 4; k++) {
      float bk = boxes[kept[i] * 4 + k];
      CHECKF(ei[i * 4 + k] == k + 1, "  label %d of row %lld: %lld", k, (long long)i,
             (long long)ei[i * 4 + k]);
      CHECK(e[i * 4 + k] == (float)(k + 1) && rs[i * 4 + k] == bk && cc[i * 4 + k] == bk &&
            fl[i * 4 + k] == bk);
      CHECKF(sc[(c - 1 - i) * 4 + k] == bk, "  scattered row %lld", (long long)(c - 1 - i));
      int lab = boxes[kept[i] * 4 + 1] > 8;
      CHECKF(pk[i * 4 + k] == cv[i * 8 + lab * 4 + k], "  picked channel %d of image %lld", lab,
             (long long)i);
    }
  }
  omrt_context_free(ctx);
  arena_free(&a);
  ir_graph_free(g);
}

static void test_runs(om_precision p) {
  mb m;
  model(&m);
  size_t size = 0;
  void *om = mb_compile_in(&m, "count_shapes.onnx", p, &size); /* frees m */
  CHECK(om != NULL);
  if (!om) return;
  omrt_model *rm;
  CHECK_EQ_INT(omrt_model_load_memory(om, size, NULL, &rm), OMRT_OK);
  unsigned seed = 11;
  for (int t = 0; t < 9; t++) {
    float x[N], boxes[N * 4];
    for (int i = 0; i < N; i++) { /* x[0] nonzero: the scores' padding reads it */
      seed = seed * 1103515245u + 12345u;
      int sign = t % 3 == 0 ? -1 : t % 3 == 1 ? 1 : ((seed >> 20) & 1) ? 1 : -1;
      x[i] = (float)sign * (0.25f + 0.5f * (float)((seed >> 16) % 8));
    }
    for (int i = 0; i < N * 4; i++)
      seed = seed * 1103515245u + 12345u, boxes[i] = (float)((seed >> 16) % 64) * 0.5f;
    run_case(rm, x, boxes, p == OM_PRECISION_FORCE_FP16);
  }
  omrt_model_free(rm);
  free(om);
}

/* A second NonZero of the same counted value (torchvision's RoI pooler takes
 * a level's boxes and their slots each from its own NonZero of one mask) is
 * the first one's result with its count: values gathered through either add
 * up (an elementwise op needs its inputs counted alike; refused without). */
static void test_nonzero_twice(om_precision p) {
  mb m;
  counted_boxes(&m);
  mb_node(&m, "Greater", "above_again", "s_of_b,zero", "mask2");
  mb_node(&m, "NonZero", "nonzero_a", "mask2", "nza");
  mb_node(&m, "NonZero", "nonzero_b", "mask2", "nzb");
  attr_ints(&m, mb_node(&m, "Transpose", "pos_a", "nza", "pa"), "perm", 2, (int64_t[]){1, 0});
  attr_ints(&m, mb_node(&m, "Transpose", "pos_b", "nzb", "pb"), "perm", 2, (int64_t[]){1, 0});
  mb_node(&m, "GatherND", "x_a", "x,pa", "ba");
  mb_node(&m, "GatherND", "x_b", "x,pb", "bb");
  mb_node(&m, "Add", "sum_ab", "ba,bb", "y");
  mb_output(&m, "y");
  size_t size = 0;
  void *om = mb_compile_in(&m, "nonzero_twice.onnx", p, &size); /* frees m */
  CHECK(om != NULL);
  free(om);
}

/* A task reads its inputs' counts: a Gather of a constant by an iota
 * counted by a NonZero's count (an Expand to the count, folded) is sorted
 * after the NonZero although no data edge says so (maskrcnn's labels were
 * all 0: the Gather ran first, on a count of 0). */
static void test_order(void) {
  ir_graph *g = ir_graph_new("order", 0);
  int64_t four = 4, rows[2] = {4, 2}, data[8] = {0, 1, 0, 1, 0, 1, 0, 1}, iota[4] = {0, 1, 2, 3};
  ir_value *x = ir_value_new(g, "x", DT_BOOL), *y = ir_value_new(g, "y", DT_INT64);
  ir_value *c = ir_value_new(g, "c", DT_INT64), *z = ir_value_new(g, "z", DT_INT64);
  ir_value *k = ir_const_new(g, "k", DT_INT64, 2, rows, data, sizeof data);
  ir_value *ix = ir_const_new(g, "ix", DT_INT64, 1, &four, iota, sizeof iota);
  ir_value_set_shape(x, 1, &four);
  ix->count_axis = 0, ix->count = c;
  ir_value *gin[2] = {k, ix}, *nzo[2] = {y, c};
  ir_node *gn = ir_node_new(g, IR_OP_GATHER, "gather_first", 2, gin, 1, &z);
  ir_node *nz = ir_node_new(g, IR_OP_NONZERO, "nonzero_after", 1, &x, 2, nzo);
  CHECK(gn && nz && !ir_graph_add_input(g, x) && !ir_graph_add_output(g, z) && !ir_graph_add_output(g, y));
  diag d;
  diag_init(&d);
  CHECK(ir_graph_toposort(g, &d) == ST_OK);
  CHECKF(g->nnodes == 2 && g->nodes[0] == nz && g->nodes[1] == gn, "  '%s' first", g->nodes[0]->name);
  ir_graph_free(g);
}

static void test_refused(void) {
  mb m;
  counted_boxes(&m); /* a dense input reshaped to a shape holding the count */
  i64_const(&m, "c4", 1, 4);
  attr_int(&m, mb_node(&m, "Concat", "shape_u4", "u,c4", "s4"), "axis", 0);
  mb_node(&m, "Reshape", "dense_to_count", "boxes,s4", "y");
  mb_output(&m, "y");
  mb_expect_refused(&m, "'dense_to_count' (Reshape)", "holds the run-time count");

  counted_boxes(&m); /* a Range from 1 to the count: c - 1 rows, not c */
  i64_const(&m, "one", 0, 1);
  mb_node(&m, "Range", "range_from_1", "one,n,one", "y");
  mb_output(&m, "y");
  mb_expect_refused(&m, "'range_from_1' (Range)", "holds the run-time count");

  counted_boxes(&m); /* a dense input's rows 1 .. count: not a prefix the count counts */
  i64_const(&m, "one", 1, 1);
  mb_node(&m, "Slice", "slice_from_1", "x,one,u,ax0", "y");
  mb_output(&m, "y");
  mb_expect_refused(&m, "'slice_from_1' (Slice)", "holds the run-time count");

  counted_boxes(&m); /* counted indices scattering dense updates */
  mb_node(&m, "ConstantOfShape", "zeros_like_b", "sh", "zb");
  attr_int(&m, mb_node(&m, "Cast", "b_as_i64", "b", "bi"), "to", 7);
  attr_int(&m, mb_node(&m, "ScatterElements", "scatter_dense", "zb,bi,boxes", "y"), "axis", 0);
  mb_output(&m, "y");
  mb_expect_refused(&m, "'scatter_dense' (ScatterElements)", "counted alike");

  counted_boxes(&m); /* [4, c] flattened: the valid elements are no prefix */
  attr_ints(&m, mb_node(&m, "Transpose", "b_t", "b", "bt"), "perm", 2, (int64_t[]){1, 0});
  attr_int(&m, mb_node(&m, "Flatten", "flat_t", "bt", "y"), "axis", 0);
  mb_output(&m, "y");
  mb_expect_refused(&m, "'flat_t' (Flatten): input 0 'bt'", "would read the padding past the count");

  /* an If on the size of a value whose shape rule refuses the count (Tile
   * over the counted axis): the refusal names that node and its rule's words */
  mb tb, eb;
  counted_boxes(&m);
  i64_const(&m, "reps", 1, 2);
  i64_const(&m, "zero_i", 0, 0);
  mb_node(&m, "Tile", "tile_counted", "s_of_b,reps", "tiled");
  mb_node(&m, "Shape", NULL, "tiled", "sht");
  mb_node(&m, "ReduceProd", NULL, "sht", "numel");
  mb_node(&m, "Equal", NULL, "numel,zero_i", "none");
  mb_one_node_graph(&tb, "Identity", "x", "t_out");
  mb_one_node_graph(&eb, "Neg", "x", "e_out");
  mb_if(&m, "if_tiled", "none", "y", &tb, &eb);
  mb_output(&m, "y");
  mb_expect_refused(&m, "'if_tiled' (If)", "node 'tile_counted' (Tile) on, whose shape rule says");
  mb_free(&tb);
  mb_free(&eb);
}

int main(void) {
  test_runs(OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
  test_runs(OM_PRECISION_FORCE_FP16);
  test_nonzero_twice(OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
  test_nonzero_twice(OM_PRECISION_FORCE_FP16);
  test_order();
  test_refused();
  return test_summary("count_shapes");
}
