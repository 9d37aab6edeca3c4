/* vprog_pkg.h - what the vector-program tests share: a one-VPROG-task
 * package built with om_writer over ND or NC1HWC0 operands, running it
 * through the public API (interpreted, or JIT-compiled under OMRT_JIT=1),
 * the I() instruction literal, and a seeded xorshift generator.
 * Header-only, test code only. */
#ifndef TESTS_UNIT_VPROG_PKG_H
#define TESTS_UNIT_VPROG_PKG_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fp16.h"
#include "om_tiny.h"
#include "omrt.h"
#include "support.h"
#ifdef OMRT_HAVE_JIT
#include "omrt_jit.h"
#endif

enum { MAXOPS = 8, MAXI = 96 };

/* ---- building and running a one-task package ---- */

typedef struct operand {
  int dtype, layout, rank;
  int64_t dims[MAX_RANK];
} operand;

typedef struct pkg_opts {
  uint32_t block_dim;     /* 0: 1 */
  uint32_t ub_bytes;      /* 0: 256 KiB */
  int32_t offset_delta;   /* added to the program param */
  int32_t ntensors_delta; /* added to the task's ntensors (the extra slot repeats a tensor) */
  int add_decoy;          /* store another program first, so ours is not at offset 0 */
} pkg_opts;

static inline uint64_t phys_elems(const operand *o) {
  uint64_t n = 0;
  layout_elements(o->layout, o->rank, o->dims, &n);
  return n;
}

/* One VPROG task "vp" over operands ops[0 .. nin + nout). NC1HWC0 operands
 * view an ND [physical elements] model input/output buffer. */
static inline void *make_pkg(const om_vprog *h, const om_vinstr *ins, const operand *ops, const pkg_opts *o,
                             size_t *size_out) {
  om_writer *w = om_writer_new();
  om_model_def def = {0};
  def.name = om_writer_string(w, "vprog");
  def.soc = om_writer_string(w, "Ascend310");
  def.precision = OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE;
  def.ai_cores = 4;
  def.l1_bytes = 1 << 20;
  def.l0a_bytes = def.l0b_bytes = 64 << 10;
  def.l0c_bytes = 256 << 10;
  def.ub_bytes = o && o->ub_bytes ? o->ub_bytes : 256 << 10;
  om_writer_set_model(w, &def);
  int nin = h->ninputs, n = h->ninputs + h->noutputs;
  uint32_t io[2 * MAXOPS], slots[MAXOPS];
  for (int k = 0; k < n; k++) {
    const operand *op = &ops[k];
    char name[16];
    snprintf(name, sizeof name, "%s%d", k < nin ? "in" : "out", k < nin ? k : k - nin);
    uint64_t elems = phys_elems(op);
    om_tensor t = {.name = om_writer_string(w, name),
                   .region = k < nin ? OM_REGION_INPUT : OM_REGION_OUTPUT,
                   .index = (uint32_t)(k < nin ? k : k - nin),
                   .dtype = (uint32_t)op->dtype,
                   .layout = LAYOUT_ND,
                   .rank = 1,
                   .bytes = elems * dtype_size(op->dtype),
                   .dims = {(int64_t)elems}};
    if (op->layout == LAYOUT_ND) {
      t.rank = (uint32_t)op->rank;
      memcpy(t.dims, op->dims, sizeof t.dims);
    }
    io[k] = slots[k] = om_writer_add_tensor(w, &t);
    if (op->layout != LAYOUT_ND) {
      snprintf(name, sizeof name, "%s%d_5hd", k < nin ? "in" : "out", k < nin ? k : k - nin);
      t.name = om_writer_string(w, name);
      t.layout = (uint32_t)op->layout;
      t.rank = (uint32_t)op->rank;
      memcpy(t.dims, op->dims, sizeof t.dims);
      slots[k] = om_writer_add_tensor(w, &t);
    }
  }
  om_writer_set_io(w, io, nin, io + nin, n - nin);
  uint32_t off = 0;
  if (o && o->add_decoy) {
    om_vprog dh = {.ninputs = 0, .noutputs = 1, .nregs = 1, .ninstrs = 2};
    om_vinstr di[2] = {{.op = VOP_CONST, .dtype = DT_FLOAT32, .dst = 0},
                       {.op = VOP_STORE, .dtype = DT_FLOAT32, .b = 0}};
    om_writer_add_vprog(w, &dh, di, &off);
  }
  om_writer_add_vprog(w, h, ins, &off);
  om_task t = {.kind = OM_TASK_VPROG,
               .name = om_writer_string(w, "vp"),
               .block_dim = o && o->block_dim ? o->block_dim : 1,
               .ntensors = (uint32_t)n};
  for (int k = 0; k < OM_TASK_MAX_TENSORS; k++)
    t.tensors[k] = k < n ? slots[k] : OM_NONE;
  if (o && o->ntensors_delta) {
    t.ntensors = (uint32_t)(n + o->ntensors_delta);
    if (o->ntensors_delta > 0) t.tensors[n] = slots[0];
  }
  t.params[OM_VPROG_P_PROGRAM] = (int32_t)off + (o ? o->offset_delta : 0);
  om_writer_add_task(w, &t);
  void *data = NULL;
  diag d = {0};
  if (om_writer_to_memory(w, &data, size_out, &d) != ST_OK) data = NULL;
  om_writer_free(w);
  return data;
}

/* The vprog compiler the tests load with: libomrt_jit's when it is built and
 * OMRT_JIT=1 (ctest runs the vprog tests both ways), else none (the
 * interpreter). Created once, on first use, and kept for the process. */
static inline const omrt_vprog_compiler *test_vprog_compiler(void) {
#ifdef OMRT_HAVE_JIT
  static omrt_jit *jit;
  const char *env = getenv("OMRT_JIT");
  if (!env || strcmp(env, "1") != 0) return NULL;
  if (!jit && omrt_jit_new(&jit) != OMRT_OK) {
    fprintf(stderr, "OMRT_JIT=1 but the JIT is unavailable: %s\n", omrt_last_error());
    exit(1);
  }
  return omrt_jit_compiler(jit);
#else
  return NULL;
#endif
}

/* Loads and runs; returns the load status (execution cannot fail after it). */
static inline omrt_status run_pkg(const void *data, size_t size, uint32_t threads, const void *const *in,
                                  void *const *out) {
  omrt_model *m;
  omrt_load_options lo = {.threads = threads, .vprog_compiler = test_vprog_compiler()};
  omrt_status s = omrt_model_load_memory(data, size, &lo, &m);
  if (s != OMRT_OK) return s;
  omrt_context *ctx;
  s = omrt_context_new(m, &ctx);
  if (s == OMRT_OK) s = omrt_execute(ctx, in, out);
  omrt_context_free(ctx);
  omrt_model_free(m);
  return s;
}

/* Runs a program over rank-1 ND operands of n elements (a scalar input when
 * its operand says rank 0). */
static inline omrt_status run_vec(const om_vprog *h, const om_vinstr *ins, const int *dtypes,
                                  const int *ranks, int64_t n, const void *const *in, void *const *out) {
  operand ops[MAXOPS];
  for (int k = 0; k < h->ninputs + h->noutputs; k++)
    ops[k] = (operand){.dtype = dtypes[k], .layout = LAYOUT_ND, .rank = ranks ? ranks[k] : 1, .dims = {n}};
  size_t size;
  void *data = make_pkg(h, ins, ops, NULL, &size);
  omrt_status s = run_pkg(data, size, 1, in, out);
  free(data);
  return s;
}

#define I(op_, dt_, dst_, a_, b_, c_)                                                                        \
  { .op = (op_), .dtype = (dt_), .dst = (dst_), .a = (a_), .b = (b_), .c = (c_) }

static uint64_t rng_state;         /* the generator state; each test seeds it */
static inline uint64_t rnd(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static inline int rndn(int n) { return (int)(rnd() % (uint64_t)n); }

#endif
