/* test_qmatmul.c - a quantized Linear layer (DequantizeLinear -> MatMul
 * with constant per-column int8 weights -> Add of a float bias -> Relu ->
 * QuantizeLinear, passes/qconv.c) compiled and run through libomrt as one
 * QCONV2D task whose pixels are the rows of x, against the integer
 * definition: acc = sum (x_q - x_zp) * w_q in int32 plus the bias in units
 * of s_x * s_w[n], requantized once (common/quant.h q_requant) and clamped
 * at the Relu's zero; and against the float island the reference evaluator
 * computes (within one step of the output scale). K = 40 and N = 20 are not
 * multiples of the 16-channel blocks, and x has rank 3 (10 rows): the QConv
 * runs on NC1HWC0, a channels-last TRANSDATA each way. Also a rank-2 x of
 * one row (a classifier's Linear on a vector). With K = 48 and N = 32
 * (multiples of 16) the QCONV2D reads and writes the rows as they are, ND
 * NHWC (format 2.11), and the package has no TRANSDATA at all.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/om_format.h"
#include "common/quant.h"
#include "ir/eval.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "runtime/rt.h"

enum { KMAX = 48, NMAX = 32, MAXROWS = 10 };
static int K, N; /* this case's */

static unsigned next(unsigned *seed) { return *seed = *seed * 1103515245u + 12345u, (*seed >> 8) & 0xffff; }

static int8_t w[KMAX * NMAX];
static float ws[NMAX], bias[NMAX];
static const float xs = 0.03f, ys = 0.05f;
static const uint8_t xz = 120, yz = 10;

static void model(mb *m, int rank, const int64_t *xd) {
  mb_init(m, 13);
  mb_input(m, "x", DT_FLOAT32, rank, xd, NULL);
  mb_init_raw(m, "xs", DT_FLOAT32, 0, NULL, &xs, sizeof xs);
  mb_init_raw(m, "xz", DT_UINT8, 0, NULL, &xz, 1);
  mb_init_raw(m, "w", DT_INT8, 2, (int64_t[]){K, N}, w, (size_t)(K * N));
  mb_init_raw(m, "ws", DT_FLOAT32, 1, (int64_t[]){N}, ws, sizeof(float) * (size_t)N);
  mb_init_raw(m, "b", DT_FLOAT32, 1, (int64_t[]){N}, bias, sizeof(float) * (size_t)N);
  mb_init_raw(m, "ys", DT_FLOAT32, 0, NULL, &ys, sizeof ys);
  mb_init_raw(m, "yz", DT_UINT8, 0, NULL, &yz, 1);
  mb_node(m, "QuantizeLinear", "q_x", "x,xs,xz", "xq");
  mb_node(m, "DequantizeLinear", "dq_x", "xq,xs,xz", "xf");
  Onnx__NodeProto *n = mb_node(m, "DequantizeLinear", "dq_w", "w,ws", "wf");
  attr_int(m, n, "axis", 1);
  mb_node(m, "MatMul", "fc", "xf,wf", "mm");
  mb_node(m, "Add", "fc_bias", "mm,b", "mb");
  mb_node(m, "Relu", "relu", "mb", "r");
  mb_node(m, "QuantizeLinear", "q_y", "r,ys,yz", "yq");
  mb_node(m, "DequantizeLinear", "dq_y", "yq,ys,yz", "y");
  mb_output(m, "y");
}

static void run_case(int rank, const int64_t *xd, unsigned seed) {
  const int rows = (int)(rank == 3 ? xd[0] * xd[1] : xd[0]);
  float x[MAXROWS * KMAX], got[MAXROWS * NMAX];
  for (int i = 0; i < rows * K; i++)
    x[i] = ((float)(next(&seed) % 2001) - 1000.0f) * 0.004f; /* beyond the u8 range at both ends */
  mb m;
  model(&m, rank, xd);
  ir_graph *g = EXPECT_OK(&m, ".", NULL);
  mb_run r;
  const void *in[1] = {x};
  void *out[1] = {got};
  int ran = 0;
  if (mb_run_open(&m, "qmatmul.onnx", OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE, &r)) {
    ran = omrt_execute(r.ctx, in, out) == OMRT_OK;
    CHECK(ran);
    CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_QCONV2D), 1);
    CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_MATMUL), 0);
    CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_STRIDED_COPY), 0); /* the Transposes are TransDatas */
    const int nhwc = K % 16 == 0 && N % 16 == 0;                    /* or nothing at all */
    CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_TRANSDATA), nhwc ? 0 : 2);
  }
  if (ran) { /* the integer definition, exactly */
    int bad = 0;
    for (int i = 0; i < rows; i++)
      for (int j = 0; j < N; j++) {
        int32_t acc = (int32_t)nearbyint(bias[j] / (double)(xs * ws[j]));
        for (int k = 0; k < K; k++)
          acc += (q_quantize(x[i * K + k], xs, xz, 0, 255) - xz) * w[k * N + j];
        const int32_t q = q_requant(acc, xs * ws[j] / ys, yz, yz, 255);
        if (got[i * N + j] != q_dequantize(q, yz, ys) && bad++ < 4)
          test_note("  y[%d, %d] = %g, want %g", i, j, got[i * N + j], q_dequantize(q, yz, ys));
      }
    CHECKF(bad == 0, "  %d outputs differ from the integer definition", bad);
  }
  arena a;
  arena_init(&a, 0);
  void *ref[1];
  if (ran && g && mb_eval(g, in, ref, &a) == 0) { /* the float island, within one output step */
    int bad = 0;
    for (int i = 0; i < rows * N; i++)
      bad += fabsf(((const float *)ref[0])[i] - got[i]) > ys * 1.01f;
    CHECKF(bad == 0, "  %d outputs more than one step from the evaluator's", bad);
  } else {
    CHECK(!"runs and evaluates");
  }
  arena_free(&a);
  mb_run_close(&r);
  ir_graph_free(g);
}

/* Random weights, scales and bias for k x n. */
static void layer(int k, int n, unsigned seed) {
  K = k, N = n;
  for (int i = 0; i < K * N; i++)
    w[i] = (int8_t)((int)(next(&seed) % 255) - 127);
  for (int j = 0; j < N; j++) {
    ws[j] = 0.002f + 0.0005f * (float)(j % 7);
    bias[j] = ((float)(j % 5) - 2.0f) * 0.37f;
  }
}

int main(void) {
  layer(40, 20, 17);
  run_case(3, (int64_t[]){2, 5, K}, 3);
  run_case(2, (int64_t[]){1, K}, 4);
  layer(48, 32, 18); /* NHWC */
  run_case(3, (int64_t[]){2, 5, K}, 5);
  run_case(2, (int64_t[]){1, K}, 6);
  return test_summary("qmatmul");
}
