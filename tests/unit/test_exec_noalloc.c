/* test_exec_noalloc.c - omrt_execute allocates nothing: the heap calls
 * libomrt makes (malloc, calloc, realloc, aligned_alloc, posix_memalign,
 * wrapped at link time: tests/CMakeLists.txt) are counted, from every
 * thread, while a model runs. The model is MobileNetV3-Small (conv tasks
 * with epilogue programs, VPROG tasks, pools), compiled by atc from
 * models/out (scripts/test.sh exports it), at 2 worker threads, with its
 * vector programs interpreted and, when libomrt_jit is built, compiled by
 * the JIT. The first execute may warm nothing up either: it is counted too.
 *
 * With the caller's memory (omrt_load_options.weights,
 * omrt_context_options.workspace, what AscendCL's *WithMem loads give)
 * libomrt allocates neither: measured against the default, a load's heap
 * bytes are the same (the weights are never copied to the heap) and a
 * context's are smaller by exactly the workspace; the caller's workspace is
 * where the model runs (poisoned before, overwritten after) and its weight
 * memory is where the weights are read (same outputs as the default; zeroed
 * weights change them). */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "omrt.h"
#include "support.h"
#ifdef OMRT_HAVE_JIT
#include "omrt_jit.h"
#endif

static atomic_int counting;
static atomic_long calls, bytes;

void *__real_malloc(size_t n);
void *__real_calloc(size_t c, size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
static void count(size_t n) {
  if (atomic_load(&counting)) atomic_fetch_add(&calls, 1), atomic_fetch_add(&bytes, (long)n);
}
void *__wrap_malloc(size_t n) { return count(n), __real_malloc(n); }
void *__wrap_calloc(size_t c, size_t n) { return count(c * n), __real_calloc(c, n); }
void *__wrap_realloc(void *p, size_t n) { return count(n), __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t a, size_t n) { return count(n), __real_aligned_alloc(a, n); }
int __wrap_posix_memalign(void **p, size_t a, size_t n) { return count(n), __real_posix_memalign(p, a, n); }

static void measure_start(void) {
  atomic_store(&calls, 0);
  atomic_store(&bytes, 0);
  atomic_store(&counting, 1);
}
static long measure_bytes(void) {
  atomic_store(&counting, 0);
  return atomic_load(&bytes);
}

static void run(const char *om, const omrt_vprog_compiler *vc, const char *how) {
  omrt_model *m;
  omrt_load_options lo = {.threads = 2, .vprog_compiler = vc};
  omrt_status s = omrt_model_load_file(om, &lo, &m);
  CHECK_EQ_INT(s, OMRT_OK);
  if (s) {
    test_note("%s: %s", om, omrt_last_error());
    return;
  }
  omrt_context *ctx;
  atomic_store(&calls, 0);
  atomic_store(&counting, 1); /* the wrapping works: a context's set-up allocates */
  CHECK_EQ_INT(omrt_context_new(m, &ctx), OMRT_OK);
  atomic_store(&counting, 0);
  CHECK(atomic_load(&calls) > 0);
  omrt_tensor_desc in, out;
  omrt_model_input(m, 0, &in);
  omrt_model_output(m, 0, &out);
  void *x = calloc(1, in.bytes), *y = malloc(out.bytes);
  const void *ins[1] = {x};
  void *outs[1] = {y};
  atomic_store(&calls, 0);
  atomic_store(&counting, 1);
  for (int i = 0; i < 3; i++)
    CHECK_EQ_INT(omrt_execute(ctx, ins, outs), OMRT_OK);
  atomic_store(&counting, 0);
  printf("%s: 3 executes, %ld heap calls\n", how, atomic_load(&calls));
  CHECK_EQ_INT(atomic_load(&calls), 0);
  free(x), free(y);
  omrt_context_free(ctx);
  omrt_model_free(m);
}

/* Loads om (weights in `weights` if not NULL), creates a context (workspace
 * `ws` if not NULL) and runs it once on x into y; *load_bytes and *ctx_bytes
 * are the heap bytes the load and the context creation took. 0 on success. */
static int run_with(const char *om, void *weights, size_t weights_bytes, void *ws, size_t ws_bytes,
                    const void *x, void *y, long *load_bytes, long *ctx_bytes) {
  omrt_load_options lo = {.threads = 2, .weights = weights, .weights_bytes = weights_bytes};
  omrt_context_options co = {.workspace = ws, .workspace_bytes = ws_bytes};
  omrt_model *m = NULL;
  omrt_context *ctx = NULL;
  measure_start();
  omrt_status s = omrt_model_load_file(om, &lo, &m);
  *load_bytes = measure_bytes();
  measure_start();
  if (s == OMRT_OK) s = omrt_context_new_with(m, &co, &ctx);
  *ctx_bytes = measure_bytes();
  const void *ins[1] = {x};
  void *outs[1] = {y};
  if (s == OMRT_OK) s = omrt_execute(ctx, ins, outs);
  if (s != OMRT_OK) test_note("%s: %s", om, omrt_last_error());
  omrt_context_free(ctx);
  omrt_model_free(m);
  return s != OMRT_OK;
}

static void run_caller_memory(const char *om) {
  omrt_model *m;
  if (omrt_model_load_file(om, NULL, &m) != OMRT_OK) {
    CHECK(!"load");
    return;
  }
  size_t wsb = omrt_model_workspace_bytes(m), wtb = omrt_model_weights_bytes(m);
  omrt_tensor_desc in, out;
  omrt_model_input(m, 0, &in);
  omrt_model_output(m, 0, &out);
  omrt_model_free(m);
  CHECK(wsb > 0 && wtb > 0);
  float *x = malloc(in.bytes);
  for (size_t i = 0; i < in.bytes / sizeof *x; i++)
    x[i] = sinf((float)i * 0.01f);
  uint8_t *ws = aligned_alloc(64, (wsb + 63) / 64 * 64), *wt = aligned_alloc(64, (wtb + 63) / 64 * 64);
  uint8_t *y0 = malloc(out.bytes), *y1 = malloc(out.bytes), *y2 = malloc(out.bytes);
  memset(ws, 0xA5, wsb);
  long load0, ctx0, load1, ctx1;
  CHECK_EQ_INT(run_with(om, NULL, 0, NULL, 0, x, y0, &load0, &ctx0), 0);
  CHECK_EQ_INT(run_with(om, wt, wtb, ws, wsb, x, y1, &load1, &ctx1), 0);
  printf("caller memory: load %ld / %ld heap bytes, context %ld / %ld (workspace %zu, weights %zu)\n", load0,
         load1, ctx0, ctx1, wsb, wtb);
  CHECK_EQ_INT(load1, load0);
  CHECK_EQ_INT(ctx0 - ctx1, (long)((wsb + 63) / 64 * 64));
  size_t poisoned = 0;
  for (size_t i = 0; i < wsb; i++)
    poisoned += ws[i] == 0xA5;
  CHECK(poisoned < wsb / 2); /* the activations went to the caller's workspace */
  CHECK(memcmp(y0, y1, out.bytes) == 0);
  /* Zeroed weights in the caller's memory after the load: the model reads them. */
  omrt_load_options lo = {.threads = 2, .weights = wt, .weights_bytes = wtb};
  omrt_context_options co = {.workspace = ws, .workspace_bytes = wsb};
  omrt_context *ctx = NULL;
  CHECK_EQ_INT(omrt_model_load_file(om, &lo, &m), OMRT_OK);
  CHECK_EQ_INT(omrt_context_new_with(m, &co, &ctx), OMRT_OK);
  memset(wt, 0, wtb);
  const void *ins[1] = {x};
  void *outs[1] = {y2};
  CHECK_EQ_INT(omrt_execute(ctx, ins, outs), OMRT_OK);
  CHECK(memcmp(y0, y2, out.bytes) != 0);
  omrt_context_free(ctx);
  /* Misuse: too small or misaligned memory is refused, naming the option. */
  co.workspace_bytes = wsb - 1;
  CHECK_EQ_INT(omrt_context_new_with(m, &co, &ctx), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "workspace_bytes") != NULL);
  co = (omrt_context_options){.workspace = ws + 8, .workspace_bytes = wsb};
  CHECK_EQ_INT(omrt_context_new_with(m, &co, &ctx), OMRT_ERR_ARG);
  omrt_model_free(m);
  lo.weights_bytes = wtb - 1;
  CHECK_EQ_INT(omrt_model_load_file(om, &lo, &m), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "weights_bytes") != NULL);
  free(x), free(ws), free(wt), free(y0), free(y1), free(y2);
}

int main(void) {
  const char *dir = test_tmpdir("exec_noalloc");
  char cmd[4096], om[1024];
  snprintf(om, sizeof om, "%s/mv3.om", dir);
  snprintf(cmd, sizeof cmd,
           "%s --model=%s/models/out/mobilenet_v3_small.onnx --framework=5 --output=%s/mv3 "
           "--soc_version=Ascend310 --input_shape=input:1,3,224,224",
           ATC_BIN, ATC_SOURCE_DIR, dir);
  char *log = NULL;
  int rc = test_run(cmd, &log);
  CHECK_EQ_INT(rc, 0);
  if (rc) {
    test_note("atc failed (models/out/mobilenet_v3_small.onnx comes from scripts/test.sh's export):\n%s",
              log ? log : "");
    free(log);
    return test_summary("exec_noalloc");
  }
  free(log);
  run(om, NULL, "interpreted");
  run_caller_memory(om);
#ifdef OMRT_HAVE_JIT
  omrt_jit *jit;
  CHECK_EQ_INT(omrt_jit_new(&jit), OMRT_OK);
  run(om, omrt_jit_compiler(jit), "JIT-compiled");
  omrt_jit_free(jit);
#endif
  return test_summary("exec_noalloc");
}
