/* test_om_write_file.c - om_writer_write_file and om_dump_json write
 * atomically: a failure leaves nothing behind and the old file untouched, a
 * success replaces the file, and no temporary file ever remains; the same
 * for atomic_file's steps (written in pieces, checked through the fd,
 * committed or aborted). Also checks
 * the JSON dump's content and its refusal of a damaged package.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic_file.h"
#include "common/om_format.h"
#include "om_tiny.h"
#include "omrt.h"
#include "support.h"

/* Number of directory entries other than . and .. ; names listed on failure. */
static int count_entries(const char *dir) {
  DIR *dp = opendir(dir);
  if (!dp) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dp)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(dp);
  return n;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static void test_om_file(const char *dir, om_writer *w, const void *pkg, size_t size) {
  char path[4200], bad[4200];
  diag d;

  /* Into a directory that does not exist: an error naming the path, nothing created. */
  snprintf(bad, sizeof bad, "%s/no/such/dir/x.om", dir);
  diag_init(&d);
  CHECK_EQ_INT(om_writer_write_file(w, bad, &d), ST_ERR_IO);
  CHECK(strstr(d.msg, bad) != NULL);
  CHECK(strstr(d.msg, "No such file or directory") != NULL);
  snprintf(bad, sizeof bad, "%s/no", dir);
  CHECK(!exists(bad));
  CHECK_EQ_INT(count_entries(dir), 0);

  /* Over an existing file: replaced with the package, no temp file left. */
  snprintf(path, sizeof path, "%s/model.om", dir);
  CHECK_EQ_INT(test_write_file(path, "old contents", 12), 0);
  diag_init(&d);
  CHECK_EQ_INT(om_writer_write_file(w, path, &d), ST_OK);
  size_t n = 0;
  void *got = test_read_file(path, &n);
  CHECK(got && n == size && memcmp(got, pkg, size) == 0);
  free(got);
  CHECK_EQ_INT(count_entries(dir), 1);
  struct stat st;
  CHECK(stat(path, &st) == 0 && (st.st_mode & 0444) != 0); /* readable, not mkstemp's 0600 */

  /* Onto a path that is a directory: rename fails, temp file removed, dir kept. */
  snprintf(bad, sizeof bad, "%s/adir", dir);
  CHECK(mkdir(bad, 0755) == 0);
  diag_init(&d);
  CHECK_EQ_INT(om_writer_write_file(w, bad, &d), ST_ERR_IO);
  CHECK(strstr(d.msg, "rename") != NULL);
  CHECK_EQ_INT(count_entries(dir), 2);
  CHECK_EQ_INT(count_entries(bad), 0);

  /* A bare file name writes into the current directory's path form too. */
  diag_init(&d);
  CHECK_EQ_INT(atomic_write_file(dir, "x", 1, &d), ST_ERR_IO); /* a directory again */
  diag_init(&d);
  snprintf(bad, sizeof bad, "%s/", dir);
  CHECK_EQ_INT(atomic_write_file(bad, "x", 1, &d), ST_ERR_IO); /* no file name */
  CHECK_EQ_INT(count_entries(dir), 2);
}

static void test_json(const char *dir) {
  char om[4200], json[4200];
  diag d;
  snprintf(om, sizeof om, "%s/model.om", dir);
  snprintf(json, sizeof json, "%s/model.json", dir);
  diag_init(&d);
  CHECK_EQ_INT(om_dump_json(om, json, &d), ST_OK);
  if (d.code) test_note("dump: %s", d.msg);
  char *text = test_read_file(json, NULL);
  CHECK(text != NULL);
  if (text) {
    char version[64]; /* the format this atc writes */
    snprintf(version, sizeof version, "\"version\": \"%d.%d\"", OM_VERSION_MAJOR, OM_VERSION_MINOR);
    const char *want[] = {
        "\"magic\": \"DVNPU-OM\"",
        version,
        "\"type\": \"TENSORS\"",
        "\"name\": \"tiny\"",
        "\"soc\": \"Ascend310\"",
        "\"precision\": \"must_keep_origin_dtype\"",
        "\"ai_cores\": 2",
        "\"workspace_bytes\": 256",
        "\"ub_bytes\": 262144",
        "\"weights\": {\"bytes\": 80}",
        "\"inputs\": [{\"tensor\": 0, \"name\": \"x\", \"format\": \"ND\"}]",
        "\"region\": \"WEIGHTS\"",
        "\"dtype\": \"f32\"",
        "\"layout\": \"ND\"",
        "\"dims\": [2, 3]",
        "\"kind\": \"TRANSDATA\"",
        "\"name\": \"copy\"",
        "\"tensors\": {\"src\": 0, \"dst\": 1}",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
      if (!strstr(text, want[i])) {
        test_note("JSON lacks %s", want[i]);
        CHECK(0);
      }
  }
  free(text);

  /* Task params by name: a log-softmax of the output [2,3] after the copy into a workspace tensor. */
  om_writer *w = tiny_writer();
  om_tensor ws = {.name = om_writer_string(w, "t"),
                  .region = OM_REGION_WORKSPACE,
                  .dtype = DT_FLOAT32,
                  .layout = LAYOUT_ND,
                  .rank = 2,
                  .bytes = 24,
                  .dims = {2, 3}};
  const uint32_t ti = om_writer_add_tensor(w, &ws);
  om_task t = {.kind = OM_TASK_SOFTMAX,
               .name = om_writer_string(w, "lsm"),
               .block_dim = 2,
               .ntensors = OM_SOFTMAX_NTENSORS,
               .tensors = {[OM_SOFTMAX_T_X] = 1, [OM_SOFTMAX_T_Y] = ti},
               .params = {[OM_SOFTMAX_P_AXIS] = 1, [OM_SOFTMAX_P_LOG] = 1}};
  om_writer_add_task(w, &t);
  char om2[4200];
  snprintf(om2, sizeof om2, "%s/lsm.om", dir);
  diag_init(&d);
  CHECK_EQ_INT(om_writer_write_file(w, om2, &d), ST_OK);
  om_writer_free(w);
  CHECK_EQ_INT(om_dump_json(om2, json, &d), ST_OK);
  if (d.code) test_note("dump: %s", d.msg);
  text = test_read_file(json, NULL);
  CHECK(text && strstr(text, "\"kind\": \"SOFTMAX\", \"name\": \"lsm\", \"block_dim\": 2") != NULL);
  CHECK(text && strstr(text, "\"tensors\": {\"x\": 1, \"y\": 3}") != NULL);
  CHECK(text && strstr(text, "\"params\": {\"axis\": 1, \"coerce_2d\": 0, \"log\": 1}") != NULL);
  free(text);

  /* A damaged package: refused with the om path in the message, the old JSON kept. */
  char bad[4200];
  snprintf(bad, sizeof bad, "%s/bad.om", dir);
  CHECK_EQ_INT(test_write_file(bad, "DVNPU-OM but not really", 23), 0);
  diag_init(&d);
  CHECK_EQ_INT(om_dump_json(bad, json, &d), ST_ERR_INVALID);
  CHECK(strstr(d.msg, bad) == d.msg);
  CHECK(strstr(d.msg, "om header") != NULL);
  size_t n = 0;
  void *still = test_read_file(json, &n);
  CHECK(still && n > 100);
  free(still);
  snprintf(bad, sizeof bad, "%s/none.om", dir);
  diag_init(&d);
  CHECK_EQ_INT(om_dump_json(bad, json, &d), ST_ERR_IO);
  CHECK(strstr(d.msg, "none.om") != NULL);
}

/* atomic_file in steps: pieces land in order, the fd reads back what was
 * written, abort leaves nothing and the old file as it was. */
static void test_steps(const char *dir) {
  char path[4200], bad[4200];
  diag d;
  atomic_file f;
  snprintf(path, sizeof path, "%s/steps.bin", dir);
  const int before = count_entries(dir);

  diag_init(&d);
  CHECK_EQ_INT(atomic_file_begin(&f, path, &d), ST_OK);
  CHECK_EQ_INT(atomic_file_write(&f, "hello ", 6, &d), ST_OK);
  CHECK_EQ_INT(atomic_file_write(&f, "world", 5, &d), ST_OK);
  char back[11] = {0};
  CHECK(pread(f.fd, back, sizeof back, 0) == 11 && memcmp(back, "hello world", 11) == 0);
  CHECK(!exists(path)); /* nothing under the target's name before the commit */
  CHECK_EQ_INT(atomic_file_commit(&f, &d), ST_OK);
  size_t n = 0;
  char *got = test_read_file(path, &n);
  CHECK(got && n == 11 && memcmp(got, "hello world", 11) == 0);
  free(got);
  CHECK_EQ_INT(count_entries(dir), before + 1);

  /* Aborted over the existing file: untouched, no temporary left. */
  CHECK_EQ_INT(atomic_file_begin(&f, path, &d), ST_OK);
  CHECK_EQ_INT(atomic_file_write(&f, "other", 5, &d), ST_OK);
  atomic_file_abort(&f);
  got = test_read_file(path, &n);
  CHECK(got && n == 11 && memcmp(got, "hello world", 11) == 0);
  free(got);
  CHECK_EQ_INT(count_entries(dir), before + 1);

  /* No directory: begin fails naming the path; commit after it fails too. */
  snprintf(bad, sizeof bad, "%s/no/such/dir/x.bin", dir);
  diag_init(&d);
  CHECK_EQ_INT(atomic_file_begin(&f, bad, &d), ST_ERR_IO);
  CHECK(strstr(d.msg, bad) != NULL);
  CHECK_EQ_INT(atomic_file_write(&f, "x", 1, &d), ST_ERR_IO);
  CHECK_EQ_INT(atomic_file_commit(&f, &d), ST_ERR_IO);
  CHECK_EQ_INT(count_entries(dir), before + 1);
}

int main(void) {
  om_writer *w = tiny_writer();
  diag d;
  diag_init(&d);
  void *pkg = NULL;
  size_t size = 0;
  CHECK_EQ_INT(om_writer_to_memory(w, &pkg, &size, &d), ST_OK);
  const char *tmp = test_tmpdir("om_write_file");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", tmp);
  test_om_file(dir, w, pkg, size);
  test_json(dir);
  test_steps(dir);
  free(pkg);
  om_writer_free(w);
  return test_summary("om_write_file");
}
