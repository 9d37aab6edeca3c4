/* kcase.h - one kernel task against a fake model, for the ND kernel tests
 * (test_reduce, test_strided, test_gather, test_pad, test_index): up to four tensors in
 * the workspace region with malloc'd data pre-filled with garbage the kernel
 * must overwrite, a one-task model whose string table names the task
 * "test_task", the kind's load-time check, and expect_reject(), which wants
 * OMRT_ERR_FORMAT with a message naming the task and the field. Header-only,
 * test code only. */
#ifndef TESTS_UNIT_KCASE_H
#define TESTS_UNIT_KCASE_H

#include <stdlib.h>
#include <string.h>

#include "omrt.h"
#include "runtime/kernels.h"
#include "support.h"

typedef struct kcase {
  om_model_def def;
  om_tensor t[4];
  void *data[4];
  om_task task;
  omrt_model m;
} kcase;

static const char kcase_strings[] = "\0test_task\0t";

/* A task of `kind` with `ntensors` slots and no tensors set yet. */
static inline void kc_setup(kcase *c, int kind, uint32_t block_dim, uint32_t ntensors) {
  memset(c, 0, sizeof *c);
  c->def = (om_model_def){.ub_bytes = 256 << 10, .ntasks = 1};
  c->task = (om_task){.kind = (uint32_t)kind, .name = 1, .block_dim = block_dim, .ntensors = ntensors};
  c->m.def = &c->def, c->m.tensors = c->t, c->m.tasks = &c->task;
  c->m.strings = kcase_strings, c->m.strings_bytes = sizeof kcase_strings;
}

/* Tensor slot s: an ND tensor of dtype dt and dims[rank]. */
static inline void kc_set(kcase *c, int s, int dt, int rank, const int64_t *dims) {
  om_tensor *t = &c->t[s];
  *t = (om_tensor){.name = 11, .region = OM_REGION_WORKSPACE, .dtype = (uint32_t)dt, .rank = (uint32_t)rank};
  memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
  uint64_t n = 1;
  for (int d = 0; d < rank; d++) n *= (uint64_t)dims[d];
  t->bytes = n * dtype_size(dt);
  free(c->data[s]);
  c->data[s] = malloc((size_t)t->bytes + 8);
  memset(c->data[s], 0x7f, (size_t)t->bytes); /* garbage the kernel must overwrite */
  c->task.tensors[s] = (uint32_t)s;
}

static inline void kc_free(kcase *c) {
  for (int s = 0; s < 4; s++) free(c->data[s]);
}

static inline omrt_status kc_check(kcase *c) { return rt_kernels[c->task.kind].check(&c->m, 0, &c->task); }

static inline void expect_reject(kcase *c, const char *what, const char *want) {
  omrt_status s = kc_check(c);
  const char *msg = omrt_last_error();
  int ok = s == OMRT_ERR_FORMAT && msg && strstr(msg, "test_task") && strstr(msg, want);
  test_check(ok, __FILE__, __LINE__, what);
  if (!ok) test_note("  %s: status %d, message '%s'", what, s, msg ? msg : "(null)");
}

#endif
