/* conv_task - times one CONV2D task on one core, the way the executor runs
 * it (every block in order on one rt_core, a new task run number each time),
 * for tuning the cube kernels (runtime/kernels_cube*.c) on one layer's
 * shape without a model around it.
 *
 *   conv_task H W CIN COUT K STRIDE GROUPS TILE_M TILE_N TILE_K [REPS [COPIES [f16|f32]]]
 *
 * y = conv(x, w) + bias on one image: x [1, CIN, H, W] NC1HWC0, w a K x K
 * kernel (pads K / 2, the torchvision layers' "same" padding) in FRACTAL_Z
 * (FRACTAL_Z_G when GROUPS > 1), y, all fp16 (force_fp16) or all f32 (the
 * last argument f32: must_keep_origin_dtype), bias f32, with the
 * tiles atc chose (atc --mode=1 shows them as each task's tile_m, tile_n,
 * tile_k), on the Ascend310's buffers. COPIES distinct weight buffers are
 * cycled through (default 1; with enough of them the weights come from
 * memory every run, as a model's large layers' do). Prints the fastest run
 * and the quartiles in multiply-adds per second: on a machine shared with
 * other work, the fastest of many runs is the figure to compare.
 *
 * Build (from the source tree, after the CMake build in build/):
 *   cc -O2 -I. -Iinclude bench/conv_task.c build/libomrt_internal.a -lm -lpthread -ldl -o conv_task
 */
#include "bench/task_bench.h"
#include "common/conv_group.h"

static const char STRINGS[] = "\0conv\0t";

/* bytes of f16 values base ^ (i % period), or f32 ones equal to them */
static void fill(void *p, int f32, uint64_t bytes, uint16_t base, int period) {
  for (uint64_t i = 0; i < bytes / (f32 ? 4 : 2); i++) {
    const uint16_t h = (uint16_t)(base ^ (i % (uint64_t)period));
    if (f32)
      ((float *)p)[i] = (float)(1 + (h & 0x3ff) / 1024.0) * (base == 0x3c00 ? 1.0f : 0.125f);
    else
      ((uint16_t *)p)[i] = h;
  }
}

int main(int argc, char **argv) {
  if (argc < 11) {
    fprintf(stderr,
            "usage: conv_task H W CIN COUT K STRIDE GROUPS TILE_M TILE_N TILE_K [REPS [COPIES [f16|f32]]]\n");
    return 2;
  }
  const int64_t H = atoll(argv[1]), W = atoll(argv[2]), ci = atoll(argv[3]), co = atoll(argv[4]);
  const int64_t k = atoll(argv[5]), s = atoll(argv[6]), G = atoll(argv[7]);
  const int64_t tm = atoll(argv[8]), tn = atoll(argv[9]), tk = atoll(argv[10]);
  const int reps = argc > 11 ? atoi(argv[11]) : 200, copies = argc > 12 ? atoi(argv[12]) : 1;
  const int f32 = argc > 13 && strcmp(argv[13], "f32") == 0;
  const uint32_t dt = f32 ? DT_FLOAT32 : DT_FLOAT16;
  if (H < 1 || W < 1 || ci < 1 || co < 1 || k < 1 || k % 2 == 0 || s < 1 || G < 1 || ci % G || co % G ||
      reps < 1 || copies < 1 || (argc > 13 && !f32 && strcmp(argv[13], "f16") != 0)) {
    fprintf(stderr, "conv_task: sizes >= 1, K odd, GROUPS dividing CIN and COUT, REPS and COPIES >= 1, "
                    "f16 or f32\n");
    return 2;
  }
  const int64_t pad = k / 2, Ho = (H + 2 * pad - k) / s + 1, Wo = (W + 2 * pad - k) / s + 1;
  om_model_def def = bench_def();
  om_tensor t[OM_CONV_NTENSORS];
  memset(t, 0, sizeof t);
  t[OM_CONV_T_X] = (om_tensor){.dtype = dt, .layout = LAYOUT_NC1HWC0, .rank = 4, .dims = {1, ci, H, W}};
  t[OM_CONV_T_Y] = (om_tensor){.dtype = dt, .layout = LAYOUT_NC1HWC0, .rank = 4, .dims = {1, co, Ho, Wo}};
  t[OM_CONV_T_BIAS] = (om_tensor){.dtype = DT_FLOAT32, .layout = LAYOUT_ND, .rank = 1, .dims = {co}};
  if (G > 1)
    t[OM_CONV_T_W] =
        (om_tensor){.dtype = dt, .layout = LAYOUT_FRACTAL_Z_G, .rank = 5, .dims = {G, co / G, ci / G, k, k}};
  else
    t[OM_CONV_T_W] = (om_tensor){.dtype = dt, .layout = LAYOUT_FRACTAL_Z, .rank = 4, .dims = {co, ci, k, k}};
  om_task task = {.kind = OM_TASK_CONV2D, .name = 6, .ntensors = OM_CONV_NTENSORS};
  for (int i = 0; i < OM_CONV_NTENSORS; i++) {
    uint64_t n = 0;
    if (i != OM_CONV_T_RESIDUAL && layout_elements((int)t[i].layout, (int)t[i].rank, t[i].dims, &n)) {
      fprintf(stderr, "conv_task: tensor %d's layout does not take its dims\n", i);
      return 2;
    }
    t[i].name = 1, t[i].bytes = n * dtype_size((int)t[i].dtype);
    task.tensors[i] = i == OM_CONV_T_RESIDUAL ? OM_NONE : (uint32_t)i;
  }
  int32_t *q = task.params;
  q[OM_CONV_P_KH] = q[OM_CONV_P_KW] = (int32_t)k, q[OM_CONV_P_STRIDE_H] = q[OM_CONV_P_STRIDE_W] = (int32_t)s;
  q[OM_CONV_P_PAD_TOP] = q[OM_CONV_P_PAD_LEFT] = q[OM_CONV_P_PAD_BOTTOM] = q[OM_CONV_P_PAD_RIGHT] =
      (int32_t)pad;
  q[OM_CONV_P_DILATION_H] = q[OM_CONV_P_DILATION_W] = 1;
  q[OM_CONV_P_TILE_M] = (int32_t)tm, q[OM_CONV_P_TILE_N] = (int32_t)tn, q[OM_CONV_P_TILE_K] = (int32_t)tk;
  q[OM_CONV_P_GROUPS] = G > 1 ? (int32_t)G : 0;
  int64_t c1out = (co + 15) / 16;
  convg_geom geo; /* grouped: the output blocks of FRACTAL_Z_G */
  if (G > 1 && !convg_init(t[OM_CONV_T_W].dims, &geo)) c1out = geo.c1out;
  task.block_dim = (uint32_t)(((Ho * Wo + tm - 1) / tm) * ((c1out + tn - 1) / tn));
  bench_check("conv_task", &def, t, &task, STRINGS, sizeof STRINGS);

  void *x = alloc64("conv_task", t[OM_CONV_T_X].bytes), *y = alloc64("conv_task", t[OM_CONV_T_Y].bytes);
  fill(x, f32, t[OM_CONV_T_X].bytes, 0x3c00, 7); /* values near 1 */
  void **w = malloc(sizeof *w * (size_t)copies);
  for (int c = 0; c < copies; c++) {
    w[c] = alloc64("conv_task", t[OM_CONV_T_W].bytes);
    fill(w[c], f32, t[OM_CONV_T_W].bytes, 0x3000, 5); /* values near 1/8 */
  }
  float *bias = alloc64("conv_task", (size_t)co * 4);
  for (int64_t i = 0; i < co; i++)
    bias[i] = (float)(i % 9) * 0.125f - 0.5f;
  rt_core core = bench_core("conv_task", &def);
  core.nworkers = 1;
  rt_args args;
  memset(&args, 0, sizeof args);
  for (int i = 0; i < OM_CONV_NTENSORS; i++)
    if (task.tensors[i] != OM_NONE) args.desc[i] = &t[i];
  args.data[OM_CONV_T_X] = x, args.data[OM_CONV_T_Y] = y, args.data[OM_CONV_T_BIAS] = bias;

  double *secs = bench_runs(OM_TASK_CONV2D, &task, &args, OM_CONV_T_W, w, copies, &core, reps);
  const double gmac = 1e-9 * (double)(Ho * Wo) * (double)co * (double)(ci / G) * (double)(k * k);
  printf("conv_task: %lldx%lld %lld -> %lld, %lldx%lld stride %lld groups %lld, tiles %lldx%lldx%lld (%u): "
         "fastest %.4f ms %.1f GMAC/s, quartiles %.1f %.1f %.1f GMAC/s\n",
         (long long)H, (long long)W, (long long)ci, (long long)co, (long long)k, (long long)k, (long long)s,
         (long long)G, (long long)tm, (long long)tn, (long long)tk, task.block_dim, secs[0] * 1e3,
         gmac / secs[0], gmac / secs[reps / 4], gmac / secs[reps / 2], gmac / secs[reps * 3 / 4]);
  return 0;
}
