/* test_matmul_check.c - MATMUL's load-time check (runtime/kernels_matmul.c):
 * a valid task passes, and every rule of the check is broken once (slots,
 * dtypes, layouts, dims that do not multiply or broadcast, acts and their
 * params, tiles past the core's buffers, the bias, folds and permutations,
 * FRACTAL_NZ b), each refused with OMRT_ERR_FORMAT and a message naming the
 * task and the field.
 */
#include <string.h>

#include "mcase.h"
#include "support.h"

static void valid(mcase *c) {
  mc_setup(c);
  mc_set(c, 0, DT_FLOAT32, 3, (int64_t[]){2, 5, 7});
  mc_set(c, 1, DT_FLOAT32, 2, (int64_t[]){7, 9});
  mc_set(c, 2, DT_FLOAT32, 1, (int64_t[]){9});
  mc_set(c, 3, DT_FLOAT32, 3, (int64_t[]){2, 5, 9});
  int32_t *q = c->task.params;
  q[OM_MATMUL_P_ALPHA] = bits(1.0f), q[OM_MATMUL_P_BETA] = bits(1.0f),
  q[OM_MATMUL_P_TILE_M] = q[OM_MATMUL_P_TILE_N] = q[OM_MATMUL_P_TILE_K] = 16;
}

static void expect_reject(mcase *c, const char *what, const char *want) {
  omrt_status s = mc_check(c);
  const char *msg = omrt_last_error();
  int ok = s == OMRT_ERR_FORMAT && msg && strstr(msg, "test_task") && strstr(msg, want);
  test_check(ok, __FILE__, __LINE__, what);
  if (!ok) test_note("  %s: status %d, message '%s'", what, s, msg ? msg : "(null)");
  mc_free(c);
}

static void check_cases(void) {
  mcase c;
  valid(&c);
  CHECK_EQ_INT(mc_check(&c), OMRT_OK);
  mc_free(&c);
  valid(&c), c.task.ntensors = 3, expect_reject(&c, "ntensors", "ntensors");
  valid(&c), c.task.tensors[OM_MATMUL_T_A] = OM_NONE, expect_reject(&c, "a missing", "a");
  valid(&c), c.t[OM_MATMUL_T_B].dtype = DT_FLOAT16, c.t[OM_MATMUL_T_B].bytes /= 2,
             expect_reject(&c, "a/b dtypes", "b dtype");
  valid(&c), c.t[OM_MATMUL_T_A].dtype = DT_INT32, expect_reject(&c, "int a", "dtype");
  valid(&c), c.t[OM_MATMUL_T_Y].layout = LAYOUT_NC1HWC0, expect_reject(&c, "y layout", "layout");
  valid(&c), c.t[OM_MATMUL_T_Y].bytes += 4, expect_reject(&c, "y bytes", "bytes");
  valid(&c), mc_set(&c, 1, DT_FLOAT32, 2, (int64_t[]){8, 9}), expect_reject(&c, "K mismatch", "K");
  valid(&c), mc_set(&c, 3, DT_FLOAT32, 3, (int64_t[]){2, 5, 8}), expect_reject(&c, "y N", "matrix dims");
  valid(&c), mc_set(&c, 3, DT_FLOAT32, 2, (int64_t[]){5, 9}), expect_reject(&c, "y rank", "y rank");
  valid(&c), mc_set(&c, 1, DT_FLOAT32, 3, (int64_t[]){3, 7, 9}), expect_reject(&c, "batch", "batch dim");
  valid(&c), mc_set(&c, 3, DT_FLOAT32, 3, (int64_t[]){1, 5, 9}), expect_reject(&c, "y batch", "batch dim");
  valid(&c), mc_set(&c, 2, DT_FLOAT32, 1, (int64_t[]){4}), expect_reject(&c, "c broadcast", "c dims");
  valid(&c), mc_set(&c, 2, DT_FLOAT32, 4, (int64_t[]){1, 2, 5, 9}), expect_reject(&c, "c rank", "c rank");
  valid(&c), c.task.params[OM_MATMUL_P_TRANS_A] = 2, expect_reject(&c, "trans_a 2", "trans_a");
  valid(&c), mc_set(&c, 1, DT_FLOAT32, 1, (int64_t[]){7}), mc_set(&c, 3, DT_FLOAT32, 2, (int64_t[]){2, 5}),
      c.task.params[OM_MATMUL_P_TRANS_B] = 1, expect_reject(&c, "trans_b on 1-D", "trans_b");
  valid(&c), c.task.params[OM_MATMUL_P_ALPHA] = bits(INFINITY), expect_reject(&c, "alpha inf", "alpha");
  valid(&c), c.task.params[OM_MATMUL_P_BETA] = bits(NAN), expect_reject(&c, "beta nan", "beta");
  valid(&c), c.task.tensors[OM_MATMUL_T_C] = OM_NONE, expect_reject(&c, "beta without c", "without c");
  valid(&c), c.task.params[OM_MATMUL_P_ACT] = OM_ACT_COUNT, expect_reject(&c, "act", "act");
  valid(&c), c.task.params[OM_MATMUL_P_ACT] = -1, expect_reject(&c, "act -1", "act");
  valid(&c), c.task.params[OM_MATMUL_P_ACT] = OM_ACT_GELU, c.task.params[OM_MATMUL_P_CLIP_MAX] = bits(1),
             expect_reject(&c, "clip param with gelu", test_param_ref(OM_MATMUL_P_CLIP_MIN));
  valid(&c), c.task.params[OM_MATMUL_P_ACT] = OM_ACT_CLIP, c.task.params[OM_MATMUL_P_CLIP_MIN] = bits(2),
             c.task.params[OM_MATMUL_P_CLIP_MAX] = bits(1), expect_reject(&c, "clip order", "clip_min");
  valid(&c), c.task.params[OM_MATMUL_P_CLIP_MIN] = 1,
             expect_reject(&c, "clip param without clip", test_param_ref(OM_MATMUL_P_CLIP_MIN));
  valid(&c), c.task.params[OM_MATMUL_P_TILE_M] = 24, expect_reject(&c, "tile_m 24", "tile_m");
  valid(&c), c.task.params[OM_MATMUL_P_TILE_K] = 0, expect_reject(&c, "tile_k 0", "tile_k");
  valid(&c), c.task.params[OM_MATMUL_P_TILE_N] = 65552, expect_reject(&c, "tile_n too big", "tile_n");
  valid(&c), c.task.params[OM_MATMUL_P_TILE_M] = 2048, c.task.params[OM_MATMUL_P_TILE_K] = 16,
             expect_reject(&c, "L0A", "L0A");
  valid(&c), c.task.params[OM_MATMUL_P_TILE_N] = 2048, c.task.params[OM_MATMUL_P_TILE_K] = 16,
             expect_reject(&c, "L0B", "L0B");
  valid(&c), c.task.params[OM_MATMUL_P_TILE_M] = 1024, c.task.params[OM_MATMUL_P_TILE_N] = 1024,
             expect_reject(&c, "L0C", "L0C");
  valid(&c), c.task.params[OM_MATMUL_NPARAMS + 2] = 1, expect_reject(&c, "unused param", "unused");
  valid(&c), c.task.block_dim = 3, expect_reject(&c, "block_dim > tiles", "block_dim");
  valid(&c), mc_set(&c, 0, DT_FLOAT32, 3, (int64_t[]){2, 5, 0}),
      mc_set(&c, 1, DT_FLOAT32, 2, (int64_t[]){0, 9}), expect_reject(&c, "K = 0", "K 0");
  /* format 2.1: bias, FRACTAL_NZ b, fold, epilogue */
  valid(&c), c.task.params[OM_MATMUL_P_FOLD] = 1, mc_set(&c, OM_MATMUL_T_BIAS, DT_FLOAT32, 1, (int64_t[]){9});
  CHECK_EQ_INT(mc_check(&c), OMRT_OK);
  mc_to_nz(&c);
  CHECK_EQ_INT(mc_check(&c), OMRT_OK);
  mc_free(&c);
  valid(&c), c.task.ntensors = 4;
  CHECK_EQ_INT(mc_check(&c), OMRT_OK); /* a format 2.0 task */
  mc_free(&c);
  valid(&c), c.task.ntensors = 4, c.task.params[OM_MATMUL_P_EPILOGUE] = 1,
             expect_reject(&c, "epilogue without the bias slot", "epilogue");
  valid(&c), mc_set(&c, OM_MATMUL_T_BIAS, DT_FLOAT32, 1, (int64_t[]){7}), expect_reject(&c, "bias N", "bias");
  valid(&c), mc_set(&c, OM_MATMUL_T_BIAS, DT_FLOAT16, 1, (int64_t[]){9}),
      expect_reject(&c, "f16 bias", "bias");
  valid(&c), mc_set(&c, OM_MATMUL_T_BIAS, DT_FLOAT32, 2, (int64_t[]){1, 9}),
      expect_reject(&c, "bias rank 2", "bias");
  valid(&c), mc_to_nz(&c), c.task.params[OM_MATMUL_P_TRANS_B] = 1,
                           mc_set(&c, 3, DT_FLOAT32, 3, (int64_t[]){2, 5, 7}),
                           expect_reject(&c, "NZ b transposed", "FRACTAL_NZ");
  valid(&c), c.task.params[OM_MATMUL_P_FOLD] = 2, expect_reject(&c, "fold past the batch rank", "fold");
  valid(&c), mc_set(&c, 1, DT_FLOAT32, 3, (int64_t[]){2, 7, 9}),
      c.task.params[OM_MATMUL_P_FOLD] = 1, expect_reject(&c, "fold with a batched b", "fold");
  valid(&c), mc_set(&c, 2, DT_FLOAT32, 2, (int64_t[]){5, 9}),
      c.task.params[OM_MATMUL_P_FOLD] = 1, expect_reject(&c, "fold with c repeating per batch", "fold");
  valid(&c), c.task.params[OM_MATMUL_P_TRANS_A] = 1, mc_set(&c, 0, DT_FLOAT32, 3, (int64_t[]){2, 7, 5}),
             c.task.params[OM_MATMUL_P_FOLD] = 1, expect_reject(&c, "fold with a transposed a", "fold");
  valid(&c), mc_set(&c, 0, DT_FLOAT32, 3, (int64_t[]){5, 2, 7}), c.task.params[OM_MATMUL_P_PERM_A] = 0x201;
  CHECK_EQ_INT(mc_check(&c), OMRT_OK); /* a [5,2,7] read as [2,5,7] */
  mc_free(&c);
  valid(&c), c.task.params[OM_MATMUL_P_PERM_A] = 0x001, expect_reject(&c, "perm_a repeats", "perm_a");
  valid(&c), c.task.params[OM_MATMUL_P_PERM_A] = 0x1012, expect_reject(&c, "perm_a past the rank", "perm_a");
  valid(&c), c.task.params[OM_MATMUL_P_PERM_A] = 0x102, expect_reject(&c, "perm_a changes the dims", "K");
  valid(&c), mc_to_nz(&c), c.task.params[OM_MATMUL_P_PERM_B] = 0x01,
                           expect_reject(&c, "NZ b permuted", "FRACTAL_NZ");
}

int main(void) {
  check_cases();
  return test_summary("test_matmul_check");
}
