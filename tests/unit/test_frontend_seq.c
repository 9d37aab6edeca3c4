/* test_frontend_seq.c - ONNX sequences resolved at import
 * (frontend/onnx_seq.c): repeat_interleave as torch.onnx writes it
 * (SplitToSequence, a Loop whose body takes item i with SequenceAt, expands
 * it and appends it to a loop-carried sequence, ConcatFromSequence) becomes
 * straight-line tensors; SequenceConstruct, SequenceInsert at a position,
 * SequenceErase, SequenceLength, chunked SplitToSequence with keepdims and
 * ConcatFromSequence with new_axis; and the refusals, one line each: a
 * position computed at run time, a sequence as the model's output, an input
 * whose shape was lost upstream (naming where and why). The
 * numbers come from the reference evaluator over the imported graph. And
 * WaveRNN's shape chain: a SplitToSequence input whose shape is computed
 * from the pieces of a constant split 128 ways, known only when a Split of
 * that many outputs folds at import. */
#include "ir/eval.h"
#include "onnx_mb.h"
#include "passes/pass.h"

static int same(const float *got, const float *want, int n) {
  for (int i = 0; i < n; i++)
    if (got[i] != want[i]) {
      test_note("  [%d]: got %g, want %g", i, got[i], want[i]);
      return 0;
    }
  return 1;
}

/* x [1, 3, 4] repeated twice along axis 2, element by element: y [1, 3, 8]. */
static void test_repeat_interleave_loop(void) {
  static const int64_t ones[4] = {1, 1, 1, 1}, four = 4, rep[3] = {1, 3, 2};
  mb m, body;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 3, (int64_t[]){1, 3, 4}, NULL);
  mb_init_raw(&m, "ones", DT_INT64, 1, (int64_t[]){4}, ones, sizeof ones);
  mb_init_raw(&m, "M", DT_INT64, 0, NULL, &four, sizeof four);
  mb_init_raw(&m, "cond", DT_BOOL, 0, NULL, (uint8_t[]){1}, 1);
  mb_init_raw(&m, "rep", DT_INT64, 1, (int64_t[]){3}, rep, sizeof rep);
  Onnx__NodeProto *n = mb_node(&m, "SplitToSequence", "/stretch/SplitToSequence", "x,ones", "pieces");
  attr_int(&m, n, "axis", 2);
  mb_node(&m, "SequenceEmpty", "/stretch/SequenceEmpty", "", "empty");
  mb_init(&body, 13);
  mb_input(&body, "i", DT_INT64, 1, (int64_t[]){1}, NULL);
  mb_input(&body, "c_in", DT_BOOL, 0, NULL, NULL);
  mb_input(&body, "acc_in", DT_FLOAT32, -1, NULL, NULL);
  mb_node(&body, "Identity", NULL, "c_in", "c_out");
  mb_node(&body, "SequenceAt", "/stretch/SequenceAt", "pieces,i", "piece"); /* [1, 3, 1] */
  mb_node(&body, "Expand", NULL, "piece,rep", "pair");                      /* [1, 3, 2] */
  mb_node(&body, "SequenceInsert", "/stretch/SequenceInsert", "acc_in,pair", "acc_out");
  mb_output(&body, "c_out");
  mb_output(&body, "acc_out");
  n = mb_node(&m, "Loop", "/stretch/Loop", "M,cond,empty", "all");
  attr_graph(&m, n, "body", &body);
  n = mb_node(&m, "ConcatFromSequence", "/stretch/ConcatFromSequence", "all", "y");
  attr_int(&m, n, "axis", 2);
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(g->outputs[0]->rank == 3 && g->outputs[0]->dims[2] == 8);
    CHECK(mb_count_ops(g, IR_OP_SPLIT) == 1 && mb_count_ops(g, IR_OP_CONCAT) == 1);
    float x[12], want[24];
    for (int i = 0; i < 12; i++)
      x[i] = (float)i;
    for (int r = 0; r < 3; r++)
      for (int j = 0; j < 8; j++)
        want[r * 8 + j] = x[r * 4 + j / 2];
    arena a;
    arena_init(&a, 0);
    const void *in[1] = {x};
    void *out[1];
    if (!mb_eval(g, in, out, &a)) CHECK(same(out[0], want, 24));
    arena_free(&a);
    ir_graph_free(g);
  }
  mb_free(&body);
  mb_free(&m);
}

/* SequenceConstruct(a, b), insert c at 1, erase the last, length, then the
 * rows stacked on a new axis; and SplitToSequence in chunks of 2 along an
 * axis of 5 (pieces of 2, 2, 1) concatenated back in reverse order. */
static void test_sequence_ops(void) {
  static const int64_t one = 1, two = 2, minus1 = -1;
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "a", DT_FLOAT32, 1, (int64_t[]){3}, NULL);
  mb_input(&m, "b", DT_FLOAT32, 1, (int64_t[]){3}, NULL);
  mb_input(&m, "c", DT_FLOAT32, 1, (int64_t[]){3}, NULL);
  mb_input(&m, "x", DT_FLOAT32, 2, (int64_t[]){2, 5}, NULL);
  mb_init_raw(&m, "one", DT_INT64, 0, NULL, &one, 8);
  mb_init_raw(&m, "two", DT_INT64, 0, NULL, &two, 8);
  mb_init_raw(&m, "minus1", DT_INT32, 0, NULL, (int32_t[]){(int32_t)minus1}, 4);
  mb_node(&m, "SequenceConstruct", NULL, "a,b", "s_ab");
  mb_node(&m, "SequenceInsert", NULL, "s_ab,c,one", "s_acb");
  mb_node(&m, "SequenceErase", NULL, "s_acb", "s_ac");
  mb_node(&m, "SequenceLength", NULL, "s_ac", "len");
  Onnx__NodeProto *n = mb_node(&m, "ConcatFromSequence", NULL, "s_ac", "rows");
  attr_int(&m, n, "axis", 0);
  attr_int(&m, n, "new_axis", 1);
  n = mb_node(&m, "SplitToSequence", NULL, "x,two", "chunks");
  attr_int(&m, n, "axis", 1);
  attr_int(&m, n, "keepdims", 0); /* ignored with a split */
  mb_node(&m, "SequenceAt", NULL, "chunks,minus1", "last");
  mb_node(&m, "SequenceErase", NULL, "chunks,minus1", "first2");
  mb_node(&m, "SequenceInsert", NULL, "first2,last,one", "reordered"); /* 0, 4, 1 */
  n = mb_node(&m, "ConcatFromSequence", NULL, "reordered", "shuffled");
  attr_int(&m, n, "axis", -1);
  mb_output(&m, "len");
  mb_output(&m, "rows");
  mb_output(&m, "shuffled");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(g->outputs[0]->data && *(const int64_t *)g->outputs[0]->data == 2);
    const float a[3] = {1, 2, 3}, b[3] = {4, 5, 6}, c[3] = {7, 8, 9};
    const float x[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    const float want_rows[6] = {1, 2, 3, 7, 8, 9};
    const float want_shuffled[10] = {0, 1, 4, 2, 3, 5, 6, 9, 7, 8};
    arena ar;
    arena_init(&ar, 0);
    const void *in[4] = {a, b, c, x};
    void *out[3];
    if (!mb_eval(g, in, out, &ar)) CHECK(same(out[1], want_rows, 6) && same(out[2], want_shuffled, 10));
    arena_free(&ar);
    ir_graph_free(g);
  }
  mb_free(&m);
}

/* x [1, 128, 3] expanded to Concat(p0, [128], p1 x 3), where p0..p127 are
 * the 128 pieces of a constant Split of ones (each [1]), then split to a
 * sequence of 128 rows and concatenated back: y = x. */
static void test_split_128_shape_chain(void) {
  static int64_t ones[128];
  static const int64_t n128 = 128, three = 3;
  for (int i = 0; i < 128; i++)
    ones[i] = 1;
  char outs[128 * 6];
  int len = 0;
  for (int i = 0; i < 128; i++)
    len += snprintf(outs + len, sizeof outs - (size_t)len, "%sp%d", i ? "," : "", i);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 3, (int64_t[]){1, 128, 3}, NULL);
  mb_init_raw(&m, "ones", DT_INT64, 1, (int64_t[]){128}, ones, sizeof ones);
  mb_init_raw(&m, "n128", DT_INT64, 1, (int64_t[]){1}, &n128, sizeof n128);
  mb_init_raw(&m, "three", DT_INT64, 1, (int64_t[]){1}, &three, sizeof three);
  Onnx__NodeProto *n = mb_node(&m, "Split", "/stretch/Split", "ones,ones", outs);
  attr_int(&m, n, "axis", 0);
  mb_node(&m, "Mul", NULL, "p1,three", "w");
  n = mb_node(&m, "Concat", NULL, "p0,n128,w", "shape");
  attr_int(&m, n, "axis", 0);
  mb_node(&m, "Expand", NULL, "x,shape", "e");
  n = mb_node(&m, "SplitToSequence", "/stretch/SplitToSequence", "e", "rows");
  attr_int(&m, n, "axis", 1);
  n = mb_node(&m, "ConcatFromSequence", NULL, "rows", "y");
  attr_int(&m, n, "axis", 1);
  mb_output(&m, "y");
  ir_graph *g = EXPECT_OK(&m, NULL, NULL);
  if (g) {
    CHECK(g->outputs[0]->rank == 3 && g->outputs[0]->dims[1] == 128 && g->outputs[0]->dims[2] == 3);
    float x[384];
    for (int i = 0; i < 384; i++)
      x[i] = (float)i;
    arena a;
    arena_init(&a, 0);
    const void *in[1] = {x};
    void *out[1];
    if (!mb_eval(g, in, out, &a)) CHECK(same(out[0], x, 384));
    arena_free(&a);
    ir_graph_free(g);
  }
  mb_free(&m);
}

static void test_refusals(void) {
  mb m;
  /* a position known only at run time */
  mb_init(&m, 13);
  mb_input(&m, "a", DT_FLOAT32, 1, (int64_t[]){3}, NULL);
  mb_input(&m, "p", DT_INT64, 0, NULL, NULL);
  mb_node(&m, "SequenceConstruct", NULL, "a,a", "s");
  mb_node(&m, "SequenceAt", "pick", "s,p", "y");
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'pick' (SequenceAt)", "'p' (position)",
              "known at compile time");
  mb_free(&m);

  /* a position out of range */
  mb_init(&m, 13);
  mb_input(&m, "a", DT_FLOAT32, 1, (int64_t[]){3}, NULL);
  mb_init_raw(&m, "p", DT_INT64, 0, NULL, (int64_t[]){2}, 8);
  mb_node(&m, "SequenceConstruct", NULL, "a,a", "s");
  mb_node(&m, "SequenceAt", "pick", "s,p", "y");
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'pick' (SequenceAt)", "position 2 is outside [-2, 1]");
  mb_free(&m);

  /* a sequence as the model's output */
  mb_init(&m, 13);
  mb_input(&m, "a", DT_FLOAT32, 1, (int64_t[]){3}, NULL);
  mb_node(&m, "SequenceConstruct", NULL, "a,a", "s");
  mb_output(&m, "s");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "graph output 's' is a sequence");
  mb_free(&m);

  /* a tensor where a sequence belongs */
  mb_init(&m, 13);
  mb_input(&m, "a", DT_FLOAT32, 1, (int64_t[]){3}, NULL);
  mb_node(&m, "SequenceLength", "len", "a", "n");
  mb_output(&m, "n");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'len' (SequenceLength)",
              "input 0 'a' must be a sequence");
  mb_free(&m);

  /* an input whose shape is lost upstream (an exporter's Split whose sizes
   * miss the axis, as torch.onnx writes WaveRNN's repeat_interleave): the
   * line names the node it was lost at and its shape rule's reason */
  static const int64_t halves[2] = {1, 1}, ones[2] = {1, 1};
  mb_init(&m, 13);
  mb_input(&m, "a", DT_FLOAT32, 1, (int64_t[]){4}, NULL);
  mb_init_raw(&m, "halves", DT_INT64, 1, (int64_t[]){2}, halves, sizeof halves);
  mb_init_raw(&m, "ones", DT_INT64, 1, (int64_t[]){2}, ones, sizeof ones);
  mb_node(&m, "Split", "bad_split", "a,halves", "h0,h1");
  mb_node(&m, "SplitToSequence", "to_seq", "h0,ones", "s");
  mb_node(&m, "ConcatFromSequence", NULL, "s", "y");
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'to_seq' (SplitToSequence)", "known at import",
              "from node 'bad_split' (Split)", "split sizes add up to 2, the axis has 4");
  mb_free(&m);
}

int main(void) {
  test_repeat_interleave_loop();
  test_sequence_ops();
  test_split_128_shape_chain();
  test_refusals();
  return test_summary("test_frontend_seq");
}
