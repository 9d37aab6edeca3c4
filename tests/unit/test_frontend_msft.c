/* test_frontend_msft.c - ONNX Runtime's transformer contrib ops (domain
 * com.microsoft) at import (frontend/onnx_decomp_msft.c): compiled by atc
 * and run by libomrt, each lands in the fusion its plain ONNX form gets
 * (SkipLayerNormalization after a MatMul: one MATMUL with the bias and one
 * LAYERNORM with the residual, nothing else; Attention: one MATMUL for the
 * packed Q, K, V and one ATTENTION reading them as views; BiasGelu after a MatMul: one MATMUL), with the
 * output equal to the reference evaluator's on the imported graph (each
 * op's numbers against ONNX Runtime itself: tests/model_msft.py);
 * DynamicQuantizeMatMul imports to the very nodes of ONNX Runtime's
 * quantize_dynamic form (DynamicQuantizeLinear -> MatMulInteger -> Cast ->
 * Mul -> Mul -> Add), op for op; and malformed or unsupported uses are
 * refused with one line naming the node, the op and the field. */
#include <math.h>

#include "common/om_format.h"
#include "ir/eval.h"
#include "onnx_mb.h"
#include "passes/pass.h"

enum { F32 = 1, I8 = 3, I32 = 6, I64 = 7 };

static unsigned seed = 17;

static float frand(void) {
  seed = seed * 1103515245u + 12345u;
  return ((float)(seed >> 8 & 2047) - 1024.0f) / 1024.0f;
}

/* A float initializer of n random values times scale. */
static void rand_init(mb *m, const char *name, int rank, const int64_t *dims, float scale) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= dims[i];
  float *v = arena_array(&m->a, (size_t)n, sizeof *v);
  for (int64_t i = 0; i < n; i++)
    v[i] = frand() * scale;
  mb_init_raw(m, name, F32, rank, dims, v, (size_t)n * sizeof *v);
}

static Onnx__NodeProto *ms(Onnx__NodeProto *n) {
  n->domain = "com.microsoft";
  return n;
}

static void ms_model(mb *m, const int64_t *x_dims) {
  mb_init(m, 17);
  mb_domain(m, "com.microsoft", 1);
  mb_input(m, "x", F32, 3, x_dims, NULL);
}

/* Compiles m (frees it) in force_fp16, runs it on x and checks the count of
 * tasks of each of kinds[] (counts[]) and `total` tasks in all, and the
 * output against the evaluator's within tol x max |ref|. */
static void expect_compiled(mb *m, const char *name, const float *x, const int *kinds, const int *counts,
                            int nkinds, int total, double tol) {
  ir_graph *g = EXPECT_OK(m, NULL, NULL);
  arena a;
  arena_init(&a, 0);
  const void *in[1] = {x};
  void *ref[1] = {NULL};
  int evaluated = g && mb_eval(g, in, ref, &a) == 0;
  CHECKF(evaluated, "  %s: the evaluator runs", name);
  int64_t count = g ? ir_value_elements(g->outputs[0]) : 0;
  ir_graph_free(g);
  mb_run r;
  if (mb_run_open(m, name, OM_PRECISION_FORCE_FP16, &r)) {
    for (int k = 0; k < nkinds; k++)
      CHECKF(mb_count_tasks(r.model, kinds[k]) == counts[k], "  %s: %d tasks of kind %d, want %d", name,
             mb_count_tasks(r.model, kinds[k]), kinds[k], counts[k]);
    CHECKF((int)r.model->def->ntasks == total, "  %s: %u tasks, want %d", name, r.model->def->ntasks, total);
    float *got = arena_array(&a, (size_t)count, sizeof *got);
    void *out[1] = {got};
    CHECK_EQ_INT(omrt_execute(r.ctx, in, out), OMRT_OK);
    double top = 0, err = 0;
    for (int64_t i = 0; evaluated && i < count; i++) {
      double want = ((const float *)ref[0])[i];
      top = fmax(top, fabs(want));
      err = fmax(err, fabs(want - got[i]));
    }
    CHECKF(evaluated && err <= tol * top, "  %s: max error %g of max |ref| %g (bar %g of it)", name, err, top,
           tol);
  }
  mb_run_close(&r);
  arena_free(&a);
}

/* x [1, 8, 64] -> MatMul(W) -> SkipLayerNormalization(., skip x, gamma, beta, bias). */
static void test_skip_layer_norm(void) {
  static const int64_t xd[3] = {1, 8, 64}, wd[2] = {64, 64}, vd[1] = {64};
  static float x[8 * 64];
  for (int i = 0; i < 8 * 64; i++)
    x[i] = frand();
  mb m;
  ms_model(&m, xd);
  rand_init(&m, "w", 2, wd, 0.2f), rand_init(&m, "g", 1, vd, 1), rand_init(&m, "be", 1, vd, 1);
  rand_init(&m, "bi", 1, vd, 1);
  mb_node(&m, "MatMul", "mm", "x,w", "h");
  attr_float(&m, ms(mb_node(&m, "SkipLayerNormalization", "sln", "h,x,g,be,bi", "y")), "epsilon", 1e-6f);
  mb_output(&m, "y");
  const int kinds[2] = {OM_TASK_MATMUL, OM_TASK_LAYERNORM}, counts[2] = {1, 1};
  expect_compiled(&m, "skip_layer_norm", x, kinds, counts, 2, 4, 1e-2);
}

/* x [2, 16, 64] -> Attention(W [64, 192], bias, num_heads 4). */
static void test_attention(void) {
  static const int64_t xd[3] = {2, 16, 64}, wd[2] = {64, 192}, bd[1] = {192};
  static float x[2 * 16 * 64];
  for (int i = 0; i < 2 * 16 * 64; i++)
    x[i] = frand();
  mb m;
  ms_model(&m, xd);
  rand_init(&m, "w", 2, wd, 0.2f), rand_init(&m, "b", 1, bd, 0.1f);
  attr_int(&m, ms(mb_node(&m, "Attention", "att", "x,w,b", "y")), "num_heads", 4);
  mb_output(&m, "y");
  const int kinds[2] = {OM_TASK_MATMUL, OM_TASK_ATTENTION}, counts[2] = {1, 1};
  expect_compiled(&m, "attention", x, kinds, counts, 2, 4, 1e-2);
}

/* x [1, 16, 32] -> MatMul(W) -> BiasGelu(., b). */
static void test_bias_gelu(void) {
  static const int64_t xd[3] = {1, 16, 32}, wd[2] = {32, 64}, bd[1] = {64};
  static float x[16 * 32];
  for (int i = 0; i < 16 * 32; i++)
    x[i] = frand();
  mb m;
  ms_model(&m, xd);
  rand_init(&m, "w", 2, wd, 0.3f), rand_init(&m, "b", 1, bd, 0.5f);
  mb_node(&m, "MatMul", "mm", "x,w", "h");
  ms(mb_node(&m, "BiasGelu", "bg", "h,b", "y"));
  mb_output(&m, "y");
  const int kinds[1] = {OM_TASK_MATMUL}, counts[1] = {1};
  expect_compiled(&m, "bias_gelu", x, kinds, counts, 1, 3, 1e-2);
}

/* The ops of g's nodes, in order, into ops; their count. */
static int ops_of(const ir_graph *g, ir_op *ops, int max) {
  int n = 0;
  for (int i = 0; i < g->nnodes && n < max; i++)
    ops[n++] = g->nodes[i]->op;
  return n;
}

/* DynamicQuantizeMatMul(x, W int8, scale, zero point, bias) and the form
 * quantize_dynamic writes for it import to the same ops in the same order. */
static void test_dynamic_quantize_matmul(void) {
  static const int64_t xd[3] = {2, 4, 8}, wd[2] = {8, 4}, one[1] = {1}, bd[1] = {4};
  static const int8_t w[32] = {1,  -2, 3, 4, 5, 6, -7, 8, 9, 10, 11,  12, 13, 14, 15, 16,
                               -1, 2,  3, 4, 5, 6, 7,  8, 9, 10, -11, 12, 13, 14, 15, 16};
  static const float s[1] = {0.05f};
  static const int8_t z[1] = {0};
  ir_op a[64], b[64];
  int na = 0, nb = 0;
  for (int form = 0; form < 2; form++) {
    mb m;
    ms_model(&m, xd);
    mb_init_raw(&m, "w", I8, 2, wd, w, sizeof w);
    mb_init_raw(&m, "s", F32, 1, one, s, sizeof s);
    mb_init_raw(&m, "z", I8, 1, one, z, sizeof z);
    rand_init(&m, "bias", 1, bd, 1);
    if (!form) {
      ms(mb_node(&m, "DynamicQuantizeMatMul", "dq", "x,w,s,z,bias", "y"));
    } else {
      mb_node(&m, "DynamicQuantizeLinear", "dql", "x", "xq,xs,xz");
      mb_node(&m, "MatMulInteger", "mmi", "xq,w,xz,z", "acc");
      attr_int(&m, mb_node(&m, "Cast", "cast", "acc", "f"), "to", F32);
      mb_node(&m, "Mul", "sm", "xs,s", "sc");
      mb_node(&m, "Mul", "mul", "f,sc", "p");
      mb_node(&m, "Add", "add", "p,bias", "y");
    }
    mb_output(&m, "y");
    ir_graph *g = EXPECT_OK(&m, NULL, NULL);
    if (g) *(form ? &nb : &na) = ops_of(g, form ? b : a, 64);
    ir_graph_free(g);
    mb_free(&m);
  }
  int same = na > 0 && na == nb && memcmp(a, b, (size_t)na * sizeof *a) == 0;
  CHECK(same);
  for (int i = 0; !same && i < (na > nb ? na : nb); i++)
    test_note("  node %d: %s, the quantize_dynamic form's %s", i, i < na ? ir_ops[a[i]].name : "-",
              i < nb ? ir_ops[b[i]].name : "-");
}

/* Malformed or unsupported uses, refused naming the node, the op and the field. */
static void test_refusals(void) {
  static const int64_t xd[3] = {1, 4, 8}, wd[2] = {8, 24}, w2[2] = {8, 8}, vd[1] = {8};
  mb m;
  ms_model(&m, xd);
  rand_init(&m, "w", 2, wd, 1);
  ms(mb_node(&m, "Attention", "att", "x,w", "y"));
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'att' (Attention)", "'num_heads' is required");
  mb_free(&m);

  ms_model(&m, xd);
  rand_init(&m, "w", 2, wd, 1);
  attr_int(&m, ms(mb_node(&m, "Attention", "att", "x,w,,,x", "y")), "num_heads", 2);
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'att' (Attention)", "input 4 'x' (past)");
  mb_free(&m);

  ms_model(&m, xd);
  rand_init(&m, "w", 2, wd, 1);
  Onnx__NodeProto *n = ms(mb_node(&m, "Attention", "att", "x,w", "y"));
  attr_int(&m, n, "num_heads", 2);
  attr_ints(&m, n, "qkv_hidden_sizes", 3, (int64_t[]){8, 4, 12});
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'att' (Attention)", "'qkv_hidden_sizes'");
  mb_free(&m);

  ms_model(&m, xd);
  attr_int(&m, ms(mb_node(&m, "MultiHeadAttention", "mha", "x", "y")), "num_heads", 2);
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'mha' (MultiHeadAttention)", "packed QKV");
  mb_free(&m);

  ms_model(&m, xd);
  rand_init(&m, "g", 1, vd, 1);
  ms(mb_node(&m, "SkipSimplifiedLayerNormalization", "ssln", "x,x,g", "y,mean"));
  mb_output(&m, "y"), mb_output(&m, "mean");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "node 'ssln' (SkipSimplifiedLayerNormalization)",
              "output 1 'mean'");
  mb_free(&m);

  ms_model(&m, xd);
  rand_init(&m, "w", 2, w2, 1);
  attr_int(&m, ms(mb_node(&m, "FusedMatMul", "fmm", "x,w", "y")), "transB", 2);
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'fmm' (FusedMatMul)", "'transB'");
  mb_free(&m);

  ms_model(&m, xd);
  ms(mb_node(&m, "BiasGelu", "bg", "x", "y"));
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_INVALID, "node 'bg' (BiasGelu)", "has 1 inputs");
  mb_free(&m);
}

int main(void) {
  test_skip_layer_norm();
  test_attention();
  test_bias_gelu();
  test_dynamic_quantize_matmul();
  test_refusals();
  return test_summary("test_frontend_msft");
}
