/* om_tiny.h - the hand-built om package the om format tests share.
 *
 * tiny_writer() builds, with om_writer, the smallest useful model: input "x"
 * f32 ND [2, 3], output "y" f32 ND [2, 3], one TRANSDATA task "copy" (x -> y,
 * an element-by-element copy), a 16-byte weight tensor "w" that no task uses
 * and a 256-byte workspace. om_recrc() recomputes every partition CRC and the
 * header CRC of a package in memory, so a test can change one field and see
 * that field (not a checksum) rejected. Header-only: each test is its own
 * executable.
 */
#ifndef TESTS_UNIT_OM_TINY_H
#define TESTS_UNIT_OM_TINY_H

#include <stddef.h>
#include <string.h>

#include "backend/om_write.h"
#include "common/crc32c.h"

static inline om_writer *tiny_writer(void) {
  om_writer *w = om_writer_new();
  if (!w) return NULL;
  om_model_def def = {0};
  def.name = om_writer_string(w, "tiny");
  def.soc = om_writer_string(w, "Ascend310");
  def.atc_version = om_writer_string(w, "test");
  def.cmdline = om_writer_string(w, "hand-built by om_tiny.h");
  def.precision = OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE;
  def.ai_cores = 2;
  def.workspace_bytes = 256;
  def.l1_bytes = 1 << 20;
  def.l0a_bytes = def.l0b_bytes = 64 << 10;
  def.l0c_bytes = def.ub_bytes = 256 << 10;
  om_writer_set_model(w, &def);

  om_tensor x = {.name = om_writer_string(w, "x"),
                 .region = OM_REGION_INPUT,
                 .dtype = DT_FLOAT32,
                 .layout = LAYOUT_ND,
                 .rank = 2,
                 .bytes = 24,
                 .dims = {2, 3}};
  om_tensor y = x;
  y.name = om_writer_string(w, "y");
  y.region = OM_REGION_OUTPUT;
  static const float wdata[4] = {1, 2, 3, 4};
  uint64_t woff = 0;
  om_writer_add_weights(w, "pad", 3, &woff); /* so "w" is not at offset 0 */
  om_writer_add_weights(w, wdata, sizeof wdata, &woff);
  om_tensor wt = {.name = om_writer_string(w, "w"),
                  .region = OM_REGION_WEIGHTS,
                  .dtype = DT_FLOAT32,
                  .layout = LAYOUT_ND,
                  .rank = 1,
                  .offset = woff,
                  .bytes = 16,
                  .dims = {4}};
  uint32_t xi = om_writer_add_tensor(w, &x), yi = om_writer_add_tensor(w, &y);
  om_writer_add_tensor(w, &wt);
  om_writer_set_io(w, &xi, 1, &yi, 1);
  om_task t = {.kind = OM_TASK_TRANSDATA,
               .name = om_writer_string(w, "copy"),
               .block_dim = 1,
               .ntensors = 2,
               .tensors = {xi, yi, OM_NONE, OM_NONE, OM_NONE, OM_NONE, OM_NONE, OM_NONE}};
  om_writer_add_task(w, &t);
  return w;
}

/* Recomputes the CRCs of a package whose header and partition table are in bounds. */
static inline void om_recrc(uint8_t *buf, size_t size) {
  om_header h;
  memcpy(&h, buf, sizeof h);
  for (uint32_t i = 0; i < h.npartitions && sizeof h + (size_t)(i + 1) * sizeof(om_partition) <= size; i++) {
    om_partition p;
    uint8_t *at = buf + sizeof h + (size_t)i * sizeof p;
    memcpy(&p, at, sizeof p);
    if (p.offset <= size && p.size <= size - p.offset) p.crc32c = crc32c(0, buf + p.offset, (size_t)p.size);
    memcpy(at, &p, sizeof p);
  }
  h.header_crc = 0;
  memcpy(buf, &h, sizeof h);
  h.header_crc = crc32c(0, buf, h.header_len <= size ? h.header_len : size);
  memcpy(buf, &h, sizeof h);
}

/* The first partition of `type` in a package (NULL if none). */
static inline om_partition *om_find_part(uint8_t *buf, uint32_t type) {
  om_header h;
  memcpy(&h, buf, sizeof h);
  for (uint32_t i = 0; i < h.npartitions; i++) {
    om_partition *p = (om_partition *)(buf + sizeof h + (size_t)i * sizeof *p);
    if (p->type == type) return p;
  }
  return NULL;
}

#endif
