/* compile.c - atc_compile: the whole compiler behind one call (compile.h).
 *
 * Order: SoC file, ONNX frontend, --out_nodes rewrite, verify, then each pass
 * of pass_pipeline (toposort + verify after each, optional IR dump), then the
 * om writer. The graph arena is bounded so a hostile model cannot make the
 * compiler allocate without limit. Errors keep the model file name in front.
 * The model comes from model_path, or from model_data in memory (then
 * model_path, default "model", only names it).
 */
#include "compile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/atomic_file.h"
#include "common/bigmem.h"
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

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

status atc_compile(const atc_options *opt, atc_result *res, diag *d) {
  memset(res, 0, sizeof *res);
  double t0 = now_ms();
  soc_info soc;
  status st = soc_load(opt->soc_version, &soc, d);
  if (st) return st;
  snprintf(res->soc_file, sizeof res->soc_file, "%s", soc.path);

  arena scratch;
  arena_init(&scratch, 1 << 20);
  onnx_options oo = {0};
  if (opt->precheck) {
    oo.on_unsupported = opt->on_unsupported;
    oo.user = opt->user;
  }
  st = opt->input_shape && *opt->input_shape
           ? onnx_parse_input_shape(opt->input_shape, &scratch, (onnx_input_shape **)&oo.input_shapes,
                                    &oo.ninput_shapes, d)
           : ST_OK;
  ir_graph *g = NULL;
  const char *label = opt->model_path ? opt->model_path : "model";
  if (st == ST_OK)
    st = opt->model_data ? onnx_load_memory(opt->model_data, opt->model_size, NULL, label, &oo, &g, d)
                         : onnx_load_file(opt->model_path, &oo, &g, d);
  arena_free(&scratch);
  if (st) {
    if (!strstr(d->msg, base_name(label))) diag_prefix(d, "%s", label);
    return st;
  }
  res->nnodes_in = g->nnodes;
  phase_done(opt, "parse", &t0);

  /* The output name: the --output base name without directories. */
  char model_name[256];
  snprintf(model_name, sizeof model_name, "%s", base_name(opt->output_path ? opt->output_path : label));
  char *dot = strrchr(model_name, '.');
  if (dot && dot != model_name) *dot = '\0';

  pass_ctx ctx = {.soc = &soc,
                  .precision = opt->precision,
                  .winograd = opt->high_performance,
                  .fusion_off = opt->fusion_off,
                  .model_name = model_name,
                  .cmdline = opt->cmdline ? opt->cmdline : ""};
  if (opt->out_nodes && *opt->out_nodes) st = apply_out_nodes(g, opt->out_nodes, d);
  if (st == ST_OK) st = ir_verify(g, d);
  if (st == ST_OK && opt->dump_graph_dir) st = dump_graph(g, opt->dump_graph_dir, 0, "import", d);
  for (int i = 0; st == ST_OK && i < pass_pipeline_count; i++) {
    const pass *p = &pass_pipeline[i];
    st = p->run(g, &ctx, d);
    if (st == ST_OK) st = ir_graph_toposort(g, d);
    if (st == ST_OK) st = ir_verify(g, d);
    if (st) diag_prefix(d, "pass %s", p->name);
    if (st == ST_OK && opt->dump_graph_dir) st = dump_graph(g, opt->dump_graph_dir, i + 1, p->name, d);
    if (st == ST_OK) phase_done(opt, p->name, &t0);
    if (opt->precheck && strcmp(p->name, "layout") == 0) break; /* the last pass that refuses */
  }
  if (st == ST_OK && !opt->precheck) {
    res->workspace_bytes = ctx.workspace_bytes;
    res->workspace_lower_bound = ctx.workspace_lower_bound;
    res->weights_bytes = ctx.weights_bytes;
    res->ntasks = ctx.ntasks;
    void *data = NULL;
    size_t size = 0;
    if (!ctx.writer) {
      st = diag_set(d, ST_ERR_INVALID, "pass emit produced no package");
    } else if (opt->output_path) { /* bigmem: the package runs to megabytes */
      st = om_writer_size(ctx.writer, &size, d);
      if (st == ST_OK && !(data = bigmem_alloc(size)))
        st = diag_set(d, ST_ERR_NOMEM, "cannot allocate the %zu-byte package", size);
      if (st == ST_OK) om_writer_serialise(ctx.writer, data);
      /* The package holds it all now: the graph's memory goes back before the
       * file write takes as much again for the page cache. */
      om_writer_free(ctx.writer);
      ctx.writer = NULL;
      ir_graph_free(g);
      g = NULL;
      if (st == ST_OK) st = verify_package(data, size, d);
      if (st == ST_OK) st = atomic_write_file(opt->output_path, data, size, d);
      bigmem_free(data, size);
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
