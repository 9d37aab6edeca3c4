/* ir_print.c - the IR's text form (golden pass tests, --dump_graph) and DOT.
 *
 * The text form is documented in ir.h and parsed back by ir_parse.c. It is
 * deterministic: attributes sorted by name, floats printed with %.9g so f32
 * values round-trip, constants summarised by size and CRC32C unless small.
 */
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "common/fp16.h"
#include "ir.h"

static const char *region_names[] = {"weights", "workspace", "input", "output"};

static void print_type(const ir_value *v, FILE *out) {
  const char *dt = dtype_name(v->dtype);
  fprintf(out, "%s", dt ? dt : "?");
  if (v->rank < 0) {
    fputs("[?]", out);
  } else {
    fputc('[', out);
    for (int i = 0; i < v->rank; i++)
      fprintf(out, "%s%lld", i ? "," : "", (long long)v->dims[i]);
    fputc(']', out);
  }
  if (v->layout != LAYOUT_ND) fprintf(out, " %s", layout_name(v->layout));
  if (v->count_axis >= 0 && v->count) fprintf(out, " counted(%d by %%%s)", v->count_axis, v->count->name);
}

/* One element of a constant as text. */
static void print_element(const ir_value *v, int64_t i, FILE *out) {
  const void *p = v->data;
  switch (v->dtype) {
  case DT_FLOAT32: fprintf(out, "%.9g", ((const float *)p)[i]); break;
  case DT_FLOAT16: fprintf(out, "%.9g", half_to_float(((const uint16_t *)p)[i])); break;
  case DT_DOUBLE: fprintf(out, "%.17g", ((const double *)p)[i]); break;
  case DT_INT64: fprintf(out, "%lld", (long long)((const int64_t *)p)[i]); break;
  case DT_INT32: fprintf(out, "%d", ((const int32_t *)p)[i]); break;
  case DT_INT8: fprintf(out, "%d", ((const int8_t *)p)[i]); break;
  case DT_UINT8:
  case DT_BOOL: fprintf(out, "%u", ((const uint8_t *)p)[i]); break;
  default: fputc('?', out); break;
  }
}

static void print_const_data(const ir_value *v, FILE *out) {
  int64_t n = ir_value_elements(v), bytes = ir_value_bytes(v);
  if (n >= 0 && n <= 16 && v->layout == LAYOUT_ND) {
    fputs(" = [", out);
    for (int64_t i = 0; i < n; i++) {
      if (i) fputs(", ", out);
      print_element(v, i, out);
    }
    fputc(']', out);
  } else if (bytes >= 0) {
    fprintf(out, " = <bytes %lld crc %08x>", (long long)bytes, crc32c(0, v->data, (size_t)bytes));
  }
}

static void print_plan(const ir_value *v, FILE *out) {
  if (v->region >= IR_REGION_WEIGHTS && v->region <= IR_REGION_OUTPUT)
    fprintf(out, " @%s+%llu", region_names[v->region], (unsigned long long)v->offset);
}

/* A float attribute: %.9g, plus ".0" when that would read back as an integer
 * (ir_parse tells an int attribute from a float one by its spelling). */
static void print_float_attr(double f, FILE *out) {
  char buf[40];
  snprintf(buf, sizeof buf, "%.9g", f);
  fputs(buf, out);
  if (strspn(buf, "-0123456789") == strlen(buf)) fputs(".0", out);
}

static int attr_cmp(const void *a, const void *b) {
  return strcmp((*(const ir_attr *const *)a)->name, (*(const ir_attr *const *)b)->name);
}

static void print_attrs(const ir_node *n, FILE *out) {
  if (n->nattrs == 0) return;
  const ir_attr *sorted[64];
  int count = n->nattrs < 64 ? n->nattrs : 64;
  for (int i = 0; i < count; i++)
    sorted[i] = &n->attrs[i];
  qsort(sorted, (size_t)count, sizeof *sorted, attr_cmp);
  fputs(" {", out);
  for (int i = 0; i < count; i++) {
    const ir_attr *a = sorted[i];
    fprintf(out, "%s%s=", i ? ", " : "", a->name);
    switch (a->kind) {
    case IR_ATTR_INT: fprintf(out, "%lld", (long long)a->i); break;
    case IR_ATTR_FLOAT: print_float_attr(a->f, out); break;
    case IR_ATTR_STRING: fprintf(out, "\"%s\"", a->s); break;
    case IR_ATTR_INTS:
      fputc('[', out);
      for (int k = 0; k < a->n; k++)
        fprintf(out, "%s%lld", k ? "," : "", (long long)a->ints[k]);
      fputc(']', out);
      break;
    case IR_ATTR_FLOATS:
      fputc('[', out);
      for (int k = 0; k < a->n; k++) {
        if (k) fputc(',', out);
        print_float_attr(a->floats[k], out);
      }
      fputc(']', out);
      break;
    }
  }
  fputc('}', out);
}

void ir_print(const ir_graph *g, FILE *out) {
  fprintf(out, "graph %s opset %d\n", g->name, g->opset);
  for (int i = 0; i < g->ninputs; i++) {
    fprintf(out, "input %%%s : ", g->inputs[i]->name);
    print_type(g->inputs[i], out);
    print_plan(g->inputs[i], out);
    fputc('\n', out);
  }
  /* Constants, in value order (ir_graph_compact drops unreferenced ones). */
  for (int i = 0; i < g->nvalues; i++) {
    const ir_value *v = g->values[i];
    if (!v->data || v->input_index >= 0) continue;
    fprintf(out, "const %%%s : ", v->name);
    print_type(v, out);
    print_const_data(v, out);
    print_plan(v, out);
    fputc('\n', out);
  }
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->nout; j++) {
      if (j) fputs(", ", out);
      if (!n->out[j]) {
        fputc('_', out);
        continue;
      }
      fprintf(out, "%%%s : ", n->out[j]->name);
      print_type(n->out[j], out);
      print_plan(n->out[j], out);
    }
    fprintf(out, " = %s(", ir_ops[n->op].name);
    for (int j = 0; j < n->nin; j++) {
      if (j) fputs(", ", out);
      if (n->in[j])
        fprintf(out, "%%%s", n->in[j]->name);
      else
        fputc('_', out);
    }
    fputc(')', out);
    print_attrs(n, out);
    fprintf(out, "  # %s\n", n->name);
  }
  for (int i = 0; i < g->noutputs; i++)
    fprintf(out, "output %%%s\n", g->outputs[i]->name);
}

char *ir_print_string(const ir_graph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  ir_print(g, f);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

void ir_print_dot(const ir_graph *g, FILE *out) {
  fprintf(out, "digraph \"%s\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n", g->name);
  for (int i = 0; i < g->ninputs; i++)
    fprintf(out, "  \"v%d\" [label=\"%s\", shape=ellipse];\n", g->inputs[i]->id, g->inputs[i]->name);
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = g->nodes[i];
    if (n->dead) continue;
    fprintf(out, "  \"n%d\" [label=\"%s\\n%s\"];\n", n->id, ir_ops[n->op].name, n->name);
    for (int j = 0; j < n->nin; j++) {
      const ir_value *v = n->in[j];
      if (!v || v->data) continue;
      if (v->producer)
        fprintf(out, "  \"n%d\" -> \"n%d\" [label=\"", v->producer->id, n->id);
      else
        fprintf(out, "  \"v%d\" -> \"n%d\" [label=\"", v->id, n->id);
      print_type(v, out);
      fputs("\"];\n", out);
    }
  }
  for (int i = 0; i < g->noutputs; i++) {
    const ir_value *v = g->outputs[i];
    fprintf(out, "  \"o%d\" [label=\"%s\", shape=ellipse];\n", i, v->name);
    if (v->producer) fprintf(out, "  \"n%d\" -> \"o%d\";\n", v->producer->id, i);
  }
  fputs("}\n", out);
}
