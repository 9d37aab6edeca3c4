/* test_exec_noalloc.c - omrt_execute allocates nothing: the heap calls
 * libomrt makes (malloc, calloc, realloc, aligned_alloc, posix_memalign,
 * wrapped at link time: tests/CMakeLists.txt) are counted, from every
 * thread, while a model runs. The model is MobileNetV3-Small (conv tasks
 * with epilogue programs, VPROG tasks, pools), compiled by atc from
 * models/out (scripts/test.sh exports it), at 2 worker threads, with its
 * vector programs interpreted and, when libomrt_jit is built, compiled by
 * the JIT. The first execute may warm nothing up either: it is counted too. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "omrt.h"
#include "support.h"
#ifdef OMRT_HAVE_JIT
#include "omrt_jit.h"
#endif

static atomic_int counting;
static atomic_long calls;

void *__real_malloc(size_t n);
void *__real_calloc(size_t c, size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
static void count(void) {
  if (atomic_load(&counting)) atomic_fetch_add(&calls, 1);
}
void *__wrap_malloc(size_t n) { return count(), __real_malloc(n); }
void *__wrap_calloc(size_t c, size_t n) { return count(), __real_calloc(c, n); }
void *__wrap_realloc(void *p, size_t n) { return count(), __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t a, size_t n) { return count(), __real_aligned_alloc(a, n); }
int __wrap_posix_memalign(void **p, size_t a, size_t n) { return count(), __real_posix_memalign(p, a, n); }

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
#ifdef OMRT_HAVE_JIT
  omrt_jit *jit;
  CHECK_EQ_INT(omrt_jit_new(&jit), OMRT_OK);
  run(om, omrt_jit_compiler(jit), "JIT-compiled");
  omrt_jit_free(jit);
#endif
  return test_summary("exec_noalloc");
}
