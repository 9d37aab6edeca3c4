/* test_gears.c - the GEARS and IO partitions (common/om_format.h) through
 * the writer, the loader and libomrt's gear API: a hand-built package of
 * three batch gears (1, 2, 4; each a TRANSDATA copy x -> y), every gear run,
 * a value that is not a gear refused with the gears listed, buffer sizes
 * checked against the chosen gear, the model's I/O across gears (-1 dims,
 * the largest bytes), and every field of the partitions that is wrong but
 * carries a valid checksum refused with a message naming it. Also the
 * writer's weight de-duplication.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "om_tiny.h"
#include "omrt.h"
#include "runtime/rt.h"
#include "support.h"

static const int64_t batches[3] = {1, 2, 4};

/* Three gears of y = copy(x), x and y f32 [b, 3], workspace 64 * b bytes
 * (one 16-byte WORKSPACE tensor per gear at offset 64 * (b - 1)). */
static om_writer *gear_writer(void) {
  om_writer *w = om_writer_new();
  om_model_def def = {0};
  def.name = om_writer_string(w, "geared");
  def.soc = om_writer_string(w, "Ascend310");
  def.atc_version = om_writer_string(w, "test");
  def.cmdline = om_writer_string(w, "hand-built by test_gears.c");
  def.precision = OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE;
  def.ai_cores = 2;
  def.l1_bytes = 1 << 20;
  def.l0a_bytes = def.l0b_bytes = 64 << 10;
  def.l0c_bytes = def.ub_bytes = 256 << 10;
  static const float wdata[4] = {1, 2, 3, 4};
  for (int g = 0; g < 3; g++) {
    int64_t b = batches[g];
    om_writer_begin_gear(w, OM_GEAR_BATCH, &b, 1);
    def.workspace_bytes = (uint64_t)(64 * b);
    om_writer_set_model(w, &def);
    om_tensor x = {.name = om_writer_string(w, "x"),
                   .region = OM_REGION_INPUT,
                   .dtype = DT_FLOAT32,
                   .layout = LAYOUT_ND,
                   .rank = 2,
                   .bytes = (uint64_t)(12 * b),
                   .dims = {b, 3}};
    om_tensor y = x;
    y.name = om_writer_string(w, "y");
    y.region = OM_REGION_OUTPUT;
    uint64_t woff;
    om_writer_add_weights(w, wdata, sizeof wdata, &woff); /* the same bytes every gear: stored once */
    om_tensor wt = {.name = om_writer_string(w, "w"),
                    .region = OM_REGION_WEIGHTS,
                    .dtype = DT_FLOAT32,
                    .layout = LAYOUT_ND,
                    .rank = 1,
                    .offset = woff,
                    .bytes = 16,
                    .dims = {4}};
    om_tensor ws = wt;
    ws.name = om_writer_string(w, "scratch");
    ws.region = OM_REGION_WORKSPACE;
    ws.offset = (uint64_t)(64 * (b - 1));
    uint32_t xi = om_writer_add_tensor(w, &x), yi = om_writer_add_tensor(w, &y);
    om_writer_add_tensor(w, &wt);
    om_writer_add_tensor(w, &ws);
    om_writer_set_io(w, &xi, 1, &yi, 1);
    om_task t = {.kind = OM_TASK_TRANSDATA,
                 .name = om_writer_string(w, "copy"),
                 .block_dim = 1,
                 .ntensors = 2,
                 .tensors = {xi, yi, OM_NONE, OM_NONE, OM_NONE, OM_NONE, OM_NONE, OM_NONE}};
    om_writer_add_task(w, &t);
  }
  uint32_t formats[2] = {OM_IO_ND, OM_IO_ND};
  om_writer_set_io_formats(w, formats, 2);
  return w;
}

static uint8_t *pkg, *scratch;
static size_t pkg_size;

static uint8_t *part(uint8_t *buf, uint32_t type) {
  const om_header *h = (const om_header *)buf;
  om_partition *p = (om_partition *)(buf + sizeof *h);
  for (uint32_t i = 0; i < h->npartitions; i++)
    if (p[i].type == type) return buf + p[i].offset;
  return NULL;
}

static void test_run_gears(void) {
  omrt_model *m = NULL;
  CHECK_EQ_INT(omrt_model_load_memory(pkg, pkg_size, NULL, &m), OMRT_OK);
  if (!m) {
    test_note("load: %s", omrt_last_error());
    return;
  }
  CHECK_EQ_INT(omrt_model_num_gears(m), 3);
  CHECK_EQ_INT(omrt_model_weights_bytes(m), 16); /* three gears' equal weights, once */
  CHECK_EQ_INT(omrt_model_workspace_bytes(m), 256);
  omrt_tensor_desc d;
  CHECK(omrt_model_input(m, 0, &d) == OMRT_OK && d.dims[0] == -1 && d.dims[1] == 3 && d.bytes == 48 &&
        d.format == OMRT_FORMAT_ND && !strcmp(d.name, "x"));
  omrt_gear_desc gd;
  for (int g = 0; g < 3; g++) {
    CHECK(omrt_model_gear(m, g, &gd) == OMRT_OK && gd.kind == OMRT_GEAR_BATCH && gd.nvalues == 1 &&
          gd.values[0] == batches[g]);
    CHECK(omrt_model_gear_input(m, g, 0, &d) == OMRT_OK && d.dims[0] == batches[g] &&
          d.bytes == (size_t)(12 * batches[g]));
    CHECK(omrt_model_gear_output(m, g, 0, &d) == OMRT_OK && d.dims[0] == batches[g]);
  }
  CHECK_EQ_INT(omrt_model_gear(m, 3, &gd), OMRT_ERR_ARG);
  int gear = -1;
  int64_t four = 4, three = 3;
  CHECK(omrt_model_find_gear(m, &four, 1, &gear) == OMRT_OK && gear == 2);
  CHECK_EQ_INT(omrt_model_find_gear(m, &three, 1, &gear), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "batch 3 is not a gear of model 'geared' (its gears: 1, 2, 4)") != NULL);
  test_note("find_gear(3): %s", omrt_last_error());

  omrt_context *ctx = NULL;
  CHECK_EQ_INT(omrt_context_new(m, &ctx), OMRT_OK);
  if (!ctx) {
    omrt_model_free(m);
    return;
  }
  CHECK_EQ_INT(omrt_context_gear(ctx), 0);
  float x[12], y[12];
  for (int i = 0; i < 12; i++)
    x[i] = (float)i + 1;
  for (int g = 0; g < 3; g++) {
    memset(y, 0, sizeof y);
    CHECK_EQ_INT(omrt_context_set_gear(ctx, g), OMRT_OK);
    const void *in[1] = {x};
    void *out[1] = {y};
    CHECK_EQ_INT(omrt_execute(ctx, in, out), OMRT_OK);
    int n = (int)(3 * batches[g]), ok = 1;
    for (int i = 0; i < 12; i++)
      ok &= y[i] == (i < n ? x[i] : 0.0f); /* the gear's elements, nothing past them */
    CHECK(ok);
  }
  CHECK_EQ_INT(omrt_context_set_gear(ctx, 3), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "1, 2, 4") != NULL);
  CHECK_EQ_INT(omrt_context_gear(ctx), 2);
  const void *in[1] = {x};
  void *out[1] = {y};
  size_t ib = 24, ob = 48;
  CHECK_EQ_INT(omrt_execute_sized(ctx, in, &ib, out, &ob), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "input 0 'x' has 24 bytes; gear 2 needs 48") != NULL);
  ib = 48;
  CHECK_EQ_INT(omrt_execute_sized(ctx, in, &ib, out, &ob), OMRT_OK);
  omrt_context_set_gear(ctx, 1);
  CHECK_EQ_INT(omrt_execute_sized(ctx, in, &ib, out, &ob), OMRT_OK); /* larger buffers are fine */
  omrt_context_free(ctx);
  omrt_model_free(m);

  /* A package without gears: one gear, no values. */
  om_writer *w = tiny_writer();
  void *data;
  size_t size;
  diag dg;
  diag_init(&dg);
  CHECK(om_writer_to_memory(w, &data, &size, &dg) == ST_OK);
  om_writer_free(w);
  CHECK(omrt_model_load_memory(data, size, NULL, &m) == OMRT_OK);
  CHECK_EQ_INT(omrt_model_num_gears(m), 1);
  CHECK(omrt_model_gear(m, 0, &gd) == OMRT_OK && gd.kind == OMRT_GEAR_NONE && gd.nvalues == 0);
  CHECK(omrt_model_find_gear(m, NULL, 0, &gear) == OMRT_OK && gear == 0);
  CHECK_EQ_INT(omrt_model_find_gear(m, &four, 1, &gear), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "none (a static model)") != NULL);
  CHECK(omrt_model_input(m, 0, &d) == OMRT_OK && d.format == OMRT_FORMAT_ND && d.dims[0] == 2);
  omrt_model_free(m);
  free(data);
}

static void clear_error(void) { rt_error(OMRT_OK, "%s", ""); }

/* Loads scratch after `edit` changed it (CRCs redone): the status, and the
 * message must contain `want`. */
static void expect_refused(const char *what, const char *want) {
  om_recrc(scratch, pkg_size);
  omrt_model *m = NULL;
  clear_error();
  omrt_status s = omrt_model_load_memory(scratch, pkg_size, NULL, &m);
  CHECK(s != OMRT_OK && m == NULL);
  CHECK(strstr(omrt_last_error(), want) != NULL);
  if (s == OMRT_OK || !strstr(omrt_last_error(), want))
    test_note("  %s: got \"%s\", wanted \"%s\"", what, omrt_last_error(), want);
  omrt_model_free(m);
  memcpy(scratch, pkg, pkg_size);
}

static void test_reject(void) {
  memcpy(scratch, pkg, pkg_size);
  om_gears *h = (om_gears *)part(scratch, OM_PART_GEARS);
  om_gear *g = (om_gear *)(h + 1);
  uint32_t *io = (uint32_t *)(g + 3);
  om_tensor *tensors = (om_tensor *)part(scratch, OM_PART_TENSORS);
  om_task *tasks = (om_task *)part(scratch, OM_PART_TASKS);
  uint32_t *formats = (uint32_t *)part(scratch, OM_PART_IO);
  CHECK(h && tensors && tasks && formats);
  if (!h || !tensors || !tasks || !formats) return;

  h->kind = 7;
  expect_refused("kind", "unknown gear kind 7");
  h->ngears = 0;
  expect_refused("ngears 0", "ngears 0 outside 1..100");
  h->ngears = 2;
  expect_refused("ngears 2 (size)", "bytes != 16 + 2 gears x (160 + 4 x 2 I/O)");
  h->nvalues = 2;
  expect_refused("nvalues", "nvalues 2 is not what gear kind 1 takes");
  h->reserved = 1;
  expect_refused("reserved", "reserved header field");
  g[1].first_task = 2;
  expect_refused("first_task", "gear 1 starts at tensor 4 and task 2");
  g[2].ntasks = 2;
  expect_refused("ntasks", "gear 2 runs past the 12 tensors or 3 tasks");
  g[2].ntensors = 3;
  expect_refused("tensor count", "the gears hold 11 tensors and 3 tasks, not 12 and 3");
  g[2].values[0] = 2;
  expect_refused("duplicate gear", "gears 1 and 2 have the same values");
  g[0].values[0] = 0;
  expect_refused("value 0", "gear 0 value 0 is 0");
  g[0].values[1] = 5;
  expect_refused("unused value", "gear 0 value 1 is 5");
  g[1].workspace_bytes = 1000;
  expect_refused("workspace", "gear 1 workspace_bytes 1000 exceeds the model's 256");
  g[1].reserved[1] = 3;
  expect_refused("gear reserved", "gear 1: reserved fields");
  io[0] = 4;
  expect_refused("gear 0 io", "gear 0's I/O tensors differ from MODEL's io[]");
  io[2] = 0; /* gear 1's input: gear 0's tensor */
  expect_refused("gear io range", "gear 1 input 0: tensor index 0 outside the gear's tensors 4..7");
  io[2] = 5; /* gear 1's input: its output tensor */
  expect_refused("gear io region", "gear 1 input 0: tensor 5 'y' is region OUTPUT");
  tensors[4].dtype = DT_FLOAT16, tensors[4].bytes = 12;
  expect_refused("gear dtype", "gear 1 input 0 'x' differs from gear 0's");
  tensors[7].offset = 128; /* gear 1's WORKSPACE tensor past its 128 bytes (inside the model's 256) */
  expect_refused("gear workspace", "exceeds gear 1's workspace_bytes 128");
  tasks[1].tensors[0] = 0; /* gear 1's task reads gear 0's x */
  expect_refused("task tensor of another gear", "tensors[0] = 0 is not one of its gear's tensors 4..7");
  formats[0] = 9;
  expect_refused("format", "om partition IO (offset");
  formats[1] = OM_IO_NC1HWC0;
  expect_refused("NC1HWC0 format on an ND tensor", "has layout ND; format NC1HWC0 I/O must be NC1HWC0");
  formats[0] = OM_IO_NHWC;
  expect_refused("NHWC on rank 2", "has rank 2; format NHWC needs 4");
}

static void test_weight_dedup(void) {
  om_writer *w = om_writer_new();
  static const uint8_t a[100] = {1, 2, 3}, b[100] = {1, 2, 4};
  uint64_t o1 = 9, o2 = 9, o3 = 9, o4 = 9;
  CHECK(om_writer_add_weights(w, a, sizeof a, &o1) == 0);
  CHECK(om_writer_add_weights_ref(w, b, sizeof b, &o2) == 0);
  CHECK(om_writer_add_weights_ref(w, a, sizeof a, &o3) == 0);
  CHECK(om_writer_add_weights(w, b, 50, &o4) == 0); /* a prefix is another payload */
  CHECK(o1 == 0 && o2 == 128 && o3 == 0 && o4 == 256);
  om_writer_free(w);
}

int main(void) {
  om_writer *w = gear_writer();
  diag d;
  diag_init(&d);
  void *data = NULL;
  CHECK(om_writer_to_memory(w, &data, &pkg_size, &d) == ST_OK);
  om_writer_free(w);
  pkg = data;
  if (!pkg) return test_summary("gears");
  scratch = aligned_alloc(64, (pkg_size + 63) / 64 * 64);
  test_run_gears();
  test_reject();
  test_weight_dedup();
  free(scratch);
  free(pkg);
  return test_summary("gears");
}
