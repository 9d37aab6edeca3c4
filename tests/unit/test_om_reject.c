/* test_om_reject.c - the loader refuses every damaged package with a status
 * and a message, and never crashes: every truncation, every single-bit flip,
 * wrong magic, another major version, and fields that are wrong but carry
 * valid checksums (so the field check itself is what rejects them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "om_tiny.h"
#include "omrt.h"
#include "runtime/rt.h"
#include "support.h"

static uint8_t *pkg;     /* the good package, 64-aligned */
static size_t pkg_size;  /* bytes */
static uint8_t *scratch; /* 64-aligned copy to damage */

static void clear_error(void) { rt_error(OMRT_OK, "%s", ""); }

/* Loads scratch[0, size); returns the status, checking the failure contract. */
static omrt_status try_load(size_t size) {
  omrt_model *m = (omrt_model *)1;
  clear_error();
  omrt_status s = omrt_model_load_memory(scratch, size, NULL, &m);
  if (s != OMRT_OK) {
    CHECK(m == NULL);
    CHECK(omrt_last_error()[0] != '\0');
  }
  omrt_model_free(s == OMRT_OK ? m : NULL);
  return s;
}

static void reset(void) { memcpy(scratch, pkg, pkg_size); }

/* Byte ranges covered by a checksum: the header and every partition. */
static int covered(size_t off) {
  const om_header *h = (const om_header *)pkg;
  if (off < h->header_len) return 1;
  const om_partition *p = (const om_partition *)(pkg + sizeof *h);
  for (uint32_t i = 0; i < h->npartitions; i++)
    if (off >= p[i].offset && off < p[i].offset + p[i].size) return 1;
  return 0;
}

static void test_truncation(void) {
  int fails = 0;
  for (size_t len = 0; len < pkg_size; len++) { /* the whole file is < 1.5 KB: every length */
    reset();
    fails += try_load(len) != OMRT_OK;
  }
  CHECK_EQ_INT(fails, pkg_size);
  reset();
  CHECK_EQ_INT(try_load(pkg_size), OMRT_OK);
  CHECK_EQ_INT(try_load(10), OMRT_ERR_FORMAT);
  CHECK(strstr(omrt_last_error(), "shorter than the 64-byte header") != NULL);
  CHECK_EQ_INT(try_load(pkg_size - 1), OMRT_ERR_FORMAT);
  CHECK(strstr(omrt_last_error(), "file_len") != NULL);

  /* Truncated files, including an empty one. */
  const char *dir = test_tmpdir("om_reject");
  char path[4200];
  snprintf(path, sizeof path, "%s/cut.om", dir);
  size_t lens[] = {0, 1, 63, 64, 200, 300, pkg_size / 2, pkg_size - 1};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    CHECK_EQ_INT(test_write_file(path, pkg, lens[i]), 0);
    omrt_model *m = NULL;
    clear_error();
    CHECK(omrt_model_load_file(path, NULL, &m) != OMRT_OK);
    CHECK(m == NULL);
    CHECK(strstr(omrt_last_error(), path) == omrt_last_error());
    if (lens[i] == 0) CHECK(strstr(omrt_last_error(), "empty file") != NULL);
  }
  omrt_model *m = NULL;
  snprintf(path, sizeof path, "%s/missing.om", dir);
  CHECK_EQ_INT(omrt_model_load_file(path, NULL, &m), OMRT_ERR_IO);
  CHECK(strstr(omrt_last_error(), "missing.om") != NULL);
  CHECK_EQ_INT(omrt_model_load_file(dir, NULL, &m), OMRT_ERR_IO); /* a directory */
}

static void test_bit_flips(void) {
  int missed = 0, uncovered_ok = 0;
  for (size_t off = 0; off < pkg_size; off++) {
    for (int bit = 0; bit < 8; bit++) {
      reset();
      scratch[off] ^= (uint8_t)(1u << bit);
      omrt_status s = try_load(pkg_size);
      if (s == OMRT_OK) {
        if (covered(off)) {
          if (missed++ < 5) test_note("flip of byte %zu bit %d was accepted", off, bit);
        } else {
          uncovered_ok++; /* alignment padding between partitions: no checksum covers it */
        }
      }
    }
  }
  CHECK_EQ_INT(missed, 0);
  test_note("bit flips: %zu tried, %d in uncovered padding", pkg_size * 8, uncovered_ok);
}

static void test_fields(void) {
  om_header *h = (om_header *)scratch;

  reset();
  memcpy(h->magic, "DVNPU-ON", 8);
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  CHECK(strstr(omrt_last_error(), "magic") != NULL);

  reset();
  h->major = OM_VERSION_MAJOR + 1;
  h->minor = 0;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_VERSION);
  CHECK(strstr(omrt_last_error(), "om version 3.0 is not supported by this runtime (reads 2.x)") != NULL);

  reset(); /* format 1.x stored FRACTAL_Z fractals [co][ci]: a 1.x package would be misread */
  h->major = 1, h->minor = 0;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_VERSION);
  CHECK(strstr(omrt_last_error(), "om version 1.0 is not supported by this runtime (reads 2.x)") != NULL);

  reset();
  h->header_crc ^= 1;
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_CHECKSUM);

  reset();
  h->npartitions = 17;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);

  /* A partition that is not 64-aligned, one past the end, a duplicate. */
  reset();
  om_find_part(scratch, OM_PART_TASKS)->offset += 8;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  CHECK(strstr(omrt_last_error(), "om partition TASKS") != NULL);
  reset();
  om_find_part(scratch, OM_PART_WEIGHTS)->size = UINT64_MAX - 32;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  reset();
  om_find_part(scratch, OM_PART_WEIGHTS)->type = OM_PART_TASKS;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  CHECK(strstr(omrt_last_error(), "duplicate") != NULL);

  /* A partition CRC (header CRC kept valid). */
  reset();
  om_find_part(scratch, OM_PART_STRINGS)->crc32c ^= 0x100;
  h->header_crc = 0;
  h->header_crc = crc32c(0, scratch, h->header_len);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_CHECKSUM);
  CHECK(strstr(omrt_last_error(), "om partition STRINGS") != NULL);

  /* Tensor bytes that do not match dims x dtype. */
  reset();
  om_partition *pt = om_find_part(scratch, OM_PART_TENSORS);
  om_tensor *t = (om_tensor *)(scratch + pt->offset);
  t[0].bytes = 20;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  CHECK(strstr(omrt_last_error(), "tensor 0 'x': bytes 20 != 2 x 3 elements x 4") != NULL);
  test_note("bytes: %s", omrt_last_error());

  /* Dims whose product overflows. */
  reset();
  t = (om_tensor *)(scratch + pt->offset);
  t[2].rank = 3;
  t[2].dims[0] = t[2].dims[1] = t[2].dims[2] = INT64_MAX / 2;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  CHECK(strstr(omrt_last_error(), "overflow") != NULL);

  /* Weights offset out of range, then at the very end of the 64-bit range. */
  reset();
  t = (om_tensor *)(scratch + pt->offset);
  t[2].offset = 128;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  CHECK(strstr(omrt_last_error(), "'w': WEIGHTS offset 128 + 16 bytes exceeds") != NULL);
  reset();
  t = (om_tensor *)(scratch + pt->offset);
  t[2].offset = UINT64_MAX - 63;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);

  /* Unknown dtype / layout / region, bad name offset, input not at offset 0. */
  reset();
  t = (om_tensor *)(scratch + pt->offset);
  t[1].dtype = 99;
  om_recrc(scratch, pkg_size);
  CHECK(try_load(pkg_size) != OMRT_OK);
  reset();
  t = (om_tensor *)(scratch + pt->offset);
  t[1].region = 9;
  om_recrc(scratch, pkg_size);
  CHECK(try_load(pkg_size) != OMRT_OK);
  reset();
  t = (om_tensor *)(scratch + pt->offset);
  t[1].name = 100000;
  om_recrc(scratch, pkg_size);
  CHECK(try_load(pkg_size) != OMRT_OK);
  CHECK(strstr(omrt_last_error(), "string offset 100000") != NULL);
  reset();
  t = (om_tensor *)(scratch + pt->offset);
  t[0].offset = 4;
  om_recrc(scratch, pkg_size);
  CHECK(try_load(pkg_size) != OMRT_OK);

  /* I/O wiring: the input slot names the output tensor. */
  reset();
  om_partition *pm = om_find_part(scratch, OM_PART_MODEL);
  uint32_t *io = (uint32_t *)(scratch + pm->offset + sizeof(om_model_def));
  io[0] = 1;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  CHECK(strstr(omrt_last_error(), "input 0") != NULL);

  /* Model definition limits. */
  reset();
  ((om_model_def *)(scratch + pm->offset))->ai_cores = 0;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  CHECK(strstr(omrt_last_error(), "ai_cores") != NULL);
  reset();
  ((om_model_def *)(scratch + pm->offset))->ub_bytes = (64 << 20) + 1;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  reset();
  ((om_model_def *)(scratch + pm->offset))->ntensors = 4;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  CHECK(strstr(omrt_last_error(), "4 tensors x 104") != NULL);

  /* Tasks: a tensor index out of range, an unknown kind, a bad block_dim. */
  om_partition *pk = om_find_part(scratch, OM_PART_TASKS);
  reset();
  ((om_task *)(scratch + pk->offset))->tensors[OM_TRANSDATA_T_DST] = 3;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  CHECK(strstr(omrt_last_error(), "task 0 'copy'") != NULL);
  CHECK(strstr(omrt_last_error(), "tensors[1] = 3") != NULL);
  test_note("task: %s", omrt_last_error());
  reset();
  ((om_task *)(scratch + pk->offset))->kind = 77;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_UNSUPPORTED);
  reset();
  ((om_task *)(scratch + pk->offset))->block_dim = 0;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  reset();
  ((om_task *)(scratch + pk->offset))->ntensors = 9;
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);
  /* The kernel's own check: TRANSDATA with a src of another element count. */
  reset();
  ((om_task *)(scratch + pk->offset))->tensors[OM_TRANSDATA_T_SRC] = 2;
  om_recrc(scratch, pkg_size);
  CHECK(try_load(pkg_size) != OMRT_OK);
  test_note("kernel check: %s", omrt_last_error());

  /* Strings that do not end with NUL. */
  reset();
  om_partition *ps = om_find_part(scratch, OM_PART_STRINGS);
  scratch[ps->offset + ps->size - 1] = 'z';
  om_recrc(scratch, pkg_size);
  CHECK_EQ_INT(try_load(pkg_size), OMRT_ERR_FORMAT);

  /* ONODES: a node string outside the table, an edge past 65535 or without
   * a node, an unknown flag, reserved set. */
  static const struct {
    om_onode o;
    const char *want;
  } onodes[] = {
      {{1u << 30, 0, 0, 0}, "node string offset"},
      {{0, 0, 0, 0}, NULL}, /* the node's string replaced below */
      {{0, 3, 0, 0}, "edge 3"},
      {{0, 70000, 0, 0}, "edge 70000"},
      {{0, 0, 2, 0}, "flags 2"},
      {{0, 0, 0, 1}, "reserved 1"},
  };
  for (size_t i = 0; i < sizeof onodes / sizeof *onodes; i++) {
    reset();
    om_partition *po = om_find_part(scratch, OM_PART_ONODES);
    om_onode *o = (om_onode *)(scratch + po->offset);
    uint32_t node = o->node;
    *o = onodes[i].o;
    if (o->edge == 70000 || o->flags || o->reserved) o->node = node;
    om_recrc(scratch, pkg_size);
    CHECKF(try_load(pkg_size) == (onodes[i].want ? OMRT_ERR_FORMAT : OMRT_OK), "onodes case %zu", i);
    if (onodes[i].want)
      CHECKF(strstr(omrt_last_error(), "ONODES") && strstr(omrt_last_error(), onodes[i].want), "'%s'",
             omrt_last_error());
  }
}

/* The good package's output node as omrt_model_output_node reports it. */
static void test_onode(void) {
  reset();
  omrt_model *m = NULL;
  CHECK_EQ_INT(omrt_model_load_memory(scratch, pkg_size, NULL, &m), OMRT_OK);
  omrt_output_node o = {0};
  if (m) CHECK_EQ_INT(omrt_model_output_node(m, 0, &o), OMRT_OK);
  CHECK(o.node && strcmp(o.node, "copy") == 0 && o.edge == 0 && o.picked);
  if (m) CHECK_EQ_INT(omrt_model_output_node(m, 1, &o), OMRT_ERR_ARG);
  omrt_model_free(m);
}

int main(void) {
  om_writer *w = tiny_writer();
  const om_onode onode = {om_writer_string(w, "copy"), 0, OM_ONODE_PICKED, 0};
  om_writer_set_onodes(w, &onode, 1);
  diag d;
  diag_init(&d);
  void *buf = NULL;
  CHECK_EQ_INT(om_writer_to_memory(w, &buf, &pkg_size, &d), ST_OK);
  om_writer_free(w);
  pkg = buf;
  CHECK(posix_memalign((void **)&scratch, 64, pkg_size + 64) == 0);
  reset();
  if (try_load(pkg_size) != OMRT_OK) {
    test_note("the good package does not load: %s", omrt_last_error());
    CHECK(0);
    return test_summary("om_reject");
  }
  test_truncation();
  test_bit_flips();
  test_fields();
  test_onode();
  free(scratch);
  free(pkg);
  return test_summary("om_reject");
}
