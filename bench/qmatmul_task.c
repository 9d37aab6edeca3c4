/* qmatmul_task - times one QMATMUL task with a run-time w (format 2.14: the
 * int8 product of two activations, a QDQ model's attention MatMuls) on one
 * core, the way the executor runs it (every block in order on one rt_core,
 * a new task run number each time, so w is packed again every run as in a
 * model), for tuning runtime/kernels_qmatmul.c without a model around it.
 *
 *   qmatmul_task B M K N TILE_M TILE_N [kt|nt [REPS [COPIES]]]
 *
 * y[B,M,N] (u8, requantized) = x[B,M,K] (u8) x w (u8, zero points 128 and
 * 131), w stored [B,K,N] (nt: N contiguous, as attention's P x V reads V;
 * the default) or [B,N,K] read through a permutation (kt: K contiguous, as
 * Q x K^T reads K). BERT-base's heads: B 12, M 128, K 64, N 128 kt and
 * K 128, N 64 nt, tiles 96 x 8 and 96 x 4 (atc --mode=1 shows them).
 * COPIES distinct w buffers are cycled through (default 1). Prints the
 * fastest run and the quartiles in multiply-adds per second: on a machine
 * shared with other work, the fastest of many runs is the figure to compare.
 *
 * Build (from the source tree, after the CMake build in build/):
 *   cc -O2 -I. -Iinclude bench/qmatmul_task.c build/libomrt_internal.a -lm -lpthread -ldl -o qmatmul_task
 */
#include "bench/task_bench.h"
#include "common/matmul_geom.h"

static const char STRINGS[] = "\0qmatmul\0t";

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: qmatmul_task B M K N TILE_M TILE_N [kt|nt [REPS [COPIES]]]\n");
    return 2;
  }
  const int64_t B = atoll(argv[1]), M = atoll(argv[2]), K = atoll(argv[3]), N = atoll(argv[4]);
  const int32_t tm = atoi(argv[5]), tn = atoi(argv[6]);
  const int kt = argc > 7 && !strcmp(argv[7], "kt");
  const int reps = argc > 8 ? atoi(argv[8]) : 50, copies = argc > 9 ? atoi(argv[9]) : 1;
  if (B < 1 || M < 1 || K < 1 || N < 1 || tm < 1 || tn < 1 || reps < 1 || copies < 1 ||
      (argc > 7 && !kt && strcmp(argv[7], "nt"))) {
    fprintf(stderr, "qmatmul_task: B, M, K, N, tiles, REPS and COPIES >= 1; the layout kt or nt\n");
    return 2;
  }
  om_model_def def = bench_def();
  om_tensor t[OM_QMATMUL_NTENSORS];
  memset(t, 0, sizeof t);
  t[OM_QMATMUL_T_X] = (om_tensor){.name = 9, .dtype = DT_UINT8, .rank = 3, .dims = {B, M, K}};
  t[OM_QMATMUL_T_W] =
      (om_tensor){.name = 9, .dtype = DT_UINT8, .rank = 3, .dims = {B, kt ? N : K, kt ? K : N}};
  t[OM_QMATMUL_T_X_ZP] = (om_tensor){.name = 9, .dtype = DT_UINT8, .rank = 1, .dims = {1}};
  t[OM_QMATMUL_T_SCALE] = (om_tensor){.name = 9, .dtype = DT_FLOAT32, .rank = 1, .dims = {1}};
  t[OM_QMATMUL_T_Y] = (om_tensor){.name = 9, .dtype = DT_UINT8, .rank = 3, .dims = {B, M, N}};
  t[OM_QMATMUL_T_X].bytes = (uint64_t)(B * M * K), t[OM_QMATMUL_T_W].bytes = (uint64_t)(B * K * N);
  t[OM_QMATMUL_T_X_ZP].bytes = 1, t[OM_QMATMUL_T_SCALE].bytes = 4;
  t[OM_QMATMUL_T_Y].bytes = (uint64_t)(B * M * N);
  om_task task = {.kind = OM_TASK_QMATMUL, .name = 1, .ntensors = OM_QMATMUL_NTENSORS};
  for (int s = 0; s < OM_QMATMUL_NTENSORS; s++)
    task.tensors[s] = OM_NONE;
  const int slots[] = {OM_QMATMUL_T_X, OM_QMATMUL_T_W, OM_QMATMUL_T_X_ZP, OM_QMATMUL_T_SCALE, OM_QMATMUL_T_Y};
  for (size_t s = 0; s < sizeof slots / sizeof *slots; s++)
    task.tensors[slots[s]] = (uint32_t)slots[s];
  int32_t *p = task.params;
  p[OM_QMATMUL_P_TILE_M] = tm, p[OM_QMATMUL_P_TILE_N] = tn, p[OM_QMATMUL_P_W_ZP] = 131;
  p[OM_QMATMUL_P_Y_ZP] = 120, p[OM_QMATMUL_P_LO] = 0, p[OM_QMATMUL_P_HI] = 255;
  const int perm[3] = {0, 2, 1};
  if (kt) p[OM_QMATMUL_P_PERM_B] = mm_perm_encode(3, perm);
  const int64_t c1 = (N + 15) / 16;
  task.block_dim = (uint32_t)(B * ((c1 + tn - 1) / tn) * ((M + tm - 1) / tm));
  bench_check("qmatmul_task", &def, t, &task, STRINGS, sizeof STRINGS);

  uint8_t *x = alloc64("qmatmul_task", (size_t)(B * M * K)),
          *y = alloc64("qmatmul_task", (size_t)(B * M * N));
  for (int64_t i = 0; i < B * M * K; i++)
    x[i] = (uint8_t)(i * 37 % 251);
  void **w = malloc(sizeof *w * (size_t)copies);
  for (int c = 0; c < copies; c++) {
    uint8_t *wc = w[c] = alloc64("qmatmul_task", (size_t)(B * K * N));
    for (int64_t i = 0; i < B * K * N; i++)
      wc[i] = (uint8_t)((i + c) * 53 % 241);
  }
  uint8_t zp = 128;
  float scale = 1.0f / 4096;
  rt_core core = bench_core("qmatmul_task", &def);
  rt_args args;
  memset(&args, 0, sizeof args);
  for (int s = 0; s < OM_QMATMUL_NTENSORS; s++)
    if (task.tensors[s] != OM_NONE) args.desc[s] = &t[s];
  args.data[OM_QMATMUL_T_X] = x, args.data[OM_QMATMUL_T_Y] = y;
  args.data[OM_QMATMUL_T_X_ZP] = &zp, args.data[OM_QMATMUL_T_SCALE] = &scale;

  double *secs = bench_runs(OM_TASK_QMATMUL, &task, &args, OM_QMATMUL_T_W, w, copies, &core, reps);
  const double gmac = 1e-9 * (double)B * (double)M * (double)N * (double)K;
  printf(
      "qmatmul_task: %lld x [%lldx%lld] x [%lldx%lld] (w %s), tiles %dx%d (%u): fastest %.3f ms %.1f GMAC/s, "
      "quartiles %.1f %.1f %.1f GMAC/s (%s)\n",
      (long long)B, (long long)M, (long long)K, (long long)K, (long long)N,
      kt ? "K contiguous" : "N contiguous", tm, tn, task.block_dim, secs[0] * 1e3, gmac / secs[0],
      gmac / secs[reps / 4], gmac / secs[reps / 2], gmac / secs[reps * 3 / 4], rt_cpu()->name);
  return 0;
}
