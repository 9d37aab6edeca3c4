/* test_tfidf.c - ONNX TfIdfVectorizer (common/tfidf.h, the TFIDF task).
 *
 * A hand-counted case: tokens [1, 2, 1, 2, 3] (and a second row), the pool
 * unigrams 1 and 3 and bigrams (1, 2) and (2, 1), max_skip_count 1, in
 * TF, IDF and TFIDF with weights: 1 occurs twice, 3 once, (1, 2) twice at
 * skip distance 1 and never at 2, (2, 1) once. Then random token rows
 * through libomrt in both precision modes against the reference
 * evaluator, exactly. Refused in one line naming the node: a string pool,
 * an n-gram without an output index, ngram_counts past the pool.
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

enum { B = 2, C = 5, OUTS = 4 };

/* nindexes of ngram_indexes [0, 1, 2, 3]; bigrams from pool position
 * bigram_start (2: the pool's). */
static Onnx__NodeProto *model_of(mb *m, const char *mode, int with_weights, int nindexes,
                                 int64_t bigram_start) {
  mb_init(m, 9);
  mb_input(m, "x", 7, 2, (int64_t[]){B, C}, NULL);
  Onnx__NodeProto *n = mb_node(m, "TfIdfVectorizer", "tfidf", "x", "y");
  attr_string(m, n, "mode", mode);
  attr_int(m, n, "min_gram_length", 1);
  attr_int(m, n, "max_gram_length", 2);
  attr_int(m, n, "max_skip_count", 1);
  attr_ints(m, n, "ngram_counts", 2, (int64_t[]){0, bigram_start});
  attr_ints(m, n, "ngram_indexes", nindexes, (int64_t[]){0, 1, 2, 3});
  attr_ints(m, n, "pool_int64s", 6, (int64_t[]){1, 3, 1, 2, 2, 1});
  if (with_weights) {
    Onnx__AttributeProto *a = mb_attr(m, n, "weights", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    static float w[OUTS] = {0.5f, 2, 3, 4};
    a->n_floats = OUTS, a->floats = w;
  }
  mb_output(m, "y");
  return n;
}

static Onnx__NodeProto *model(mb *m, const char *mode, int with_weights) {
  return model_of(m, mode, with_weights, OUTS, 2);
}

/* Runs the model of `mode` on x through libomrt and the evaluator; y_out
 * gets libomrt's result, which must equal the evaluator's. */
static void run(const char *mode, int with_weights, om_precision p, const int64_t *x, float *y_out) {
  mb m;
  model(&m, mode, with_weights);
  ir_graph *g = EXPECT_OK(&m, ".", NULL);
  mb_run r;
  const void *in[1] = {x};
  void *out[1] = {y_out};
  if (mb_run_open(&m, "tfidf.onnx", p, &r)) CHECK_EQ_INT(omrt_execute(r.ctx, in, out), OMRT_OK);
  arena a;
  arena_init(&a, 0);
  void *ref[1];
  if (g && mb_eval(g, in, ref, &a) == 0)
    CHECKF(memcmp(ref[0], y_out, B * OUTS * sizeof(float)) == 0, "  mode %s: runtime and evaluator differ",
           mode);
  else
    CHECK(!"evaluates");
  arena_free(&a);
  mb_run_close(&r);
  ir_graph_free(g);
}

static void test_counted(void) {
  static const int64_t x[B * C] = {1, 2, 1, 2, 3, 7, 7, 7, 7, 7};
  static const struct {
    const char *mode;
    int weights;
    float want[OUTS];
  } cases[] = {
      {"TF", 0, {2, 1, 2, 1}},     {"TF", 1, {2, 1, 2, 1}},    {"IDF", 0, {1, 1, 1, 1}},
      {"IDF", 1, {0.5f, 2, 3, 4}}, {"TFIDF", 0, {2, 1, 2, 1}}, {"TFIDF", 1, {1, 2, 6, 4}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    float y[B * OUTS];
    run(cases[i].mode, cases[i].weights, OM_PRECISION_FORCE_FP16, x, y);
    CHECKF(memcmp(y, cases[i].want, sizeof cases[i].want) == 0, "  %s%s: got %g %g %g %g", cases[i].mode,
           cases[i].weights ? " weighted" : "", y[0], y[1], y[2], y[3]);
    for (int k = OUTS; k < B * OUTS; k++) /* the second row holds none of them */
      CHECK(y[k] == 0);
  }
}

static void test_random(void) {
  unsigned seed = 9;
  for (int t = 0; t < 6; t++) {
    int64_t x[B * C];
    for (int i = 0; i < B * C; i++)
      seed = seed * 1103515245u + 12345u, x[i] = (int64_t)((seed >> 16) % 4);
    float y[B * OUTS];
    run(t % 3 == 0   ? "TF"
        : t % 3 == 1 ? "IDF"
                     : "TFIDF",
        t & 1, t < 3 ? OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE : OM_PRECISION_FORCE_FP16, x, y);
  }
}

static void test_refused(void) {
  mb m;
  Onnx__NodeProto *n = model(&m, "TF", 0);
  Onnx__AttributeProto *a = mb_attr(&m, n, "pool_strings", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
  (void)a;
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'tfidf' (TfIdfVectorizer)", "pool_strings");
  mb_free(&m);

  model_of(&m, "TF", 0, 3, 2);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'tfidf' (TfIdfVectorizer)", "ngram_indexes has 3");
  mb_free(&m);

  model_of(&m, "TF", 0, OUTS, 9);
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'tfidf' (TfIdfVectorizer)", "ngram_counts[1] = 9");
  mb_free(&m);
}

int main(void) {
  test_counted();
  test_random();
  test_refused();
  return test_summary("tfidf");
}
