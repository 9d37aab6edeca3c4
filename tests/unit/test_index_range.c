/* test_index_range.c - indices outside their axis are errors, never a zero
 * row (issue 24 item 4).
 *
 * ONNX makes an index outside [-D, D) an error for Gather, GatherElements,
 * GatherND, ScatterElements and ScatterND. Constant indices are checked at
 * compile time (ir/shape_index.c's ir_shape_check_indices): the message
 * names the node and the index. Indices computed from the inputs are checked
 * by the kernels as they read them: omrt_execute fails with OMRT_ERR_ARG
 * naming the task and the index (runtime/exec.c), and in-range ones,
 * negative included, still give the right result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/compile.h"
#include "omrt.h"
#include "onnx_mb.h"

/* Compiles m; returns the status, the package in *om (64-aligned, caller
 * frees) when it compiled, the message in d. */
static status compile(mb *m, void **om, size_t *bytes, diag *d) {
  size_t len = 0;
  uint8_t *onnx = mb_pack(m, &len);
  atc_options opt = {.model_path = "index.onnx",
                     .model_data = onnx,
                     .model_size = len,
                     .soc_version = "Ascend310",
                     .precision = OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE};
  atc_result res;
  diag_init(d);
  status st = atc_compile(&opt, &res, d);
  *om = NULL;
  if (st == ST_OK) {
    *bytes = (size_t)res.om_bytes;
    *om = aligned_alloc(64, (*bytes + 63) / 64 * 64);
    memcpy(*om, res.om_data, *bytes);
    free(res.om_data);
  }
  return st;
}

static const int64_t X_DIMS[2] = {3, 4};

/* y = OP(x [3,4], constant indices), the indices' dims and values given. */
static void expect_refused(const char *op, const char *name, int irank, const int64_t *idims,
                           const int64_t *idx, int nidx, const char *want) {
  mb m;
  mb_init(&m, 18);
  mb_input(&m, "x", DT_FLOAT32, 2, X_DIMS, NULL);
  mb_init_raw(&m, "i", DT_INT64, irank, idims, idx, (size_t)nidx * 8);
  if (strncmp(op, "Scatter", 7) == 0) {
    int64_t udims[2] = {idims[0], strcmp(op, "ScatterND") == 0 ? 4 : idims[1]};
    int rank = strcmp(op, "ScatterND") == 0 ? 2 : irank;
    float u[16] = {0};
    mb_init_raw(&m, "u", DT_FLOAT32, rank, udims, u, (size_t)(udims[0] * udims[1]) * 4);
    mb_node(&m, op, name, "x,i,u", "y");
  } else {
    mb_node(&m, op, name, "x,i", "y");
  }
  mb_output(&m, "y");
  void *om;
  size_t bytes;
  diag d;
  status st = compile(&m, &om, &bytes, &d);
  CHECK_EQ_INT(st, ST_ERR_INVALID);
  CHECK(strstr(d.msg, want) != NULL);
  if (!strstr(d.msg, want)) test_note("%s: %s", op, d.msg);
  free(om);
  mb_free(&m);
}

static void constant_indices(void) {
  char want[128];
  snprintf(want, sizeof want, "node 'g' (Gather): index 3 at position 1");
  expect_refused("Gather", "g", 1, (int64_t[]){2}, (int64_t[]){0, 3}, 2, want);
  expect_refused("Gather", "g", 1, (int64_t[]){2}, (int64_t[]){-4, 0}, 2, "node 'g' (Gather): index -4");
  expect_refused("GatherElements", "ge", 2, (int64_t[]){1, 4}, (int64_t[]){0, 1, 2, 7}, 4,
                 "node 'ge' (GatherElements): index 7 at position 3");
  expect_refused("GatherND", "gn", 2, (int64_t[]){2, 2}, (int64_t[]){2, 3, 1, 4}, 4,
                 "node 'gn' (GatherND): index 4 at position 3");
  expect_refused("ScatterElements", "se", 2, (int64_t[]){1, 2}, (int64_t[]){3, 0}, 2,
                 "node 'se' (ScatterElements): index 3 at position 0");
  expect_refused("ScatterND", "sn", 2, (int64_t[]){1, 1}, (int64_t[]){-5}, 1,
                 "node 'sn' (ScatterND): index -5 at position 0");
}

/* Gather / GatherND / ScatterElements of x [3,4] by indices that are a
 * graph input: in range runs, out of range fails naming the task. */
static void runtime_indices(const char *op, int irank, const int64_t *idims, const int64_t *good,
                            const int64_t *bad, int nidx, const char *want) {
  mb m;
  mb_init(&m, 18);
  mb_input(&m, "x", DT_FLOAT32, 2, X_DIMS, NULL);
  mb_input(&m, "i", DT_INT64, irank, idims, NULL);
  if (strcmp(op, "ScatterElements") == 0) {
    float u[16];
    for (int k = 0; k < 16; k++)
      u[k] = 100.0f + (float)k;
    mb_init_raw(&m, "u", DT_FLOAT32, irank, idims, u, (size_t)nidx * 4);
    mb_node(&m, op, "op", "x,i,u", "y");
  } else {
    mb_node(&m, op, "op", "x,i", "y");
  }
  mb_output(&m, "y");
  void *om;
  size_t bytes;
  diag d;
  status st = compile(&m, &om, &bytes, &d);
  CHECK(st == ST_OK);
  if (st) test_note("%s: %s", op, d.msg);
  omrt_model *model = NULL;
  omrt_context *ctx = NULL;
  if (om) CHECK(omrt_model_load_memory(om, bytes, NULL, &model) == OMRT_OK);
  if (model) CHECK(omrt_context_new(model, &ctx) == OMRT_OK);
  if (ctx) {
    float x[12], y[64];
    for (int k = 0; k < 12; k++)
      x[k] = (float)k;
    const void *ins[2] = {x, good};
    void *outs[1] = {y};
    CHECK(omrt_execute(ctx, ins, outs) == OMRT_OK);
    if (strcmp(op, "Gather") == 0) /* rows good[0] = 2 and good[1] = -1 (row 2) */
      CHECK(y[0] == 8 && y[3] == 11 && y[4] == 8 && y[7] == 11);
    ins[1] = bad;
    CHECK_EQ_INT(omrt_execute(ctx, ins, outs), OMRT_ERR_ARG);
    CHECK(strstr(omrt_last_error(), want) != NULL);
    if (!strstr(omrt_last_error(), want)) test_note("%s: %s", op, omrt_last_error());
    ins[1] = good; /* the context is still good */
    CHECK(omrt_execute(ctx, ins, outs) == OMRT_OK);
  }
  omrt_context_free(ctx);
  omrt_model_free(model);
  free(om);
  mb_free(&m);
}

int main(void) {
  constant_indices();
  runtime_indices("Gather", 1, (int64_t[]){2}, (int64_t[]){2, -1}, (int64_t[]){2, 3}, 2,
                  "(GATHER) 'op': index 3 in the input data is out of range [-3, 3)");
  runtime_indices("Gather", 1, (int64_t[]){2}, (int64_t[]){2, -1}, (int64_t[]){-4, 0}, 2,
                  "(GATHER) 'op': index -4 in the input data is out of range [-3, 3)");
  runtime_indices("GatherND", 2, (int64_t[]){2, 2}, (int64_t[]){0, 1, 2, 3}, (int64_t[]){0, 1, 2, 4}, 4,
                  "(GATHER) 'op': index 4 in the input data is out of range [-4, 4)");
  runtime_indices("ScatterElements", 2, (int64_t[]){1, 4}, (int64_t[]){0, 1, 2, 0}, (int64_t[]){0, 1, 3, 0},
                  4, "(SCATTER) 'op': index 3 in the input data is out of range [-3, 3)");
  return test_summary("index_range");
}
