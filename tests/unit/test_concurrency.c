/* test_concurrency.c - one loaded model, many threads (issue 5 item 5).
 *
 * DESIGN.md promises that a loaded model is immutable and shareable across
 * threads, each execution context being used by one thread at a time. This
 * test compiles a small real network in process (Conv -> Relu -> Conv ->
 * residual Add -> Relu -> MaxPool -> GlobalAveragePool -> Flatten -> Gemm ->
 * Softmax, built with onnx_mb.h), loads it once, computes one reference
 * output per input pattern on a context of its own, then starts 8 threads.
 * Each thread makes its own context (2 worker threads each, so the
 * per-context worker pool runs concurrently too) and executes the model
 * RUNS times on its own input pattern (thread t uses pattern t, so a context
 * that saw another's workspace or input would be caught), checking that
 * every output is bit-identical to the reference.
 *
 * RUNS is 100 by default (a few seconds); OMRT_CONCURRENCY_RUNS=1000 is the
 * long mode of the issue. Under ThreadSanitizer (tests/fuzz/README.md: build
 * dir build-tsan with -fsanitize=thread) any data race between the threads
 * or inside the runtime's worker pool is reported and fails the run.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/compile.h"
#include "omrt.h"
#include "onnx_mb.h"

enum { THREADS = 8, C1 = 16, CLASSES = 10, HW = 16 };

static float wc1[C1 * 3 * 9], bc1[C1], wc2[C1 * C1 * 9], bc2[C1], wg[CLASSES * C1], bg[CLASSES];

static void build_net(mb *m) {
  uint64_t s = 12345;
  float *arrays[] = {wc1, bc1, wc2, bc2, wg, bg};
  size_t sizes[] = {C1 * 27, C1, C1 * C1 * 9, C1, CLASSES * C1, CLASSES};
  for (int a = 0; a < 6; a++)
    for (size_t i = 0; i < sizes[a]; i++) {
      s = s * 6364136223846793005u + 1442695040888963407u;
      arrays[a][i] = (float)((int)(s >> 40) % 2000 - 1000) / 4000.0f;
    }
  mb_init(m, 13);
  mb_input(m, "x", 1, 4, (int64_t[]){1, 3, HW, HW}, NULL);
  mb_init_raw(m, "wc1", 1, 4, (int64_t[]){C1, 3, 3, 3}, wc1, sizeof wc1);
  mb_init_raw(m, "bc1", 1, 1, (int64_t[]){C1}, bc1, sizeof bc1);
  mb_init_raw(m, "wc2", 1, 4, (int64_t[]){C1, C1, 3, 3}, wc2, sizeof wc2);
  mb_init_raw(m, "bc2", 1, 1, (int64_t[]){C1}, bc2, sizeof bc2);
  mb_init_raw(m, "wg", 1, 2, (int64_t[]){CLASSES, C1}, wg, sizeof wg);
  mb_init_raw(m, "bg", 1, 1, (int64_t[]){CLASSES}, bg, sizeof bg);
  Onnx__NodeProto *n = mb_node(m, "Conv", "conv1", "x,wc1,bc1", "c1");
  attr_ints(m, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  mb_node(m, "Relu", "relu1", "c1", "r1");
  n = mb_node(m, "Conv", "conv2", "r1,wc2,bc2", "c2");
  attr_ints(m, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
  mb_node(m, "Add", "add", "c2,r1", "s");
  mb_node(m, "Relu", "relu2", "s", "r2");
  n = mb_node(m, "MaxPool", "pool", "r2", "p");
  attr_ints(m, n, "kernel_shape", 2, (int64_t[]){2, 2});
  attr_ints(m, n, "strides", 2, (int64_t[]){2, 2});
  mb_node(m, "GlobalAveragePool", "gap", "p", "g");
  mb_node(m, "Flatten", "flat", "g", "f");
  n = mb_node(m, "Gemm", "fc", "f,wg,bg", "logits");
  attr_int(m, n, "transB", 1);
  mb_node(m, "Softmax", "softmax", "logits", "y");
  mb_output(m, "y");
}

typedef struct job {
  const omrt_model *model;
  const float *input;
  const unsigned char *want;
  size_t in_bytes, out_bytes;
  int runs, mismatches, failures;
  char error[256];
} job;

static void fill_input(float *x, size_t n, int pattern) {
  for (size_t i = 0; i < n; i++)
    x[i] = (float)((int)((i * 7 + (size_t)pattern * 131) % 97) - 48) / 24.0f;
}

static void *worker(void *arg) {
  job *j = arg;
  omrt_context *ctx = NULL;
  if (omrt_context_new(j->model, &ctx) != OMRT_OK) {
    snprintf(j->error, sizeof j->error, "omrt_context_new: %s", omrt_last_error());
    j->failures++;
    return NULL;
  }
  unsigned char *out = malloc(j->out_bytes);
  for (int r = 0; r < j->runs && out; r++) {
    memset(out, 0xa5, j->out_bytes);
    const void *in[1] = {j->input};
    void *outs[1] = {out};
    if (omrt_execute(ctx, in, outs) != OMRT_OK) {
      snprintf(j->error, sizeof j->error, "omrt_execute: %s", omrt_last_error());
      j->failures++;
      break;
    }
    if (memcmp(out, j->want, j->out_bytes) != 0) j->mismatches++;
  }
  free(out);
  omrt_context_free(ctx);
  return NULL;
}

int main(void) {
  const char *env = getenv("OMRT_CONCURRENCY_RUNS");
  int runs = env && atoi(env) > 0 ? atoi(env) : 100;

  mb m;
  build_net(&m);
  size_t onnx_len = 0;
  uint8_t *onnx = mb_pack(&m, &onnx_len);
  atc_options opt = {.model_path = "concurrency.onnx",
                     .model_data = onnx,
                     .model_size = onnx_len,
                     .soc_version = "Ascend310",
                     .precision = OM_PRECISION_FORCE_FP16};
  atc_result res;
  diag d;
  diag_init(&d);
  status st = atc_compile(&opt, &res, &d);
  CHECK(st == ST_OK);
  if (st != ST_OK) {
    test_note("compile: %s", d.msg);
    return test_summary("concurrency");
  }
  size_t om_bytes = (size_t)res.om_bytes;
  void *om = aligned_alloc(64, (om_bytes + 63) / 64 * 64);
  memcpy(om, res.om_data, om_bytes);
  free(res.om_data);
  mb_free(&m);

  omrt_load_options lo = {.threads = 2};
  omrt_model *model = NULL;
  CHECK(omrt_model_load_memory(om, om_bytes, &lo, &model) == OMRT_OK);
  if (!model) {
    test_note("load: %s", omrt_last_error());
    return test_summary("concurrency");
  }
  omrt_tensor_desc din, dout;
  omrt_model_input(model, 0, &din);
  omrt_model_output(model, 0, &dout);
  CHECK_EQ_INT(din.bytes, 3 * HW * HW * sizeof(float));
  CHECK_EQ_INT(dout.bytes, CLASSES * sizeof(float));

  /* Reference outputs, one per pattern, on a context of their own. */
  float *inputs[THREADS];
  unsigned char *want[THREADS];
  omrt_context *ref = NULL;
  CHECK(omrt_context_new(model, &ref) == OMRT_OK);
  for (int t = 0; t < THREADS; t++) {
    inputs[t] = malloc(din.bytes);
    want[t] = malloc(dout.bytes);
    fill_input(inputs[t], din.bytes / sizeof(float), t);
    const void *in[1] = {inputs[t]};
    void *out[1] = {want[t]};
    CHECK(ref && omrt_execute(ref, in, out) == OMRT_OK);
  }
  omrt_context_free(ref);
  CHECK(memcmp(want[0], want[1], dout.bytes) != 0); /* the patterns give different outputs */
  float sum = 0;
  for (int k = 0; k < CLASSES; k++)
    sum += ((float *)want[0])[k];
  CHECK(sum > 0.99f && sum < 1.01f); /* softmax: the network ran */

  job jobs[THREADS];
  pthread_t tid[THREADS];
  for (int t = 0; t < THREADS; t++) {
    jobs[t] = (job){.model = model,
                    .input = inputs[t],
                    .want = want[t],
                    .in_bytes = din.bytes,
                    .out_bytes = dout.bytes,
                    .runs = runs};
    CHECK(pthread_create(&tid[t], NULL, worker, &jobs[t]) == 0);
  }
  int mismatches = 0, failures = 0;
  for (int t = 0; t < THREADS; t++) {
    pthread_join(tid[t], NULL);
    mismatches += jobs[t].mismatches;
    failures += jobs[t].failures;
    if (jobs[t].error[0]) test_note("thread %d: %s", t, jobs[t].error);
  }
  CHECK_EQ_INT(failures, 0);
  CHECK_EQ_INT(mismatches, 0);
  printf("concurrency: %d threads x %d runs (2 workers per context): %d mismatches, %d failures\n", THREADS,
         runs, mismatches, failures);

  for (int t = 0; t < THREADS; t++)
    free(inputs[t]), free(want[t]);
  omrt_model_free(model);
  free(om);
  free(onnx);
  return test_summary("concurrency");
}
