/* support.h - tiny test harness shared by tests/unit/test_*.c.
 *
 *   CHECK(cond)            records a failure (file:line and the expression), continues
 *   CHECK_EQ_INT(a, b)     same, printing both values
 *   return test_summary("name");   prints "N passed, M failed" and returns the exit code
 *
 * Paths: ATC_SOURCE_DIR, ATC_BUILD_DIR, ATC_BIN, OMRUN_BIN are defined by
 * tests/CMakeLists.txt. test_tmpdir() makes a fresh directory under the build
 * tree for the calling test (removed and recreated on each run). */
#ifndef TESTS_SUPPORT_H
#define TESTS_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

extern int test_passed, test_failed;
void test_check(int ok, const char *file, int line, const char *expr);
#define CHECK(cond) test_check(!!(cond), __FILE__, __LINE__, #cond)
#define CHECK_EQ_INT(a, b)                                                                                   \
  do {                                                                                                       \
    long long a_ = (long long)(a), b_ = (long long)(b);                                                      \
    test_check(a_ == b_, __FILE__, __LINE__, #a " == " #b);                                                  \
    if (a_ != b_) test_note("  %s = %lld, %s = %lld", #a, a_, #b, b_);                                       \
  } while (0)
void test_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int test_summary(const char *name);
/* CHECK that also prints a note (printf format and arguments) when cond fails. */
#define CHECKF(cond, ...)                                                                                    \
  do {                                                                                                       \
    int ok_ = !!(cond);                                                                                      \
    test_check(ok_, __FILE__, __LINE__, #cond);                                                              \
    if (!ok_) test_note(__VA_ARGS__);                                                                        \
  } while (0)

/* "params[k]", as the loader's messages name param slot k (common/om_format.h
 * names the slots); one of 8 rotating static buffers. */
const char *test_param_ref(int k);
/* Fresh directory $ATC_BUILD_DIR/tests/tmp/<name>; returns a static path. */
const char *test_tmpdir(const char *name);
/* Reads a whole file into malloc'd memory (NULL on failure). */
void *test_read_file(const char *path, size_t *size_out);
int test_write_file(const char *path, const void *data, size_t size); /* 0 ok */
/* Runs a shell command, captures combined stdout+stderr into a malloc'd string
 * (*out, may be NULL) and returns the exit status (-1 if it could not run). */
int test_run(const char *cmd, char **out);

#endif
