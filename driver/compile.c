/* compile.c - atc_compile: the whole compiler behind one call (compile.h).
 *
 * Order: SoC file, --input_shape and the gears (driver/gears.h), then per
 * gear (once for a static model): ONNX frontend, --out_nodes rewrite,
 * verify, each pass of pass_pipeline (toposort + verify after each, optional
 * IR dump); then the om writer. With gears the driver owns the writer and
 * every gear's emit appends to it; gear 0's graph lives until the package is
 * serialised (the writer borrows its constants), later gears' graphs are
 * freed once emitted (their constants were copied, or found equal to gear
 * 0's). The graph arena is bounded so a hostile model cannot make the
 * compiler allocate without limit. Errors keep the model file name in front.
 * The model comes from model_path, or from model_data in memory (then
 * model_path, default "model", only names it). Before all of it, the
 * per-op precision files are read (driver/precision_cfg.h) and, with a
 * calibration input, the model is compiled and run in memory to choose more
 * nodes to keep in fp32 (driver/calibrate.h); atc_compile_cfg is the
 * compile proper.
 */
#include "compile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "common/atomic_file.h"
#include "driver/aipp.h"
#include "driver/gears.h"
#include "driver/io_types.h"
#include "driver/calibrate.h"
#include "driver/precision_cfg.h"
#include "frontend/onnx_import.h"
#include "ir/ir.h"
#include "omrt.h"
#include "passes/pass.h"
#include "socs/soc.h"

static const char *const precision_names[] = {"force_fp16", "must_keep_origin_dtype", "allow_fp32_to_fp16",
                                              "allow_mix_precision"};

int atc_precision_from_name(const char *name) {
  for (int i = 0; i < 4; i++)
    if (strcmp(precision_names[i], name) == 0) return i;
  return -1;
}

const char *atc_precision_name(om_precision p) { return (unsigned)p < 4 ? precision_names[p] : "unknown"; }

const char *atc_fusion_rule(int i, const char **what) {
  if (i < 0 || i >= fusion_rule_count) return NULL;
  if (what) *what = fusion_rules[i].what;
  return fusion_rules[i].name;
}

unsigned atc_fusion_rule_bit(const char *name) {
  if (strcmp(name, "ALL") == 0) return FUSION_ALL;
  for (int i = 0; i < fusion_rule_count; i++)
    if (strcmp(fusion_rules[i].name, name) == 0) return fusion_rules[i].bit;
  return 0;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void phase_done(const atc_options *opt, const char *name, double *t0) {
  double t = now_ms();
  if (opt->on_phase) opt->on_phase(opt->user, name, t - *t0);
  *t0 = t;
}

/* --out_nodes "name:idx;name2:idx": the named node outputs replace the graph
 * outputs, in the order given. */
static status apply_out_nodes(ir_graph *g, const char *spec, diag *d) {
  ir_value *outs[256];
  int n = 0;
  const char *p = spec;
  while (*p) {
    const char *end = strchr(p, ';');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char item[512];
    if (len == 0 || len >= sizeof item)
      return diag_set(d, ST_ERR_INVALID, "--out_nodes: bad entry near '%s'", p);
    memcpy(item, p, len);
    item[len] = '\0';
    char *colon = strrchr(item, ':');
    long idx = 0;
    if (colon) {
      char *e;
      idx = strtol(colon + 1, &e, 10);
      if (*e || e == colon + 1 || idx < 0)
        return diag_set(d, ST_ERR_INVALID, "--out_nodes: '%s': output index must be a number", item);
      *colon = '\0';
    }
    ir_node *node = NULL;
    for (int i = 0; i < g->nnodes && !node; i++)
      if (strcmp(g->nodes[i]->name, item) == 0) node = g->nodes[i];
    if (!node) return diag_set(d, ST_ERR_INVALID, "--out_nodes: no node named '%s'", item);
    if (idx >= node->nout || !node->out[idx])
      return diag_set(d, ST_ERR_INVALID, "--out_nodes: node '%s' (%s) has no output %ld", item,
                      ir_ops[node->op].name, idx);
    if (n == (int)(sizeof outs / sizeof *outs))
      return diag_set(d, ST_ERR_LIMIT, "--out_nodes: more than %d outputs", n);
    outs[n++] = node->out[idx];
    p += len;
    if (*p == ';') p++;
  }
  if (n == 0) return diag_set(d, ST_ERR_INVALID, "--out_nodes is empty");
  for (int i = 0; i < g->noutputs; i++)
    g->outputs[i]->output_index = -1;
  g->noutputs = 0;
  g->outputs_picked = 1;
  for (int i = 0; i < n; i++)
    if (outs[i]->output_index < 0 && ir_graph_add_output(g, outs[i]))
      return diag_set(d, ST_ERR_NOMEM, "out of memory");
  return ST_OK;
}

static status dump_graph(const ir_graph *g, const char *dir, int step, const char *name, diag *d) {
  char path[4096];
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return diag_set(d, ST_ERR_IO, "--dump_graph: cannot create %s: %s", dir, strerror(errno));
  for (int dot = 0; dot < 2; dot++) {
    snprintf(path, sizeof path, "%s/%02d_%s.%s", dir, step, name, dot ? "dot" : "ir");
    FILE *f = fopen(path, "w");
    if (!f) return diag_set(d, ST_ERR_IO, "--dump_graph: cannot write %s: %s", path, strerror(errno));
    if (dot)
      ir_print_dot(g, f);
    else
      ir_print(g, f);
    if (fclose(f) != 0) return diag_set(d, ST_ERR_IO, "--dump_graph: cannot write %s", path);
  }
  return ST_OK;
}

/* What atc emits, libomrt must load: a size or task parameter past a runtime
 * limit (a 65536-wide pooling window, a kernel's buffer bound) becomes a
 * compile error naming the task and its node, not a package nothing can run.
 * Found by tests/fuzz (target compile). */
static status verify_package(const void *data, size_t size, diag *d) {
  omrt_load_options lo = {.threads = 1};
  omrt_model *m = NULL;
  status st = ST_OK;
  if (omrt_model_load_memory(data, size, &lo, &m) != OMRT_OK)
    st =
        diag_set(d, ST_ERR_LIMIT, "the compiled package exceeds what libomrt accepts: %s", omrt_last_error());
  omrt_model_free(m);
  return st;
}

/* verify_package on what fd holds (size bytes), mapped. */
static status verify_file(int fd, size_t size, diag *d) {
  void *data = mmap(NULL, size ? size : 1, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (data == MAP_FAILED)
    return diag_set(d, ST_ERR_IO, "cannot map the written package to check it: %s", strerror(errno));
  status st = verify_package(data, size, d);
  munmap(data, size ? size : 1);
  return st;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* The model read for one set of concrete input shapes, through every pass
 * (the precheck stops after layout); *g_out is the graph (the caller frees
 * it). dump_dir: --dump_graph's directory for this compile, or NULL. */
static status compile_graph(const atc_options *opt, const onnx_input_shape *shapes, int nshapes,
                            const atc_aipp_conf *aipp, const char *label, pass_ctx *ctx, const char *dump_dir,
                            atc_result *res, double *t0, ir_graph **g_out, diag *d) {
  onnx_options oo = {
      .input_shapes = shapes, .ninput_shapes = nshapes, .import_unread = opt->out_nodes && *opt->out_nodes};
  if (opt->precheck) {
    oo.on_unsupported = opt->on_unsupported;
    oo.user = opt->user;
  }
  ir_graph *g = NULL;
  status st = opt->build_graph  ? opt->build_graph(opt->build_user, &g, d)
              : opt->model_data ? onnx_load_memory(opt->model_data, opt->model_size, NULL, label, &oo, &g, d)
                                : onnx_load_file(opt->model_path, &oo, &g, d);
  *g_out = g;
  if (st) return st;
  res->nnodes_in = g->nnodes;
  phase_done(opt, "parse", t0);
  if (opt->out_nodes && *opt->out_nodes) st = apply_out_nodes(g, opt->out_nodes, d);
  if (st == ST_OK && aipp)
    st = atc_aipp_apply(g, aipp, opt->input_format && strcmp(opt->input_format, "NHWC") == 0, d);
  atc_io_flags io = {opt->input_fp16_nodes, opt->is_input_adjust_hw_layout, opt->output_type,
                     opt->is_output_adjust_hw_layout, opt->out_nodes};
  int *io_dtype = NULL;
  uint8_t *io_nc1hwc0 = NULL;
  if (st == ST_OK && (io.input_fp16_nodes || io.output_type || io.output_adjust)) {
    st = atc_io_types(g, &io, &g->arena, &io_dtype, &io_nc1hwc0, d);
    ctx->io_dtype = io_dtype, ctx->io_nc1hwc0 = io_nc1hwc0;
  }
  if (st == ST_OK) st = ir_verify(g, d);
  if (st == ST_OK && dump_dir) st = dump_graph(g, dump_dir, 0, "import", d);
  for (int i = 0; st == ST_OK && i < pass_pipeline_count; i++) {
    const pass *p = &pass_pipeline[i];
    st = p->run(g, ctx, d);
    if (st == ST_OK) st = ir_graph_toposort(g, d);
    if (st == ST_OK) st = ir_verify(g, d);
    if (st) diag_prefix(d, "pass %s", p->name);
    if (st == ST_OK && dump_dir) st = dump_graph(g, dump_dir, i + 1, p->name, d);
    if (st == ST_OK) phase_done(opt, p->name, t0);
    if (opt->precheck && strcmp(p->name, "layout") == 0) break; /* the last pass that refuses */
  }
  return st;
}

/* The om_io_format of each graph input, then output (the IO partition). */
static status io_formats(const ir_graph *g, const atc_options *opt, om_writer *w, diag *d) {
  const char *f = opt->input_format;
  uint32_t rank4 = !f || strcmp(f, "NCHW") == 0 ? OM_IO_NCHW : strcmp(f, "NHWC") == 0 ? OM_IO_NHWC : OM_IO_ND;
  uint32_t n = (uint32_t)(g->ninputs + g->noutputs), formats[512];
  if (n > sizeof formats / sizeof *formats)
    return diag_set(d, ST_ERR_LIMIT, "more than %zu model inputs and outputs",
                    sizeof formats / sizeof *formats);
  for (int i = 0; i < g->ninputs + g->noutputs; i++) {
    const ir_value *v = i < g->ninputs ? g->inputs[i] : g->outputs[i - g->ninputs];
    int aipp = i < g->ninputs ? atc_aipp_input_kind(g, v) : 0; /* raw images: [N, H, W, C] or bytes */
    formats[i] = v->layout == LAYOUT_NC1HWC0      ? OM_IO_NC1HWC0
                 : aipp                           ? (aipp == 1 ? OM_IO_NHWC : OM_IO_ND)
                 : i < g->ninputs && v->rank == 4 ? rank4
                                                  : OM_IO_ND;
  }
  if (om_writer_set_io_formats(w, formats, n)) return diag_set(d, ST_ERR_NOMEM, "out of memory");
  return ST_OK;
}

status atc_compile(const atc_options *opt, atc_result *res, diag *d) {
  memset(res, 0, sizeof *res);
  arena cfg_arena; /* --keep_dtype, --customize_dtypes, --modify_mixlist and what calibration adds */
  arena_init(&cfg_arena, 0);
  prec_cfg prec;
  status st =
      atc_precision_cfg(opt->keep_dtype, opt->customize_dtypes, opt->modify_mixlist, &cfg_arena, &prec, d);
  for (int i = 0; st == ST_OK && i < prec.ncustom; i++)
    if (prec.custom[i].fp16 && opt->precision == OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE)
      st = diag_set(
          d, ST_ERR_UNSUPPORTED,
          "--customize_dtypes %s: float16 under must_keep_origin_dtype, which computes every node in "
          "its original dtype here: use --precision_mode=force_fp16 (or allow_mix_precision) with "
          "--customize_dtypes or --keep_dtype for the nodes to keep in float32",
          prec.custom[i].where);
  if (st == ST_OK && !opt->precheck &&
      (opt->calibration_input || opt->precision == OM_PRECISION_ALLOW_MIX_PRECISION))
    st = atc_calibrate(opt, &prec, &cfg_arena, d);
  if (st == ST_OK) st = atc_compile_cfg(opt, &prec, res, d);
  arena_free(&cfg_arena);
  return st;
}

status atc_compile_cfg(const atc_options *opt, const prec_cfg *prec, atc_result *res, diag *d) {
  memset(res, 0, sizeof *res);
  double t0 = now_ms();
  soc_info soc;
  status st = soc_load(opt->soc_version, &soc, d);
  if (st) return st;
  snprintf(res->soc_file, sizeof res->soc_file, "%s", soc.path);
  const char *label = opt->model_path ? opt->model_path : "model";

  /* --input_shape and the gears. */
  arena scratch;
  arena_init(&scratch, 1 << 20);
  onnx_input_shape *shapes = NULL, gear_shapes[64];
  int nshapes = 0, nhwc = opt->input_format && strcmp(opt->input_format, "NHWC") == 0;
  atc_gears gears_storage, *gears = &gears_storage; /* (13 KB) */
  memset(gears, 0, sizeof *gears);
  if (opt->input_shape && *opt->input_shape)
    st = onnx_parse_input_shape(opt->input_shape, &scratch, &shapes, &nshapes, d);
  if (st == ST_OK && nshapes > (int)(sizeof gear_shapes / sizeof *gear_shapes))
    st = diag_set(d, ST_ERR_LIMIT, "--input_shape names more than %zu inputs",
                  sizeof gear_shapes / sizeof *gear_shapes);
  if (st == ST_OK)
    st = atc_gears_parse(opt->dynamic_batch_size, opt->dynamic_image_size, opt->dynamic_dims, nhwc, shapes,
                         nshapes, gears, d);

  /* --insert_op_conf: read once, applied to every gear's graph. ATC's
   * rules: AIPP and dims gears exclude each other; the input format is
   * NCHW or NHWC (docs/aipp.md). */
  atc_aipp_conf aipp_storage, *aipp = NULL;
  if (st == ST_OK && opt->insert_op_conf) {
    if (gears->kind == OM_GEAR_DIMS)
      st = diag_set(d, ST_ERR_UNSUPPORTED,
                    "--insert_op_conf with --dynamic_dims: AIPP and dynamic dims (ND format) exclude each "
                    "other (ATC's rule); use --dynamic_batch_size or --dynamic_image_size");
    else if (opt->input_format && strcmp(opt->input_format, "NCHW") && !nhwc)
      st = diag_set(
          d, ST_ERR_UNSUPPORTED,
          "--insert_op_conf with --input_format=%s: AIPP takes an NCHW or NHWC model input (ATC's rule)",
          opt->input_format);
    else if (opt->is_input_adjust_hw_layout)
      st = diag_set(d, ST_ERR_UNSUPPORTED,
                    "--insert_op_conf with --is_input_adjust_hw_layout is not supported by this atc");
    else if ((st = atc_aipp_parse(opt->insert_op_conf, &soc, &scratch, &aipp_storage, d)) == ST_OK &&
             (st = atc_aipp_check_gears(&aipp_storage, gears->kind, d)) == ST_OK)
      aipp = &aipp_storage;
  }

  /* The output name: the --output base name without directories. */
  char model_name[256];
  snprintf(model_name, sizeof model_name, "%s", base_name(opt->output_path ? opt->output_path : label));
  char *dot = strrchr(model_name, '.');
  if (dot && dot != model_name) *dot = '\0';

  pass_ctx ctx = {.soc = &soc,
                  .precision = opt->precision,
                  .winograd = opt->high_performance,
                  .fusion_off = opt->fusion_off,
                  .no_reuse = opt->no_reuse,
                  .no_weight_clip = opt->no_weight_clip,
                  .no_reuse_nodes = opt->no_reuse_nodes,
                  .model_name = model_name,
                  .cmdline = opt->cmdline ? opt->cmdline : "",
                  .singleop = opt->singleop,
                  .prec = prec,
                  .note = opt->on_note,
                  .note_user = opt->user};
  ir_graph *g = NULL; /* the one (or gear 0's) graph: the package borrows its constants */
  int ngears = gears->kind && !opt->precheck ? gears->ngears : 1;
  res->ngears = gears->kind ? gears->ngears : 0;
  if (st == ST_OK && gears->kind && !opt->precheck && !(ctx.writer = om_writer_new()))
    st = diag_set(d, ST_ERR_NOMEM, "out of memory");
  for (int gi = 0; st == ST_OK && gi < ngears; gi++) {
    char dump_dir[4096], *dump = NULL;
    if (opt->dump_graph_dir) { /* a directory per gear */
      if (gears->kind && !opt->precheck && mkdir(opt->dump_graph_dir, 0777) != 0 && errno != EEXIST) {
        st = diag_set(d, ST_ERR_IO, "--dump_graph: cannot create %s: %s", opt->dump_graph_dir,
                      strerror(errno));
        break;
      }
      snprintf(dump_dir, sizeof dump_dir, gears->kind && !opt->precheck ? "%s/gear_%d" : "%s",
               opt->dump_graph_dir, gi);
      dump = dump_dir;
    }
    if (gears->kind) atc_gears_shapes(gears, gi, shapes, nshapes, nhwc, gear_shapes);
    if (ctx.writer && om_writer_begin_gear(ctx.writer, (uint32_t)gears->kind, gears->values[gi],
                                           (uint32_t)gears->nvalues) != 0)
      st = diag_set(d, ST_ERR_NOMEM, "out of memory");
    ctx.gear_append = ctx.writer != NULL;
    ctx.copy_weights = gi > 0;
    ir_graph *gg = NULL;
    if (st == ST_OK)
      st = compile_graph(opt, gears->kind ? gear_shapes : shapes, nshapes, aipp, label, &ctx, dump, res, &t0,
                         &gg, d);
    if (st && gears->kind && !opt->precheck) {
      char gear[160] = "";
      for (int v = 0, len = 0; v < gears->nvalues && len < (int)sizeof gear; v++)
        len += snprintf(gear + len, sizeof gear - (size_t)len, "%s%lld", v ? "," : "",
                        (long long)gears->values[gi][v]);
      diag_prefix(d, "gear %d (%s)", gi, gear);
    }
    res->ntasks += ctx.ntasks;
    if (ctx.workspace_bytes > res->workspace_bytes) res->workspace_bytes = ctx.workspace_bytes;
    if (ctx.workspace_lower_bound > res->workspace_lower_bound)
      res->workspace_lower_bound = ctx.workspace_lower_bound;
    if (ctx.weights_bytes > res->weights_bytes) res->weights_bytes = ctx.weights_bytes;
    if (st == ST_OK && !opt->precheck && gi == ngears - 1) st = io_formats(gg, opt, ctx.writer, d);
    if (gi == 0)
      g = gg;
    else
      ir_graph_free(gg);
  }
  arena_free(&scratch);
  if (st == ST_OK && !opt->precheck) {
    void *data = NULL;
    size_t size = 0;
    if (ctx.writer)
      om_writer_set_zmap(ctx.writer, opt->compress_weight > 0   ? OM_ZMAP_ON
                                     : opt->compress_weight < 0 ? OM_ZMAP_OFF
                                                                : OM_ZMAP_AUTO);
    if (!ctx.writer) {
      st = diag_set(d, ST_ERR_INVALID, "pass emit produced no package");
    } else if (opt->output_path) {
      /* Streamed into the (unnamed) temporary straight from the graph's
       * constants; the graph's memory goes back before the written file
       * is mapped and checked, and only a package that passes replaces
       * the target. */
      atomic_file f;
      st = atomic_file_begin(&f, opt->output_path, d);
      if (st == ST_OK) st = om_writer_write_to(ctx.writer, &f, &size, d);
      om_writer_free(ctx.writer);
      ctx.writer = NULL;
      ir_graph_free(g);
      g = NULL;
      if (st == ST_OK) st = verify_file(f.fd, size, d);
      if (st == ST_OK)
        st = atomic_file_commit(&f, d);
      else
        atomic_file_abort(&f);
    } else { /* the caller's, to free() */
      st = om_writer_to_memory(ctx.writer, &data, &size, d);
      if (st == ST_OK) st = verify_package(data, size, d);
      if (st == ST_OK)
        res->om_data = data;
      else
        free(data);
    }
    if (st == ST_OK) res->om_bytes = size;
    if (st == ST_OK) phase_done(opt, "write", &t0);
  }
  om_writer_free(ctx.writer);
  ir_graph_free(g);
  if (st && !strstr(d->msg, base_name(label))) diag_prefix(d, "%s", label);
  return st;
}
