/* om_json.c - atc --mode=1: an om package as readable JSON (om_dump_json in
 * backend/om_write.h); atc --mode=6: its summary in a few lines (om_summary).
 *
 * The file is read once into a 64-byte aligned buffer and verified there with
 * libomrt's public loader (omrt_model_load_memory), so the bytes dumped are
 * exactly the bytes verified; after that the raw records of
 * common/om_format.h are walked directly, with no further bounds checks
 * needed. Numbers become names wherever the format has names (partition
 * types, regions, dtypes, layouts, precision, task kinds, activations), task
 * tensor slots and params are keyed by the meaning om_format.h gives them per
 * kind (a kind this file does not know gets its raw arrays), and weights are
 * summarised by size only. Vector programs are dumped once each, in offset
 * order, for the offsets VPROG tasks name (exactly the programs the loader
 * verified), one readable line per instruction ("r3 = mul.f32 r1, r2").
 * The JSON text is built in a growable buffer and written with
 * atomic_write_file.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/om_json_kinds.h"
#include "backend/om_write.h"
#include "common/atomic_file.h"
#include "common/zmap.h"
#include "omrt.h"

/* ---- a growable text buffer ---- */

typedef struct jbuf {
  char *data;
  size_t len, cap; /* bytes, excluding the NUL */
  int nomem;
} jbuf;

static void jput(jbuf *b, const char *s, size_t n) {
  if (b->nomem) return;
  if (n + 1 > b->cap - b->len) {
    size_t cap = b->cap ? b->cap : 4096;
    while (n + 1 > cap - b->len) {
      if (cap > SIZE_MAX / 2) {
        b->nomem = 1;
        return;
      }
      cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) {
      b->nomem = 1;
      return;
    }
    b->data = p;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

#define JLIT(b, lit) jput(b, lit, sizeof lit - 1)

static void jprintf(jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jprintf(jbuf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    jput(b, tmp, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->nomem = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  jput(b, big, (size_t)n);
  free(big);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static int utf8_len(const unsigned char *s) {
  int n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  return n;
}

/* A JSON string literal: escapes quotes, backslashes and control bytes;
 * invalid UTF-8 bytes become U+FFFD. */
static void jstr(jbuf *b, const char *s) {
  JLIT(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    if (*p == '"' || *p == '\\') {
      char e[2] = {'\\', (char)*p++};
      jput(b, e, 2);
    } else if (*p < 0x20) {
      jprintf(b, "\\u%04x", *p++);
    } else if (*p < 0x80) {
      jput(b, (const char *)p++, 1);
    } else {
      int n = utf8_len(p);
      if (n)
        jput(b, (const char *)p, (size_t)n), p += n;
      else
        JLIT(b, "\\ufffd"), p++;
    }
  }
  JLIT(b, "\"");
}

static void jfloat(jbuf *b, int32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  if (isnan(f))
    JLIT(b, "\"nan\"");
  else if (isinf(f))
    jstr(b, f > 0 ? "inf" : "-inf");
  else
    jprintf(b, "%.9g", (double)f);
}

/* ---- names for the format's numbers ---- */

static const char *part_type_name(uint32_t t) {
  static const char *const names[] = {NULL, "MODEL", "TENSORS", "TASKS",  "WEIGHTS", "STRINGS", "VPROGS",
                                      "IO", "GEARS", "SOURCES", "COUNTS", "ZMAP",    "ONODES"};
  return t < sizeof names / sizeof *names && names[t] ? names[t] : "?";
}

static const char *precision_name(uint32_t p) {
  static const char *const names[] = {"force_fp16", "must_keep_origin_dtype", "allow_fp32_to_fp16",
                                      "allow_mix_precision"};
  return p < sizeof names / sizeof *names ? names[p] : "?";
}

static const char *format_name(uint32_t f) {
  static const char *const names[] = {"ND", "NCHW", "NHWC", "NC1HWC0"};
  return f < sizeof names / sizeof *names ? names[f] : "?";
}

static const char *gear_kind_name(uint32_t k) {
  static const char *const names[] = {"none", "batch", "image_size", "dims"};
  return k < sizeof names / sizeof *names ? names[k] : "?";
}

static const char *region_name(uint32_t r) {
  static const char *const names[] = {"WEIGHTS", "WORKSPACE", "INPUT", "OUTPUT"};
  return r < sizeof names / sizeof *names ? names[r] : "?";
}

static const char *act_name(int32_t a) {
  static const char *const names[OM_ACT_COUNT] = {"none", "relu", "clip", "gelu", "gelu_tanh", "silu"};
  return a >= 0 && a < (int32_t)(sizeof names / sizeof *names) ? names[a] : NULL;
}

static const char *pool_mode_name(int32_t m) { return m == 0 ? "max" : m == 1 ? "avg" : NULL; }

static const char *reduce_op_name(int32_t op) {
  static const char *const names[OM_REDUCE_OP_COUNT] = {"sum",       "mean",      "max",    "min",
                                                        "prod",      "l1",        "l2",     "logsum",
                                                        "logsumexp", "sumsquare", "argmax", "argmin"};
  return op >= 0 && op < OM_REDUCE_OP_COUNT ? names[op] : NULL;
}

/* ---- the dump ---- */

/* The verified package's parts, located from the partition table. */
typedef struct pkg {
  const uint8_t *base;
  const om_header *h;
  const om_partition *parts;
  const om_model_def *def;
  const uint32_t *io;
  const om_tensor *tensors;
  const om_task *tasks;
  const char *strings;
  uint64_t weights_bytes; /* decoded (logical) bytes */
  const uint8_t *weights; /* the WEIGHTS partition, or unzipped */
  uint64_t stored_bytes;  /* of the WEIGHTS partition */
  const uint8_t *zmap;    /* ZMAP partition, or NULL */
  uint8_t *unzipped;      /* the decoded weights of a ZMAP package (malloc'd, pkg_free), or NULL */
  const uint8_t *vprogs;
  const uint32_t *formats;       /* IO partition, or NULL */
  const om_count *counts;        /* COUNTS partition, or NULL */
  const om_onode *onodes;        /* ONODES partition, or NULL */
  const om_gears *gears;         /* GEARS partition, or NULL */
  const om_task_source *sources; /* NULL without a SOURCES partition */
  const uint32_t *source_names;
} pkg;

static void pkg_free(pkg *p) { free(p->unzipped); }

/* Locates the parts of a package the loader verified; a ZMAP package's
 * weights are decoded (pkg_free frees them). */
static void locate(pkg *p, const uint8_t *base) {
  p->base = base;
  p->h = (const om_header *)base;
  p->parts = (const om_partition *)(base + sizeof(om_header));
  for (uint32_t i = 0; i < p->h->npartitions; i++) {
    const om_partition *pt = &p->parts[i];
    const uint8_t *at = base + pt->offset;
    switch (pt->type) {
    case OM_PART_MODEL:
      p->def = (const om_model_def *)at;
      p->io = (const uint32_t *)(at + sizeof(om_model_def));
      break;
    case OM_PART_TENSORS: p->tensors = (const om_tensor *)at; break;
    case OM_PART_TASKS: p->tasks = (const om_task *)at; break;
    case OM_PART_STRINGS: p->strings = (const char *)at; break;
    case OM_PART_WEIGHTS:
      p->weights = at;
      p->weights_bytes = p->stored_bytes = pt->size;
      break;
    case OM_PART_ZMAP: p->zmap = at; break;
    case OM_PART_VPROGS: p->vprogs = at; break;
    case OM_PART_IO: p->formats = (const uint32_t *)at; break;
    case OM_PART_COUNTS: p->counts = (const om_count *)at; break;
    case OM_PART_ONODES: p->onodes = (const om_onode *)at; break;
    case OM_PART_GEARS: p->gears = (const om_gears *)at; break;
    case OM_PART_SOURCES:
      p->sources = (const om_task_source *)(at + sizeof(om_sources));
      p->source_names = (const uint32_t *)(at + sizeof(om_sources) +
                                           (size_t)((const om_sources *)at)->ntasks * sizeof(om_task_source));
      break;
    }
  }
  if (p->zmap) { /* the loader checked it; on allocation failure the dump shows the stored bytes */
    om_zmap h;
    memcpy(&h, p->zmap, sizeof h);
    if (h.logical_bytes < SIZE_MAX &&
        (p->unzipped = malloc((size_t)h.logical_bytes ? (size_t)h.logical_bytes : 1))) {
      zmap_decode(p->zmap + sizeof h, h.logical_bytes / OM_ZMAP_CHUNK, p->weights, p->unzipped);
      p->weights = p->unzipped;
      p->weights_bytes = h.logical_bytes;
    }
  }
}

static void dump_header(jbuf *b, const pkg *p) {
  const om_header *h = p->h;
  jprintf(b,
          "  \"header\": {\"magic\": \"%.8s\", \"version\": \"%u.%u\", \"header_len\": %u, "
          "\"file_len\": %llu, \"npartitions\": %u, \"header_crc\": \"0x%08x\"},\n",
          h->magic, h->major, h->minor, h->header_len, (unsigned long long)h->file_len, h->npartitions,
          h->header_crc);
  JLIT(b, "  \"partitions\": [\n");
  for (uint32_t i = 0; i < h->npartitions; i++) {
    const om_partition *pt = &p->parts[i];
    jprintf(b, "    {\"type\": \"%s\", \"offset\": %llu, \"size\": %llu, \"crc32c\": \"0x%08x\"}%s\n",
            part_type_name(pt->type), (unsigned long long)pt->offset, (unsigned long long)pt->size,
            pt->crc32c, i + 1 < h->npartitions ? "," : "");
  }
  JLIT(b, "  ],\n");
}

static void dump_model(jbuf *b, const pkg *p) {
  const om_model_def *d = p->def;
  JLIT(b, "  \"model\": {\n    \"name\": ");
  jstr(b, p->strings + d->name);
  JLIT(b, ",\n    \"soc\": ");
  jstr(b, p->strings + d->soc);
  JLIT(b, ",\n    \"atc_version\": ");
  jstr(b, p->strings + d->atc_version);
  JLIT(b, ",\n    \"cmdline\": ");
  jstr(b, p->strings + d->cmdline);
  if (p->strings[d->singleop]) {
    JLIT(b, ",\n    \"singleop\": ");
    jstr(b, p->strings + d->singleop);
  }
  jprintf(b, ",\n    \"precision\": \"%s\",\n    \"ai_cores\": %u,\n", precision_name(d->precision),
          d->ai_cores);
  jprintf(b, "    \"ninputs\": %u, \"noutputs\": %u, \"ntensors\": %u, \"ntasks\": %u,\n", d->ninputs,
          d->noutputs, d->ntensors, d->ntasks);
  jprintf(b, "    \"workspace_bytes\": %llu,\n", (unsigned long long)d->workspace_bytes);
  jprintf(b,
          "    \"buffers\": {\"l1_bytes\": %u, \"l0a_bytes\": %u, \"l0b_bytes\": %u, \"l0c_bytes\": %u, "
          "\"ub_bytes\": %u}\n  },\n",
          d->l1_bytes, d->l0a_bytes, d->l0b_bytes, d->l0c_bytes, d->ub_bytes);
  jprintf(b, "  \"weights\": {\"bytes\": %llu", (unsigned long long)p->weights_bytes);
  if (p->zmap) jprintf(b, ", \"stored_bytes\": %llu", (unsigned long long)p->stored_bytes);
  JLIT(b, "},\n");
}

/* formats: the IO partition's entries for these n, or NULL; counts and
 * onodes the COUNTS and ONODES partitions' (outputs only), or NULL. */
static void dump_io(jbuf *b, const pkg *p, const char *key, const uint32_t *io, const uint32_t *formats,
                    const om_count *counts, const om_onode *onodes, uint32_t n) {
  jprintf(b, "  \"%s\": [", key);
  for (uint32_t i = 0; i < n; i++) {
    jprintf(b, "%s{\"tensor\": %u, \"name\": ", i ? ", " : "", io[i]);
    jstr(b, p->strings + p->tensors[io[i]].name);
    jprintf(b, ", \"format\": \"%s\"", format_name(formats ? formats[i] : OM_IO_ND));
    if (counts && counts[i].axis != OM_NONE)
      jprintf(b, ", \"count_axis\": %u, \"count_tensor\": %u", counts[i].axis, counts[i].count);
    if (onodes && onodes[i].node) {
      JLIT(b, ", \"node\": ");
      jstr(b, p->strings + onodes[i].node);
      jprintf(b, ", \"edge\": %u%s", onodes[i].edge,
              onodes[i].flags & OM_ONODE_PICKED ? ", \"picked\": true" : "");
    }
    JLIT(b, "}");
  }
  JLIT(b, "],\n");
}

/* The GEARS partition: each gear's values, tensors, tasks, workspace and I/O tensors. */
static void dump_gears(jbuf *b, const pkg *p) {
  if (!p->gears) return;
  const om_gears *h = p->gears;
  const om_gear *g = (const om_gear *)(h + 1);
  uint32_t nio = p->def->ninputs + p->def->noutputs;
  const uint32_t *io = (const uint32_t *)(g + h->ngears);
  jprintf(b, "  \"gears\": {\"kind\": \"%s\", \"gears\": [\n", gear_kind_name(h->kind));
  for (uint32_t i = 0; i < h->ngears; i++, io += nio) {
    JLIT(b, "    {\"values\": [");
    for (uint32_t v = 0; v < h->nvalues; v++)
      jprintf(b, "%s%lld", v ? ", " : "", (long long)g[i].values[v]);
    jprintf(b,
            "], \"first_tensor\": %u, \"ntensors\": %u, \"first_task\": %u, \"ntasks\": %u, "
            "\"workspace_bytes\": %llu, \"io\": [",
            g[i].first_tensor, g[i].ntensors, g[i].first_task, g[i].ntasks,
            (unsigned long long)g[i].workspace_bytes);
    for (uint32_t k = 0; k < nio; k++)
      jprintf(b, "%s%u", k ? ", " : "", io[k]);
    jprintf(b, "]}%s\n", i + 1 < h->ngears ? "," : "");
  }
  JLIT(b, "  ]},\n");
}

static void dump_tensors(jbuf *b, const pkg *p) {
  JLIT(b, "  \"tensors\": [\n");
  for (uint32_t i = 0; i < p->def->ntensors; i++) {
    const om_tensor *t = &p->tensors[i];
    jprintf(b, "    {\"index\": %u, \"name\": ", i);
    jstr(b, p->strings + t->name);
    jprintf(b,
            ", \"region\": \"%s\", \"region_index\": %u, \"dtype\": \"%s\", \"layout\": \"%s\", \"dims\": [",
            region_name(t->region), t->index, dtype_name((int)t->dtype), layout_name((int)t->layout));
    for (uint32_t k = 0; k < t->rank; k++)
      jprintf(b, "%s%lld", k ? ", " : "", (long long)t->dims[k]);
    jprintf(b, "], \"offset\": %llu, \"bytes\": %llu}%s\n", (unsigned long long)t->offset,
            (unsigned long long)t->bytes, i + 1 < p->def->ntensors ? "," : "");
  }
  JLIT(b, "  ],\n");
}

static void dump_param(jbuf *b, om_param_type type, int32_t v) {
  const char *name = NULL;
  switch (type) {
  case OM_PT_INT: jprintf(b, "%d", v); return;
  case OM_PT_HEX: jprintf(b, "\"%#x\"", (unsigned)v); return;
  case OM_PT_F32: jfloat(b, v); return;
  case OM_PT_ACT: name = act_name(v); break;
  case OM_PT_POOL_MODE: name = pool_mode_name(v); break;
  case OM_PT_REDUCE_OP: name = reduce_op_name(v); break;
  }
  if (name)
    jprintf(b, "\"%s\"", name);
  else
    jprintf(b, "%d", v);
}

/* A CONV2D / CONV3D / DWCONV / MATMUL task with an epilogue program (epilogue = 1,
 * epilogue_offset, its extra inputs in the slots after the fixed ones and
 * x_scale): 1 and its program offset. */
static int task_epilogue(const om_task *t, uint32_t *offset_out) {
  int conv = t->kind == OM_TASK_CONV2D || t->kind == OM_TASK_CONV3D || t->kind == OM_TASK_DWCONV,
      mm = t->kind == OM_TASK_MATMUL;
  if (!(conv && t->params[OM_CONV_P_EPILOGUE] == 1) && !(mm && t->params[OM_MATMUL_P_EPILOGUE] == 1))
    return 0;
  *offset_out = (uint32_t)t->params[conv ? OM_CONV_P_EPILOGUE_OFFSET : OM_MATMUL_P_EPILOGUE_OFFSET];
  return 1;
}

/* A CONV2D task with an x_scale (x_scale = 1, in slot OM_CONV_T_X_SCALE). */
static int conv_x_scale(const om_task *t) {
  return t->kind == OM_TASK_CONV2D && t->params[OM_CONV_P_X_SCALE] == 1;
}

/* An AIPP record (om_format.h) as JSON members, as atc's aipp_op names them. */
static void aipp_json(jbuf *b, const om_aipp_params *a) {
  static const char *const formats[] = {"?", "YUV420SP_U8", "XRGB8888_U8", "RGB888_U8", "YUV400_U8"};
  jprintf(b, "\"input_format\": \"%s\", \"src_image_size_w\": %d, \"src_image_size_h\": %d, ",
          formats[a->input_format <= 4 ? a->input_format : 0], a->src_w, a->src_h);
  jprintf(b, "\"csc_switch\": %d, \"rbuv_swap_switch\": %d, \"ax_swap_switch\": %d, ", a->csc, a->rbuv_swap,
          a->ax_swap);
  jprintf(b, "\"crop\": %d, \"load_start_pos_w\": %d, \"load_start_pos_h\": %d, \"crop_size_w\": %d, ",
          a->crop, a->crop_x, a->crop_y, a->crop_w);
  jprintf(b, "\"crop_size_h\": %d, \"padding\": %d, \"left_padding_size\": %d, \"right_padding_size\": %d, ",
          a->crop_h, a->padding, a->pad_left, a->pad_right);
  jprintf(b, "\"top_padding_size\": %d, \"bottom_padding_size\": %d, \"padding_value\": %.9g, \"matrix\": [",
          a->pad_top, a->pad_bottom, (double)a->pad_value);
  for (int i = 0; i < 9; i++)
    jprintf(b, "%s%d", i ? ", " : "", a->matrix[i / 3][i % 3]);
  jprintf(b, "], \"input_bias\": [%d, %d, %d], \"output_bias\": [%d, %d, %d], \"mean_chn\": [",
          a->input_bias[0], a->input_bias[1], a->input_bias[2], a->output_bias[0], a->output_bias[1],
          a->output_bias[2]);
  for (int i = 0; i < 4; i++)
    jprintf(b, "%s%d", i ? ", " : "", a->mean[i]);
  JLIT(b, "], \"min_chn\": [");
  for (int i = 0; i < 4; i++)
    jprintf(b, "%s%.9g", i ? ", " : "", (double)a->min[i]);
  JLIT(b, "], \"var_reci_chn\": [");
  for (int i = 0; i < 4; i++)
    jprintf(b, "%s%.9g", i ? ", " : "", (double)a->var_reci[i]);
  JLIT(b, "]");
}

static void dump_task(jbuf *b, const pkg *p, uint32_t i) {
  const om_task *t = &p->tasks[i];
  const om_kind_desc *k = om_kind_desc_of(t->kind);
  jprintf(b, "    {\"index\": %u, \"kind\": ", i);
  if (k)
    jprintf(b, "\"%s\"", k->name);
  else
    jprintf(b, "%u", t->kind);
  JLIT(b, ", \"name\": ");
  jstr(b, p->strings + t->name);
  jprintf(b, ", \"block_dim\": %u,\n      \"tensors\": {", t->block_dim);
  uint32_t vprog_inputs = 0, epi_off = 0; /* VPROG slots are the program's inputs, then outputs */
  const int epi = task_epilogue(t, &epi_off);
  const uint32_t epi_first =
      t->kind == OM_TASK_MATMUL ? OM_MATMUL_NTENSORS : OM_CONV_NTENSORS + (uint32_t)conv_x_scale(t);
  if (t->kind == OM_TASK_VPROG)
    vprog_inputs = ((const om_vprog *)(p->vprogs + t->params[OM_VPROG_P_PROGRAM]))->ninputs;
  for (uint32_t s = 0; s < t->ntensors; s++) {
    const char *slot = k ? k->slots[s] : NULL;
    if (t->kind == OM_TASK_VPROG)
      jprintf(b, "%s\"%s%u\": ", s ? ", " : "", s < vprog_inputs ? "in" : "out",
              s < vprog_inputs ? s : s - vprog_inputs);
    else if (slot)
      jprintf(b, "%s\"%s\": ", s ? ", " : "", slot);
    else if (s == OM_CONV_T_X_SCALE && conv_x_scale(t))
      jprintf(b, ", \"x_scale\": ");
    else if (epi) /* the program's input 1 at the first slot after the fixed ones and x_scale */
      jprintf(b, "%s\"epi_in%u\": ", s ? ", " : "", s + 1 - epi_first);
    else
      jprintf(b, "%s\"slot%u\": ", s ? ", " : "", s);
    if (t->tensors[s] == OM_NONE)
      JLIT(b, "null");
    else
      jprintf(b, "%u", t->tensors[s]);
  }
  JLIT(b, "},\n      \"params\": ");
  if (k) {
    JLIT(b, "{");
    for (int j = 0, n = 0; j < OM_TASK_MAX_PARAMS; j++) { /* the named ones (an epilogue's follow) */
      if (!k->params[j].name) continue;
      jprintf(b, "%s\"%s\": ", n++ ? ", " : "", k->params[j].name);
      dump_param(b, k->params[j].type, t->params[j]);
    }
    if (epi) jprintf(b, ", \"epilogue\": %u", epi_off);
    if (t->kind == OM_TASK_QCONV2D && t->ntensors == OM_QCONV_NTENSORS_R) /* the residual's (format 2.7) */
      for (int j = 0; j < OM_TASK_MAX_PARAMS; j++) {
        if (!om_qconv_residual_params[j].name) continue;
        jprintf(b, ", \"%s\": ", om_qconv_residual_params[j].name);
        dump_param(b, om_qconv_residual_params[j].type, t->params[j]);
      }
    /* (shown only when set, so that every other TRANSDATA reads as before) */
    if (t->kind == OM_TASK_TRANSDATA && t->params[OM_TRANSDATA_P_CHANNELS_LAST])
      jprintf(b, "%s\"channels_last\": %d", k->params[0].name ? ", " : "",
              t->params[OM_TRANSDATA_P_CHANNELS_LAST]);
    if (t->kind == OM_TASK_TRANSDATA &&
        (t->params[OM_TRANSDATA_P_SATURATE] || t->params[OM_TRANSDATA_P_ROUND_MODE]))
      jprintf(b, "%s\"saturate\": %d, \"round_mode\": %d",
              k->params[0].name || t->params[OM_TRANSDATA_P_CHANNELS_LAST] ? ", " : "",
              t->params[OM_TRANSDATA_P_SATURATE], t->params[OM_TRANSDATA_P_ROUND_MODE]);
    if (t->kind == OM_TASK_AIPP) { /* static: the record in WEIGHTS; dynamic: an input's */
      const om_tensor *par = &p->tensors[t->tensors[OM_AIPP_T_PARAMS]];
      if (par->region == OM_REGION_WEIGHTS) {
        om_aipp_params a;
        memcpy(&a, p->weights + par->offset, sizeof a);
        JLIT(b, "\"aipp_mode\": \"static\", ");
        aipp_json(b, &a);
      } else {
        jprintf(b, "\"aipp_mode\": \"dynamic\", \"params_input\": %u", par->index);
      }
    }
    JLIT(b, "}");
  } else {
    JLIT(b, "[");
    for (int j = 0; j < OM_TASK_MAX_PARAMS; j++)
      jprintf(b, "%s%d", j ? ", " : "", t->params[j]);
    JLIT(b, "]");
  }
  if (p->sources) { /* SOURCES: the ONNX nodes, and the ONNX tensor of each written slot */
    const om_task_source *r = &p->sources[i];
    JLIT(b, ",\n      \"onnx_nodes\": [");
    for (uint32_t j = 0; j < r->nnodes; j++) {
      if (j) JLIT(b, ", ");
      jstr(b, p->strings + p->source_names[r->first + j]);
    }
    JLIT(b, "], \"onnx_tensors\": {");
    for (uint32_t s = 0, n = 0; s < t->ntensors; s++) {
      uint32_t name = p->source_names[r->first + r->nnodes + s];
      if (!name) continue;
      jprintf(b, "%s\"%u\": ", n++ ? ", " : "", s);
      jstr(b, p->strings + name);
    }
    JLIT(b, "}");
  }
  jprintf(b, "}%s\n", i + 1 < p->def->ntasks ? "," : "");
}

/* One instruction as text: "r3 = mul.f32 r1, r2", "store.f16 out0, r4". */
static void dump_instr(jbuf *b, const om_vinstr *in) {
  const char *op = vop_name(in->op), *dt = dtype_name(in->dtype);
  if (in->op == VOP_STORE) {
    jprintf(b, "\"store.%s out%u, r%u\"", dt, in->a, in->b);
    return;
  }
  jprintf(b, "\"r%u = %s.%s", in->dst, op, dt);
  switch (in->op) {
  case VOP_LOAD: jprintf(b, " in%u", in->a); break;
  case VOP_CONST:
    if (in->dtype == DT_FLOAT32 || in->dtype == DT_FLOAT16)
      jprintf(b, " %.17g", in->imm.f);
    else
      jprintf(b, " %lld", (long long)in->imm.i);
    break;
  case VOP_ISINF: jprintf(b, " r%u, detect %lld", in->a, (long long)in->imm.i); break;
  default:
    if (in->op >= VOP_SELECT)
      jprintf(b, " r%u, r%u, r%u", in->a, in->b, in->c);
    else if (in->op >= VOP_ADD)
      jprintf(b, " r%u, r%u", in->a, in->b);
    else
      jprintf(b, " r%u", in->a);
  }
  JLIT(b, "\"");
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* The programs VPROG tasks and conv epilogues name, each once, by offset
 * (no key without any). */
static void dump_vprogs(jbuf *b, const pkg *p) {
  uint32_t n = 0, *offs = malloc((p->def->ntasks ? p->def->ntasks : 1) * sizeof *offs);
  if (!offs) {
    b->nomem = 1;
    return;
  }
  for (uint32_t i = 0; i < p->def->ntasks; i++)
    if (p->tasks[i].kind == OM_TASK_VPROG)
      offs[n++] = (uint32_t)p->tasks[i].params[OM_VPROG_P_PROGRAM];
    else if (task_epilogue(&p->tasks[i], &offs[n]))
      n++;
  qsort(offs, n, sizeof *offs, cmp_u32);
  if (n) JLIT(b, "  \"vprogs\": [");
  for (uint32_t i = 0, first = 1; i < n; i++) {
    if (i && offs[i] == offs[i - 1]) continue;
    const om_vprog *h = (const om_vprog *)(p->vprogs + offs[i]);
    const om_vinstr *ins = (const om_vinstr *)(h + 1);
    jprintf(b, "%s\n    {\"offset\": %u, \"ninputs\": %u, \"noutputs\": %u, \"nregs\": %u, \"instrs\": [",
            first ? "" : ",", offs[i], h->ninputs, h->noutputs, h->nregs);
    for (uint32_t k = 0; k < h->ninstrs; k++) {
      jprintf(b, "%s\n      ", k ? "," : "");
      dump_instr(b, &ins[k]);
    }
    JLIT(b, "]}");
    first = 0;
  }
  if (n) JLIT(b, "\n  ],\n");
  free(offs);
}

/* Reads the whole file into a 64-byte aligned buffer (omrt_model_load_memory needs that). */
static status read_aligned(const char *path, void **data_out, size_t *size_out, diag *d) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return diag_set(d, ST_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > SIZE_MAX - OM_ALIGN) {
    int err = errno;
    close(fd);
    return diag_set(d, ST_ERR_IO, "%s: not a readable regular file%s%s", path, err ? ": " : "",
                    err ? strerror(err) : "");
  }
  size_t size = (size_t)st.st_size, got = 0;
  void *buf = NULL;
  if (posix_memalign(&buf, OM_ALIGN, size ? size : OM_ALIGN) != 0) {
    close(fd);
    return diag_set(d, ST_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, size);
  }
  while (got < size) {
    ssize_t n = read(fd, (char *)buf + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : 0;
      close(fd);
      free(buf);
      return diag_set(d, ST_ERR_IO, "%s: read failed: %s", path, err ? strerror(err) : "file shrank");
    }
    got += (size_t)n;
  }
  close(fd);
  *data_out = buf;
  *size_out = size;
  return ST_OK;
}

status om_json_memory(const void *data, size_t size, const char *label, char **json_out, size_t *len_out,
                      diag *d) {
  omrt_model *m;
  omrt_load_options opts = {.threads = 1}; /* not OMRT_THREADS: the dump runs nothing */
  if (omrt_model_load_memory(data, size, &opts, &m) != OMRT_OK)
    return diag_set(d, ST_ERR_INVALID, "%s: %s", label, omrt_last_error());
  omrt_model_free(m);

  pkg p = {0};
  locate(&p, data);
  jbuf b = {0};
  JLIT(&b, "{\n");
  dump_header(&b, &p);
  dump_model(&b, &p);
  dump_io(&b, &p, "inputs", p.io, p.formats, NULL, NULL, p.def->ninputs);
  dump_io(&b, &p, "outputs", p.io + p.def->ninputs, p.formats ? p.formats + p.def->ninputs : NULL, p.counts,
          p.onodes, p.def->noutputs);
  dump_gears(&b, &p);
  dump_tensors(&b, &p);
  dump_vprogs(&b, &p);
  JLIT(&b, "  \"tasks\": [\n");
  for (uint32_t i = 0; i < p.def->ntasks; i++)
    dump_task(&b, &p, i);
  JLIT(&b, "  ]\n}\n");
  pkg_free(&p);
  if (b.nomem) {
    free(b.data);
    return diag_set(d, ST_ERR_NOMEM, "%s: out of memory building the JSON dump", label);
  }
  *json_out = b.data;
  *len_out = b.len;
  return ST_OK;
}

status om_dump_json(const char *om_path, const char *json_path, diag *d) {
  void *data = NULL;
  size_t size = 0;
  char *json = NULL;
  size_t len = 0;
  status st = read_aligned(om_path, &data, &size, d);
  if (st == ST_OK) st = om_json_memory(data, size, om_path, &json, &len, d);
  if (st == ST_OK) st = atomic_write_file(json_path, json, len, d);
  free(data);
  free(json);
  return st;
}

/* ---- atc --mode=6: the summary a deployer reads ---- */

static void summary_io(jbuf *b, const omrt_model *m, int is_input) {
  int n = is_input ? omrt_model_num_inputs(m) : omrt_model_num_outputs(m);
  jprintf(b, "%s:\n", is_input ? "inputs" : "outputs");
  for (int i = 0; i < n; i++) {
    omrt_tensor_desc t;
    if (is_input)
      omrt_model_input(m, i, &t);
    else
      omrt_model_output(m, i, &t);
    jprintf(b, "  %d  %-24s %-8s %-8s [", i, t.name, dtype_name(t.dtype), format_name((uint32_t)t.format));
    for (int k = 0; k < t.rank; k++)
      jprintf(b, "%s%lld", k ? ", " : "", (long long)t.dims[k]);
    jprintf(b, "]  %zu bytes", t.bytes);
    omrt_output_node o = {0};
    if (!is_input) omrt_model_output_node(m, i, &o);
    if (o.node) jprintf(b, "  from node %s:%d%s", o.node, o.edge, o.picked ? " (--out_nodes)" : "");
    JLIT(b, "\n");
  }
}

status om_summary(const char *om_path, char **text_out, diag *d) {
  void *data = NULL;
  size_t size = 0;
  status st = read_aligned(om_path, &data, &size, d);
  if (st != ST_OK) return st;
  omrt_model *m;
  omrt_load_options opts = {.threads = 1};
  if (omrt_model_load_memory(data, size, &opts, &m) != OMRT_OK) {
    free(data);
    return diag_set(d, ST_ERR_INVALID, "%s: %s", om_path, omrt_last_error());
  }
  pkg p = {0};
  locate(&p, data);
  jbuf b = {0};
  jprintf(&b, "model:      %s (om %u.%u)\n", p.strings + p.def->name, p.h->major, p.h->minor);
  jprintf(&b, "soc:        %s, %u AI cores, %s\n", p.strings + p.def->soc, p.def->ai_cores,
          precision_name(p.def->precision));
  jprintf(&b, "atc:        %s\n", p.strings + p.def->atc_version);
  jprintf(&b, "command:    %s\n", p.strings + p.def->cmdline);
  if (p.strings[p.def->singleop]) { /* its lines as one */
    jprintf(&b, "single op:  ");
    for (const char *s = p.strings + p.def->singleop; *s; s++)
      if (*s != '\n')
        jprintf(&b, "%c", *s);
      else if (s[1])
        jprintf(&b, "; ");
    jprintf(&b, "\n");
  }
  jprintf(&b, "weights:    %llu bytes", (unsigned long long)p.weights_bytes);
  if (p.zmap) jprintf(&b, " (%llu stored: zero chunks elided)", (unsigned long long)p.stored_bytes);
  jprintf(&b, "; workspace %zu bytes; %u tasks\n", omrt_model_workspace_bytes(m), p.def->ntasks);
  summary_io(&b, m, 1);
  summary_io(&b, m, 0);
  int ng = omrt_model_num_gears(m);
  omrt_gear_desc g;
  omrt_model_gear(m, 0, &g);
  jprintf(&b, "gears:      %s", g.kind == OMRT_GEAR_NONE ? "none\n" : gear_kind_name((uint32_t)g.kind));
  for (int i = 0; g.kind != OMRT_GEAR_NONE && i < ng; i++) {
    omrt_model_gear(m, i, &g);
    jprintf(&b, "%s", i ? "; " : " ");
    for (int v = 0; v < g.nvalues; v++)
      jprintf(&b, "%s%lld", v ? "," : "", (long long)g.values[v]);
  }
  if (g.kind != OMRT_GEAR_NONE) JLIT(&b, "\n");
  for (int i = 0; i < omrt_model_num_inputs(m); i++) { /* AIPP, per image input */
    omrt_aipp_info a;
    if (omrt_model_input_aipp(m, i, &a) != OMRT_OK || a.mode == OMRT_AIPP_NONE) continue;
    jprintf(&b, "aipp:       input %d %s -> [%lld, %lld, %lld, %lld]", i,
            a.mode == OMRT_AIPP_STATIC ? "static" : "dynamic", (long long)a.out_dims[0],
            (long long)a.out_dims[1], (long long)a.out_dims[2], (long long)a.out_dims[3]);
    if (a.mode == OMRT_AIPP_DYNAMIC) {
      jprintf(&b, ", parameters in input %d, images up to %lld bytes\n", a.params_input,
              (long long)(a.src_bytes / a.out_dims[0]));
      continue;
    }
    const omrt_aipp *c = &a.config;
    static const char *const formats[] = {"?", "YUV420SP_U8", "XRGB8888_U8", "RGB888_U8", "YUV400_U8"};
    jprintf(&b, ", %s %dx%d", formats[c->input_format <= 4 ? c->input_format : 0], c->src_w, c->src_h);
    if (c->rbuv_swap_switch) JLIT(&b, ", rbuv_swap");
    if (c->ax_swap_switch) JLIT(&b, ", ax_swap");
    if (c->crop) jprintf(&b, ", crop %dx%d at (%d, %d)", c->crop_w, c->crop_h, c->crop_x, c->crop_y);
    if (c->padding)
      jprintf(&b, ", padding l%d r%d t%d b%d", c->pad_left, c->pad_right, c->pad_top, c->pad_bottom);
    if (c->csc_switch) JLIT(&b, ", csc");
    jprintf(&b, ", mean %d,%d,%d min %g,%g,%g var_reci %g,%g,%g\n", c->mean[0], c->mean[1], c->mean[2],
            (double)c->min[0], (double)c->min[1], (double)c->min[2], (double)c->var_reci[0],
            (double)c->var_reci[1], (double)c->var_reci[2]);
  }
  omrt_model_free(m);
  pkg_free(&p);
  free(data);
  if (b.nomem) {
    free(b.data);
    return diag_set(d, ST_ERR_NOMEM, "%s: out of memory", om_path);
  }
  *text_out = b.data;
  return ST_OK;
}
