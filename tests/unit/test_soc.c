/* test_soc.c - SoC files: the shipped ones load; malformed ones are rejected
 * with a message naming the file, line and key. */
#include <stdio.h>
#include <string.h>

#include "socs/soc.h"
#include "support.h"

static status load_text(const char *dir, const char *text, soc_info *s, diag *d) {
  char path[4096];
  snprintf(path, sizeof path, "%s/t.yaml", dir);
  test_write_file(path, text, strlen(text));
  diag_init(d);
  return soc_load_file(path, s, d);
}

static const char *good =
    "name: T\nai_cores: 4\nclock_mhz: 1000\ncube: {m: 16, n: 16, k: 16}\n"
    "buffers: {l1: 1048576, l0a: 65536, l0b: 65536, l0c: 262144, ub: 262144}\nvector_bytes: 256\n"
    "aipp: {formats: \"RGB888_U8 YUV400_U8\", scaling: true}\ndvpp: {pngd: true}\n";

int main(void) {
  soc_info s;
  diag d;
  const char *names[] = {"Ascend310", "Ascend310P3", "Ascend910"};
  const int cores[] = {2, 8, 32};
  const int pngd[] = {0, 1, 0}; /* as acl/acl_dvpp.c's pngd_soc: PNGD on the 310P only */
  for (int i = 0; i < 3; i++) {
    diag_init(&d);
    CHECK_EQ_INT(soc_load(names[i], &s, &d), ST_OK);
    CHECK(strcmp(s.name, names[i]) == 0);
    CHECK_EQ_INT(s.ai_cores, cores[i]);
    CHECK_EQ_INT(s.l0a_bytes, 65536);
    CHECK_EQ_INT(s.l0c_bytes, 262144);
    CHECK_EQ_INT(s.cube_m, 16);
    /* the documentation's AIPP of 310, 310P and 910: four formats, no scaling */
    CHECK(strcmp(s.aipp_formats, "YUV420SP_U8 XRGB8888_U8 RGB888_U8 YUV400_U8") == 0);
    CHECK_EQ_INT(s.aipp_scaling, 0);
    CHECK_EQ_INT(s.dvpp_pngd, pngd[i]);
  }
  diag_init(&d);
  CHECK(soc_load("Ascend999", &s, &d) != ST_OK);
  CHECK(strstr(d.msg, "Ascend999") && strstr(d.msg, "Ascend310"));
  diag_init(&d);
  CHECK(soc_load("../etc/passwd", &s, &d) != ST_OK);

  const char *dir = test_tmpdir("soc");
  CHECK_EQ_INT(load_text(dir, good, &s, &d), ST_OK);
  CHECK_EQ_INT(s.ai_cores, 4);
  CHECK_EQ_INT(s.ub_bytes, 262144);
  CHECK(strcmp(s.aipp_formats, "RGB888_U8 YUV400_U8") == 0 && s.aipp_scaling == 1 && s.dvpp_pngd == 1);

  char bad[1024];
  snprintf(bad, sizeof bad, "%sl0x: 5\n", good);
  CHECK(load_text(dir, bad, &s, &d) == ST_ERR_INVALID && strstr(d.msg, "unknown key 'l0x'") &&
        strstr(d.msg, ":9"));
  CHECK(load_text(dir, "name: T\nai_cores: 4\n", &s, &d) == ST_ERR_INVALID && strstr(d.msg, "missing key"));
  snprintf(bad, sizeof bad, "%s", good);
  memcpy(strstr(bad, "ai_cores: 4"), "ai_cores: x", 11);
  CHECK(load_text(dir, bad, &s, &d) == ST_ERR_INVALID && strstr(d.msg, "ai_cores") && strstr(d.msg, "'x'"));
  snprintf(bad, sizeof bad, "%s", good);
  memcpy(strstr(bad, "ai_cores: 4"), "ai_cores: 0", 11);
  CHECK(load_text(dir, bad, &s, &d) == ST_ERR_INVALID && strstr(d.msg, "ai_cores"));
  CHECK(load_text(dir, "name: [a, b]\n", &s, &d) == ST_ERR_PARSE);
  CHECK(load_text(dir, "a: {b: {c: 1}}\n", &s, &d) == ST_ERR_PARSE);
  CHECK(load_text(dir, "name: T\n  bad indent: : :\n", &s, &d) == ST_ERR_PARSE);
  snprintf(bad, sizeof bad, "%s", good);
  memcpy(strstr(bad, "scaling: true"), "scaling: yes ", 13);
  CHECK(load_text(dir, bad, &s, &d) == ST_ERR_INVALID &&
        strstr(d.msg, "aipp.scaling must be true or false") && strstr(d.msg, ":7"));
  snprintf(bad, sizeof bad, "%sai_cores: 2\n", good);
  CHECK(load_text(dir, bad, &s, &d) == ST_ERR_INVALID && strstr(d.msg, "twice"));
  return test_summary("soc");
}
