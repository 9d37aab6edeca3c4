/* test_om_zmap.c - the ZMAP partition (om_format.h): the writer elides the
 * all-zero 16-byte chunks of the weights, and the loader gives back exactly
 * the weights that were added, from memory, from a mapped file and into the
 * caller's weight memory; OM_ZMAP_AUTO elides only when it pays; every
 * malformed map is refused with a message naming ZMAP and the field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "om_tiny.h"
#include "omrt.h"
#include "runtime/rt.h"
#include "support.h"

enum { NW = 4096 }; /* bytes of the test weight */

/* A weight whose 16-byte chunks follow a pattern: every third chunk zero,
 * every fifth only zero but its last byte (kept), the rest random. */
static void make_weight(uint8_t *w) {
  uint32_t s = 12345;
  for (int i = 0; i < NW; i++) {
    s = s * 1103515245u + 12345u;
    int c = i / 16;
    w[i] = c % 3 == 0 ? 0 : c % 5 == 0 ? (uint8_t)(i % 16 == 15) : (uint8_t)(s >> 24 | 1);
  }
}

/* tiny_writer plus the test weight as tensor 3; *off_out is its offset. */
static om_writer *writer_with(const uint8_t *wdata, int mode, uint64_t *off_out) {
  om_writer *w = tiny_writer();
  if (!w) return NULL;
  om_writer_add_weights(w, wdata, NW, off_out);
  om_tensor t = {.name = om_writer_string(w, "big"),
                 .region = OM_REGION_WEIGHTS,
                 .dtype = DT_UINT8,
                 .layout = LAYOUT_ND,
                 .rank = 1,
                 .offset = *off_out,
                 .bytes = NW,
                 .dims = {NW}};
  om_writer_add_tensor(w, &t);
  om_writer_set_zmap(w, mode);
  return w;
}

static const om_partition *find_part(const uint8_t *buf, uint32_t type) {
  const om_header *h = (const om_header *)buf;
  for (uint32_t i = 0; i < h->npartitions; i++) {
    const om_partition *p = (const om_partition *)(buf + sizeof *h) + i;
    if (p->type == type) return p;
  }
  return NULL;
}

/* The loaded model's weights are the ones added. */
static void check_weights(const omrt_model *m, const uint8_t *wdata, uint64_t off) {
  CHECK(m->weights_bytes >= off + NW);
  CHECK(memcmp(m->weights + off, wdata, NW) == 0);
  float w[4];
  memcpy(w, m->weights + m->tensors[2].offset, sizeof w);
  CHECK(w[0] == 1 && w[3] == 4); /* tiny's own weight */
}

static void test_roundtrip(const uint8_t *wdata) {
  uint64_t off;
  om_writer *w = writer_with(wdata, OM_ZMAP_ON, &off);
  diag d;
  diag_init(&d);
  void *buf = NULL;
  size_t size = 0;
  CHECK_EQ_INT(om_writer_to_memory(w, &buf, &size, &d), ST_OK);
  const om_partition *pz = find_part(buf, OM_PART_ZMAP), *pw = find_part(buf, OM_PART_WEIGHTS);
  CHECK(pz && pw);
  if (!pz || !pw) return;
  om_zmap h;
  memcpy(&h, (uint8_t *)buf + pz->offset, sizeof h);
  CHECK_EQ_INT(h.chunk_bytes, 16);
  CHECK_EQ_INT(h.logical_bytes % 64, 0);
  CHECK_EQ_INT(pz->size, sizeof h + (h.logical_bytes / 16 + 7) / 8);
  /* Kept: the 16-byte pad chunk of "pad", tiny's weight, and the test
   * weight's chunks that are not zero (2 of every 3, the fifth ones kept by
   * their last byte). */
  int kept = 0;
  for (int c = 0; c < NW / 16; c++)
    kept += c % 3 != 0;
  CHECK_EQ_INT(pw->size, (uint64_t)(kept + 2) * 16);

  omrt_model *m = NULL;
  CHECK_EQ_INT(omrt_model_load_memory(buf, size, NULL, &m), OMRT_OK);
  if (m) {
    check_weights(m, wdata, off);
    CHECK(m->weights_owned != NULL);
    CHECK_EQ_INT(omrt_model_weights_bytes(m), h.logical_bytes);
  }
  omrt_model_free(m);

  /* Streamed to a file: the same bytes, and it loads mapped. */
  const char *dir = test_tmpdir("om_zmap");
  char path[4200];
  snprintf(path, sizeof path, "%s/zmap.om", dir);
  CHECK_EQ_INT(om_writer_write_file(w, path, &d), ST_OK);
  size_t fsize = 0;
  void *fdata = test_read_file(path, &fsize);
  CHECK(fdata && fsize == size && memcmp(fdata, buf, size) == 0);
  free(fdata);
  CHECK_EQ_INT(omrt_model_load_file(path, NULL, &m), OMRT_OK);
  if (m) check_weights(m, wdata, off);
  omrt_model_free(m);

  /* Into the caller's weight memory: exactly logical_bytes suffice. */
  uint8_t *mem = aligned_alloc(64, (size_t)h.logical_bytes);
  omrt_load_options lo = {.weights = mem, .weights_bytes = (size_t)h.logical_bytes};
  CHECK_EQ_INT(omrt_model_load_memory(buf, size, &lo, &m), OMRT_OK);
  if (m) {
    CHECK(m->weights == mem && m->weights_owned == NULL);
    check_weights(m, wdata, off);
  }
  omrt_model_free(m);
  lo.weights_bytes--;
  CHECK_EQ_INT(omrt_model_load_memory(buf, size, &lo, &m), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "weights_bytes") != NULL);
  free(mem);
  free(buf);
  om_writer_free(w);
}

/* OM_ZMAP_AUTO elides the zeros of a mostly zero weight and leaves a dense
 * one as it is; OM_ZMAP_OFF never elides. */
static void test_auto(const uint8_t *wdata) {
  static uint8_t zeros[NW], dense[NW];
  for (int i = 0; i < NW; i++)
    dense[i] = (uint8_t)(i * 7 + 1);
  struct {
    const uint8_t *data;
    int mode, zmap;
  } cases[] = {{zeros, OM_ZMAP_AUTO, 1},
               {wdata, OM_ZMAP_AUTO, 1},
               {dense, OM_ZMAP_AUTO, 0},
               {zeros, OM_ZMAP_OFF, 0},
               {dense, OM_ZMAP_ON, 1}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    uint64_t off;
    om_writer *w = writer_with(cases[i].data, cases[i].mode, &off);
    diag d;
    diag_init(&d);
    void *buf = NULL;
    size_t size = 0;
    CHECK_EQ_INT(om_writer_to_memory(w, &buf, &size, &d), ST_OK);
    CHECKF((find_part(buf, OM_PART_ZMAP) != NULL) == cases[i].zmap, "case %zu", i);
    omrt_model *m = NULL;
    CHECK_EQ_INT(omrt_model_load_memory(buf, size, NULL, &m), OMRT_OK);
    if (m) check_weights(m, cases[i].data, off);
    omrt_model_free(m);
    free(buf);
    om_writer_free(w);
  }
}

/* Each malformed map is refused, naming ZMAP and what is wrong. */
static void test_reject(const uint8_t *wdata) {
  uint64_t off;
  om_writer *w = writer_with(wdata, OM_ZMAP_ON, &off);
  diag d;
  diag_init(&d);
  void *good = NULL;
  size_t size = 0;
  CHECK_EQ_INT(om_writer_to_memory(w, &good, &size, &d), ST_OK);
  uint8_t *buf = aligned_alloc(64, (size + 63) / 64 * 64);
  const om_partition *pz = find_part(good, OM_PART_ZMAP);
  if (!buf || !pz) return;
  uint64_t zoff = pz->offset, zsize = pz->size;
  struct {
    const char *what, *want;
    uint64_t at;    /* byte offset in the ZMAP partition */
    uint32_t value; /* written as uint32 (4 bytes) unless bytes1 */
    int bytes1;     /* write one byte */
  } cases[] = {
      {"chunk_bytes 8", "chunk_bytes 8", 8, 8, 0},
      {"reserved set", "reserved 1", 12, 1, 0},
      {"logical not a multiple of 16", "logical_bytes", 0, 0x1008, 0},
      {"logical too large for the bitmap", "bitmap", 0, 0x100000, 0},
      {"a kept chunk dropped", "WEIGHTS has", 16, 0xfe, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    memcpy(buf, good, size);
    uint8_t *at = buf + zoff + cases[i].at;
    if (cases[i].bytes1)
      *at &= (uint8_t)cases[i].value;
    else
      memcpy(at, &cases[i].value, 4);
    om_recrc(buf, size);
    omrt_model *m = NULL;
    CHECKF(omrt_model_load_memory(buf, size, NULL, &m) == OMRT_ERR_FORMAT, "%s: loaded", cases[i].what);
    CHECKF(strstr(omrt_last_error(), "ZMAP") && strstr(omrt_last_error(), cases[i].want), "%s: '%s'",
           cases[i].what, omrt_last_error());
    omrt_model_free(m);
  }
  /* A bit past the last chunk (the bitmap's last byte has spare bits when
   * the chunk count is not a multiple of 8; here 64-byte alignment makes it
   * a multiple of 4, so a logical size of 4 chunks less leaves 4 spare). */
  memcpy(buf, good, size);
  om_zmap h;
  memcpy(&h, buf + zoff, sizeof h);
  uint64_t nchunks = h.logical_bytes / 16;
  if (nchunks % 8 == 0) {
    h.logical_bytes -= 64; /* 4 chunks fewer: the last bitmap byte keeps 4 bits */
    memcpy(buf + zoff, &h, sizeof h);
    buf[zoff + zsize - 1] = 0xf0; /* the 4 spare bits set */
    om_recrc(buf, size);
    omrt_model *m = NULL;
    CHECK_EQ_INT(omrt_model_load_memory(buf, size, NULL, &m), OMRT_ERR_FORMAT);
    CHECKF(strstr(omrt_last_error(), "past its last chunk") != NULL, "'%s'", omrt_last_error());
    omrt_model_free(m);
  } else {
    test_note("logical size of %llu chunks: spare-bit case not reached", (unsigned long long)nchunks);
    CHECK(0);
  }
  free(buf);
  free(good);
  om_writer_free(w);
}

int main(void) {
  static uint8_t wdata[NW];
  make_weight(wdata);
  test_roundtrip(wdata);
  test_auto(wdata);
  test_reject(wdata);
  return test_summary("om_zmap");
}
