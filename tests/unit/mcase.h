/* mcase.h - one MATMUL task against a fake one-task model, for
 * test_matmul.c and test_matmul_check.c: mc_setup (an Ascend310-sized
 * core's buffers, every slot OM_NONE), mc_set (slot s a workspace tensor
 * of malloc'd data pre-filled with garbage), mc_to_nz (b re-stored as
 * FRACTAL_NZ), mc_check (the kind's load-time check), mc_free (the data
 * mc_set and mc_to_nz allocated). Header-only, test code only. */
#ifndef TESTS_UNIT_MCASE_H
#define TESTS_UNIT_MCASE_H

#include <stdlib.h>
#include <string.h>

#include "common/om_format.h"
#include "omrt.h"
#include "runtime/kernels.h"
#include "support.h"

static const char STRINGS[] = "\0test_task\0t";

typedef struct mcase {
  om_model_def def;
  om_tensor t[OM_MATMUL_NTENSORS];
  void *data[OM_MATMUL_NTENSORS];
  void *b_nd; /* b's data as ND when data[b] holds it as FRACTAL_NZ (mc_to_nz) */
  om_task task;
  omrt_model m;
} mcase;

static inline void mc_setup(mcase *c) {
  memset(c, 0, sizeof *c);
  c->def = (om_model_def){.l0a_bytes = 64 << 10,
                          .l0b_bytes = 64 << 10,
                          .l0c_bytes = 256 << 10,
                          .ub_bytes = 256 << 10,
                          .l1_bytes = 1 << 20,
                          .ntasks = 1};
  c->task = (om_task){.kind = OM_TASK_MATMUL, .name = 1, .block_dim = 1, .ntensors = OM_MATMUL_NTENSORS};
  for (int s = 0; s < OM_MATMUL_NTENSORS; s++)
    c->task.tensors[s] = OM_NONE;
  c->m.def = &c->def, c->m.tensors = c->t, c->m.tasks = &c->task;
  c->m.strings = STRINGS, c->m.strings_bytes = sizeof STRINGS;
}

static inline void mc_set(mcase *c, int s, int dt, int rank, const int64_t *dims) {
  om_tensor *t = &c->t[s];
  *t = (om_tensor){.name = 11, .region = OM_REGION_WORKSPACE, .dtype = (uint32_t)dt, .rank = (uint32_t)rank};
  uint64_t n = 1;
  for (int d = 0; d < rank; d++)
    t->dims[d] = dims[d], n *= (uint64_t)dims[d];
  t->bytes = n * dtype_size(dt);
  free(c->data[s]);
  c->data[s] = malloc((size_t)t->bytes + 8);
  memset(c->data[s], 0x7f, (size_t)t->bytes); /* garbage the kernel must overwrite */
  c->task.tensors[s] = (uint32_t)s;
}

static inline void mc_free(mcase *c) {
  for (int s = 0; s < OM_MATMUL_NTENSORS; s++)
    free(c->data[s]);
  free(c->b_nd);
}

/* Re-stores b (ND data, rank >= 2, not transposed) as FRACTAL_NZ: per batch,
 * [N1][K1*16][16] with zero padding (common/types.h); keeps the ND copy. */
static inline void mc_to_nz(mcase *c) {
  om_tensor *t = &c->t[OM_MATMUL_T_B];
  const int r = (int)t->rank;
  const int64_t K = t->dims[r - 2], N = t->dims[r - 1], k16 = (K + 15) / 16 * 16, n16 = (N + 15) / 16 * 16;
  const size_t es = dtype_size((int)t->dtype);
  uint64_t phys;
  CHECK(layout_elements(LAYOUT_FRACTAL_NZ, r, t->dims, &phys) == 0);
  uint8_t *nz = calloc((size_t)phys + 1, es);
  const uint8_t *nd = c->data[OM_MATMUL_T_B];
  for (uint64_t bi = 0; bi < phys / (uint64_t)(k16 * n16); bi++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t n = 0; n < N; n++)
        memcpy(nz + ((size_t)bi * (size_t)(k16 * n16) + (size_t)(((n / 16) * k16 + k) * 16 + n % 16)) * es,
               nd + ((size_t)bi * (size_t)(K * N) + (size_t)(k * N + n)) * es, es);
  c->b_nd = c->data[OM_MATMUL_T_B];
  c->data[OM_MATMUL_T_B] = nz;
  t->layout = LAYOUT_FRACTAL_NZ, t->bytes = phys * es;
}

static inline omrt_status mc_check(mcase *c) { return rt_kernels[OM_TASK_MATMUL].check(&c->m, 0, &c->task); }

static inline int32_t bits(float f) {
  int32_t b;
  memcpy(&b, &f, 4);
  return b;
}

#endif
