/* support.c - the test harness (see support.h). */
#include "support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

int test_passed, test_failed;

void test_check(int ok, const char *file, int line, const char *expr) {
  if (ok) {
    test_passed++;
  } else {
    test_failed++;
    fprintf(stderr, "FAIL %s:%d: %s\n", file, line, expr);
  }
}

void test_note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int test_summary(const char *name) {
  printf("%s: %d passed, %d failed\n", name, test_passed, test_failed);
  return test_failed ? 1 : 0;
}

const char *test_param_ref(int k) {
  static char bufs[8][24];
  static int next;
  char *b = bufs[next++ % 8];
  snprintf(b, sizeof bufs[0], "params[%d]", k);
  return b;
}

const char *test_tmpdir(const char *name) {
  static char path[4096];
  char cmd[8300];
  snprintf(path, sizeof path, "%s/tests/tmp/%s", ATC_BUILD_DIR, name);
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", path, path);
  if (system(cmd) != 0) fprintf(stderr, "cannot create %s\n", path);
  return path;
}

void *test_read_file(const char *path, size_t *size_out) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return NULL;
  }
  long n = ftell(f);
  if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  void *p = malloc((size_t)n + 1);
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  fclose(f);
  if (p && size_out) *size_out = (size_t)n;
  return p;
}

int test_write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  int ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok ? 0 : -1;
}

int test_run(const char *cmd, char **out) {
  char full[8192];
  snprintf(full, sizeof full, "(%s) 2>&1", cmd);
  FILE *p = popen(full, "r");
  if (!p) return -1;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
    len += n;
    if (cap - len < 1024) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) break;
      buf = nb;
      cap *= 2;
    }
  }
  if (buf) buf[len] = '\0';
  int st = pclose(p);
  if (out)
    *out = buf;
  else
    free(buf);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
