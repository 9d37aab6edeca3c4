/* gears.c - the gear flags (driver/gears.h): parsed, checked against the -1
 * dims of --input_shape, and turned into each gear's concrete shapes.
 *
 * Messages are one line naming the flag and the value at fault, so that atc
 * can print them as they are.
 */
#include "driver/gears.h"

#include <stdio.h>
#include <string.h>

enum { MAX_VALUE = 0x7fffffff };

static const char *const flag_names[] = {"", "--dynamic_batch_size", "--dynamic_image_size",
                                         "--dynamic_dims"};

/* Parses a decimal in 1..MAX_VALUE from s[0, n). */
static int parse_value(const char *s, size_t n, int64_t *out) {
  int64_t v = 0;
  if (n == 0 || n > 10) return -1;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  if (v < 1 || v > MAX_VALUE) return -1;
  *out = v;
  return 0;
}

/* Splits `spec` into gears: separated by ';' (image size, dims) or each value
 * its own gear (batch: "1,2,4,8"); values within a gear by ','. */
static status split_gears(int kind, const char *spec, atc_gears *g, diag *d) {
  const char *flag = flag_names[kind];
  g->ngears = 0;
  const char *p = spec;
  char gear_sep = kind == OM_GEAR_BATCH ? ',' : ';';
  while (1) {
    size_t len = strcspn(p, kind == OM_GEAR_BATCH ? "," : ";");
    if (g->ngears == OM_MAX_GEARS)
      return diag_set(d, ST_ERR_INVALID, "%s=\"%s\": more than %d gears", flag, spec, OM_MAX_GEARS);
    int64_t *vals = g->values[g->ngears];
    int nv = 0;
    const char *q = p, *end = p + len;
    while (q <= end) {
      size_t vl = strcspn(q, ",;");
      if (q + vl > end) vl = (size_t)(end - q);
      if (nv == OM_GEAR_MAX_VALUES)
        return diag_set(d, ST_ERR_INVALID, "%s=\"%s\": gear '%.*s' has more than %d values", flag, spec,
                        (int)len, p, OM_GEAR_MAX_VALUES);
      if (parse_value(q, vl, &vals[nv]) != 0)
        return diag_set(d, ST_ERR_INVALID, "%s=\"%s\": '%.*s' is not an integer in 1..%d", flag, spec,
                        (int)(vl > 40 ? 40 : vl), q, MAX_VALUE);
      nv++;
      q += vl + 1;
    }
    if (kind == OM_GEAR_IMAGE_SIZE && nv != 2)
      return diag_set(d, ST_ERR_INVALID, "%s=\"%s\": gear '%.*s' is not \"height,width\"", flag, spec,
                      (int)len, p);
    if (g->ngears == 0) g->nvalues = nv;
    if (nv != g->nvalues)
      return diag_set(d, ST_ERR_INVALID, "%s=\"%s\": gear '%.*s' has %d values, the first gear %d", flag,
                      spec, (int)len, p, nv, g->nvalues);
    for (int o = 0; o < g->ngears; o++)
      if (memcmp(g->values[o], vals, (size_t)nv * sizeof *vals) == 0)
        return diag_set(d, ST_ERR_INVALID, "%s=\"%s\": gear '%.*s' is given twice", flag, spec, (int)len, p);
    g->ngears++;
    if (p[len] != gear_sep) break;
    p += len + 1;
  }
  if (g->ngears < 2)
    return diag_set(d, ST_ERR_INVALID, "%s=\"%s\": give 2 to %d gears", flag, spec, OM_MAX_GEARS);
  return ST_OK;
}

/* 1 when dim k of a rank-`rank` input is its H or W (rank 4, --input_format). */
static int is_hw(int rank, int k, int nhwc) {
  return rank == 4 && (nhwc ? k == 1 || k == 2 : k == 2 || k == 3);
}

/* "x:-1,3,224,224" for messages. */
static const char *shape_str(const onnx_input_shape *s, char *buf, size_t n) {
  size_t len = (size_t)snprintf(buf, n, "%s:", s->name);
  for (int k = 0; k < s->rank && len < n; k++)
    len += (size_t)snprintf(buf + len, n - len, "%s%lld", k ? "," : "", (long long)s->dims[k]);
  return buf;
}

status atc_gears_parse(const char *batch, const char *image_size, const char *dims, int nhwc,
                       const onnx_input_shape *shapes, int n, atc_gears *out, diag *d) {
  memset(out, 0, sizeof *out);
  const char *specs[4] = {NULL, batch, image_size, dims};
  int kind = 0;
  for (int k = 1; k <= 3; k++) {
    if (!specs[k]) continue;
    if (kind)
      return diag_set(d, ST_ERR_INVALID, "%s and %s cannot be used together", flag_names[kind],
                      flag_names[k]);
    kind = k;
  }
  /* The -1s of --input_shape. */
  int ndyn = 0;
  char buf[256];
  for (int i = 0; i < n; i++)
    for (int k = 0; k < shapes[i].rank; k++) {
      if (shapes[i].dims[k] != -1) continue;
      ndyn++;
      const char *s = shape_str(&shapes[i], buf, sizeof buf);
      if (!kind)
        return diag_set(d, ST_ERR_INVALID,
                        "--input_shape \"%s\": dim %d is -1 (dynamic); give its gears with "
                        "--dynamic_batch_size, --dynamic_image_size or --dynamic_dims",
                        s, k);
      if (kind == OM_GEAR_BATCH && k != 0)
        return diag_set(d, ST_ERR_INVALID,
                        "--input_shape \"%s\": with --dynamic_batch_size only the first dim (N) may be -1; "
                        "use --dynamic_dims for dim %d",
                        s, k);
      if (kind == OM_GEAR_IMAGE_SIZE && !is_hw(shapes[i].rank, k, nhwc))
        return diag_set(d, ST_ERR_INVALID,
                        "--input_shape \"%s\": with --dynamic_image_size only H and W may be -1 (dims %s of "
                        "a rank-4 %s input); dim %d is not",
                        s, nhwc ? "1, 2" : "2, 3", nhwc ? "NHWC" : "NCHW", k);
    }
  if (!kind) return ST_OK;
  const char *flag = flag_names[kind], *spec = specs[kind];
  if (ndyn == 0)
    return diag_set(d, ST_ERR_INVALID, "%s=\"%s\" needs --input_shape with -1 in the dims it sets%s", flag,
                    spec, n ? "; --input_shape has none" : "");
  if (kind == OM_GEAR_IMAGE_SIZE)
    for (int i = 0; i < n; i++) {
      int h = nhwc ? 1 : 2;
      if (shapes[i].rank == 4 && (shapes[i].dims[h] == -1) != (shapes[i].dims[h + 1] == -1))
        return diag_set(d, ST_ERR_INVALID,
                        "--input_shape \"%s\": with --dynamic_image_size H and W are -1 together",
                        shape_str(&shapes[i], buf, sizeof buf));
    }
  status st = split_gears(kind, spec, out, d);
  if (st) return st;
  if (kind == OM_GEAR_BATCH) out->nvalues = 1;
  if (kind == OM_GEAR_DIMS && out->nvalues != ndyn)
    return diag_set(d, ST_ERR_INVALID,
                    "%s=\"%s\": each gear gives %d value%s, but --input_shape has %d dims of -1", flag, spec,
                    out->nvalues, out->nvalues == 1 ? "" : "s", ndyn);
  out->kind = kind;
  return ST_OK;
}

void atc_gears_shapes(const atc_gears *gears, int g, const onnx_input_shape *shapes, int n, int nhwc,
                      onnx_input_shape *out) {
  const int64_t *v = gears->values[g];
  int next = 0; /* dims: the next value */
  for (int i = 0; i < n; i++) {
    out[i] = shapes[i];
    for (int k = 0; k < shapes[i].rank; k++) {
      if (shapes[i].dims[k] != -1) continue;
      if (gears->kind == OM_GEAR_BATCH)
        out[i].dims[k] = v[0];
      else if (gears->kind == OM_GEAR_IMAGE_SIZE)
        out[i].dims[k] = v[k == (nhwc ? 1 : 2) ? 0 : 1];
      else
        out[i].dims[k] = v[next++];
    }
  }
}
