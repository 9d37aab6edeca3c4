/* test_conv3d_wpack.c - 3-D convolutions whose weights are computed at run
 * time: the layout pass packs them into FRACTAL_Z_3D with a WPACK task
 * (lower/conv_weights.h) instead of refusing them.
 *
 * Each case is a Conv or ConvTranspose whose W is a graph input (an
 * odd channel count, so that the packing pads input and output channel
 * blocks; a stride, pads and a depth window), compiled in both precision
 * modes and run through libomrt on random x and W against the reference
 * evaluator: max |error| within 2e-4 (fp32) or 2e-2 (fp16) of the largest
 * |y|. The package holds one WPACK task per case.
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
#include "runtime/rt.h"
#include "support.h"

typedef struct ccase {
  const char *op; /* "Conv" or "ConvTranspose" */
  int64_t x[5], w[5], strides[3], pads[6];
} ccase;

static int64_t elements(const int64_t *d, int r) {
  int64_t n = 1;
  for (int i = 0; i < r; i++)
    n *= d[i];
  return n;
}

static void model(mb *m, const ccase *c) {
  mb_init(m, 13);
  mb_input(m, "x", 1, 5, c->x, NULL);
  mb_input(m, "w", 1, 5, c->w, NULL);
  Onnx__NodeProto *n = mb_node(m, c->op, "conv3d", "x,w", "y");
  attr_ints(m, n, "kernel_shape", 3, c->w + 2);
  attr_ints(m, n, "strides", 3, c->strides);
  attr_ints(m, n, "pads", 6, c->pads);
  mb_output(m, "y");
}

static void run_case(const ccase *c, om_precision p) {
  mb m;
  model(&m, c);
  ir_graph *g = EXPECT_OK(&m, ".", NULL);
  mb_run r;
  int ok = mb_run_open(&m, c->op, p, &r);
  if (r.model) CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_WPACK), 1);
  if (ok && g) {
    int64_t nx = elements(c->x, 5), nw = elements(c->w, 5);
    float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
    unsigned seed = 3;
    for (int64_t i = 0; i < nx; i++)
      seed = seed * 1103515245u + 12345u, x[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
    for (int64_t i = 0; i < nw; i++)
      seed = seed * 1103515245u + 12345u, w[i] = (float)((seed >> 9) % 2001) / 2000.0f - 0.5f;
    const void *in[2] = {x, w};
    arena a;
    arena_init(&a, 0);
    void *ref[1];
    CHECK(mb_eval(g, in, ref, &a) == 0);
    omrt_tensor_desc d;
    CHECK_EQ_INT(omrt_model_output(r.model, 0, &d), OMRT_OK);
    int64_t ny = elements(d.dims, d.rank);
    CHECK_EQ_INT(ny, ir_value_elements(g->outputs[0]));
    float *y = malloc((size_t)ny * sizeof *y);
    void *out[1] = {y};
    CHECK_EQ_INT(omrt_execute(r.ctx, in, out), OMRT_OK);
    double mx = 0, err = 0;
    for (int64_t i = 0; i < ny; i++) {
      double r = ((const float *)ref[0])[i];
      mx = fabs(r) > mx ? fabs(r) : mx;
      err = fabs(y[i] - r) > err ? fabs(y[i] - r) : err;
    }
    double tol = (p == OM_PRECISION_FORCE_FP16 ? 2e-2 : 2e-4) * (mx > 1 ? mx : 1);
    CHECKF(err <= tol, "  %s: max error %g (largest |y| %g)", c->op, err, mx);
    free(y);
    free(x);
    free(w);
    arena_free(&a);
  }
  mb_run_close(&r);
  ir_graph_free(g);
}

int main(void) {
  static const ccase cases[] = {
      {"Conv", {1, 5, 4, 6, 7}, {18, 5, 2, 3, 3}, {1, 2, 1}, {0, 1, 1, 1, 1, 0}},
      {"ConvTranspose", {2, 3, 3, 4, 4}, {3, 7, 2, 3, 3}, {2, 2, 1}, {0, 1, 1, 1, 0, 1}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    run_case(&cases[i], OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
    run_case(&cases[i], OM_PRECISION_FORCE_FP16);
  }
  return test_summary("conv3d_wpack");
}
