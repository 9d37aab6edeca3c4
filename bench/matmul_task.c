/* matmul_task - times one MATMUL task on one core, the way the executor runs
 * it (every block in order on one rt_core, a new task run number each time),
 * for tuning the kernel (runtime/kernels_matmul*.c) and the tiling rule
 * (passes/tiling.c) without a model around it.
 *
 *   matmul_task M N K TILE_M TILE_N TILE_K [REPS [COPIES [ACT]]]
 *
 * y[M,N] = act(a[M,K] x b[K,N] + bias[N]), a, b and y fp16, b FRACTAL_NZ
 * (constant weights, as atc writes them in force_fp16), bias f32, on the
 * Ascend310's buffers; ACT is an om_act number (default 0, none; 3 is GELU,
 * whose epilogue runs from L0C as ViT's and BERT's MLPs run it). COPIES distinct b
 * buffers are cycled through (default 1; with enough of them the weights
 * stream from memory every run, as a model's do). Prints the fastest run and
 * the quartiles: on a machine shared with other work, the fastest of many
 * runs is the figure to compare (the median mostly measures the others).
 *
 * Build (from the source tree, after the CMake build in build/):
 *   cc -O2 -I. -Iinclude bench/matmul_task.c build/libomrt_internal.a -lm -lpthread -ldl -o matmul_task
 */
#include "bench/task_bench.h"

static const char STRINGS[] = "\0matmul\0t";

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: matmul_task M N K TILE_M TILE_N TILE_K [REPS [COPIES [ACT]]]\n");
    return 2;
  }
  const int64_t M = atoll(argv[1]), N = atoll(argv[2]), K = atoll(argv[3]);
  const int64_t tm = atoll(argv[4]), tn = atoll(argv[5]), tk = atoll(argv[6]);
  const int reps = argc > 7 ? atoi(argv[7]) : 50, copies = argc > 8 ? atoi(argv[8]) : 1;
  const int act = argc > 9 ? atoi(argv[9]) : OM_ACT_NONE;
  if (M < 1 || N < 1 || K < 1 || reps < 1 || copies < 1 || act < 0 || act >= OM_ACT_COUNT ||
      act == OM_ACT_CLIP) {
    fprintf(stderr, "matmul_task: M, N, K, REPS and COPIES must be >= 1, ACT an om_act but clip\n");
    return 2;
  }
  const int64_t k16 = (K + 15) / 16 * 16, n16 = (N + 15) / 16 * 16;
  om_model_def def = bench_def();
  om_tensor t[OM_MATMUL_NTENSORS];
  memset(t, 0, sizeof t);
  t[OM_MATMUL_T_A] = (om_tensor){.name = 8, .dtype = DT_FLOAT16, .rank = 2, .dims = {M, K}};
  t[OM_MATMUL_T_B] = (om_tensor){.name = 8, .dtype = DT_FLOAT16, .rank = 2, .dims = {K, N}};
  t[OM_MATMUL_T_Y] = (om_tensor){.name = 8, .dtype = DT_FLOAT16, .rank = 2, .dims = {M, N}};
  t[OM_MATMUL_T_BIAS] = (om_tensor){.name = 8, .dtype = DT_FLOAT32, .rank = 1, .dims = {N}};
  t[OM_MATMUL_T_BIAS].bytes = (uint64_t)(N * 4);
  t[OM_MATMUL_T_A].bytes = (uint64_t)(M * K * 2);
  t[OM_MATMUL_T_B].bytes = (uint64_t)(k16 * n16 * 2), t[OM_MATMUL_T_B].layout = LAYOUT_FRACTAL_NZ;
  t[OM_MATMUL_T_Y].bytes = (uint64_t)(M * N * 2);
  om_task task = {.kind = OM_TASK_MATMUL, .name = 1, .ntensors = OM_MATMUL_NTENSORS};
  for (int s = 0; s < OM_MATMUL_NTENSORS; s++)
    task.tensors[s] = OM_NONE;
  task.tensors[OM_MATMUL_T_A] = OM_MATMUL_T_A, task.tensors[OM_MATMUL_T_B] = OM_MATMUL_T_B;
  task.tensors[OM_MATMUL_T_Y] = OM_MATMUL_T_Y, task.tensors[OM_MATMUL_T_BIAS] = OM_MATMUL_T_BIAS;
  task.params[OM_MATMUL_P_ACT] = act;
  task.params[OM_MATMUL_P_TILE_M] = (int32_t)tm, task.params[OM_MATMUL_P_TILE_N] = (int32_t)tn;
  task.params[OM_MATMUL_P_TILE_K] = (int32_t)tk;
  task.block_dim = (uint32_t)(((M + tm - 1) / tm) * ((N + tn - 1) / tn));
  bench_check("matmul_task", &def, t, &task, STRINGS, sizeof STRINGS);

  uint16_t *a = alloc64("matmul_task", (size_t)(M * K) * 2), *y = alloc64("matmul_task", (size_t)(M * N) * 2);
  for (int64_t i = 0; i < M * K; i++)
    a[i] = (uint16_t)(0x3c00 ^ (i % 7)); /* values near 1 */
  void **b = malloc(sizeof *b * (size_t)copies);
  for (int c = 0; c < copies; c++) {
    uint16_t *bc = b[c] = alloc64("matmul_task", (size_t)(k16 * n16) * 2);
    for (int64_t i = 0; i < k16 * n16; i++)
      bc[i] = (uint16_t)(0x3000 ^ (i % 5)); /* values near 1/8 */
  }
  float *bias = alloc64("matmul_task", (size_t)N * 4);
  for (int64_t i = 0; i < N; i++)
    bias[i] = (float)(i % 9) * 0.125f - 0.5f;
  rt_core core = bench_core("matmul_task", &def);
  rt_args args;
  memset(&args, 0, sizeof args);
  for (int s = 0; s < OM_MATMUL_NTENSORS; s++)
    if (task.tensors[s] != OM_NONE) args.desc[s] = &t[s];
  args.data[OM_MATMUL_T_A] = a, args.data[OM_MATMUL_T_Y] = y, args.data[OM_MATMUL_T_BIAS] = bias;

  double *secs = bench_runs(OM_TASK_MATMUL, &task, &args, OM_MATMUL_T_B, b, copies, &core, reps);
  const double gflop = 2e-9 * (double)M * (double)N * (double)K;
  printf("matmul_task: %lldx%lld x %lldx%lld, tiles %lldx%lldx%lld (%u): fastest %.3f ms %.1f GFLOP/s, "
         "quartiles %.1f %.1f %.1f GFLOP/s\n",
         (long long)M, (long long)K, (long long)K, (long long)N, (long long)tm, (long long)tn, (long long)tk,
         task.block_dim, secs[0] * 1e3, gflop / secs[0], gflop / secs[reps / 4], gflop / secs[reps / 2],
         gflop / secs[reps * 3 / 4]);
  return 0;
}
