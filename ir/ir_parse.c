/* ir_parse.c - reads the IR text form (ir.h, printed by ir_print.c) back into
 * a graph, for pass tests and hand-written graphs.
 *
 * The text is line oriented; each line is one of
 *   graph NAME opset N                              (first, exactly once)
 *   input %x : f32[1,3,8,8] [LAYOUT] [@region+offset]
 *   const %w : f32[4] [LAYOUT] = INIT [@region+offset]
 *   %y : f32[1,4,8,8] [LAYOUT] [@plan][, %z : ...] = Op(%x, %w, _) {attrs}  [# node name]
 *   output %y[, %z]
 * Blank lines and lines starting with '#' are comments. A type is a dtype
 * name ("?" = unknown) and dims in brackets ("[?]" = unknown rank, -1 = an
 * unknown dim, "[]" = a scalar). INIT is "[v, v, ...]" (every element, ND
 * only), "fill(v)" or "rand(seed)"; rand fills floats uniformly in [-1, 1),
 * integers in [-8, 8) and bools with 0/1 from a splitmix64 stream, so a seed
 * always gives the same tensor. The printer's "<bytes N crc X>" summary
 * cannot be read back and is rejected with a message. "@region+offset" is
 * parsed into the value's memory plan (region, offset; bytes from the shape).
 * Attribute values: 7 (int), 0.5 / 1.0 / 1e-05 / inf (float: has '.', an
 * exponent or is inf/nan), "relu" (string), [1,2] (ints), [0.5,1.0] (floats
 * when any element is a float); "[]" is an empty ints list. Value names run
 * from '%' to the next space, ',', '(' or ')'; names containing those do not
 * round-trip. Values must be defined before they are used (the printer emits
 * nodes in topological order). Errors are ST_ERR_PARSE "label:line: what".
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/elem.h"
#include "ir.h"

typedef struct parser {
  const char *label;
  int line;
  const char *p; /* cursor in the current line */
  const char *e; /* end of the current line */
  ir_graph *g;
  diag *d;
} parser;

enum { NAME_MAX_CHARS = 1024 };

static status perr(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static status perr(parser *ps, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return diag_set(ps->d, ST_ERR_PARSE, "%s:%d: %s", ps->label, ps->line, msg);
}

static void skip_ws(parser *ps) {
  while (ps->p < ps->e && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r'))
    ps->p++;
}

/* Consumes `c` (after spaces) when it is next; returns whether it was. */
static int accept(parser *ps, char c) {
  skip_ws(ps);
  if (ps->p < ps->e && *ps->p == c) {
    ps->p++;
    return 1;
  }
  return 0;
}

static status expect(parser *ps, char c) {
  if (accept(ps, c)) return ST_OK;
  return perr(ps, "expected '%c' at \"%.20s\"", c, ps->p);
}

static int at_end(parser *ps) {
  skip_ws(ps);
  return ps->p >= ps->e;
}

/* A word of letters, digits, '_', '.' and '?' into buf. */
static status word(parser *ps, char *buf, size_t cap, const char *what) {
  skip_ws(ps);
  size_t n = 0;
  while (ps->p < ps->e &&
         (isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '.' || *ps->p == '?')) {
    if (n + 1 >= cap) return perr(ps, "%s is too long", what);
    buf[n++] = *ps->p++;
  }
  buf[n] = '\0';
  if (n == 0) return perr(ps, "expected %s at \"%.20s\"", what, ps->p);
  return ST_OK;
}

/* "%name" into buf. */
static status value_name(parser *ps, char *buf) {
  skip_ws(ps);
  if (ps->p >= ps->e || *ps->p != '%') return perr(ps, "expected a value name (%%name) at \"%.20s\"", ps->p);
  ps->p++;
  size_t n = 0;
  while (ps->p < ps->e && !isspace((unsigned char)*ps->p) && !strchr(",()", *ps->p)) {
    if (n + 1 >= NAME_MAX_CHARS) return perr(ps, "value name is too long");
    buf[n++] = *ps->p++;
  }
  buf[n] = '\0';
  if (n == 0) return perr(ps, "empty value name");
  return ST_OK;
}

/* A number: integer unless it has a '.', an exponent, or is inf/nan. */
static status number(parser *ps, int *is_float, int64_t *i, double *f) {
  skip_ws(ps);
  char *end;
  errno = 0;
  long long v = strtoll(ps->p, &end, 10);
  if (end == ps->p || (end < ps->e && (*end == '.' || isalpha((unsigned char)*end)))) {
    errno = 0;
    *f = strtod(ps->p, &end);
    if (end == ps->p || end > ps->e) return perr(ps, "expected a number at \"%.20s\"", ps->p);
    *is_float = 1;
  } else {
    if (errno == ERANGE || end > ps->e) return perr(ps, "integer out of range at \"%.20s\"", ps->p);
    *is_float = 0;
    *i = v;
    *f = (double)v;
  }
  ps->p = end;
  return ST_OK;
}

static status int_number(parser *ps, int64_t *v, const char *what) {
  int is_float;
  double f;
  status st = number(ps, &is_float, v, &f);
  if (st) return st;
  if (is_float) return perr(ps, "%s must be an integer", what);
  return ST_OK;
}

/* ---- types and values ---- */

/* "f32[1,3,8,8] [LAYOUT]" into v. */
static status type(parser *ps, ir_value *v) {
  char buf[64];
  status st = word(ps, buf, sizeof buf, "a dtype");
  if (st) return st;
  if (strcmp(buf, "?") == 0) {
    v->dtype = DT_UNDEFINED;
  } else {
    v->dtype = (dtype)dtype_from_name(buf);
    if (v->dtype == DT_UNDEFINED) return perr(ps, "unknown dtype '%s'", buf);
  }
  if ((st = expect(ps, '['))) return st;
  int rank = 0;
  int64_t dims[MAX_RANK];
  skip_ws(ps);
  if (accept(ps, '?')) {
    rank = -1;
    if ((st = expect(ps, ']'))) return st;
  } else if (!accept(ps, ']')) {
    do {
      if (rank == MAX_RANK) return perr(ps, "more than %d dims", MAX_RANK);
      if ((st = int_number(ps, &dims[rank], "a dim"))) return st;
      if (dims[rank] < -1) return perr(ps, "dim %lld is negative", (long long)dims[rank]);
      rank++;
    } while (accept(ps, ','));
    if ((st = expect(ps, ']'))) return st;
  }
  if (rank >= 0) ir_value_set_shape(v, rank, dims);
  skip_ws(ps);
  if (ps->p < ps->e && isalpha((unsigned char)*ps->p)) {
    if ((st = word(ps, buf, sizeof buf, "a layout"))) return st;
    int l = layout_from_name(buf);
    if (l < 0) return perr(ps, "unknown layout '%s'", buf);
    v->layout = (layout)l;
  }
  return ST_OK;
}

/* Optional "@region+offset". */
static status plan(parser *ps, ir_value *v) {
  static const char *const regions[] = {"weights", "workspace", "input", "output"};
  if (!accept(ps, '@')) return ST_OK;
  char buf[32];
  status st = word(ps, buf, sizeof buf, "a region");
  if (st) return st;
  int r = -1;
  for (int i = 0; i < 4; i++)
    if (strcmp(buf, regions[i]) == 0) r = i;
  if (r < 0) return perr(ps, "unknown region '%s'", buf);
  int64_t off;
  if ((st = expect(ps, '+')) || (st = int_number(ps, &off, "an offset"))) return st;
  if (off < 0) return perr(ps, "negative offset");
  v->region = (ir_region)r;
  v->offset = (uint64_t)off;
  int64_t bytes = ir_value_bytes(v);
  v->bytes = bytes > 0 ? (uint64_t)bytes : 0;
  return ST_OK;
}

/* Defines a new value named by "%name", erroring on redefinition. */
static status new_value(parser *ps, ir_value **v_out) {
  char name[NAME_MAX_CHARS];
  status st = value_name(ps, name);
  if (st) return st;
  if (ir_value_find(ps->g, name)) return perr(ps, "value %%%s is defined twice", name);
  *v_out = ir_value_new(ps->g, name, DT_UNDEFINED);
  if (!*v_out) return diag_set(ps->d, ST_ERR_NOMEM, "%s:%d: out of memory", ps->label, ps->line);
  if ((st = expect(ps, ':'))) return st;
  return type(ps, *v_out);
}

static status use_value(parser *ps, ir_value **v_out) {
  char name[NAME_MAX_CHARS];
  status st = value_name(ps, name);
  if (st) return st;
  *v_out = ir_value_find(ps->g, name);
  if (!*v_out) return perr(ps, "value %%%s is used before it is defined", name);
  return ST_OK;
}

/* splitmix64: the fixed generator behind "rand(seed)". */
static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Element i of a constant: a number read as a float (f) or an integer (iv). */
static void store(void *p, int dt, int64_t i, double f, int64_t iv, int is_float) {
  if (is_float)
    elem_put(p, dt, (size_t)i, f);
  else
    elem_put_int(p, dt, (size_t)i, iv);
}

static int is_float_dtype(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }

/* "= [..]" / "= fill(v)" / "= rand(seed)" into a new payload for v. */
static status const_init(parser *ps, ir_value *v) {
  int64_t bytes = ir_value_bytes(v), count;
  size_t es = dtype_size(v->dtype);
  if (bytes < 0 || es == 0) return perr(ps, "constant %%%s needs a known shape and dtype", v->name);
  count = bytes / (int64_t)es;
  void *data = arena_alloc_aligned(&ps->g->arena, bytes ? (size_t)bytes : 1, 64);
  if (!data) return diag_set(ps->d, ST_ERR_NOMEM, "%s:%d: out of memory", ps->label, ps->line);
  status st = expect(ps, '=');
  if (st) return st;
  int is_float;
  int64_t iv;
  double f;
  char kw[16];
  skip_ws(ps);
  if (accept(ps, '[')) {
    if (v->layout != LAYOUT_ND) return perr(ps, "element lists are for ND constants; use fill() or rand()");
    int64_t n = 0;
    if (!accept(ps, ']')) {
      do {
        if ((st = number(ps, &is_float, &iv, &f))) return st;
        if (n == count)
          return perr(ps, "constant %%%s has more than %lld elements", v->name, (long long)count);
        store(data, v->dtype, n++, f, iv, is_float);
      } while (accept(ps, ','));
      if ((st = expect(ps, ']'))) return st;
    }
    if (n != count)
      return perr(ps, "constant %%%s has %lld elements, its type says %lld", v->name, (long long)n,
                  (long long)count);
  } else if (*ps->p == '<') {
    return perr(
        ps, "constant %%%s: the '<bytes ...>' summary cannot be parsed; give [values], fill(v) or rand(seed)",
        v->name);
  } else {
    if ((st = word(ps, kw, sizeof kw, "[values], fill(v) or rand(seed)")) || (st = expect(ps, '(')) ||
        (st = number(ps, &is_float, &iv, &f)) || (st = expect(ps, ')')))
      return st;
    if (strcmp(kw, "fill") == 0) {
      for (int64_t i = 0; i < count; i++)
        store(data, v->dtype, i, f, iv, is_float);
    } else if (strcmp(kw, "rand") == 0) {
      if (is_float) return perr(ps, "rand() takes an integer seed");
      uint64_t s = (uint64_t)iv;
      for (int64_t i = 0; i < count; i++) {
        uint64_t r = splitmix(&s);
        if (is_float_dtype(v->dtype))
          store(data, v->dtype, i, (double)(r >> 11) * 0x1p-52 - 1.0, 0, 1);
        else if (v->dtype == DT_BOOL)
          store(data, v->dtype, i, 0, (int64_t)(r >> 63), 0);
        else
          store(data, v->dtype, i, 0, (int64_t)(r >> 60) - 8, 0);
      }
    } else {
      return perr(ps, "unknown constant form '%s'; expected [values], fill(v) or rand(seed)", kw);
    }
  }
  v->data = data;
  return ST_OK;
}

/* ---- attributes and nodes ---- */

static status attr(parser *ps, ir_node *n) {
  char name[128];
  status st = word(ps, name, sizeof name, "an attribute name");
  if (st || (st = expect(ps, '='))) return st;
  ir_graph *g = ps->g;
  int rc, is_float;
  int64_t iv;
  double f;
  skip_ws(ps);
  if (accept(ps, '"')) {
    const char *s = ps->p;
    while (ps->p < ps->e && *ps->p != '"')
      ps->p++;
    if (ps->p >= ps->e) return perr(ps, "unterminated string in attribute '%s'", name);
    char *val = arena_strndup(&g->arena, s, (size_t)(ps->p - s));
    ps->p++;
    rc = val ? ir_attr_set_string(g, n, name, val) : -1;
  } else if (accept(ps, '[')) {
    int count = 0, cap = 0, any_float = 0;
    double *fs = NULL;
    int64_t *is = NULL;
    if (!accept(ps, ']')) {
      do {
        if ((st = number(ps, &is_float, &iv, &f))) return st;
        if (count == cap) {
          int ncap = cap ? cap * 2 : 8;
          double *nf = arena_array(&g->arena, (size_t)ncap, sizeof *nf);
          int64_t *ni = arena_array(&g->arena, (size_t)ncap, sizeof *ni);
          if (!nf || !ni) return diag_set(ps->d, ST_ERR_NOMEM, "%s:%d: out of memory", ps->label, ps->line);
          if (count) {
            memcpy(nf, fs, (size_t)count * sizeof *nf);
            memcpy(ni, is, (size_t)count * sizeof *ni);
          }
          fs = nf;
          is = ni;
          cap = ncap;
        }
        fs[count] = f;
        is[count++] = iv;
        any_float |= is_float;
      } while (accept(ps, ','));
      if ((st = expect(ps, ']'))) return st;
    }
    rc = any_float ? ir_attr_set_floats(g, n, name, count, fs) : ir_attr_set_ints(g, n, name, count, is);
  } else {
    if ((st = number(ps, &is_float, &iv, &f))) return st;
    rc = is_float ? ir_attr_set_float(g, n, name, f) : ir_attr_set_int(g, n, name, iv);
  }
  if (rc) return diag_set(ps->d, ST_ERR_NOMEM, "%s:%d: out of memory", ps->label, ps->line);
  return ST_OK;
}

enum { MAX_NODE_OUTS = 16 };

/* The first '#' outside a string from the cursor on (the node name), or NULL. */
static const char *name_comment(const parser *ps) {
  int in_string = 0;
  for (const char *s = ps->p; s < ps->e; s++) {
    if (*s == '"')
      in_string = !in_string;
    else if (*s == '#' && !in_string)
      return s;
  }
  return NULL;
}

/* "%y : T [@plan], ... = Op(args) {attrs} # name" */
static status node_line(parser *ps) {
  ir_value *outs[MAX_NODE_OUTS];
  int nout = 0;
  status st;
  do {
    if (nout == MAX_NODE_OUTS) return perr(ps, "more than %d outputs", MAX_NODE_OUTS);
    if (accept(ps, '_')) {
      outs[nout++] = NULL;
      continue;
    }
    if ((st = new_value(ps, &outs[nout])) || (st = plan(ps, outs[nout]))) return st;
    nout++;
  } while (accept(ps, ','));
  char opname[64];
  if ((st = expect(ps, '=')) || (st = word(ps, opname, sizeof opname, "an op name")) ||
      (st = expect(ps, '(')))
    return st;
  int op = ir_op_from_name(opname);
  if (op < 0) return perr(ps, "unknown op '%s'", opname);
  ir_value **ins = NULL;
  int nin = 0, cap = 0;
  if (!accept(ps, ')')) {
    do {
      if (arena_grow(&ps->g->arena, (void **)&ins, &cap, nin, sizeof *ins))
        return diag_set(ps->d, ST_ERR_NOMEM, "%s:%d: out of memory", ps->label, ps->line);
      if (accept(ps, '_'))
        ins[nin++] = NULL;
      else if ((st = use_value(ps, &ins[nin++])))
        return st;
    } while (accept(ps, ','));
    if ((st = expect(ps, ')'))) return st;
  }
  const ir_op_info *info = &ir_ops[op];
  if (nin < info->min_in || nin > info->max_in || nout < info->min_out || nout > info->max_out)
    return perr(ps, "%s takes %d..%d inputs and %d..%d outputs, got %d and %d", info->name, info->min_in,
                info->max_in, info->min_out, info->max_out, nin, nout);
  /* The node name comes last on the line but the node is created first. */
  const char *name = NULL, *hash = name_comment(ps);
  char namebuf[NAME_MAX_CHARS];
  if (hash) {
    const char *s = hash + 1, *t = ps->e;
    while (s < t && isspace((unsigned char)*s))
      s++;
    while (t > s && isspace((unsigned char)t[-1]))
      t--;
    if (t - s >= NAME_MAX_CHARS) return perr(ps, "node name is too long");
    memcpy(namebuf, s, (size_t)(t - s));
    namebuf[t - s] = '\0';
    name = namebuf;
  }
  ir_node *n = ir_node_new(ps->g, (ir_op)op, name, nin, ins, nout, outs);
  if (!n) return diag_set(ps->d, ST_ERR_NOMEM, "%s:%d: out of memory", ps->label, ps->line);
  if (accept(ps, '{') && !accept(ps, '}')) {
    do {
      if ((st = attr(ps, n))) return st;
    } while (accept(ps, ','));
    if ((st = expect(ps, '}'))) return st;
  }
  skip_ws(ps);
  if (ps->p < ps->e && *ps->p != '#') return perr(ps, "unexpected \"%.20s\" after the node", ps->p);
  return ST_OK;
}

static status line(parser *ps) {
  ir_graph *g = ps->g;
  char kw[16];
  status st;
  if (*ps->p == '%' || *ps->p == '_') return node_line(ps);
  if ((st = word(ps, kw, sizeof kw, "graph, input, const, output or a node"))) return st;
  ir_value *v;
  if (strcmp(kw, "input") == 0) {
    if ((st = new_value(ps, &v)) || (st = plan(ps, v))) return st;
    if (ir_graph_add_input(g, v))
      return diag_set(ps->d, ST_ERR_NOMEM, "%s:%d: out of memory", ps->label, ps->line);
  } else if (strcmp(kw, "const") == 0) {
    if ((st = new_value(ps, &v)) || (st = const_init(ps, v)) || (st = plan(ps, v))) return st;
  } else if (strcmp(kw, "output") == 0) {
    do {
      if ((st = use_value(ps, &v))) return st;
      if (ir_graph_add_output(g, v))
        return diag_set(ps->d, ST_ERR_NOMEM, "%s:%d: out of memory", ps->label, ps->line);
    } while (accept(ps, ','));
  } else if (strcmp(kw, "graph") == 0) {
    return perr(ps, "a second 'graph' line");
  } else {
    return perr(ps, "unknown line kind '%s'", kw);
  }
  if (!at_end(ps)) return perr(ps, "unexpected \"%.20s\" at the end of the line", ps->p);
  return ST_OK;
}

/* "graph NAME opset N" */
static status header(parser *ps) {
  char kw[16], name[NAME_MAX_CHARS];
  status st = word(ps, kw, sizeof kw, "'graph'");
  if (st) return st;
  if (strcmp(kw, "graph") != 0) return perr(ps, "the first line must be 'graph NAME opset N'");
  skip_ws(ps);
  size_t n = 0;
  while (ps->p < ps->e && !isspace((unsigned char)*ps->p) && n + 1 < sizeof name)
    name[n++] = *ps->p++;
  name[n] = '\0';
  if (n == 0) return perr(ps, "the graph has no name");
  int64_t opset = 0;
  if ((st = word(ps, kw, sizeof kw, "'opset'"))) return st;
  if (strcmp(kw, "opset") != 0) return perr(ps, "expected 'opset' after the graph name");
  if ((st = int_number(ps, &opset, "the opset"))) return st;
  if (opset < 0 || opset > 10000) return perr(ps, "opset %lld out of range", (long long)opset);
  if (!at_end(ps)) return perr(ps, "unexpected \"%.20s\" after the opset", ps->p);
  ps->g = ir_graph_new(name, 0);
  if (!ps->g) return diag_set(ps->d, ST_ERR_NOMEM, "%s:%d: out of memory", ps->label, ps->line);
  ps->g->opset = (int)opset;
  return ST_OK;
}

status ir_parse(const char *text, const char *label, ir_graph **graph_out, diag *d) {
  parser ps = {label ? label : "<ir>", 0, NULL, NULL, NULL, d};
  status st = ST_OK;
  *graph_out = NULL;
  for (const char *s = text; *s && st == ST_OK;) {
    const char *e = strchr(s, '\n');
    if (!e) e = s + strlen(s);
    ps.line++;
    ps.p = s;
    ps.e = e;
    skip_ws(&ps);
    if (ps.p < e && *ps.p != '#') st = ps.g ? line(&ps) : header(&ps);
    s = *e ? e + 1 : e;
  }
  if (st == ST_OK && !ps.g) st = diag_set(d, ST_ERR_PARSE, "%s: no 'graph NAME opset N' line", ps.label);
  if (st) {
    ir_graph_free(ps.g);
    return st;
  }
  *graph_out = ps.g;
  return ST_OK;
}
