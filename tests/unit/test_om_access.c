/* test_om_access.c - the loader holds every task to its kind's tensor access
 * (common/om_format.h, OM_TASK_ACCESS): what a task writes lies in
 * WORKSPACE or OUTPUT and shares no bytes with anything else it uses, but
 * in place where the kind allows it (CONV2D's y exactly over its residual).
 * Each case is a small hand-built package that loads, then the same with
 * one tensor descriptor changed and every checksum recomputed, so that
 * the access rule alone refuses it; the message names the task, its kind,
 * the slot and the region.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/om_write.h"
#include "om_tiny.h"
#include "omrt.h"
#include "runtime/rt.h"
#include "support.h"

/* Every kind this runtime runs declares what it writes, and its in-place
 * slots are slots it reads. */
static void test_every_kind_declared(void) {
  int kinds = 0;
  for (uint32_t k = 0; k < rt_kernel_count; k++) {
    if (!rt_kernels[k].run) continue;
    kinds++;
    rt_access a = rt_kind_access(k);
    CHECK(a.writes != 0);
    CHECK((a.in_place & a.writes) == 0);
    CHECK((a.in_place >> OM_TASK_MAX_TENSORS) == 0);
    if (a.writes == 0) test_note("kind %u (%s) declares no tensor access", k, rt_kernels[k].name);
  }
  CHECK_EQ_INT(kinds, 33);
  CHECK_EQ_INT(rt_kind_access(5).writes, 0); /* the retired ELTWISE */
  CHECK_EQ_INT(rt_kind_access(1000).writes, 0);
}

/* The layout table is one table: every layout the loader knows has one
 * name that reads back as it, and layout_elements accepts exactly the
 * ranks layout_ranks allows (what the loader checks). */
static void test_layout_table(void) {
  const int known[] = {LAYOUT_ND,         LAYOUT_NC1HWC0,  LAYOUT_FRACTAL_Z,   LAYOUT_FRACTAL_Z_G,
                       LAYOUT_FRACTAL_NZ, LAYOUT_NDC1HWC0, LAYOUT_FRACTAL_Z_3D};
  int names = 0;
  for (int l = 0; l < 64; l++)
    if (layout_name(l)) {
      names++;
      CHECK_EQ_INT(layout_from_name(layout_name(l)), l);
    }
  CHECK_EQ_INT(names, (int)(sizeof known / sizeof *known));
  const int64_t dims[MAX_RANK] = {2, 3, 2, 3, 2, 3, 2, 3};
  for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
    int hi, lo = layout_ranks(known[i], &hi);
    CHECK(layout_name(known[i]) != NULL);
    CHECK(lo >= 0 && lo <= hi && hi <= MAX_RANK);
    for (int r = 0; r <= MAX_RANK; r++) {
      uint64_t n;
      CHECK_EQ_INT(layout_elements(known[i], r, dims, &n) == 0, r >= lo && r <= hi);
    }
  }
  int hi;
  CHECK_EQ_INT(layout_ranks(3, &hi), -1); /* the retired WINO_F43 */
}

/* --- building packages */

typedef struct pkg {
  om_writer *w;
  uint8_t *data; /* the serialised package, 64-aligned */
  size_t size;
} pkg;

static void pkg_begin(pkg *p, uint64_t workspace_bytes) {
  p->w = om_writer_new();
  om_model_def def = {0};
  def.name = om_writer_string(p->w, "access");
  def.soc = om_writer_string(p->w, "Ascend310");
  def.atc_version = om_writer_string(p->w, "test");
  def.cmdline = om_writer_string(p->w, "test_om_access");
  def.precision = OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE;
  def.ai_cores = 1, def.workspace_bytes = workspace_bytes;
  def.l1_bytes = 1 << 20, def.l0a_bytes = def.l0b_bytes = 64 << 10, def.l0c_bytes = def.ub_bytes = 256 << 10;
  om_writer_set_model(p->w, &def);
}

/* An f32 tensor. */
static uint32_t tensor(pkg *p, const char *name, int region, uint32_t index, int layout, int rank,
                       const int64_t *dims, uint64_t offset) {
  om_tensor t = {.name = om_writer_string(p->w, name),
                 .region = (uint32_t)region,
                 .index = index,
                 .dtype = DT_FLOAT32,
                 .layout = (uint32_t)layout,
                 .rank = (uint32_t)rank,
                 .offset = offset};
  memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
  uint64_t n = 0;
  layout_elements(layout, rank, dims, &n);
  t.bytes = n * 4;
  return om_writer_add_tensor(p->w, &t);
}

static void task(pkg *p, int kind, const char *name, int ntensors, const uint32_t *tensors,
                 const int32_t *params, int nparams) {
  om_task t = {.kind = (uint32_t)kind, .name = om_writer_string(p->w, name), .block_dim = 1};
  t.ntensors = (uint32_t)ntensors;
  for (int i = 0; i < OM_TASK_MAX_TENSORS; i++)
    t.tensors[i] = i < ntensors ? tensors[i] : OM_NONE;
  for (int i = 0; i < nparams; i++)
    t.params[i] = params[i];
  om_writer_add_task(p->w, &t);
}

static void pkg_end(pkg *p, uint32_t in, uint32_t out) {
  om_writer_set_io(p->w, &in, 1, &out, 1);
  diag d;
  diag_init(&d);
  void *data = NULL;
  CHECK_EQ_INT(om_writer_to_memory(p->w, &data, &p->size, &d), ST_OK);
  p->data = data;
  om_writer_free(p->w);
}

static omrt_status load(const uint8_t *data, size_t size) {
  omrt_model *m = NULL;
  omrt_status s = omrt_model_load_memory(data, size, NULL, &m);
  omrt_model_free(m);
  return s;
}

/* Loads the package with tensor `ti` changed by `edit` (CRCs recomputed);
 * wants OMRT_ERR_FORMAT with every one of want[] in the message. */
static void expect_refused(const pkg *p, uint32_t ti, void (*edit)(om_tensor *, uint64_t), uint64_t arg,
                           const char *const *want, int nwant) {
  uint8_t *buf = aligned_alloc(64, (p->size + 63) / 64 * 64);
  memcpy(buf, p->data, p->size);
  om_partition *pt = om_find_part(buf, OM_PART_TENSORS);
  edit((om_tensor *)(buf + pt->offset) + ti, arg);
  om_recrc(buf, p->size);
  omrt_status s = load(buf, p->size);
  CHECK_EQ_INT(s, OMRT_ERR_FORMAT);
  for (int i = 0; i < nwant; i++)
    if (!strstr(omrt_last_error(), want[i])) {
      test_check(0, __FILE__, __LINE__, "the message names the task, kind, slot and region");
      test_note("  want '%s' in: %s", want[i], omrt_last_error());
    }
  free(buf);
}

static void set_offset(om_tensor *t, uint64_t off) { t->offset = off; }
static void set_weights(om_tensor *t, uint64_t off) { t->region = OM_REGION_WEIGHTS, t->offset = off; }
static void set_input(om_tensor *t, uint64_t index) {
  t->region = OM_REGION_INPUT, t->index = (uint32_t)index, t->offset = 0;
}
static void set_output(om_tensor *t, uint64_t index) {
  t->region = OM_REGION_OUTPUT, t->index = (uint32_t)index, t->offset = 0;
}

/* x (input) -> a -> b -> y (output), three TRANSDATA copies of [2, 3]. */
static void test_copies(void) {
  pkg p;
  pkg_begin(&p, 256);
  const int64_t d[2] = {2, 3};
  static const float zeros[16];
  uint64_t woff;
  om_writer_add_weights(p.w, zeros, sizeof zeros, &woff);
  uint32_t x = tensor(&p, "x", OM_REGION_INPUT, 0, LAYOUT_ND, 2, d, 0);
  uint32_t a = tensor(&p, "a", OM_REGION_WORKSPACE, 0, LAYOUT_ND, 2, d, 0);
  uint32_t b = tensor(&p, "b", OM_REGION_WORKSPACE, 0, LAYOUT_ND, 2, d, 64);
  uint32_t y = tensor(&p, "y", OM_REGION_OUTPUT, 0, LAYOUT_ND, 2, d, 0);
  task(&p, OM_TASK_TRANSDATA, "first", 2, (uint32_t[]){x, a}, NULL, 0);
  task(&p, OM_TASK_TRANSDATA, "mid", 2, (uint32_t[]){a, b}, NULL, 0);
  task(&p, OM_TASK_TRANSDATA, "last", 2, (uint32_t[]){b, y}, NULL, 0);
  pkg_end(&p, x, y);
  CHECK_EQ_INT(load(p.data, p.size), OMRT_OK);

  /* the writes the attack of issue 24 made: into the weights, into the caller's input */
  static const char *const w1[] = {"task 0 'first' (TRANSDATA)", "tensors[1] 'a'", "WEIGHTS region",
                                   "writes only WORKSPACE or OUTPUT"};
  expect_refused(&p, a, set_weights, woff, w1, 4);
  static const char *const w2[] = {"task 0 'first' (TRANSDATA)", "tensors[1] 'a'", "INPUT region"};
  expect_refused(&p, a, set_input, 0, w2, 3);
  /* a written tensor over a read one, partly or wholly (TRANSDATA has no in place) */
  static const char *const w3[] = {"task 1 'mid' (TRANSDATA)",
                                   "tensors[1] 'b' it writes (WORKSPACE bytes 16..39)",
                                   "overlaps tensors[0] 'a' it reads (WORKSPACE bytes 0..23)"};
  expect_refused(&p, b, set_offset, 16, w3, 3);
  static const char *const w4[] = {"task 1 'mid' (TRANSDATA)", "overlaps tensors[0] 'a' it reads"};
  expect_refused(&p, b, set_offset, 0, w4, 2);
  /* b in the output's buffer: written by one task, then read by one that writes the output over it */
  static const char *const w5[] = {"task 2 'last' (TRANSDATA)",
                                   "tensors[1] 'y' it writes (OUTPUT 0 bytes 0..23)",
                                   "overlaps tensors[0] 'b' it reads (OUTPUT 0 bytes 0..23)"};
  expect_refused(&p, b, set_output, 0, w5, 3);
  free(p.data);
}

/* x (input, ND) -> xs, r (NC1HWC0) -> CONV2D 1x1 16 -> 16 with residual r,
 * y over r (in place) -> out (output, ND). */
static void test_conv_in_place(void) {
  pkg p;
  pkg_begin(&p, 8192);
  const int64_t d[4] = {1, 16, 4, 4}, wd[4] = {16, 16, 1, 1};
  float wv[256] = {0};
  for (int i = 0; i < 16; i++)
    wv[i * 16 + i] = 0.5f;
  uint64_t woff;
  om_writer_add_weights(p.w, wv, sizeof wv, &woff);
  uint32_t x = tensor(&p, "x", OM_REGION_INPUT, 0, LAYOUT_ND, 4, d, 0);
  uint32_t xs = tensor(&p, "xs", OM_REGION_WORKSPACE, 0, LAYOUT_NC1HWC0, 4, d, 0);
  uint32_t r = tensor(&p, "r", OM_REGION_WORKSPACE, 0, LAYOUT_NC1HWC0, 4, d, 1024);
  uint32_t w = tensor(&p, "w", OM_REGION_WEIGHTS, 0, LAYOUT_FRACTAL_Z, 4, wd, woff);
  uint32_t y = tensor(&p, "y", OM_REGION_WORKSPACE, 0, LAYOUT_NC1HWC0, 4, d, 1024);
  uint32_t out = tensor(&p, "out", OM_REGION_OUTPUT, 0, LAYOUT_ND, 4, d, 0);
  task(&p, OM_TASK_TRANSDATA, "to_5d", 2, (uint32_t[]){x, xs}, NULL, 0);
  task(&p, OM_TASK_TRANSDATA, "res", 2, (uint32_t[]){x, r}, NULL, 0);
  int32_t q[OM_CONV_NPARAMS] = {
      [OM_CONV_P_KH] = 1,       [OM_CONV_P_KW] = 1,         [OM_CONV_P_STRIDE_H] = 1,
      [OM_CONV_P_STRIDE_W] = 1, [OM_CONV_P_DILATION_H] = 1, [OM_CONV_P_DILATION_W] = 1,
      [OM_CONV_P_TILE_M] = 16,  [OM_CONV_P_TILE_N] = 1,     [OM_CONV_P_TILE_K] = 1};
  uint32_t ct[OM_CONV_NTENSORS] = {[OM_CONV_T_X] = xs,
                                   [OM_CONV_T_W] = w,
                                   [OM_CONV_T_BIAS] = OM_NONE,
                                   [OM_CONV_T_RESIDUAL] = r,
                                   [OM_CONV_T_Y] = y};
  task(&p, OM_TASK_CONV2D, "conv", OM_CONV_NTENSORS, ct, q, OM_CONV_NPARAMS);
  task(&p, OM_TASK_TRANSDATA, "to_nd", 2, (uint32_t[]){y, out}, NULL, 0);
  pkg_end(&p, x, out);
  CHECK_EQ_INT(load(p.data, p.size), OMRT_OK);

  /* it runs: y = x / 2 + x */
  omrt_model *m = NULL;
  CHECK_EQ_INT(omrt_model_load_memory(p.data, p.size, NULL, &m), OMRT_OK);
  omrt_context *ctx = NULL;
  if (m) CHECK_EQ_INT(omrt_context_new(m, &ctx), OMRT_OK);
  float xv[256], yv[256];
  for (int i = 0; i < 256; i++)
    xv[i] = (float)(i % 7) - 3.0f;
  const void *ins[1] = {xv};
  void *outs[1] = {yv};
  if (ctx) {
    CHECK_EQ_INT(omrt_execute(ctx, ins, outs), OMRT_OK);
    int bad = 0;
    for (int i = 0; i < 256; i++)
      bad += yv[i] != xv[i] * 1.5f;
    CHECK_EQ_INT(bad, 0);
  }
  omrt_context_free(ctx);
  omrt_model_free(m);

  /* in place means the same bytes: y 64 bytes past r overlaps it partly */
  static const char *const w1[] = {"task 2 'conv' (CONV2D)",
                                   "tensors[4] 'y' it writes (WORKSPACE bytes 1088..2111)",
                                   "overlaps tensors[3] 'r' it reads", "in place it must be the same bytes"};
  expect_refused(&p, y, set_offset, 1088, w1, 4);
  /* and only over the residual: y exactly over x */
  static const char *const w2[] = {"task 2 'conv' (CONV2D)", "overlaps tensors[0] 'xs' it reads"};
  expect_refused(&p, y, set_offset, 0, w2, 2);
  /* and never into the weights */
  static const char *const w3[] = {"task 2 'conv' (CONV2D)", "tensors[4] 'y'", "WEIGHTS region"};
  expect_refused(&p, y, set_weights, woff, w3, 3);
  free(p.data);
}

/* VPROG: x (input) -> (a, b) = (x, x) -> y = a + b (output). */
static void test_vprog(void) {
  pkg p;
  pkg_begin(&p, 256);
  const int64_t d[1] = {4};
  uint32_t x = tensor(&p, "x", OM_REGION_INPUT, 0, LAYOUT_ND, 1, d, 0);
  uint32_t a = tensor(&p, "a", OM_REGION_WORKSPACE, 0, LAYOUT_ND, 1, d, 0);
  uint32_t b = tensor(&p, "b", OM_REGION_WORKSPACE, 0, LAYOUT_ND, 1, d, 64);
  uint32_t y = tensor(&p, "y", OM_REGION_OUTPUT, 0, LAYOUT_ND, 1, d, 0);
  const om_vprog two = {.ninputs = 1, .noutputs = 2, .nregs = 1, .ninstrs = 3};
  const om_vinstr i2[3] = {{.op = VOP_LOAD, .dtype = DT_FLOAT32, .dst = 0, .a = 0},
                           {.op = VOP_STORE, .dtype = DT_FLOAT32, .a = 0, .b = 0},
                           {.op = VOP_STORE, .dtype = DT_FLOAT32, .a = 1, .b = 0}};
  const om_vprog add = {.ninputs = 2, .noutputs = 1, .nregs = 3, .ninstrs = 4};
  const om_vinstr ia[4] = {{.op = VOP_LOAD, .dtype = DT_FLOAT32, .dst = 0, .a = 0},
                           {.op = VOP_LOAD, .dtype = DT_FLOAT32, .dst = 1, .a = 1},
                           {.op = VOP_ADD, .dtype = DT_FLOAT32, .dst = 2, .a = 0, .b = 1},
                           {.op = VOP_STORE, .dtype = DT_FLOAT32, .a = 0, .b = 2}};
  uint32_t o2, oa;
  om_writer_add_vprog(p.w, &two, i2, &o2);
  om_writer_add_vprog(p.w, &add, ia, &oa);
  task(&p, OM_TASK_VPROG, "split", 3, (uint32_t[]){x, a, b}, (int32_t[]){(int32_t)o2}, 1);
  task(&p, OM_TASK_VPROG, "sum", 3, (uint32_t[]){a, b, y}, (int32_t[]){(int32_t)oa}, 1);
  pkg_end(&p, x, y);
  CHECK_EQ_INT(load(p.data, p.size), OMRT_OK);

  /* two outputs in the same bytes */
  static const char *const w1[] = {"task 0 'split' (VPROG)", "tensors[1] 'a' it writes",
                                   "overlaps tensors[2] 'b' it writes"};
  expect_refused(&p, b, set_offset, 0, w1, 3);
  /* an output over an input (no in place for programs) */
  static const char *const w2[] = {"task 1 'sum' (VPROG)", "tensors[2] 'y' it writes (OUTPUT 0 bytes 0..15)",
                                   "overlaps tensors[0] 'a' it reads (OUTPUT 0 bytes 0..15)"};
  expect_refused(&p, a, set_output, 0, w2, 3);
  /* an output in the caller's input */
  static const char *const w3[] = {"task 0 'split' (VPROG)", "tensors[2] 'b'", "INPUT region"};
  expect_refused(&p, b, set_input, 0, w3, 3);
  free(p.data);
}

/* LAYERNORM x + x -> y (output), sum (workspace); ATTENTION over the sum
 * -> out (output): two written slots of one task, and the cube's. */
static void test_norm_attention(void) {
  pkg p;
  pkg_begin(&p, 2048);
  const int64_t d[2] = {16, 16};
  uint32_t x = tensor(&p, "x", OM_REGION_INPUT, 0, LAYOUT_ND, 2, d, 0);
  uint32_t y = tensor(&p, "y", OM_REGION_WORKSPACE, 0, LAYOUT_ND, 2, d, 0);
  uint32_t sum = tensor(&p, "sum", OM_REGION_WORKSPACE, 0, LAYOUT_ND, 2, d, 1024);
  uint32_t out = tensor(&p, "out", OM_REGION_OUTPUT, 0, LAYOUT_ND, 2, d, 0);
  uint32_t nt[OM_LAYERNORM_NTENSORS] = {
      [OM_LAYERNORM_T_X] = x,        [OM_LAYERNORM_T_SCALE] = OM_NONE, [OM_LAYERNORM_T_BIAS] = OM_NONE,
      [OM_LAYERNORM_T_RESIDUAL] = x, [OM_LAYERNORM_T_Y] = y,           [OM_LAYERNORM_T_SUM] = sum};
  int32_t np[OM_LAYERNORM_NPARAMS] = {[OM_LAYERNORM_P_AXIS] = 1};
  task(&p, OM_TASK_LAYERNORM, "norm", OM_LAYERNORM_NTENSORS, nt, np, OM_LAYERNORM_NPARAMS);
  uint32_t at[OM_ATTENTION_NTENSORS] = {
      [OM_ATTENTION_T_Q] = y,           [OM_ATTENTION_T_K] = sum,         [OM_ATTENTION_T_V] = sum,
      [OM_ATTENTION_T_BIAS0] = OM_NONE, [OM_ATTENTION_T_BIAS1] = OM_NONE, [OM_ATTENTION_T_Y] = out};
  int32_t ap[OM_ATTENTION_NPARAMS] = {[OM_ATTENTION_P_SCALE] = 0x3e800000 /* 0.25f */,
                                      [OM_ATTENTION_P_TILE_Q] = 16,
                                      [OM_ATTENTION_P_TILE_KV] = 16};
  task(&p, OM_TASK_ATTENTION, "attn", OM_ATTENTION_NTENSORS, at, ap, OM_ATTENTION_NPARAMS);
  pkg_end(&p, x, out);
  CHECK_EQ_INT(load(p.data, p.size), OMRT_OK);

  /* its two outputs in the same bytes */
  static const char *const w1[] = {"task 0 'norm' (LAYERNORM)", "tensors[4] 'y' it writes",
                                   "overlaps tensors[5] 'sum' it writes"};
  expect_refused(&p, sum, set_offset, 0, w1, 3);
  /* the sum into the caller's input */
  static const char *const w2[] = {"task 0 'norm' (LAYERNORM)", "tensors[5] 'sum'", "INPUT region"};
  expect_refused(&p, sum, set_input, 0, w2, 3);
  /* attention's y over its q */
  static const char *const w3[] = {"task 1 'attn' (ATTENTION)", "tensors[5] 'out' it writes",
                                   "overlaps tensors[0] 'y' it reads"};
  expect_refused(&p, y, set_output, 0, w3, 3);
  free(p.data);
}

int main(void) {
  test_every_kind_declared();
  test_layout_table();
  test_copies();
  test_conv_in_place();
  test_vprog();
  test_norm_attention();
  return test_summary("om_access");
}
