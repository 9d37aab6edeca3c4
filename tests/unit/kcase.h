/* kcase.h - one kernel task against a fake model, for the kernel tests
 * (test_kernels, test_task_checks, test_reduce, test_strided, test_gather,
 * test_pad, test_index, test_poolnd, test_pool_global, test_dwconv_small): up to
 * OM_TASK_MAX_TENSORS tensors in the workspace region (any layout: ND, or
 * NC1HWC0 with kc_put_nc1hwc0, nc1hwc0.h) with 64-byte aligned data
 * pre-filled with garbage the kernel must overwrite, set by slot (kc_set,
 * kc_set_layout) or appended (kc_add, kc_none), a one-task model whose
 * string table names the task "test_task" and declares the SoC buffers of
 * an Ascend310 core, a simulated AI core with those buffers (kc_core), the
 * kind's load-time check, kc_args / kc_run_blocks (the task's arguments as the
 * executor passes them, every block run), and expect_reject(), which wants OMRT_ERR_FORMAT
 * with a message naming the task and the field; CONV_WINDOW / POOL_WINDOW
 * fill a task's window params. Header-only, test code only. */
#ifndef TESTS_UNIT_KCASE_H
#define TESTS_UNIT_KCASE_H

#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "ir/ir.h"
#include "nc1hwc0.h"
#include "omrt.h"
#include "runtime/kernels.h"
#include "support.h"

/* Designated initializers of square, symmetric windows: CONV2D / DWCONV
 * (kernel k, stride s, pads p, dilation d) and POOL. */
#define CONV_WINDOW(k, s, p, d)                                                                              \
  [OM_CONV_P_KH] = (k), [OM_CONV_P_KW] = (k), [OM_CONV_P_STRIDE_H] = (s), [OM_CONV_P_STRIDE_W] = (s),        \
  [OM_CONV_P_PAD_TOP] = (p), [OM_CONV_P_PAD_LEFT] = (p), [OM_CONV_P_PAD_BOTTOM] = (p),                       \
  [OM_CONV_P_PAD_RIGHT] = (p), [OM_CONV_P_DILATION_H] = (d), [OM_CONV_P_DILATION_W] = (d)
#define POOL_WINDOW(k, s, p)                                                                                 \
  [OM_POOL_P_KH] = (k), [OM_POOL_P_KW] = (k), [OM_POOL_P_STRIDE_H] = (s), [OM_POOL_P_STRIDE_W] = (s),        \
  [OM_POOL_P_PAD_TOP] = (p), [OM_POOL_P_PAD_LEFT] = (p), [OM_POOL_P_PAD_BOTTOM] = (p),                       \
  [OM_POOL_P_PAD_RIGHT] = (p)

typedef struct kcase {
  om_model_def def;
  om_tensor t[OM_TASK_MAX_TENSORS];
  void *data[OM_TASK_MAX_TENSORS];
  om_task task;
  omrt_model m;
} kcase;

static const char kcase_strings[] = "\0test_task\0t";

/* A task of `kind` with `ntensors` slots and no tensors set yet (0 when
 * the tensors are appended with kc_add / kc_none). */
static inline void kc_setup(kcase *c, int kind, uint32_t block_dim, uint32_t ntensors) {
  memset(c, 0, sizeof *c);
  c->def = (om_model_def){.l1_bytes = 1 << 20,
                          .l0a_bytes = 64 << 10,
                          .l0b_bytes = 64 << 10,
                          .l0c_bytes = 256 << 10,
                          .ub_bytes = 256 << 10,
                          .ntasks = 1};
  c->task = (om_task){.kind = (uint32_t)kind, .name = 1, .block_dim = block_dim, .ntensors = ntensors};
  c->m.def = &c->def, c->m.tensors = c->t, c->m.tasks = &c->task;
  c->m.strings = kcase_strings, c->m.strings_bytes = sizeof kcase_strings;
}

/* Tensor slot s: a tensor of dtype dt, layout (types.h) and logical dims[rank]. */
static inline void kc_set_layout(kcase *c, int s, int dt, int layout, int rank, const int64_t *dims) {
  om_tensor *t = &c->t[s];
  *t = (om_tensor){.name = 11,
                   .region = OM_REGION_WORKSPACE,
                   .dtype = (uint32_t)dt,
                   .layout = (uint32_t)layout,
                   .rank = (uint32_t)rank};
  memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
  uint64_t n = 0;
  layout_elements(layout, rank, dims, &n);
  t->bytes = n * dtype_size(dt);
  free(c->data[s]);
  c->data[s] = aligned_alloc(64, (size_t)((t->bytes + 63) / 64 * 64 + 64));
  memset(c->data[s], 0x7f, (size_t)t->bytes); /* garbage the kernel must overwrite */
  c->task.tensors[s] = (uint32_t)s;
}

/* Appends a tensor slot (see kc_set_layout); returns its slot. */
static inline int kc_add(kcase *c, int dt, int layout, int rank, const int64_t *dims) {
  int s = (int)c->task.ntensors++;
  kc_set_layout(c, s, dt, layout, rank, dims);
  return s;
}

/* Appends an OM_NONE slot (an absent optional tensor). */
static inline void kc_none(kcase *c) { c->task.tensors[c->task.ntensors++] = OM_NONE; }

/* Tensor slot s: an ND tensor of dtype dt and dims[rank]. */
static inline void kc_set(kcase *c, int s, int dt, int rank, const int64_t *dims) {
  kc_set_layout(c, s, dt, LAYOUT_ND, rank, dims);
}

/* NCHW values v -> the NC1HWC0 tensor in slot s, padding lanes 0. */
static inline void kc_put_nc1hwc0(kcase *c, int s, const float *v) {
  nc1hwc0_put(c->data[s], (int)c->t[s].dtype, (size_t)c->t[s].bytes, c->t[s].dims, v);
}

/* A simulated AI core with the buffers kc_setup's model declares, as
 * runtime/exec.c gives them (L0A and L0B twice the SoC bytes: the cube
 * stages fp16 tiles as f32). */
static inline rt_core *kc_core(void) {
  static rt_core core;
  if (!core.ub) {
    core.l1_bytes = 1 << 20, core.l0a_bytes = OM_L0_STAGING * (64 << 10), /* the def's, staged */
        core.l0b_bytes = OM_L0_STAGING * (64 << 10);
    core.l0c_bytes = 256 << 10, core.ub_bytes = 256 << 10;
    core.l1 = aligned_alloc(64, core.l1_bytes), core.l0a = aligned_alloc(64, core.l0a_bytes);
    core.l0b = aligned_alloc(64, core.l0b_bytes), core.l0c = aligned_alloc(64, core.l0c_bytes);
    core.ub = aligned_alloc(64, core.ub_bytes);
  }
  return &core;
}

static inline void kc_free(kcase *c) {
  for (int s = 0; s < OM_TASK_MAX_TENSORS; s++)
    free(c->data[s]);
}

static inline omrt_status kc_check(kcase *c) { return rt_kernels[c->task.kind].check(&c->m, 0, &c->task); }

/* The case's tensors as the executor passes them to a kernel (an OM_NONE
 * slot: no tensor). a borrows c's data. */
static inline void kc_args(const kcase *c, rt_args *a) {
  memset(a, 0, sizeof *a);
  for (uint32_t i = 0; i < c->task.ntensors; i++)
    if (c->task.tensors[i] != OM_NONE) a->data[i] = c->data[i], a->desc[i] = &c->t[i];
}

/* Evaluates the graph `text` (ir_parse's syntax; `name` in its messages) on
 * ins with the reference evaluator; outs point into *ar, the caller's. 1 on
 * success, else 0 with the parse or evaluation error noted. */
static inline int kc_eval_text(const char *text, const char *name, const void **ins, void **outs, arena *ar) {
  diag d;
  diag_init(&d);
  ir_graph *g = NULL;
  if (ir_parse(text, name, &g, &d) != ST_OK) {
    test_note("  parse: %s\n%s", d.msg, text);
    return 0;
  }
  int ok = ir_eval_graph(g, ins, outs, ar, &d) == ST_OK;
  if (!ok) test_note("  eval: %s\n%s", d.msg, text);
  ir_graph_free(g);
  return ok;
}

/* Runs every block of the case's task on core, last block first. */
static inline void kc_run_blocks(kcase *c, rt_core *core) {
  rt_args a;
  kc_args(c, &a);
  for (uint32_t b = c->task.block_dim; b-- > 0;)
    rt_kernels[c->task.kind].run(&c->task, &a, b, core);
}

static inline void expect_reject(kcase *c, const char *what, const char *want) {
  omrt_status s = kc_check(c);
  const char *msg = omrt_last_error();
  int ok = s == OMRT_ERR_FORMAT && msg && strstr(msg, "test_task") && strstr(msg, want);
  test_check(ok, __FILE__, __LINE__, what);
  if (!ok) test_note("  %s: status %d, message '%s'", what, s, msg ? msg : "(null)");
}

#endif
