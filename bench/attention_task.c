/* attention_task - times one ATTENTION task on one core, the way the
 * executor runs it (every block in order on one rt_core), for tuning
 * runtime/kernels_attention.c without a model around it.
 *
 *   attention_task S H D TILE_Q TILE_KV [REPS]
 *
 * A ViT's / BERT's self-attention as atc emits it: H heads of S queries
 * and keys of D, fp16, q, k and v views of one [S, 3 * H * D] in-projection
 * output (head h's q at column h * D, k at H * D + h * D, v at 2 * H * D +
 * h * D), y a view of [S, H * D]; no mask. Prints the fastest run (on a
 * shared machine the figure to compare) and the quartiles, in ms and in
 * GFLOP/s of the two products (4 * H * S * S * D flops).
 *
 * Build (from the source tree, after the CMake build in build/):
 *   cc -O2 -I. -Iinclude bench/attention_task.c build/libomrt_internal.a -lm -lpthread -ldl -o attention_task
 */
#include "bench/task_bench.h"

static const char STRINGS[] = "\0attention\0t";

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: attention_task S H D TILE_Q TILE_KV [REPS]\n");
    return 2;
  }
  const int64_t S = atoll(argv[1]), H = atoll(argv[2]), D = atoll(argv[3]);
  const int64_t tq = atoll(argv[4]), tkv = atoll(argv[5]);
  const int reps = argc > 6 ? atoi(argv[6]) : 200;
  if (S < 1 || H < 1 || D < 1 || reps < 1) {
    fprintf(stderr, "attention_task: S, H, D and REPS must be >= 1\n");
    return 2;
  }
  om_model_def def = bench_def();
  const int64_t row = 3 * H * D; /* the in-projection output's row */
  const uint64_t in_bytes = (uint64_t)(S * row) * 2, y_bytes = (uint64_t)(S * H * D) * 2;
  def.workspace_bytes = in_bytes + y_bytes;
  om_tensor t[OM_ATTENTION_NTENSORS];
  memset(t, 0, sizeof t);
  for (int s = 0; s < 3; s++)
    t[s] = (om_tensor){.name = 11,
                       .dtype = DT_FLOAT16,
                       .region = OM_REGION_WORKSPACE,
                       .rank = 3,
                       .dims = {H, S, D},
                       .offset = (uint64_t)(s * H * D) * 2,
                       .bytes = (uint64_t)(H * S * D) * 2};
  t[OM_ATTENTION_T_Y] = (om_tensor){.name = 11,
                                    .dtype = DT_FLOAT16,
                                    .region = OM_REGION_WORKSPACE,
                                    .rank = 3,
                                    .dims = {H, S, D},
                                    .offset = in_bytes,
                                    .bytes = y_bytes};
  om_task task = {.kind = OM_TASK_ATTENTION, .name = 1, .ntensors = OM_ATTENTION_NTENSORS};
  for (int s = 0; s < OM_ATTENTION_NTENSORS; s++)
    task.tensors[s] = s == OM_ATTENTION_T_BIAS0 || s == OM_ATTENTION_T_BIAS1 ? OM_NONE : (uint32_t)s;
  const float scale = 0.125f;
  memcpy(&task.params[OM_ATTENTION_P_SCALE], &scale, 4);
  task.params[OM_ATTENTION_P_TILE_Q] = (int32_t)tq, task.params[OM_ATTENTION_P_TILE_KV] = (int32_t)tkv;
  task.params[OM_ATTENTION_P_VIEWS] = 15;
  for (int v = 0; v < 4; v++) {
    int32_t *p = task.params + OM_ATTENTION_P_VIEW + 4 * v;
    p[0] = (int32_t)D, p[1] = (int32_t)(v < 3 ? row : H * D);
    p[3] = (int32_t)(v < 3 ? S * row - (int64_t)v * H * D : S * H * D);
  }
  task.block_dim = (uint32_t)(H * ((S + tq - 1) / tq));
  bench_check("attention_task", &def, t, &task, STRINGS, sizeof STRINGS);

  uint8_t *ws = alloc64("attention_task", def.workspace_bytes);
  uint16_t *in = (uint16_t *)ws;
  for (int64_t i = 0; i < S * row; i++)
    in[i] = (uint16_t)(0x3800 ^ (i % 13)); /* values near 1/2 */
  rt_core core = bench_core("attention_task", &def);
  rt_args args;
  memset(&args, 0, sizeof args);
  for (int s = 0; s < OM_ATTENTION_NTENSORS; s++)
    if (task.tensors[s] != OM_NONE) {
      args.desc[s] = &t[s];
      args.data[s] = ws + t[s].offset;
    }

  double *secs = malloc(sizeof *secs * (size_t)reps);
  for (int r = 0; r < reps; r++) {
    core.run = (uint64_t)r + 1;
    const double t0 = now_s();
    for (uint32_t blk = 0; blk < task.block_dim; blk++)
      rt_kernels[OM_TASK_ATTENTION].run(&task, &args, blk, &core);
    secs[r] = now_s() - t0;
  }
  qsort(secs, (size_t)reps, sizeof *secs, by_value);
  const double gflop = 4e-9 * (double)H * (double)S * (double)S * (double)D;
  printf(
      "attention_task: %lld heads of %lld x %lld x %lld, tiles %lldx%lld (%u): fastest %.3f ms %.1f GFLOP/s, "
      "quartiles %.3f %.3f %.3f ms\n",
      (long long)H, (long long)S, (long long)S, (long long)D, (long long)tq, (long long)tkv, task.block_dim,
      secs[0] * 1e3, gflop / secs[0], secs[reps / 4] * 1e3, secs[reps / 2] * 1e3, secs[reps * 3 / 4] * 1e3);
  return 0;
}
