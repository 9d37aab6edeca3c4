/* npy.c - float32 .npy files: what the layer dumps write and omcompare
 * reads (tools/npy.h). The header is the format-1.0 dict
 * {'descr': '<f4', 'fortran_order': False, 'shape': (...), } padded with
 * spaces to a 64-byte multiple; the reader parses just those three keys. */
#include "tools/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fp16.h"

int npy_write_f32(const char *path, int rank, const int64_t *dims, const float *data) {
  char hdr[512];
  int n = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
  size_t count = 1;
  for (int k = 0; k < rank; k++) {
    n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%lld,%s", (long long)dims[k], k + 1 < rank ? " " : "");
    count *= (size_t)dims[k];
  }
  n += snprintf(hdr + n, sizeof hdr - (size_t)n, "), }");
  size_t total = 10 + (size_t)n + 1, pad = (64 - total % 64) % 64;
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  uint16_t hlen = (uint16_t)((size_t)n + pad + 1);
  fwrite(magic, 1, 8, f);
  fwrite(&hlen, 2, 1, f);
  fwrite(hdr, 1, (size_t)n, f);
  for (size_t i = 0; i < pad; i++)
    fputc(' ', f);
  fputc('\n', f);
  fwrite(data, sizeof *data, count, f);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) return -1;
  return 0;
}

static int fail(char *err, size_t n, const char *path, const char *what) {
  snprintf(err, n, "%s: %s", path, what);
  return -1;
}

int npy_read_f32(const char *path, int *rank_out, int64_t dims_out[NPY_MAX_RANK], float **data_out, char *err,
                 size_t err_len) {
  *data_out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return fail(err, err_len, path, "cannot open");
  unsigned char pre[10];
  char hdr[4096];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] != 1) {
    fclose(f);
    return fail(err, err_len, path, "not a .npy file of format 1.0");
  }
  size_t hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
  if (hlen >= sizeof hdr || fread(hdr, 1, hlen, f) != hlen) {
    fclose(f);
    return fail(err, err_len, path, "truncated header");
  }
  hdr[hlen] = '\0';
  const char *d = strstr(hdr, "'descr':"), *fo = strstr(hdr, "'fortran_order':"),
             *sh = strstr(hdr, "'shape':");
  char descr[8] = "";
  if (!d || !fo || !sh || sscanf(d + 8, " '%7[^']'", descr) != 1 || strstr(fo, "True") == fo + 17 ||
      !strchr(sh, '(')) {
    fclose(f);
    return fail(err, err_len, path, "header without descr, fortran_order False and shape");
  }
  int rank = 0;
  size_t count = 1;
  for (const char *p = strchr(sh, '(') + 1; *p && *p != ')';) {
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p) {
      p++;
      continue;
    }
    if (rank == NPY_MAX_RANK || v < 0) {
      fclose(f);
      return fail(err, err_len, path, "shape of too many dims");
    }
    dims_out[rank++] = v;
    count *= (size_t)v;
    p = end;
  }
  static const char *const names[] = {"<f4", "<f2", "<f8", "<i8", "<i4", "|u1", "|i1", "|b1"};
  static const size_t sizes[] = {4, 2, 8, 8, 4, 1, 1, 1};
  int t = -1;
  for (int i = 0; i < 8; i++)
    if (!strcmp(descr, names[i])) t = i;
  if (t < 0) {
    fclose(f);
    return fail(err, err_len, path, "unsupported dtype (not f4/f2/f8/i8/i4/u1/i1/b1)");
  }
  unsigned char *raw = malloc(count * sizes[t] + 1);
  float *out = malloc(count * sizeof *out + 1);
  if (!raw || !out || fread(raw, sizes[t], count, f) != count) {
    free(raw), free(out), fclose(f);
    return fail(err, err_len, path, "truncated data (or out of memory)");
  }
  fclose(f);
  for (size_t i = 0; i < count; i++) {
    const unsigned char *p = raw + i * sizes[t];
    float v32;
    uint16_t v16;
    double v64;
    int64_t i64;
    int32_t i32;
    switch (t) {
    case 0: memcpy(&v32, p, 4), out[i] = v32; break;
    case 1: memcpy(&v16, p, 2), out[i] = half_to_float(v16); break;
    case 2: memcpy(&v64, p, 8), out[i] = (float)v64; break;
    case 3: memcpy(&i64, p, 8), out[i] = (float)i64; break;
    case 4: memcpy(&i32, p, 4), out[i] = (float)i32; break;
    case 6: out[i] = (float)(signed char)*p; break;
    default: out[i] = (float)*p; break;
    }
  }
  free(raw);
  *rank_out = rank;
  *data_out = out;
  return 0;
}

void npy_file_name(const char *tensor, char *buf, size_t n) {
  size_t i = 0;
  for (; tensor[i] && i + 1 < n; i++) {
    char c = tensor[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
             c == '-' || c == '_';
    buf[i] = ok ? c : '_';
  }
  buf[i] = '\0';
}
