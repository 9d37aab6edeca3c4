/* classify.c - the smallest useful libomrt application: load an image
 * classifier's om, run it on one raw float32 input file, print the top-5.
 *
 *   cc classify.c $(pkg-config --cflags --libs omrt) -o classify
 *   ./classify resnet50.om input.bin
 */
#include <omrt.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what) {
  fprintf(stderr, "classify: %s: %s\n", what, omrt_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: classify MODEL.om INPUT.bin\n");
    return 2;
  }
  omrt_model *model;
  if (omrt_model_load_file(argv[1], NULL, &model) != OMRT_OK) return fail(argv[1]);
  omrt_tensor_desc in, out;
  if (omrt_model_num_inputs(model) != 1 || omrt_model_num_outputs(model) < 1 ||
      omrt_model_input(model, 0, &in) != OMRT_OK || omrt_model_output(model, 0, &out) != OMRT_OK ||
      out.dtype != OMRT_FLOAT32) {
    fprintf(stderr, "classify: %s: expected one input and a float32 output\n", argv[1]);
    return 1;
  }
  float *x = malloc(in.bytes), *y = malloc(out.bytes);
  FILE *f = fopen(argv[2], "rb");
  size_t got = f && x ? fread(x, 1, in.bytes, f) : 0;
  if (f) fclose(f);
  if (!y || got != in.bytes) {
    fprintf(stderr, "classify: %s: need %zu bytes of input '%s'\n", argv[2], in.bytes, in.name);
    return 1;
  }
  omrt_context *ctx;
  if (omrt_context_new(model, &ctx) != OMRT_OK) return fail("context");
  const void *inputs[1] = {x};
  void *outputs[1] = {y};
  if (omrt_execute(ctx, inputs, outputs) != OMRT_OK) return fail("execute");
  size_t n = out.bytes / sizeof(float);
  for (int k = 0; k < 5 && k < (int)n; k++) { /* selection of the k-th largest */
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
      if (y[i] > y[best]) best = i;
    printf("top-%d: class %zu score %.4f\n", k + 1, best, y[best]);
    y[best] = -1e30f;
  }
  omrt_context_free(ctx);
  omrt_model_free(model);
  free(x);
  free(y);
  return 0;
}
