/* io_types.c - the dtypes and layouts of the model's inputs and outputs that
 * atc's flags ask for (driver/io_types.h):
 *   --input_fp16_nodes="a;b"         those inputs are fp16
 *   --is_input_adjust_hw_layout="true,false"   per --input_fp16_nodes entry:
 *                                    also NC1HWC0 (the chip's 5-D layout)
 *   --output_type=FP32|FP16|UINT8    every output; or per output
 *                                    "node:index:FP16;node2:0:UINT8"
 *   --is_output_adjust_hw_layout="true,false"  per --out_nodes entry: fp16
 *                                    NC1HWC0
 * FP16 and FP32 and the NC1HWC0 layout go to the passes as requests
 * (pass_ctx.io_dtype, io_nc1hwc0: precision and layout honour them, the
 * layout pass converting where the graph I/O meets what the nodes compute);
 * UINT8 puts a Cast (ONNX semantics: truncation toward zero, saturation)
 * after the output, which keeps the output's name. Runs after the frontend
 * and --out_nodes, before the passes. Messages name the flag and the value.
 */
#include "driver/io_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next ';'- or ','-separated item of *p into buf (NUL-terminated); 0 at the end. */
static int next_item(const char **p, char sep, char *buf, size_t n) {
  if (!*p || !**p) return 0;
  size_t len = strcspn(*p, sep == ';' ? ";" : ",");
  snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), *p);
  *p += len + ((*p)[len] == sep);
  return 1;
}

/* "true" / "false" lists: values[0, *count). */
static status parse_bools(const char *flag, const char *spec, uint8_t *values, int max, int *count, diag *d) {
  char item[64];
  const char *p = spec;
  *count = 0;
  while (next_item(&p, ',', item, sizeof item)) {
    if (*count == max) return diag_set(d, ST_ERR_INVALID, "%s=\"%s\": more than %d values", flag, spec, max);
    if (strcmp(item, "true") && strcmp(item, "false"))
      return diag_set(d, ST_ERR_INVALID, "%s=\"%s\": '%s' is not true or false", flag, spec, item);
    values[(*count)++] = item[0] == 't';
  }
  return ST_OK;
}

static int type_from_name(const char *s) {
  return !strcmp(s, "FP32")    ? DT_FLOAT32
         : !strcmp(s, "FP16")  ? DT_FLOAT16
         : !strcmp(s, "UINT8") ? DT_UINT8
                               : 0;
}

/* "'a', 'b'" for messages. */
static void name_list(ir_value *const *vals, int n, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s'%s'", i ? ", " : "", vals[i]->name);
}

/* Graph output k becomes a Cast of it to uint8 that keeps its name. */
static status cast_output(ir_graph *g, int k, diag *d) {
  ir_value *v = g->outputs[k];
  char name[300];
  snprintf(name, sizeof name, "%.250s_float", v->name);
  ir_value *u = ir_value_new(g, name, DT_UINT8);
  if (!u) return diag_set(d, ST_ERR_NOMEM, "out of memory");
  ir_value_set_shape(u, v->rank, v->dims);
  snprintf(name, sizeof name, "%.250s_to_uint8", v->name);
  ir_node *n = ir_node_new(g, IR_OP_CAST, name, 1, &v, 1, &u);
  if (!n || ir_attr_set_int(g, n, "to", DT_UINT8)) return diag_set(d, ST_ERR_NOMEM, "out of memory");
  ir_value_swap_names(g, u, v);
  v->output_index = -1;
  u->output_index = k;
  g->outputs[k] = u;
  return ST_OK;
}

status atc_io_types(ir_graph *g, const atc_io_flags *f, arena *a, int **dtype_out, uint8_t **nc1hwc0_out,
                    diag *d) {
  int nio = g->ninputs + g->noutputs;
  int *dt = arena_array(a, (size_t)nio + 1, sizeof *dt);
  uint8_t *five_d = arena_array(a, (size_t)nio + 1, sizeof *five_d);
  if (!dt || !five_d) return diag_set(d, ST_ERR_NOMEM, "out of memory");
  for (int i = 0; i < nio; i++)
    dt[i] = DT_UNDEFINED, five_d[i] = 0;
  *dtype_out = dt;
  *nc1hwc0_out = five_d;
  char item[512], list[1024];

  /* --input_fp16_nodes and --is_input_adjust_hw_layout */
  uint8_t adjust[256];
  int nadjust = 0, nfp16 = 0;
  status st = f->input_adjust
                  ? parse_bools("--is_input_adjust_hw_layout", f->input_adjust, adjust, 256, &nadjust, d)
                  : ST_OK;
  if (st) return st;
  const char *p = f->input_fp16_nodes;
  while (next_item(&p, ';', item, sizeof item)) {
    int k = 0;
    while (k < g->ninputs && strcmp(g->inputs[k]->name, item) != 0)
      k++;
    if (k == g->ninputs) {
      name_list(g->inputs, g->ninputs, list, sizeof list);
      return diag_set(d, ST_ERR_INVALID,
                      "--input_fp16_nodes=\"%s\": '%s' is not a model input (the inputs: %s)",
                      f->input_fp16_nodes, item, list);
    }
    const ir_value *v = g->inputs[k];
    if (v->dtype != DT_FLOAT32 && v->dtype != DT_FLOAT16)
      return diag_set(d, ST_ERR_INVALID, "--input_fp16_nodes=\"%s\": input '%s' is %s, not a float tensor",
                      f->input_fp16_nodes, item, dtype_name(v->dtype));
    dt[k] = DT_FLOAT16;
    if (nfp16 < nadjust && adjust[nfp16]) {
      if (v->rank != 4)
        return diag_set(d, ST_ERR_INVALID,
                        "--is_input_adjust_hw_layout: input '%s' has rank %d; NC1HWC0 needs 4", item,
                        v->rank);
      five_d[k] = 1;
    }
    nfp16++;
  }
  if (f->input_fp16_nodes && nadjust && nadjust != nfp16)
    return diag_set(d, ST_ERR_INVALID,
                    "--is_input_adjust_hw_layout=\"%s\" has %d values for the %d nodes of --input_fp16_nodes",
                    f->input_adjust, nadjust, nfp16);

  /* --output_type: one type for all, or node:index:TYPE entries */
  if (f->output_type) {
    int all = type_from_name(f->output_type); /* every float output */
    for (int k = 0; all && k < g->noutputs; k++)
      if (g->outputs[k]->dtype == DT_FLOAT32 || g->outputs[k]->dtype == DT_FLOAT16) dt[g->ninputs + k] = all;
    p = all ? NULL : f->output_type;
    while (next_item(&p, ';', item, sizeof item)) {
      char *t = strrchr(item, ':'), *ix = t ? (*t = '\0', strrchr(item, ':')) : NULL;
      int want = t ? type_from_name(t + 1) : 0;
      if (!want || !ix)
        return diag_set(
            d, ST_ERR_INVALID,
            "--output_type=\"%s\": '%s%s%s' is not FP32, FP16, UINT8 or node:index:FP32|FP16|UINT8",
            f->output_type, item, t ? ":" : "", t ? t + 1 : "");
      *ix = '\0';
      char *end;
      long idx = strtol(ix + 1, &end, 10);
      int k = 0;
      while (k < g->noutputs &&
             !(*end == '\0' && g->outputs[k]->producer && idx >= 0 && idx < g->outputs[k]->producer->nout &&
               g->outputs[k]->producer->out[idx] == g->outputs[k] &&
               strcmp(g->outputs[k]->producer->name, item) == 0))
        k++;
      if (k == g->noutputs)
        return diag_set(d, ST_ERR_INVALID,
                        "--output_type=\"%s\": '%s:%s' is not a model output (a node:index)", f->output_type,
                        item, ix + 1);
      dt[g->ninputs + k] = want;
    }
    for (int k = 0; k < g->noutputs; k++) {
      int want = dt[g->ninputs + k];
      ir_value *v = g->outputs[k];
      if (want != DT_UNDEFINED && v->dtype != DT_FLOAT32 && v->dtype != DT_FLOAT16)
        return diag_set(d, ST_ERR_INVALID, "--output_type=\"%s\": output '%s' is %s, not a float tensor",
                        f->output_type, v->name, dtype_name(v->dtype));
      if (want == DT_UINT8) {
        dt[g->ninputs + k] = DT_UNDEFINED; /* the Cast's result is uint8 already */
        if ((st = cast_output(g, k, d))) return st;
      }
    }
  }

  /* --is_output_adjust_hw_layout: per --out_nodes entry (the graph outputs now) */
  if (f->output_adjust) {
    int n;
    if ((st = parse_bools("--is_output_adjust_hw_layout", f->output_adjust, adjust, 256, &n, d))) return st;
    if (!f->out_nodes)
      return diag_set(d, ST_ERR_INVALID,
                      "--is_output_adjust_hw_layout=\"%s\" needs --out_nodes (one value per node)",
                      f->output_adjust);
    if (n != g->noutputs)
      return diag_set(d, ST_ERR_INVALID,
                      "--is_output_adjust_hw_layout=\"%s\" has %d values for the %d --out_nodes",
                      f->output_adjust, n, g->noutputs);
    for (int k = 0; k < n; k++) {
      if (!adjust[k]) continue;
      const ir_value *v = g->outputs[k];
      if (v->rank != 4 || (v->dtype != DT_FLOAT32 && v->dtype != DT_FLOAT16))
        return diag_set(
            d, ST_ERR_INVALID,
            "--is_output_adjust_hw_layout: output '%s' is %s of rank %d; NC1HWC0 needs a rank-4 float tensor",
            v->name, dtype_name(v->dtype), v->rank);
      dt[g->ninputs + k] = DT_FLOAT16;
      five_d[g->ninputs + k] = 1;
    }
  }
  return ST_OK;
}
