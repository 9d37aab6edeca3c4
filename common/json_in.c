/* json_in.c - JSON text into a tree of values (json_in.h).
 *
 * A recursive descent, depth-bounded, over a NUL-terminated buffer. Each
 * container collects its items in a vector grown in the arena. Numbers are
 * read with strtod after checking JSON's grammar (no leading '+', no
 * leading zeros, no hex); one written as an integer that fits int64 is also
 * kept exactly in `integer`.
 */
#include "json_in.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
  const char *path, *p;
  int line, depth;
  arena *a;
  diag *d;
} parser;

status json_read_file(const char *path, const char *flag, size_t max_bytes, arena *a, char **text_out,
                      diag *d) {
  FILE *f = fopen(path, "rb");
  if (!f) return diag_set(d, ST_ERR_IO, "%s=%s: cannot open it: %s", flag, path, strerror(errno));
  char *buf = arena_alloc(a, max_bytes + 1);
  size_t n = buf ? fread(buf, 1, max_bytes + 1, f) : 0;
  int err = ferror(f);
  fclose(f);
  if (!buf) return diag_set(d, ST_ERR_NOMEM, "out of memory");
  if (err) return diag_set(d, ST_ERR_IO, "%s=%s: read error", flag, path);
  if (n > max_bytes) return diag_set(d, ST_ERR_LIMIT, "%s=%s: larger than %zu bytes", flag, path, max_bytes);
  if (memchr(buf, '\0', n)) return diag_set(d, ST_ERR_PARSE, "%s: holds a NUL byte: not a text file", path);
  buf[n] = '\0';
  *text_out = buf;
  return ST_OK;
}

const char *json_type_name(json_type t) {
  static const char *const names[] = {"null",     "true or false", "a number",
                                      "a string", "an array",      "an object"};
  return (unsigned)t < sizeof names / sizeof *names ? names[t] : "?";
}

const json_value *json_get(const json_value *obj, const char *key) {
  if (!obj || obj->type != JSON_OBJECT) return NULL;
  for (int i = 0; i < obj->n; i++)
    if (!strcmp(obj->keys[i], key)) return obj->items[i];
  return NULL;
}

static void skip_ws(parser *j) {
  for (;; j->p++) {
    if (*j->p == '\n')
      j->line++;
    else if (*j->p != ' ' && *j->p != '\t' && *j->p != '\r')
      return;
  }
}

static status bad(parser *j, const char *expected) {
  skip_ws(j);
  char got[40];
  if (!*j->p)
    snprintf(got, sizeof got, "the end of the file");
  else
    snprintf(got, sizeof got, "'%.20s'", j->p);
  char *nl = strchr(got, '\n');
  if (nl) nl[0] = '\'', nl[1] = '\0';
  return diag_set(j->d, ST_ERR_PARSE, "%s:%d: malformed JSON: expected %s, got %s", j->path, j->line,
                  expected, got);
}

/* 1 and past c when the next token is c. */
static int eat(parser *j, char c) {
  skip_ws(j);
  if (*j->p != c) return 0;
  j->p++;
  return 1;
}

static int hexval(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

static status string(parser *j, const char **out) {
  skip_ws(j);
  if (*j->p != '"') return bad(j, "a string");
  const char *s = ++j->p;
  size_t n = 0;
  while (s[n] && s[n] != '"' && s[n] != '\n')
    n += s[n] == '\\' && s[n + 1] ? 2 : 1;
  if (s[n] != '"')
    return diag_set(j->d, ST_ERR_PARSE, "%s:%d: malformed JSON: unterminated string", j->path, j->line);
  char *r = arena_alloc(j->a, n + 1), *w = r;
  if (!r) return diag_set(j->d, ST_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '\\') {
      *w++ = s[i];
      continue;
    }
    char c = s[++i];
    int h[4] = {-1, -1, -1, -1};
    if (c == 'u' && i + 4 < n + 1)
      for (int k = 0; k < 4; k++)
        h[k] = hexval(s[i + 1 + k]);
    const char *esc = strchr("\"\\/bfnrt", c);
    if (c && esc) {
      *w++ = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"];
    } else if (c == 'u' && h[0] == 0 && h[1] == 0 && h[2] >= 0 && h[3] >= 0 && (h[2] || h[3])) {
      *w++ = (char)(h[2] * 16 + h[3]);
      i += 4;
    } else {
      return diag_set(j->d, ST_ERR_PARSE, "%s:%d: malformed JSON: bad escape '\\%c' in a string", j->path,
                      j->line, c ? c : ' ');
    }
  }
  *w = '\0';
  j->p = s + n + 1;
  *out = r;
  return ST_OK;
}

static status number(parser *j, json_value *v) {
  const char *s = j->p, *q = s;
  if (*q == '-') q++;
  if (*q == '0')
    q++;
  else if (*q >= '1' && *q <= '9')
    while (*q >= '0' && *q <= '9')
      q++;
  else
    return bad(j, "a value");
  int frac = 0;
  if (*q == '.') {
    frac = 1, q++;
    if (*q < '0' || *q > '9') return bad(j, "a digit after '.'");
    while (*q >= '0' && *q <= '9')
      q++;
  }
  if (*q == 'e' || *q == 'E') {
    frac = 1, q++;
    if (*q == '+' || *q == '-') q++;
    if (*q < '0' || *q > '9') return bad(j, "an exponent");
    while (*q >= '0' && *q <= '9')
      q++;
  }
  v->type = JSON_NUMBER;
  v->number = strtod(s, NULL);
  if (!frac) {
    errno = 0;
    long long i = strtoll(s, NULL, 10);
    if (errno == 0) v->is_int = 1, v->integer = i;
  }
  j->p = q;
  return ST_OK;
}

static int word(parser *j, const char *w) {
  size_t n = strlen(w);
  if (strncmp(j->p, w, n)) return 0;
  j->p += n;
  return 1;
}

static status value(parser *j, json_value **out);

/* The items of an array (keys NULL) or object, after its opening bracket. */
static status items(parser *j, json_value *v, char close) {
  int cap = 0, kcap = 0;
  if (eat(j, close)) return ST_OK;
  do {
    const char *key = NULL;
    json_value *item;
    status st;
    if (close == '}') {
      if ((st = string(j, &key))) return st;
      if (!eat(j, ':')) return bad(j, "':'");
    }
    if ((st = value(j, &item))) return st;
    if (arena_grow(j->a, (void **)&v->items, &cap, v->n, sizeof *v->items) ||
        (key && arena_grow(j->a, (void **)&v->keys, &kcap, v->n, sizeof *v->keys)))
      return diag_set(j->d, ST_ERR_NOMEM, "out of memory");
    if (key) v->keys[v->n] = key;
    v->items[v->n++] = item;
  } while (eat(j, ','));
  return eat(j, close) ? ST_OK : bad(j, close == '}' ? "',' or '}'" : "',' or ']'");
}

static status value(parser *j, json_value **out) {
  skip_ws(j);
  json_value *v = arena_alloc(j->a, sizeof *v);
  if (!v) return diag_set(j->d, ST_ERR_NOMEM, "out of memory");
  v->line = j->line;
  *out = v;
  char c = *j->p;
  if (c == '{' || c == '[') {
    if (++j->depth > JSON_MAX_DEPTH)
      return diag_set(j->d, ST_ERR_LIMIT, "%s:%d: JSON nested deeper than %d levels", j->path, j->line,
                      JSON_MAX_DEPTH);
    j->p++;
    v->type = c == '{' ? JSON_OBJECT : JSON_ARRAY;
    status st = items(j, v, c == '{' ? '}' : ']');
    j->depth--;
    return st;
  }
  if (c == '"') {
    v->type = JSON_STRING;
    return string(j, &v->string);
  }
  if (word(j, "true") || word(j, "false")) {
    v->type = JSON_BOOL;
    v->boolean = c == 't';
    return ST_OK;
  }
  if (word(j, "null")) return ST_OK;
  return number(j, v);
}

status json_parse(const char *text, const char *path, arena *a, json_value **root_out, diag *d) {
  parser j = {.path = path, .p = text, .line = 1, .a = a, .d = d};
  status st = value(&j, root_out);
  if (st) return st;
  skip_ws(&j);
  if (*j.p) return bad(&j, "the end of the file after the value");
  return ST_OK;
}
