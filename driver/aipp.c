/* aipp.c - atc --insert_op_conf (aipp.h): the aipp_op file and the graph
 * rewrite that puts AIPP in front of image inputs.
 *
 * The file is ATC's prototxt subset: blocks `aipp_op { key: value ... }`,
 * `#` comments, values that are numbers, true/false or bare words. Each
 * key is looked up in one table (name, kind, range, where it goes in the
 * om_aipp_params record); a key ATC has but this atc does not implement
 * (rotation, ...) is refused as not supported, any other as unknown. What
 * the SoC's AIPP has (its input formats, scaling) socs/<name>.yaml says:
 * a format or scaling key it lacks is refused naming that file. Ranges are checked as the key is read; what
 * depends on the model (channels, sizes, crop inside the image) when the block meets its input in
 * atc_aipp_apply, which fills the defaults: the image is the model input's H and W less the padding, the crop
 * window the whole image. The record written is exactly what the AIPP task's rules (om_format.h) accept, so
 * libomrt's loader agrees with every check here.
 */
#include "aipp.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_MODE, K_RANK, K_MAXSIZE, K_FORMAT, K_BOOL, K_INT, K_FLOAT };

typedef struct key_desc {
  const char *name;
  int kind;
  double lo, hi;
  size_t off;    /* into om_aipp_params (K_BOOL: uint8_t; K_INT: int32_t; K_FLOAT: float) */
  int is_static; /* only in static mode */
} key_desc;

#define P(f) offsetof(om_aipp_params, f)
#define MAT(i, j)                                                                                            \
  { "matrix_r" #i "c" #j, K_INT, -32768, 32767, P(matrix[i][j]), 1 }
#define CHN(i)                                                                                               \
  {"mean_chn_" #i, K_INT, 0, 255, P(mean[i]), 1}, {"min_chn_" #i, K_FLOAT, 0, 255, P(min[i]), 1}, {          \
    "var_reci_chn_" #i, K_FLOAT, -65504, 65504, P(var_reci[i]), 1                                            \
  }
static const key_desc keys[] = {
    {"aipp_mode", K_MODE, 0, 0, 0, 0},
    {"related_input_rank", K_RANK, 0, 255, 0, 0},
    {"max_src_image_size", K_MAXSIZE, 1, 1e9, 0, 0},
    {"input_format", K_FORMAT, 0, 0, P(input_format), 1},
    {"src_image_size_w", K_INT, 0, OM_AIPP_MAX_SIDE, P(src_w), 1},
    {"src_image_size_h", K_INT, 0, OM_AIPP_MAX_SIDE, P(src_h), 1},
    {"csc_switch", K_BOOL, 0, 1, P(csc), 1},
    {"rbuv_swap_switch", K_BOOL, 0, 1, P(rbuv_swap), 1},
    {"ax_swap_switch", K_BOOL, 0, 1, P(ax_swap), 1},
    {"crop", K_BOOL, 0, 1, P(crop), 1},
    {"load_start_pos_w", K_INT, 0, OM_AIPP_MAX_SIDE - 1, P(crop_x), 1},
    {"load_start_pos_h", K_INT, 0, OM_AIPP_MAX_SIDE - 1, P(crop_y), 1},
    {"crop_size_w", K_INT, 0, OM_AIPP_MAX_SIDE, P(crop_w), 1},
    {"crop_size_h", K_INT, 0, OM_AIPP_MAX_SIDE, P(crop_h), 1},
    {"padding", K_BOOL, 0, 1, P(padding), 1},
    {"left_padding_size", K_INT, 0, 32, P(pad_left), 1},
    {"right_padding_size", K_INT, 0, 32, P(pad_right), 1},
    {"top_padding_size", K_INT, 0, 32, P(pad_top), 1},
    {"bottom_padding_size", K_INT, 0, 32, P(pad_bottom), 1},
    {"padding_value", K_FLOAT, -65504, 65504, P(pad_value), 1},
    MAT(0, 0),
    MAT(0, 1),
    MAT(0, 2),
    MAT(1, 0),
    MAT(1, 1),
    MAT(1, 2),
    MAT(2, 0),
    MAT(2, 1),
    MAT(2, 2),
    {"input_bias_0", K_INT, 0, 255, P(input_bias[0]), 1},
    {"input_bias_1", K_INT, 0, 255, P(input_bias[1]), 1},
    {"input_bias_2", K_INT, 0, 255, P(input_bias[2]), 1},
    {"output_bias_0", K_INT, 0, 255, P(output_bias[0]), 1},
    {"output_bias_1", K_INT, 0, 255, P(output_bias[1]), 1},
    {"output_bias_2", K_INT, 0, 255, P(output_bias[2]), 1},
    CHN(0),
    CHN(1),
    CHN(2),
    CHN(3),
};
#undef P
#undef MAT
#undef CHN

/* ATC's keys for scaling, which a SoC has or lacks (socs/<name>.yaml's
 * aipp.scaling); `resize: false` asks for nothing. */
static const char *const scaling_keys[] = {"resize", "resize_input_w", "resize_input_h", "resize_output_w",
                                           "resize_output_h"};
/* ATC's keys for what this atc does not do. */
static const char *const unsupported_keys[] = {
    "rotation",       "rotation_angle", "support_rotation",       "single_line_mode",
    "cpadding_value", "padding_mode",   "sfr_filling_hblank_ch0",
};

/* The formats this atc implements (om_aipp_format), and the others ATC's
 * input_format names (AscendCL's aclAippInputFormat). */
static const char *const format_names[] = {NULL, "YUV420SP_U8", "XRGB8888_U8", "RGB888_U8", "YUV400_U8"};
static const char *const other_formats[] = {"NC1HWC0DI_FP16", "NC1HWC0DI_S8", "ARGB8888_U8", "YUYV_U8",
                                            "YUV422SP_U8",    "AYUV444_U8",   "RAW10",       "RAW12",
                                            "RAW16",          "RAW24"};

typedef struct lexer {
  const char *path, *p;
  int line;
  const soc_info *soc;
  diag *d;
} lexer;

/* 1 when the SoC's AIPP reads format `name` (socs/<name>.yaml's aipp.formats). */
static int soc_reads(const soc_info *soc, const char *name) {
  size_t n = strlen(name);
  for (const char *f = strstr(soc->aipp_formats, name); f; f = strstr(f + 1, name))
    if ((f == soc->aipp_formats || f[-1] == ' ') && (f[n] == ' ' || f[n] == '\0')) return 1;
  return 0;
}

static void skip_space(lexer *L) {
  for (;;) {
    while (*L->p == ' ' || *L->p == '\t' || *L->p == '\r' || *L->p == '\n')
      if (*L->p++ == '\n') L->line++;
    if (*L->p != '#') return;
    while (*L->p && *L->p != '\n')
      L->p++;
  }
}

/* A word or number: letters, digits, '_', '.', '-', '+'; or a quoted string (quotes dropped). */
static int read_token(lexer *L, char *buf, size_t n) {
  skip_space(L);
  size_t k = 0;
  int quoted = *L->p == '"';
  if (quoted) L->p++;
  while (*L->p &&
         (quoted ? *L->p != '"' && *L->p != '\n'
                 : (*L->p == '_' || *L->p == '.' || *L->p == '-' || *L->p == '+' ||
                    (*L->p >= '0' && *L->p <= '9') || ((*L->p | 32) >= 'a' && (*L->p | 32) <= 'z')))) {
    if (k + 1 < n) buf[k++] = *L->p;
    L->p++;
  }
  if (quoted && *L->p == '"') L->p++;
  buf[k] = '\0';
  return k > 0;
}

static status fail(lexer *L, const char *fmt, const char *a, const char *b) {
  char msg[1024];
  snprintf(msg, sizeof msg, fmt, a, b);
  return diag_set(L->d, ST_ERR_INVALID, "--insert_op_conf=%s:%d: %s", L->path, L->line, msg);
}

static status parse_value(lexer *L, atc_aipp_op *op, const key_desc *k, const char *v) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  int numeric = *v && !*end && errno == 0 && isfinite(x);
  switch (k->kind) {
  case K_MODE:
    if (strcmp(v, "static") && strcmp(v, "dynamic"))
      return fail(L, "key '%s' = '%s': expected static or dynamic", k->name, v);
    op->dynamic = strcmp(v, "dynamic") == 0;
    return ST_OK;
  case K_FORMAT: {
    int known = 0;
    for (size_t f = 0; f < sizeof other_formats / sizeof *other_formats; f++)
      known |= strcmp(v, other_formats[f]) == 0;
    for (uint32_t f = 1; f < sizeof format_names / sizeof *format_names; f++)
      if (strcmp(v, format_names[f]) == 0) {
        if (!soc_reads(L->soc, v)) break;
        op->p.input_format = f;
        op->format_line = L->line;
        return ST_OK;
      }
    char msg[600];
    snprintf(msg, sizeof msg, "key '%%s' = '%%s': %s; %.63s's AIPP reads %.159s (%.200s: aipp.formats)",
             known && soc_reads(L->soc, v) ? "not supported by this atc" : "not an input format of this SoC",
             L->soc->name, L->soc->aipp_formats, L->soc->path);
    return fail(L, msg, k->name, v);
  }
  case K_BOOL: {
    int b = strcmp(v, "true") == 0 || strcmp(v, "1") == 0    ? 1
            : strcmp(v, "false") == 0 || strcmp(v, "0") == 0 ? 0
                                                             : -1;
    if (b < 0) return fail(L, "key '%s' = '%s': expected true or false", k->name, v);
    *((uint8_t *)&op->p + k->off) = (uint8_t)b;
    if (k->off == offsetof(om_aipp_params, crop)) op->crop_on_line = L->line;
    if (k->off == offsetof(om_aipp_params, padding)) op->pad_on_line = L->line;
    return ST_OK;
  }
  default: break;
  }
  if (!numeric || x < k->lo || x > k->hi || (k->kind != K_FLOAT && x != floor(x))) {
    char what[200];
    snprintf(what, sizeof what, "%s %.9g..%.9g", k->kind == K_FLOAT ? "a number in" : "an integer in", k->lo,
             k->hi);
    char msg[300];
    snprintf(msg, sizeof msg, "key '%%s' = '%%s': expected %s", what);
    return fail(L, msg, k->name, v);
  }
  switch (k->kind) {
  case K_RANK: op->rank = (int)x; break;
  case K_MAXSIZE: op->max_src_image_size = (int64_t)x; break;
  case K_INT: {
    int32_t i = (int32_t)x;
    memcpy((uint8_t *)&op->p + k->off, &i, 4);
    if (k->off == offsetof(om_aipp_params, src_w) || k->off == offsetof(om_aipp_params, src_h))
      op->src_line = op->src_line ? op->src_line : L->line;
    if (k->off >= offsetof(om_aipp_params, crop_x) && k->off <= offsetof(om_aipp_params, crop_h))
      op->crop_line = op->crop_line ? op->crop_line : L->line;
    if (k->off >= offsetof(om_aipp_params, pad_left) && k->off <= offsetof(om_aipp_params, pad_bottom))
      op->pad_line = op->pad_line ? op->pad_line : L->line;
    break;
  }
  default: {
    float f = (float)x;
    memcpy((uint8_t *)&op->p + k->off, &f, 4);
    break;
  }
  }
  return ST_OK;
}

static status parse_block(lexer *L, atc_aipp_op *op) {
  memset(op, 0, sizeof *op);
  op->line = L->line;
  for (int i = 0; i < 4; i++)
    op->p.var_reci[i] = 1.0f;
  int seen[sizeof keys / sizeof *keys] = {0}, any_static = 0, static_line = 0;
  const char *static_key = NULL;
  for (;;) {
    skip_space(L);
    if (*L->p == '}') {
      L->p++;
      break;
    }
    char key[128], val[128];
    if (!*L->p) return fail(L, "aipp_op block opened on an earlier line has no closing '}'%s%s", "", "");
    if (!read_token(L, key, sizeof key)) {
      char c[2] = {*L->p, 0};
      return fail(L, "unexpected '%s'%s", c, "");
    }
    skip_space(L);
    if (*L->p != ':') return fail(L, "key '%s': expected ':' after it%s", key, "");
    L->p++;
    skip_space(L);
    int vline = L->line;
    if (!read_token(L, val, sizeof val)) return fail(L, "key '%s': no value%s", key, "");
    L->line = vline;
    const key_desc *k = NULL;
    for (size_t i = 0; i < sizeof keys / sizeof *keys && !k; i++)
      if (strcmp(keys[i].name, key) == 0) k = &keys[i];
    if (!k && strcmp(key, "resize") == 0 && strcmp(val, "false") == 0) continue; /* asks for nothing */
    if (!k) {
      for (size_t i = 0; i < sizeof scaling_keys / sizeof *scaling_keys; i++) {
        if (strcmp(scaling_keys[i], key)) continue;
        char msg[600];
        snprintf(msg, sizeof msg, "key '%%s' = '%%s': %s (%.200s: aipp.scaling: %s)",
                 L->soc->aipp_scaling ? "AIPP scaling is not supported by this atc"
                                      : "this SoC's AIPP does not scale",
                 L->soc->path, L->soc->aipp_scaling ? "true" : "false");
        return fail(L, msg, key, val);
      }
      for (size_t i = 0; i < sizeof unsupported_keys / sizeof *unsupported_keys; i++)
        if (strcmp(unsupported_keys[i], key) == 0)
          return fail(L, "key '%s' = '%s': not supported by this atc (no AIPP rotation or single-line mode)",
                      key, val);
      return fail(L, "unknown key '%s' = '%s'", key, val);
    }
    if (seen[k - keys]++) return fail(L, "key '%s' = '%s': given twice in one aipp_op", key, val);
    if (k->is_static && !any_static) any_static = 1, static_line = L->line, static_key = k->name;
    status st = parse_value(L, op, k, val);
    if (st) return st;
  }
  if (op->dynamic && any_static) {
    L->line = static_line;
    return fail(L,
                "key '%s': dynamic AIPP takes its parameters at run time; the file gives only "
                "related_input_rank and max_src_image_size%s",
                static_key, "");
  }
  if (op->dynamic && !op->max_src_image_size) {
    L->line = op->line;
    return fail(L, "aipp_op: dynamic AIPP needs max_src_image_size%s%s", "", "");
  }
  if (!op->dynamic && op->max_src_image_size) {
    L->line = op->line;
    return fail(L, "aipp_op: max_src_image_size is for aipp_mode: dynamic%s%s", "", "");
  }
  if (!op->dynamic && !op->p.input_format) {
    L->line = op->line;
    return fail(L, "aipp_op: static AIPP needs input_format%s%s", "", "");
  }
  return ST_OK;
}

static status parse_text(lexer *L, arena *a, atc_aipp_conf *conf) {
  enum { MAX_OPS = 16 };
  conf->ops = arena_array(a, MAX_OPS, sizeof *conf->ops);
  if (!conf->ops) return diag_set(L->d, ST_ERR_NOMEM, "out of memory");
  for (;;) {
    char word[128];
    skip_space(L);
    if (!*L->p) break;
    if (!read_token(L, word, sizeof word) || strcmp(word, "aipp_op"))
      return fail(L, "expected 'aipp_op {', found '%s'%s", word, "");
    skip_space(L);
    if (*L->p != '{') return fail(L, "expected '{' after aipp_op%s%s", "", "");
    L->p++;
    if (conf->nops == MAX_OPS) return fail(L, "more than 16 aipp_op blocks%s%s", "", "");
    status st = parse_block(L, &conf->ops[conf->nops]);
    if (st) return st;
    for (int i = 0; i < conf->nops; i++)
      if (conf->ops[i].rank == conf->ops[conf->nops].rank) {
        char r[32];
        snprintf(r, sizeof r, "%d", conf->ops[i].rank);
        L->line = conf->ops[conf->nops].line;
        return fail(L, "key 'related_input_rank' = '%s': input %s has an aipp_op already", r, r);
      }
    conf->nops++;
  }
  if (!conf->nops) return diag_set(L->d, ST_ERR_INVALID, "--insert_op_conf=%s: no aipp_op block", L->path);
  return ST_OK;
}

status atc_aipp_parse(const char *path, const soc_info *soc, arena *a, atc_aipp_conf *conf, diag *d) {
  enum { MAX_BYTES = 1 << 20 };
  memset(conf, 0, sizeof *conf);
  conf->path = path;
  FILE *f = fopen(path, "rb");
  if (!f) return diag_set(d, ST_ERR_IO, "--insert_op_conf=%s: cannot open: %s", path, strerror(errno));
  char *text = malloc(MAX_BYTES + 1);
  size_t n = text ? fread(text, 1, MAX_BYTES, f) : 0;
  int big = text && n == MAX_BYTES && fgetc(f) != EOF;
  fclose(f);
  status st = ST_OK;
  if (!text)
    st = diag_set(d, ST_ERR_NOMEM, "out of memory");
  else if (big)
    st = diag_set(d, ST_ERR_LIMIT, "--insert_op_conf=%s: larger than 1 MiB", path);
  else if (text[n] = '\0', strlen(text) != n)
    st = diag_set(d, ST_ERR_INVALID, "--insert_op_conf=%s: holds a NUL byte", path);
  if (st == ST_OK) {
    lexer L = {path, text, 1, soc, d};
    st = parse_text(&L, a, conf);
  }
  free(text);
  return st;
}

/* An error about block op at line (0: the block's). */
static status op_fail(const atc_aipp_conf *c, const atc_aipp_op *op, int line, diag *d, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static status op_fail(const atc_aipp_conf *c, const atc_aipp_op *op, int line, diag *d, const char *fmt,
                      ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return diag_set(d, ST_ERR_INVALID, "--insert_op_conf=%s:%d: %s", c->path, line ? line : op->line, msg);
}

/* The record of a static block for input dims [N, C, H, W], defaults filled. */
static status fill_static(const atc_aipp_conf *c, const atc_aipp_op *op, const int64_t *dims,
                          om_aipp_params *p, diag *d) {
  *p = op->p;
  const int64_t C = dims[1], H = dims[2], W = dims[3];
  const int gray = p->input_format == OM_AIPP_YUV400_U8, yuv = p->input_format == OM_AIPP_YUV420SP_U8;
  if (C != (gray ? 1 : 3))
    return op_fail(c, op, op->format_line, d,
                   "key 'input_format' = '%s' gives %d channel%s; input %d has %lld",
                   format_names[p->input_format], gray ? 1 : 3, gray ? "" : "s", op->rank, (long long)C);
  if (gray && (p->csc || p->rbuv_swap))
    return op_fail(c, op, 0, d, "key '%s' = 'true': YUV400_U8 has no colour to convert or swap",
                   p->csc ? "csc_switch" : "rbuv_swap_switch");
  if (p->ax_swap && p->input_format != OM_AIPP_XRGB8888_U8)
    return op_fail(c, op, 0, d, "key 'ax_swap_switch' = 'true': only XRGB8888_U8 has an X channel");
  if (!p->padding) p->pad_left = p->pad_right = p->pad_top = p->pad_bottom = 0;
  const int64_t iw = W - p->pad_left - p->pad_right, ih = H - p->pad_top - p->pad_bottom;
  if (iw < 1 || ih < 1)
    return op_fail(c, op, op->pad_line, d, "padding leaves no image inside input %d's %lldx%lld (WxH)",
                   op->rank, (long long)W, (long long)H);
  if (!p->crop) {
    p->crop_x = p->crop_y = 0;
    if (!p->src_w) p->src_w = (int32_t)iw;
    if (!p->src_h) p->src_h = (int32_t)ih;
    if (p->src_w != iw || p->src_h != ih)
      return op_fail(
          c, op, op->src_line, d,
          "key 'src_image_size_w/h' = '%dx%d': without crop the image must be %lldx%lld, input %d's "
          "%lldx%lld (WxH) less the padding",
          p->src_w, p->src_h, (long long)iw, (long long)ih, op->rank, (long long)W, (long long)H);
    p->crop_w = p->src_w, p->crop_h = p->src_h;
  } else {
    if (!p->crop_w) p->crop_w = (int32_t)iw;
    if (!p->crop_h) p->crop_h = (int32_t)ih;
    if (p->crop_w != iw || p->crop_h != ih)
      return op_fail(
          c, op, op->crop_line, d,
          "key 'crop_size_w/h' = '%dx%d': the crop must be %lldx%lld, input %d's %lldx%lld (WxH) less "
          "the padding (this atc does not scale)",
          p->crop_w, p->crop_h, (long long)iw, (long long)ih, op->rank, (long long)W, (long long)H);
    if (!p->src_w) p->src_w = p->crop_x + p->crop_w;
    if (!p->src_h) p->src_h = p->crop_y + p->crop_h;
    if ((int64_t)p->crop_x + p->crop_w > p->src_w || (int64_t)p->crop_y + p->crop_h > p->src_h)
      return op_fail(
          c, op, op->crop_line, d,
          "key 'load_start_pos_w/h' = '%d,%d': the %dx%d crop leaves the %dx%d image (src_image_size_w/h)",
          p->crop_x, p->crop_y, p->crop_w, p->crop_h, p->src_w, p->src_h);
  }
  if (yuv && ((p->src_w | p->src_h) & 1))
    return op_fail(c, op, op->src_line, d, "key 'src_image_size_w/h' = '%dx%d': YUV420SP_U8 needs even sizes",
                   p->src_w, p->src_h);
  if (yuv && ((p->crop_x | p->crop_y) & 1))
    return op_fail(c, op, op->crop_line, d,
                   "key 'load_start_pos_w/h' = '%d,%d': YUV420SP_U8 needs even positions", p->crop_x,
                   p->crop_y);
  return ST_OK;
}

int atc_aipp_input_kind(const ir_graph *g, const ir_value *v) {
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = g->nodes[i];
    if (n->dead || n->op != IR_OP_AIPP || n->in[0] != v) continue;
    return n->in[1]->data ? 1 : 2;
  }
  return 0;
}

status atc_aipp_check_gears(const atc_aipp_conf *c, int gear_kind, diag *d) {
  for (int k = 0; k < c->nops; k++) {
    const atc_aipp_op *op = &c->ops[k];
    if (gear_kind != OM_GEAR_IMAGE_SIZE || op->dynamic) continue;
    const char *key = op->p.crop      ? "crop"
                      : op->p.padding ? "padding"
                      : op->p.src_w   ? "src_image_size_w"
                      : op->p.src_h   ? "src_image_size_h"
                                      : NULL;
    if (key)
      return op_fail(c, op,
                     op->p.crop      ? op->crop_on_line
                     : op->p.padding ? op->pad_on_line
                                     : op->src_line,
                     d,
                     "key '%s': with --dynamic_image_size the image is each gear's H x W, so static AIPP "
                     "takes no crop or padding and src_image_size_w/h 0 (ATC's rule)",
                     key);
  }
  return ST_OK;
}

/* The readers of NHWC input x that transpose it back to NCHW (perm
 * 0,3,1,2) read y, the NCHW image AIPP gives, instead; y takes the place
 * (and name) of one such value that is a graph output. */
static void absorb_transposes(ir_graph *g, ir_value *x, ir_value *y) {
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    int64_t perm[5];
    if (n->dead || n->op != IR_OP_TRANSPOSE || n->in[0] != x || ir_attr_ints(n, "perm", perm, 5) != 4 ||
        perm[0] != 0 || perm[1] != 3 || perm[2] != 1 || perm[3] != 2)
      continue;
    ir_value *t = n->out[0];
    if (t->output_index >= 0) {
      if (y->output_index >= 0) continue; /* one graph output per value */
      ir_value_swap_names(g, y, t);
    }
    ir_replace_uses(g, t, y);
  }
}

status atc_aipp_apply(ir_graph *g, const atc_aipp_conf *c, int nhwc, diag *d) {
  int ndynamic = 0;
  for (int k = 0; k < c->nops; k++) {
    const atc_aipp_op *op = &c->ops[k];
    if (op->rank >= g->ninputs)
      return op_fail(c, op, 0, d, "key 'related_input_rank' = '%d': the model has %d input%s", op->rank,
                     g->ninputs, g->ninputs == 1 ? "" : "s");
    ir_value *x = g->inputs[op->rank];
    if (x->dtype != DT_FLOAT32 || x->rank != 4)
      return op_fail(c, op, 0, d, "input %d '%s' is %s of rank %d; AIPP feeds a float [N, %s] image",
                     op->rank, x->name, dtype_name(x->dtype) ? dtype_name(x->dtype) : "?", x->rank,
                     nhwc ? "H, W, C" : "C, H, W");
    for (int i = 0; i < 4; i++)
      if (x->dims[i] < 1 || x->dims[i] > OM_AIPP_MAX_SIDE * 4)
        return op_fail(c, op, 0, d, "input %d '%s' has dim %d = %lld; AIPP needs fixed dims (--input_shape)",
                       op->rank, x->name, i, (long long)x->dims[i]);
    /* The image AIPP gives, [N, C, H, W]. */
    const int64_t nchw[4] = {x->dims[0], x->dims[nhwc ? 3 : 1], x->dims[nhwc ? 1 : 2], x->dims[nhwc ? 2 : 3]};
    om_aipp_params p;
    int64_t raw[4];
    int raw_rank = 4;
    ir_value *params;
    char pname[600];
    if (!op->dynamic) {
      status st = fill_static(c, op, nchw, &p, d);
      if (st) return st;
      const int64_t ch[] = {0, 1, 4, 3, 1};
      raw[0] = nchw[0], raw[1] = p.src_h, raw[2] = p.src_w, raw[3] = ch[p.input_format];
      if (p.input_format == OM_AIPP_YUV420SP_U8) raw[1] = (int64_t)p.src_h * 3 / 2;
      snprintf(pname, sizeof pname, "%.250s_aipp_params", x->name);
      const int64_t pd = OM_AIPP_PARAMS_BYTES;
      params = ir_const_new(g, pname, DT_UINT8, 1, &pd, &p, sizeof p);
    } else {
      raw_rank = 2;
      raw[0] = nchw[0], raw[1] = op->max_src_image_size;
      if (ndynamic)
        snprintf(pname, sizeof pname, "%s_%d", ATC_AIPP_PARAMS_INPUT, ndynamic);
      else
        snprintf(pname, sizeof pname, "%s", ATC_AIPP_PARAMS_INPUT);
      ndynamic++;
      if (ir_value_find(g, pname))
        return op_fail(c, op, 0, d, "the model already has a value named '%s'", pname);
      params = ir_value_new(g, pname, DT_UINT8);
      if (params) { /* a record an image */
        const int64_t pd[2] = {nchw[0], OM_AIPP_PARAMS_BYTES};
        ir_value_set_shape(params, 2, pd);
        if (ir_graph_add_input(g, params)) params = NULL;
      }
    }
    ir_value *src = ir_value_new(g, NULL, DT_UINT8);
    if (!params || !src) return diag_set(d, ST_ERR_NOMEM, "out of memory");
    ir_value_set_shape(src, raw_rank, raw);
    ir_value_swap_names(g, src, x); /* the model input keeps its name */
    src->input_index = op->rank;
    x->input_index = -1;
    g->inputs[op->rank] = src;
    char nname[600];
    snprintf(nname, sizeof nname, "aipp_%.250s", src->name);
    ir_value *in[2] = {src, params}, *y = x;
    if (nhwc && (y = ir_value_new(g, NULL, DT_FLOAT32))) /* AIPP writes NCHW; a Transpose makes x */
      ir_value_set_shape(y, 4, nchw);
    ir_node *n = y ? ir_node_new(g, IR_OP_AIPP, nname, 2, in, 1, &y) : NULL;
    if (!n || ir_attr_set_ints(g, n, "dims", 4, nchw)) return diag_set(d, ST_ERR_NOMEM, "out of memory");
    if (nhwc) {
      static const int64_t to_nhwc[4] = {0, 2, 3, 1};
      snprintf(nname, sizeof nname, "aipp_%.250s_to_nhwc", src->name);
      ir_node *t = ir_node_new(g, IR_OP_TRANSPOSE, nname, 1, &y, 1, &x);
      if (!t || ir_attr_set_ints(g, t, "perm", 4, to_nhwc)) return diag_set(d, ST_ERR_NOMEM, "out of memory");
      absorb_transposes(g, x, y);
    }
  }
  return ir_graph_toposort(g, d);
}
