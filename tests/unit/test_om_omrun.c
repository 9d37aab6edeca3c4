/* test_om_omrun.c - the omrun command line: --help, a missing model, an input
 * of the wrong size, an unknown flag, and a successful run (both flag
 * spellings) that writes output_0.bin equal to the input (the tiny model is
 * one TRANSDATA f32 -> f32 copy) and prints latency and threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "om_tiny.h"
#include "support.h"

static char cmd[17000];

static int omrun(char **out, const char *fmt, const char *a, const char *b, const char *c) {
  char args[16000];
  snprintf(args, sizeof args, fmt, a, b, c);
  snprintf(cmd, sizeof cmd, "'%s' %s", OMRUN_BIN, args);
  return test_run(cmd, out);
}

int main(void) {
  const char *tmp = test_tmpdir("om_omrun");
  char dir[4200], om[4300], in[4300], small[4300], outdir[4300], out0[4400];
  snprintf(dir, sizeof dir, "%s", tmp);
  snprintf(om, sizeof om, "%s/tiny.om", dir);
  snprintf(in, sizeof in, "%s/x.bin", dir);
  snprintf(small, sizeof small, "%s/small.bin", dir);
  snprintf(outdir, sizeof outdir, "%s/out/nested", dir);
  snprintf(out0, sizeof out0, "%s/output_0.bin", outdir);

  om_writer *w = tiny_writer();
  diag d;
  diag_init(&d);
  CHECK_EQ_INT(om_writer_write_file(w, om, &d), ST_OK);
  om_writer_free(w);
  const float x[6] = {1.5f, -2, 3, 4.25f, -5, 6};
  CHECK_EQ_INT(test_write_file(in, x, sizeof x), 0);
  CHECK_EQ_INT(test_write_file(small, x, 20), 0);

  char *out = NULL;
  CHECK_EQ_INT(omrun(&out, "--help", "", "", ""), 0);
  CHECK(out && strstr(out, "usage: omrun") != NULL);
  free(out);

  CHECK_EQ_INT(omrun(&out, "--model %s/nope.om --output %s", dir, outdir, ""), 1);
  CHECK(out && strstr(out, "omrun: ") == out && strstr(out, "nope.om") != NULL);
  free(out);

  CHECK_EQ_INT(omrun(&out, "--model=%s --input=%s --output=%s", om, small, outdir), 1);
  CHECK(out && strstr(out, "omrun: input 0") != NULL &&
        strstr(out, "20 bytes, the model expects 24") != NULL);
  free(out);

  CHECK_EQ_INT(omrun(&out, "--model %s --output %s --bogus 1", om, outdir, ""), 1);
  CHECK(out && strstr(out, "unknown flag '--bogus'") != NULL);
  free(out);

  CHECK_EQ_INT(omrun(&out, "--model %s --output %s --loop 0", om, outdir, ""), 1);
  free(out);

  CHECK_EQ_INT(omrun(&out, "--model %s --input %s,%s --output out", om, in, in), 1);
  CHECK(out && strstr(out, "more files") != NULL);
  free(out);

  CHECK_EQ_INT(omrun(&out, "--model=%s --input %s --output=%s --loop 5 --threads 2", om, in, outdir), 0);
  if (out) {
    CHECK(strstr(out, "input 0: x float32 [2, 3]") != NULL);
    CHECK(strstr(out, "threads: 2") != NULL);
    CHECK(strstr(out, "over 5 runs") != NULL);
    CHECK(strstr(out, "latency: min ") != NULL);
  }
  free(out);
  size_t n = 0;
  float *y = test_read_file(out0, &n);
  CHECK(y && n == sizeof x && memcmp(y, x, sizeof x) == 0);
  free(y);

  /* OMRT_PROFILE=1: time per task kind; 2: also the slowest tasks, named. */
  snprintf(cmd, sizeof cmd, "OMRT_PROFILE=1 '%s' --model %s --input %s --output %s --loop 3", OMRUN_BIN, om,
           in, outdir);
  CHECK_EQ_INT(test_run(cmd, &out), 0);
  CHECK(out && strstr(out, "profile (per run, over 3 runs):") && strstr(out, "TRANSDATA") &&
        !strstr(out, "slowest tasks"));
  free(out);
  snprintf(cmd, sizeof cmd, "OMRT_PROFILE=2 '%s' --model %s --input %s --output %s --loop 3", OMRUN_BIN, om,
           in, outdir);
  CHECK_EQ_INT(test_run(cmd, &out), 0);
  CHECK(out && strstr(out, "slowest tasks (per run):") && strstr(out, "   0 TRANSDATA"));
  if (out && !strstr(out, "   0 TRANSDATA")) test_note("%s", out);
  free(out);

  /* Without --input: zero-filled, said so. */
  CHECK_EQ_INT(omrun(&out, "--model %s --output %s", om, outdir, ""), 0);
  CHECK(out && strstr(out, "zero-filled") != NULL);
  free(out);
  y = test_read_file(out0, &n);
  CHECK(y && n == sizeof x && y[0] == 0 && y[5] == 0);
  free(y);
  return test_summary("om_omrun");
}
