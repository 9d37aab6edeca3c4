/* acl_init_config.c - aclInit's configuration file (acl.h): JSON with at
 * most 10 levels of '{' and 10 of '[' (AscendCL's limits), read whole and
 * checked before aclInit initializes anything.
 *
 * What the file can set, and what it does here:
 *   "err_msg_mode": "0" (the default) or "1": aclGetRecentErrMsg gives the
 *       calling thread's messages, or the whole process's (acl_err.c);
 *   "defaultDevice": {"default_device": "0"}: a thread that never set a
 *       context works in device 0's default context, as after
 *       aclrtSetDevice(0) (acl_rt.c); another device is
 *       ACL_ERROR_RT_INVALID_DEVICEID;
 *   "dump" and "profiler" sections that ask for data (a non-empty
 *       "dump_list", "dump_op_switch", "dump_debug" or "switch" set to "on",
 *       a "dump_scene" other than "...:disable") are
 *       ACL_ERROR_FEATURE_UNSUPPORTED: the software NPU neither dumps nor
 *       profiles through AscendCL (omrun --dump and OMRT_PROFILE do); the
 *       same sections switched off are accepted;
 *   other keys ("max_opqueue_num", ...) bound what is not bounded here
 *       and are ignored.
 * A file that is not such JSON is ACL_ERROR_PARSE_FILE naming the line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_internal.h"

enum { MAX_BYTES = 1 << 20, MAX_LEVELS = 10, PATH_BYTES = 128, VALUE_BYTES = 256 };

typedef struct parser {
  const char *p, *end;
  int objects, arrays; /* open '{' and '[' */
  const char *err;     /* the first syntax error, NULL while none */
  const char *err_at;  /* where it was found */
  acl_init_config *cfg;
  const char *file;
  aclError refused; /* the first setting refused (its message recorded) */
} parser;

static void syntax(parser *ps, const char *what) {
  if (!ps->err) ps->err = what, ps->err_at = ps->p;
}

static void skip_space(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

/* A string at ps->p (its opening quote); up to n - 1 of its bytes go to
 * out (escapes other than \uXXXX decoded). */
static void parse_string(parser *ps, char *out, size_t n) {
  size_t len = 0;
  if (n) out[0] = '\0';
  ps->p++;
  while (ps->p < ps->end && *ps->p != '"') {
    char c = *ps->p++;
    if ((unsigned char)c < 0x20) return syntax(ps, "a control character inside a string");
    if (c == '\\') {
      if (ps->p >= ps->end) break;
      c = *ps->p++;
      const char *esc = strchr("\"\\/bfnrtu", c);
      if (!esc || !c) return syntax(ps, "an unknown escape in a string");
      if (c == 'u') {
        for (int k = 0; k < 4; k++, ps->p++)
          if (ps->p >= ps->end || !strchr("0123456789abcdefABCDEF", *ps->p) || !*ps->p)
            return syntax(ps, "a \\u escape without 4 hex digits");
        c = '?';
      } else {
        c = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrtu"];
      }
    }
    if (len + 1 < n) out[len++] = c, out[len] = '\0';
  }
  if (ps->p >= ps->end) return syntax(ps, "a string without its closing quote");
  ps->p++;
}

static int starts(parser *ps, const char *word) {
  size_t n = strlen(word);
  return (size_t)(ps->end - ps->p) >= n && memcmp(ps->p, word, n) == 0;
}

/* A setting is refused: code and message (naming the file and the key). */
static void refuse(parser *ps, aclError code, const char *key, const char *why) {
  if (!ps->refused) ps->refused = acl_fail(code, "aclInit: configPath '%s': \"%s\": %s", ps->file, key, why);
}

/* What a value at `path` (keys joined by '.') means: a string (str), or
 * an array of `count` elements (str NULL). */
static void note(parser *ps, const char *path, const char *str, int count) {
  static const char no_dump[] = "the software NPU does not dump through AscendCL (omrun --dump writes "
                                "every task's tensors; aclmdlInitDump is ACL_ERROR_FEATURE_UNSUPPORTED)";
  if (!str) {
    if (strcmp(path, "dump.dump_list") == 0 && count > 0)
      refuse(ps, ACL_ERROR_FEATURE_UNSUPPORTED, path, no_dump);
    return;
  }
  if ((strcmp(path, "dump.dump_op_switch") == 0 || strcmp(path, "dump.dump_debug") == 0) &&
      strcmp(str, "on") == 0)
    refuse(ps, ACL_ERROR_FEATURE_UNSUPPORTED, path, no_dump);
  if (strcmp(path, "dump.dump_scene") == 0 && *str) {
    size_t n = strlen(str), tail = strlen(":disable");
    if (n < tail || strcmp(str + n - tail, ":disable") != 0)
      refuse(ps, ACL_ERROR_FEATURE_UNSUPPORTED, path, no_dump);
  }
  if (strcmp(path, "profiler.switch") == 0 && strcmp(str, "on") == 0)
    refuse(ps, ACL_ERROR_FEATURE_UNSUPPORTED, path,
           "the software NPU does not profile through AscendCL (OMRT_PROFILE=1 or 2 times every "
           "task kind or task; aclprofInit is ACL_ERROR_FEATURE_UNSUPPORTED)");
  if (strcmp(path, "err_msg_mode") == 0) {
    if (strcmp(str, "0") != 0 && strcmp(str, "1") != 0)
      refuse(ps, ACL_ERROR_INVALID_PARAM, path, "must be \"0\" (per thread) or \"1\" (per process)");
    ps->cfg->err_msg_process = strcmp(str, "1") == 0;
  }
  if (strcmp(path, "defaultDevice.default_device") == 0) {
    if (strcmp(str, "0") != 0)
      refuse(ps, ACL_ERROR_RT_INVALID_DEVICEID, path, "the software NPU is device 0 (1 device)");
    ps->cfg->default_device = 1;
  }
}

static void parse_value(parser *ps, const char *path);

static void parse_members(parser *ps, const char *path) {
  if (++ps->objects > MAX_LEVELS) return syntax(ps, "'{' nested deeper than 10 levels");
  ps->p++;
  skip_space(ps);
  if (ps->p < ps->end && *ps->p == '}') {
    ps->p++;
    ps->objects--;
    return;
  }
  while (!ps->err) {
    skip_space(ps);
    if (ps->p >= ps->end || *ps->p != '"') return syntax(ps, "a member without a quoted name");
    char key[VALUE_BYTES], child[PATH_BYTES];
    parse_string(ps, key, sizeof key);
    int len = snprintf(child, sizeof child, "%s%s%s", path, *path ? "." : "", key);
    if (len < 0 || (size_t)len >= sizeof child) child[sizeof child - 1] = '\0'; /* (a long path: truncated) */
    skip_space(ps);
    if (ps->err || ps->p >= ps->end || *ps->p != ':') return syntax(ps, "a member name without ':'");
    ps->p++;
    parse_value(ps, child);
    skip_space(ps);
    if (ps->err) return;
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == '}') {
      ps->p++;
      ps->objects--;
      return;
    }
    return syntax(ps, "an object member not followed by ',' or '}'");
  }
}

static void parse_elements(parser *ps, const char *path) {
  if (++ps->arrays > MAX_LEVELS) return syntax(ps, "'[' nested deeper than 10 levels");
  ps->p++;
  skip_space(ps);
  int count = 0;
  if (ps->p < ps->end && *ps->p == ']') {
    ps->p++;
  } else {
    while (!ps->err) {
      char child[PATH_BYTES];
      snprintf(child, sizeof child, "%s[]", path);
      parse_value(ps, child);
      count++;
      skip_space(ps);
      if (ps->err) return;
      if (ps->p < ps->end && *ps->p == ',') {
        ps->p++;
        continue;
      }
      if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        break;
      }
      return syntax(ps, "an array element not followed by ',' or ']'");
    }
  }
  ps->arrays--;
  if (!ps->err) note(ps, path, NULL, count);
}

static void parse_value(parser *ps, const char *path) {
  skip_space(ps);
  if (ps->p >= ps->end) return syntax(ps, "a value is missing");
  char c = *ps->p;
  if (c == '{') return parse_members(ps, path);
  if (c == '[') return parse_elements(ps, path);
  if (c == '"') {
    char value[VALUE_BYTES];
    parse_string(ps, value, sizeof value);
    if (!ps->err) note(ps, path, value, 0);
    return;
  }
  if (starts(ps, "true") || starts(ps, "null")) {
    ps->p += 4;
    return;
  }
  if (starts(ps, "false")) {
    ps->p += 5;
    return;
  }
  if (c == '-' || (c >= '0' && c <= '9')) { /* a number: its digits and the characters of exponents */
    char digits[32];
    size_t n = 0;
    while (ps->p < ps->end && strchr("+-.0123456789eE", *ps->p) && *ps->p && n + 1 < sizeof digits)
      digits[n++] = *ps->p++;
    digits[n] = '\0';
    char *stop;
    strtod(digits, &stop);
    if (*stop || n == 0) return syntax(ps, "a malformed number");
    note(ps, path, digits, 0); /* ("default_device": 0 reads as "0") */
    return;
  }
  syntax(ps, "an unexpected character");
}

aclError acl_read_init_config(const char *path, acl_init_config *cfg) {
  *cfg = (acl_init_config){0};
  FILE *f = fopen(path, "rb");
  if (!f) return acl_fail(ACL_ERROR_INVALID_FILE, "aclInit: configPath '%s': %s", path, strerror(errno));
  char *text = malloc(MAX_BYTES + 1);
  size_t n = text ? fread(text, 1, MAX_BYTES + 1, f) : 0;
  int bad = ferror(f);
  fclose(f);
  if (!text) return acl_fail(ACL_ERROR_BAD_ALLOC, "aclInit: out of memory");
  if (bad || n > MAX_BYTES) {
    free(text);
    return acl_fail(bad ? ACL_ERROR_INVALID_FILE : ACL_ERROR_PARSE_FILE, "aclInit: configPath '%s': %s", path,
                    bad ? "cannot be read" : "larger than 1 MiB");
  }
  parser ps = {.p = text, .end = text + n, .cfg = cfg, .file = path};
  skip_space(&ps);
  if (ps.p >= ps.end || *ps.p != '{')
    syntax(&ps, "the file is not a JSON object ('{}' configures nothing)");
  else
    parse_members(&ps, "");
  skip_space(&ps);
  if (!ps.err && ps.p < ps.end) syntax(&ps, "text after the closing '}'");
  aclError e = ps.refused;
  if (ps.err) {
    int line = 1;
    for (const char *q = text; q < ps.err_at; q++)
      line += *q == '\n';
    e = acl_fail(ACL_ERROR_PARSE_FILE, "aclInit: configPath '%s': line %d: %s (AscendCL reads it as JSON)",
                 path, line, ps.err);
  }
  free(text);
  return e;
}
