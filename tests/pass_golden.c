/* pass_golden.c - runs one golden pass test: `pass_golden FILE.ir`.
 *
 * A test file is the input IR in the text form of ir.h with directives in
 * comment lines, then the expected output:
 *
 *   # RUN: shape_infer,constfold          passes to run, in order (required)
 *   # NUMERIC: rtol=1e-5 [atol=1e-6]      also compare outputs numerically
 *   # OPTIONS: high_performance           atc's --op_select_implmode=high_performance
 *   # OPTIONS: allow_mix_precision        --precision_mode=allow_mix_precision (else force_fp16)
 *   # ERROR: do not broadcast             the passes must fail with a message
 *                                         containing this text (no CHECK then)
 *   graph g opset 17
 *   ...
 *   # CHECK:
 *   <exactly what ir_print prints after the passes>
 *
 * The passes run with a pass_ctx for the Ascend310 SoC (socs/Ascend310.yaml)
 * and force_fp16 (unless OPTIONS says allow_mix_precision); the graph must pass ir_verify after them. The
 * output text is compared exactly; on a mismatch both texts and the first differing line are printed. With
 * NUMERIC, the input graph (after shape_infer, so its shapes are known) and the output graph are run by the
 * reference evaluator on the same random inputs (fixed seed; floats uniform in [-1, 1), integers in [0, 4))
 * and every output element must satisfy |out - ref| <= atol + rtol * |ref| (atol defaults to rtol).
 *
 * When the passes include emit, the package it built is verified by libomrt
 * and its JSON dump (backend/om_write.h) from "inputs" on (the I/O, tensors
 * and tasks; not the header, whose CRCs and version string churn) is
 * appended to the printed IR, so the task list has goldens too.
 *
 * Authoring: PASS_GOLDEN_UPDATE=1 pass_golden FILE.ir rewrites the CHECK
 * section with the actual output (adding it when missing); review the diff.
 */
#define _GNU_SOURCE /* asprintf */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elem.h"
#include "ir/eval.h"
#include "ir/ir.h"
#include "passes/pass.h"
#include "support.h"

typedef struct test {
  const char *path;
  char *text;
  char passes[512];
  int numeric;
  double rtol, atol;
  char error[512];
  char options[128]; /* "# OPTIONS:" words, e.g. high_performance */
  size_t check_line; /* offset of the "# CHECK:" line, or strlen(text) when absent */
  size_t check_at;   /* offset of the line after it, or strlen(text) when absent */
  int has_check;
} test;

/* Copies the rest of the line after `key` (trimmed) into out; 1 if found. */
static int directive(const char *text, const char *key, char *out, size_t cap) {
  const char *p = strstr(text, key);
  if (!p || (p != text && p[-1] != '\n')) return 0;
  p += strlen(key);
  while (*p == ' ' || *p == '\t')
    p++;
  size_t n = strcspn(p, "\r\n");
  while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
    n--;
  if (n >= cap) n = cap - 1;
  memcpy(out, p, n);
  out[n] = '\0';
  return 1;
}

/* Reads the file and its directives. 0 ok, -1 with a message printed. */
static int load(test *t) {
  size_t size;
  t->text = test_read_file(t->path, &size);
  if (!t->text) {
    fprintf(stderr, "%s: cannot read\n", t->path);
    return -1;
  }
  t->text[size] = '\0';
  if (!directive(t->text, "# RUN:", t->passes, sizeof t->passes) || !t->passes[0]) {
    fprintf(stderr, "%s: no '# RUN: pass[,pass...]' line\n", t->path);
    return -1;
  }
  char num[128];
  if (directive(t->text, "# NUMERIC:", num, sizeof num)) {
    const char *r = strstr(num, "rtol="), *a = strstr(num, "atol=");
    t->numeric = 1;
    t->rtol = r ? strtod(r + 5, NULL) : 1e-5;
    t->atol = a ? strtod(a + 5, NULL) : t->rtol;
  }
  directive(t->text, "# ERROR:", t->error, sizeof t->error);
  directive(t->text, "# OPTIONS:", t->options, sizeof t->options);
  const char *c = strstr(t->text, "# CHECK:");
  while (c && c != t->text && c[-1] != '\n')
    c = strstr(c + 1, "# CHECK:");
  t->has_check = c != NULL;
  t->check_line = c ? (size_t)(c - t->text) : size;
  t->check_at = size;
  if (c && strchr(c, '\n')) t->check_at = (size_t)(strchr(c, '\n') + 1 - t->text);
  return 0;
}

/* Parses the input part (everything before the CHECK section). */
static status parse_input(const test *t, ir_graph **g_out, diag *d) {
  char *input = strdup(t->text);
  if (!input) return diag_set(d, ST_ERR_NOMEM, "out of memory");
  input[t->check_line] = '\0';
  status st = ir_parse(input, t->path, g_out, d);
  free(input);
  return st;
}

/* The emitted package's JSON from "inputs" on, malloc'd, into *emitted. */
static status emitted_json(om_writer *w, char **emitted, diag *d) {
  void *data = NULL;
  size_t size = 0, len = 0;
  char *json = NULL;
  status st = om_writer_to_memory(w, &data, &size, d);
  if (st == ST_OK) st = om_json_memory(data, size, "emitted package", &json, &len, d);
  free(data);
  if (st) return st;
  const char *from = strstr(json, "  \"inputs\"");
  *emitted = strdup(from ? from : json);
  free(json);
  return *emitted ? ST_OK : diag_set(d, ST_ERR_NOMEM, "out of memory");
}

/* Runs the RUN passes; when emit ran, *emitted gets its package as JSON. */
static status run_passes(const test *t, ir_graph *g, char **emitted, diag *d) {
  soc_info soc;
  status st = soc_load("Ascend310", &soc, d);
  if (st) return st;
  pass_ctx ctx = {0};
  ctx.soc = &soc;
  ctx.precision =
      strstr(t->options, "allow_mix_precision") ? OM_PRECISION_ALLOW_MIX_PRECISION : OM_PRECISION_FORCE_FP16;
  ctx.winograd = strstr(t->options, "high_performance") != NULL;
  ctx.model_name = "pass_golden";
  ctx.cmdline = "pass_golden";
  char list[512];
  snprintf(list, sizeof list, "%s", t->passes);
  for (char *save = NULL, *name = strtok_r(list, ", ", &save); name; name = strtok_r(NULL, ", ", &save)) {
    const pass *p = pass_find(name);
    if (!p) return diag_set(d, ST_ERR_INVALID, "unknown pass '%s' in '# RUN:'", name);
    if ((st = p->run(g, &ctx, d))) break;
    if ((st = ir_verify(g, d))) {
      diag_prefix(d, "after pass %s: ir_verify", name);
      break;
    }
  }
  if (st == ST_OK && ctx.writer) st = emitted_json(ctx.writer, emitted, d);
  om_writer_free(ctx.writer);
  return st;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Runs the input graph and the transformed one on the same random inputs. */
static int compare_numeric(const test *t, ir_graph *out) {
  diag d;
  diag_init(&d);
  ir_graph *ref = NULL;
  arena a;
  arena_init(&a, 0);
  int ok = 0;
  if (parse_input(t, &ref, &d) || pass_shape_infer(ref, NULL, &d)) {
    fprintf(stderr, "%s: NUMERIC: reference graph: %s\n", t->path, d.msg);
    goto done;
  }
  if (ref->ninputs != out->ninputs || ref->noutputs != out->noutputs) {
    fprintf(stderr, "%s: NUMERIC: the passes changed the number of inputs or outputs\n", t->path);
    goto done;
  }
  const void **in = arena_array(&a, (size_t)ref->ninputs + 1, sizeof *in);
  void **ref_out = arena_array(&a, (size_t)ref->noutputs + 1, sizeof *ref_out);
  void **got_out = arena_array(&a, (size_t)ref->noutputs + 1, sizeof *got_out);
  uint64_t seed = 20240601;
  for (int i = 0; i < ref->ninputs; i++) {
    const ir_value *v = ref->inputs[i], *w = out->inputs[i];
    int64_t n = ir_value_elements(v);
    if (w->dtype != v->dtype || ir_value_elements(w) != n) {
      fprintf(stderr, "%s: NUMERIC: input '%s' changed dtype or size\n", t->path, v->name);
      goto done;
    }
    void *buf = arena_array(&a, (size_t)n, dtype_size(v->dtype));
    for (int64_t k = 0; k < n; k++) {
      uint64_t r = splitmix(&seed);
      int fl = v->dtype == DT_FLOAT32 || v->dtype == DT_FLOAT16 || v->dtype == DT_DOUBLE;
      elem_put(buf, v->dtype, k, fl ? (double)(r >> 11) * 0x1p-52 - 1.0 : (double)(r >> 62));
    }
    in[i] = buf;
  }
  if (ir_eval_graph(ref, in, ref_out, &a, &d)) {
    fprintf(stderr, "%s: NUMERIC: evaluating the input graph: %s\n", t->path, d.msg);
    goto done;
  }
  if (ir_eval_graph(out, in, got_out, &a, &d)) {
    fprintf(stderr, "%s: NUMERIC: evaluating the output graph: %s\n", t->path, d.msg);
    goto done;
  }
  ok = 1;
  for (int i = 0; i < ref->noutputs; i++) {
    const ir_value *v = ref->outputs[i], *w = out->outputs[i];
    int64_t n = ir_value_elements(v);
    if (ir_value_elements(w) != n) {
      fprintf(stderr, "%s: NUMERIC: output %d has %lld elements, expected %lld\n", t->path, i,
              (long long)ir_value_elements(w), (long long)n);
      ok = 0;
      continue;
    }
    double worst = 0;
    int64_t bad = -1;
    for (int64_t k = 0; k < n; k++) {
      double r = elem_get(ref_out[i], v->dtype, k), g = elem_get(got_out[i], w->dtype, k);
      double err = fabs(g - r), tol = t->atol + t->rtol * fabs(r);
      if (!(err <= tol) && (bad < 0 || err > worst)) {
        worst = err;
        bad = k;
      }
    }
    if (bad >= 0) {
      fprintf(stderr, "%s: NUMERIC: output '%s' element %lld: got %.9g, reference %.9g (rtol %g, atol %g)\n",
              t->path, v->name, (long long)bad, elem_get(got_out[i], w->dtype, bad),
              elem_get(ref_out[i], v->dtype, bad), t->rtol, t->atol);
      ok = 0;
    }
  }
done:
  ir_graph_free(ref);
  arena_free(&a);
  return ok;
}

/* Prints both texts and the first line where they differ. */
static void report_mismatch(const char *path, const char *want, const char *got) {
  fprintf(stderr, "%s: output differs from CHECK\n--- expected\n%s--- actual\n%s", path, want, got);
  int line = 1;
  const char *w = want, *g = got;
  while (*w && *w == *g) {
    if (*w == '\n') line++;
    w++, g++;
  }
  while (w > want && w[-1] != '\n')
    w--, g--;
  fprintf(stderr, "--- first difference, line %d:\n-%.*s\n+%.*s\n", line, (int)strcspn(w, "\n"), w,
          (int)strcspn(g, "\n"), g);
}

static int update(const test *t, const char *got) {
  FILE *f = fopen(t->path, "wb");
  if (!f) {
    fprintf(stderr, "%s: cannot write\n", t->path);
    return 1;
  }
  fwrite(t->text, 1, t->check_line, f);
  fputs(t->check_line && t->text[t->check_line - 1] != '\n' ? "\n# CHECK:\n" : "# CHECK:\n", f);
  fputs(got, f);
  if (fclose(f) != 0) {
    fprintf(stderr, "%s: cannot write\n", t->path);
    return 1;
  }
  fprintf(stderr, "%s: CHECK section updated\n", t->path);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: pass_golden FILE.ir   (PASS_GOLDEN_UPDATE=1 rewrites the CHECK section)\n");
    return 2;
  }
  test t = {0};
  t.path = argv[1];
  if (load(&t)) return 1;
  diag d;
  diag_init(&d);
  ir_graph *g = NULL;
  status st = parse_input(&t, &g, &d);
  char *emitted = NULL;
  if (st == ST_OK) st = run_passes(&t, g, &emitted, &d);
  int rc = 0;
  if (t.error[0]) {
    if (st == ST_OK) {
      fprintf(stderr, "%s: expected an error containing \"%s\", but the passes succeeded\n", t.path, t.error);
      rc = 1;
    } else if (!strstr(d.msg, t.error)) {
      fprintf(stderr, "%s: expected an error containing \"%s\", got: %s\n", t.path, t.error, d.msg);
      rc = 1;
    }
  } else if (st) {
    fprintf(stderr, "%s: %s: %s\n", t.path, status_name(st), d.msg);
    rc = 1;
  } else {
    char *ir = ir_print_string(g), *got = NULL;
    if (ir && asprintf(&got, "%s%s", ir, emitted ? emitted : "") < 0) got = NULL;
    free(ir);
    const char *want = t.text + t.check_at;
    if (!got) {
      fprintf(stderr, "%s: out of memory printing\n", t.path);
      rc = 1;
    } else if (getenv("PASS_GOLDEN_UPDATE") && strcmp(getenv("PASS_GOLDEN_UPDATE"), "1") == 0) {
      rc = update(&t, got);
    } else if (!t.has_check) {
      fprintf(stderr, "%s: no '# CHECK:' section (PASS_GOLDEN_UPDATE=1 writes one); actual:\n%s", t.path,
              got);
      rc = 1;
    } else if (strcmp(want, got) != 0) {
      report_mismatch(t.path, want, got);
      rc = 1;
    }
    free(got);
    if (rc == 0 && t.numeric && !compare_numeric(&t, g)) rc = 1;
  }
  if (rc == 0) printf("%s: ok\n", t.path);
  ir_graph_free(g);
  free(emitted);
  free(t.text);
  return rc;
}
