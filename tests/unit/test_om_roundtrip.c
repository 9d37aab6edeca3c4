/* test_om_roundtrip.c - om_writer -> bytes -> omrt loader, from memory and
 * from a file: the package is laid out as om_format.h says (header fields,
 * 64-byte aligned partitions, de-duplicated strings, aligned weights) and the
 * runtime reads back the same model (names, I/O descriptors, thread choice).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "om_tiny.h"
#include "omrt.h"
#include "runtime/rt.h"
#include "support.h"

static void check_model(const omrt_model *m) {
  CHECK_EQ_INT(omrt_model_num_inputs(m), 1);
  CHECK_EQ_INT(omrt_model_num_outputs(m), 1);
  CHECK(strcmp(omrt_model_name(m), "tiny") == 0);
  CHECK(strcmp(omrt_model_soc(m), "Ascend310") == 0);
  CHECK_EQ_INT(omrt_model_workspace_bytes(m), 256);
  omrt_tensor_desc d;
  CHECK_EQ_INT(omrt_model_input(m, 0, &d), OMRT_OK);
  CHECK(strcmp(d.name, "x") == 0);
  CHECK_EQ_INT(d.dtype, OMRT_FLOAT32);
  CHECK_EQ_INT(d.rank, 2);
  CHECK_EQ_INT(d.dims[0], 2);
  CHECK_EQ_INT(d.dims[1], 3);
  CHECK_EQ_INT(d.bytes, 24);
  CHECK_EQ_INT(omrt_model_output(m, 0, &d), OMRT_OK);
  CHECK(strcmp(d.name, "y") == 0);
  CHECK_EQ_INT(d.bytes, 24);
  CHECK_EQ_INT(omrt_model_input(m, 1, &d), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "index 1") != NULL);
  CHECK_EQ_INT(omrt_model_output(m, -1, &d), OMRT_ERR_ARG);
  CHECK_EQ_INT(m->def->ntensors, 3);
  CHECK_EQ_INT(m->def->ntasks, 1);
  CHECK_EQ_INT(m->tasks[0].kind, OM_TASK_TRANSDATA);
  CHECK(strcmp(rt_string(m, m->tasks[0].name), "copy") == 0);
  /* The weight tensor points at its bytes, 64-aligned after the 3-byte pad. */
  CHECK_EQ_INT(m->tensors[2].offset, 64);
  float w[4];
  memcpy(w, m->weights + m->tensors[2].offset, sizeof w);
  CHECK(w[0] == 1 && w[3] == 4);
}

static void check_layout(const uint8_t *buf, size_t size) {
  om_header h;
  memcpy(&h, buf, sizeof h);
  CHECK(memcmp(h.magic, "DVNPU-OM", 8) == 0);
  CHECK_EQ_INT(h.major, 2);
  CHECK_EQ_INT(h.minor, OM_VERSION_MINOR);
  CHECK_EQ_INT(h.npartitions, 5);
  CHECK_EQ_INT(h.header_len, 64 + 5 * 32);
  CHECK_EQ_INT(h.file_len, size);
  uint32_t seen = 0;
  for (uint32_t i = 0; i < h.npartitions; i++) {
    om_partition p;
    memcpy(&p, buf + 64 + 32 * i, sizeof p);
    CHECK_EQ_INT(p.offset % 64, 0);
    CHECK(p.offset >= h.header_len && p.offset + p.size <= size);
    CHECK_EQ_INT(p.crc32c, crc32c(0, buf + p.offset, p.size));
    seen |= 1u << p.type;
    if (p.type == OM_PART_STRINGS) {
      /* "", then each distinct string once: "tiny" was added once and "x" once. */
      const char *s = (const char *)buf + p.offset;
      CHECK_EQ_INT(s[0], 0);
      CHECK_EQ_INT(s[p.size - 1], 0);
      int tiny = 0;
      for (uint64_t k = 1; k < p.size; k += strlen(s + k) + 1)
        tiny += strcmp(s + k, "tiny") == 0;
      CHECK_EQ_INT(tiny, 1);
    }
    if (p.type == OM_PART_WEIGHTS) CHECK_EQ_INT(p.size, 80);
  }
  CHECK_EQ_INT(seen, 0x3e);
}

static void test_strings(void) {
  om_writer *w = om_writer_new();
  CHECK(w != NULL);
  CHECK_EQ_INT(om_writer_string(w, ""), 0);
  CHECK_EQ_INT(om_writer_string(w, NULL), 0);
  uint32_t a = om_writer_string(w, "alpha"), b = om_writer_string(w, "beta");
  CHECK_EQ_INT(a, 1);
  CHECK_EQ_INT(b, 7);
  CHECK_EQ_INT(om_writer_string(w, "alpha"), a);
  /* Enough strings to grow the hash table several times; all stay unique. */
  char name[32];
  uint32_t offs[2000];
  for (int i = 0; i < 2000; i++) {
    snprintf(name, sizeof name, "node_%d", i);
    offs[i] = om_writer_string(w, name);
  }
  int same = 1;
  for (int i = 0; i < 2000; i++) {
    snprintf(name, sizeof name, "node_%d", i);
    same &= om_writer_string(w, name) == offs[i];
  }
  CHECK(same);
  CHECK_EQ_INT(om_writer_string(w, "beta"), b);
  om_writer_free(w);
}

int main(void) {
  test_strings();

  om_writer *w = tiny_writer();
  CHECK(w != NULL);
  diag d;
  diag_init(&d);
  void *buf = NULL;
  size_t size = 0;
  CHECK_EQ_INT(om_writer_to_memory(w, &buf, &size, &d), ST_OK);
  CHECK_EQ_INT((uintptr_t)buf % 64, 0);
  check_layout(buf, size);

  omrt_model *m = NULL;
  omrt_load_options opts = {.threads = 3};
  CHECK_EQ_INT(omrt_model_load_memory(buf, size, &opts, &m), OMRT_OK);
  if (m) {
    check_model(m);
    CHECK_EQ_INT(m->threads, 3);
  } else {
    test_note("load_memory: %s", omrt_last_error());
  }
  omrt_model_free(m);

  /* Unaligned memory is refused. */
  uint8_t *shifted = malloc(size + 64);
  uint8_t *un = shifted + (64 - (uintptr_t)shifted % 64) % 64 + 1;
  memcpy(un, buf, size);
  CHECK_EQ_INT(omrt_model_load_memory(un, size, NULL, &m), OMRT_ERR_ARG);
  CHECK(m == NULL);
  free(shifted);

  /* From a file; threads from OMRT_THREADS, then the default. */
  const char *dir = test_tmpdir("om_roundtrip");
  char path[4200];
  snprintf(path, sizeof path, "%s/tiny.om", dir);
  CHECK_EQ_INT(om_writer_write_file(w, path, &d), ST_OK);
  size_t fsize = 0;
  void *fdata = test_read_file(path, &fsize);
  CHECK(fdata && fsize == size && memcmp(fdata, buf, size) == 0);
  free(fdata);
  setenv("OMRT_THREADS", "5", 1);
  CHECK_EQ_INT(omrt_model_load_file(path, NULL, &m), OMRT_OK);
  if (m) {
    check_model(m);
    CHECK_EQ_INT(m->threads, 5);
    CHECK_EQ_INT(m->mapped, 1);
  } else {
    test_note("load_file: %s", omrt_last_error());
  }
  omrt_model_free(m);
  setenv("OMRT_THREADS", "0", 1);
  CHECK_EQ_INT(omrt_model_load_file(path, NULL, &m), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "OMRT_THREADS") != NULL);
  unsetenv("OMRT_THREADS");
  CHECK_EQ_INT(omrt_model_load_file(path, NULL, &m), OMRT_OK);
  if (m) CHECK(m->threads >= 1 && m->threads <= 2); /* min(ai_cores 2, host cores) */
  omrt_model_free(m);

  /* A minor version bump within major 1 still loads. */
  ((om_header *)buf)->minor = 7;
  om_recrc(buf, size);
  CHECK_EQ_INT(omrt_model_load_memory(buf, size, NULL, &m), OMRT_OK);
  omrt_model_free(m);

  CHECK(strcmp(omrt_status_string(OMRT_ERR_VERSION), "unsupported om version") == 0);
  omrt_model_free(NULL);
  free(buf);
  om_writer_free(w);
  return test_summary("om_roundtrip");
}
