/* omrun_io.c - omrun's files (omrun_io.h): listing the samples of --input,
 * reading input files, writing outputs as raw bytes, text or .npy.
 *
 * Sample directories follow msame: every regular file of a directory is a
 * sample, in name order, and with several inputs the k-th files of the
 * directories go together. Text output has one line per innermost row:
 * float32 with 9 significant digits (it reads back as the same float),
 * fp16 widened to float with 5, integers exactly. The .npy writer
 * is NumPy's format 1.0: magic, a little-endian header length, a Python
 * dict literal ('descr', 'fortran_order', 'shape') padded with spaces to a
 * multiple of 64 bytes, then the C-order data. Every output file is
 * written atomically (common/atomic_file.h), so a failure leaves no partial
 * file behind.
 */
#include "tools/omrun_io.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/atomic_file.h"
#include "common/fp16.h"

const char *tool_name = "omrun";

int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", tool_name);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

const char *io_dtype_name(int dt) {
  switch (dt) {
  case OMRT_FLOAT32: return "float32";
  case OMRT_FLOAT16: return "float16";
  case OMRT_UINT8: return "uint8";
  case OMRT_INT8: return "int8";
  case OMRT_INT32: return "int32";
  case OMRT_INT64: return "int64";
  case OMRT_BOOL: return "bool";
  }
  return "other";
}

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The regular files of dir, sorted by name, as malloc'd paths. */
static int list_dir(const char *dir, char ***files_out, int *n_out) {
  DIR *d = opendir(dir);
  if (!d) return fail("--input: cannot open directory '%s': %s", dir, strerror(errno));
  char **files = NULL;
  int n = 0, cap = 0, rc = 0;
  struct dirent *e;
  while (!rc && (e = readdir(d)) != NULL) {
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    char *path = malloc(len);
    struct stat st;
    if (!path) {
      rc = fail("out of memory");
      break;
    }
    snprintf(path, len, "%s/%s", dir, e->d_name);
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
      free(path);
      continue;
    }
    if (n == cap) {
      char **grown = realloc(files, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *files);
      if (!grown) {
        free(path);
        rc = fail("out of memory");
        break;
      }
      files = grown;
    }
    files[n++] = path;
  }
  closedir(d);
  if (!rc && n == 0) rc = fail("--input: directory '%s' has no files", dir);
  if (rc) {
    while (n)
      free(files[--n]);
    free(files);
    return 1;
  }
  qsort(files, (size_t)n, sizeof *files, cmp_str);
  *files_out = files;
  *n_out = n;
  return 0;
}

int samples_list(const char *list, int ninputs, samples *out) {
  memset(out, 0, sizeof *out);
  out->ninputs = ninputs;
  char **given = calloc((size_t)ninputs + 1, sizeof *given);
  if (!given) return fail("out of memory");
  int n = 0, rc = 0;
  for (const char *p = list; !rc;) {
    size_t len = strcspn(p, ",");
    if (n == ninputs) {
      rc = fail("--input names more files (or directories) than the model's %d input(s)", ninputs);
      break;
    }
    if (!(given[n] = strndup(p, len))) rc = fail("out of memory");
    n++;
    if (!p[len]) break;
    p += len + 1;
  }
  if (!rc && n < ninputs)
    rc = fail("--input names fewer files (or directories), %d, than the model's %d input(s)", n, ninputs);
  int dirs = 0;
  for (int i = 0; !rc && i < n; i++)
    dirs += is_dir(given[i]);
  if (!rc && dirs && dirs != n)
    rc = fail("--input: give either a file for each input or a directory of samples for each, not both");
  if (!rc && !dirs) { /* one sample: the files as given */
    out->count = 1;
    out->paths = given;
    return 0;
  }
  char ***lists = rc ? NULL : calloc((size_t)n, sizeof *lists);
  int *counts = rc ? NULL : calloc((size_t)n, sizeof *counts);
  if (!rc && (!lists || !counts)) rc = fail("out of memory");
  for (int i = 0; !rc && i < n; i++) {
    rc = list_dir(given[i], &lists[i], &counts[i]);
    if (!rc && counts[i] != counts[0])
      rc = fail("--input: directory '%s' has %d files, '%s' has %d: the samples must pair up", given[i],
                counts[i], given[0], counts[0]);
  }
  if (!rc) {
    out->count = counts[0];
    out->from_dirs = 1;
    if (!(out->paths = calloc((size_t)out->count * (size_t)n, sizeof *out->paths)))
      rc = fail("out of memory");
  }
  for (int i = 0; lists && i < n; i++) {
    for (int k = 0; lists[i] && k < counts[i]; k++) {
      if (!rc && counts[i] == out->count)
        out->paths[(size_t)k * (size_t)n + (size_t)i] = lists[i][k];
      else
        free(lists[i][k]);
    }
    free(lists[i]);
  }
  free(lists);
  free(counts);
  for (int i = 0; i < n; i++)
    free(given[i]);
  free(given);
  if (rc) samples_free(out);
  return rc;
}

void samples_free(samples *s) {
  for (size_t i = 0; s->paths && i < (size_t)s->count * (size_t)s->ninputs; i++)
    free(s->paths[i]);
  free(s->paths);
  memset(s, 0, sizeof *s);
}

const char *sample_name(const samples *s, int k, char *buf, size_t n) {
  buf[0] = '\0';
  if (!s->from_dirs) return buf;
  const char *path = s->paths[(size_t)k * (size_t)s->ninputs], *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  snprintf(buf, n, "%.*s", (int)(dot && dot != base ? (size_t)(dot - base) : strlen(base)), base);
  return buf;
}

int read_input(const char *path, void *buf, size_t bytes, int index, const char *who) {
  FILE *f = fopen(path, "rb");
  if (!f) return fail("cannot open input %d '%s': %s", index, path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return fail("input %d '%s' is not a regular file", index, path);
  }
  if ((unsigned long long)st.st_size != bytes) {
    fclose(f);
    return fail("input %d '%s' has %lld bytes, %s expects %zu", index, path, (long long)st.st_size, who,
                bytes);
  }
  size_t got = bytes ? fread(buf, 1, bytes, f) : 0;
  int err = ferror(f);
  fclose(f);
  if (got != bytes || err) return fail("cannot read input %d '%s'", index, path);
  return 0;
}

int outfmt_parse(const char *s, outfmt *out) {
  static const char *const names[] = {"BIN", "TXT", "NPY"};
  for (int i = 0; i < 3; i++)
    if (strcasecmp(s, names[i]) == 0) {
      *out = (outfmt)i;
      return 0;
    }
  return fail("--outfmt: '%s' is not BIN, TXT or NPY", s);
}

int make_dirs(const char *dir) {
  char *p = strdup(dir);
  if (!p) return fail("out of memory");
  for (char *s = p + 1;; s++) {
    char c = *s;
    if (c != '/' && c != '\0') continue;
    *s = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      int err = errno;
      free(p);
      return fail("cannot create output directory '%s': %s", dir, strerror(err));
    }
    *s = c;
    if (c == '\0') break;
  }
  free(p);
  if (!is_dir(dir)) return fail("--output '%s' is not a directory", dir);
  return 0;
}

static size_t dtype_bytes(int dt) {
  switch (dt) {
  case OMRT_UINT8:
  case OMRT_INT8:
  case OMRT_BOOL: return 1;
  case OMRT_FLOAT16: return 2;
  case OMRT_FLOAT32:
  case OMRT_INT32: return 4;
  case OMRT_INT64: return 8;
  }
  return 0;
}

/* One value as text. */
static void put_value(FILE *f, int dt, const uint8_t *p) {
  union {
    float f;
    int32_t i32;
    int64_t i64;
    uint16_t h;
  } v;
  switch (dt) {
  case OMRT_FLOAT32: memcpy(&v.f, p, 4), fprintf(f, "%.9g", (double)v.f); break;
  case OMRT_FLOAT16: memcpy(&v.h, p, 2), fprintf(f, "%.5g", (double)half_to_float(v.h)); break;
  case OMRT_INT32: memcpy(&v.i32, p, 4), fprintf(f, "%d", (int)v.i32); break;
  case OMRT_INT64: memcpy(&v.i64, p, 8), fprintf(f, "%lld", (long long)v.i64); break;
  case OMRT_INT8: fprintf(f, "%d", (int)(int8_t)*p); break;
  case OMRT_UINT8:
  case OMRT_BOOL: fprintf(f, "%u", (unsigned)*p); break;
  }
}

static void put_text(FILE *f, const omrt_tensor_desc *d, const uint8_t *data) {
  size_t es = dtype_bytes(d->dtype), n = es ? d->bytes / es : 0;
  size_t row = d->rank > 0 && d->dims[d->rank - 1] > 0 ? (size_t)d->dims[d->rank - 1] : 1;
  for (size_t i = 0; i < n; i++) {
    put_value(f, d->dtype, data + i * es);
    fputc((i + 1) % row == 0 ? '\n' : ' ', f);
  }
}

static void put_npy_header(FILE *f, const omrt_tensor_desc *d) {
  const char *descr = d->dtype == OMRT_FLOAT32   ? "<f4"
                      : d->dtype == OMRT_FLOAT16 ? "<f2"
                      : d->dtype == OMRT_INT32   ? "<i4"
                      : d->dtype == OMRT_INT64   ? "<i8"
                      : d->dtype == OMRT_INT8    ? "|i1"
                      : d->dtype == OMRT_UINT8   ? "|u1"
                                                 : "|b1";
  char dict[512];
  int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int k = 0; k < d->rank; k++)
    len += snprintf(dict + len, sizeof dict - (size_t)len, "%lld,%s", (long long)d->dims[k],
                    k + 1 < d->rank ? " " : "");
  if (d->rank > 1) len--; /* "(2, 3)" but "(5,)" */
  len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");
  size_t total = (10 + (size_t)len + 1 + 63) / 64 * 64; /* magic 6 + version 2 + length 2, dict, '\n' */
  uint16_t hlen = (uint16_t)(total - 10);
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc(hlen & 0xff, f);
  fputc(hlen >> 8, f);
  fputs(dict, f);
  for (size_t i = 10 + (size_t)len; i < total - 1; i++)
    fputc(' ', f);
  fputc('\n', f);
}

int write_output(const char *dir, const char *name, int index, const omrt_tensor_desc *d, const void *data,
                 outfmt fmt) {
  static const char *const ext[] = {"bin", "txt", "npy"};
  char path[4096];
  snprintf(path, sizeof path, "%s/%s%soutput_%d.%s", dir, name, *name ? "_" : "", index, ext[fmt]);
  /* The file's bytes are built in memory, then written atomically
   * (common/atomic_file.h): a full disk or `ulimit -f` leaves no partial or
   * empty output file, and an old one stays as it was. */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return fail("out of memory writing '%s'", path);
  if (fmt == OUTFMT_TXT) {
    put_text(f, d, data);
  } else {
    if (fmt == OUTFMT_NPY) put_npy_header(f, d);
    if (d->bytes) fwrite(data, 1, d->bytes, f);
  }
  int ok = !ferror(f);
  if (fclose(f) != 0 || !ok) {
    free(buf);
    return fail("out of memory writing '%s'", path);
  }
  diag dg;
  diag_init(&dg);
  status st = atomic_write_file(path, buf, len, &dg);
  free(buf);
  if (st != ST_OK) return fail("cannot write output %d: %s", index, dg.msg);
  printf("wrote %s (%zu bytes of output %d)\n", path, d->bytes, index);
  return 0;
}
