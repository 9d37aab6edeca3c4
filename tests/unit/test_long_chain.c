/* test_long_chain.c - a 20,000-node chain compiles, split into programs, and
 * computes what it should (issue 24 item 3).
 *
 * A chain of N Relu nodes took time cubic in N to compile (the vector
 * program merges re-scanned whole programs, use counts and node names
 * walked the graph) and from ~4,100 nodes failed ("4097 instructions exceed
 * 4096"). This test compiles a 20,000-node chain in process (the old code
 * took minutes, the new well under a second on an idle machine; the test
 * is a size guard, not a timing), checks that the chain became several
 * vector programs, none over VPROG_MAX_INSTRS (the loader would refuse it),
 * and runs it: y = relu(x) exactly, in must_keep_origin_dtype. A chain of
 * Neg (y = x, N being even) checks that no split drops or repeats an op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vprog.h"
#include "driver/compile.h"
#include "omrt.h"
#include "onnx_mb.h"

enum { N = 20000, W = 16 };

/* x -> op -> ... -> op -> y, N ops. */
static void build_chain(mb *m, const char *op) {
  mb_init(m, 13);
  mb_input(m, "x", DT_FLOAT32, 2, (int64_t[]){1, W}, NULL);
  char in[32], out[32], name[32];
  for (int i = 0; i < N; i++) {
    snprintf(in, sizeof in, i ? "t%d" : "x", i - 1);
    snprintf(out, sizeof out, i == N - 1 ? "y" : "t%d", i);
    snprintf(name, sizeof name, "n%d", i);
    mb_node(m, op, name, in, out);
  }
  mb_output(m, "y");
}

static void check_chain(const char *op) {
  mb m;
  build_chain(&m, op);
  size_t onnx_len = 0;
  uint8_t *onnx = mb_pack(&m, &onnx_len);
  atc_options opt = {.model_path = "chain.onnx",
                     .model_data = onnx,
                     .model_size = onnx_len,
                     .soc_version = "Ascend310",
                     .precision = OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE};
  atc_result res;
  diag d;
  diag_init(&d);
  status st = atc_compile(&opt, &res, &d);
  CHECK(st == ST_OK);
  mb_free(&m);
  if (st != ST_OK) {
    test_note("compile: %s", d.msg);
    return;
  }
  /* Each op adds at least one instruction, so 20,000 of them need at
   * least 5 programs of <= 4096. */
  CHECK(res.ntasks >= N / VPROG_MAX_INSTRS + 1);
  CHECK(res.ntasks < 64);
  size_t bytes = (size_t)res.om_bytes;
  void *om = aligned_alloc(64, (bytes + 63) / 64 * 64);
  memcpy(om, res.om_data, bytes);
  free(res.om_data);
  omrt_model *model = NULL;
  omrt_context *ctx = NULL;
  CHECK(omrt_model_load_memory(om, bytes, NULL, &model) == OMRT_OK);
  if (model) CHECK(omrt_context_new(model, &ctx) == OMRT_OK);
  if (ctx) {
    float x[W], y[W];
    for (int i = 0; i < W; i++)
      x[i] = (float)(i - W / 2) / 4.0f;
    const void *ins[1] = {x};
    void *outs[1] = {y};
    CHECK(omrt_execute(ctx, ins, outs) == OMRT_OK);
    int relu = strcmp(op, "Relu") == 0;
    for (int i = 0; i < W; i++)
      CHECK(y[i] == (relu ? (x[i] > 0 ? x[i] : 0.0f) : x[i]));
  } else {
    test_note("load: %s", omrt_last_error());
  }
  omrt_context_free(ctx);
  omrt_model_free(model);
  free(om);
}

int main(void) {
  check_chain("Relu");
  check_chain("Neg");
  return test_summary("long_chain");
}
