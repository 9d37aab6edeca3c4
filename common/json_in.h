/* json_in.h - the compiler's one JSON reader (common/json_in.c): a file read
 * whole, parsed into a tree of values in an arena.
 *
 * Users (atc --modify_mixlist, driver/precision_cfg.c; atc --singleop,
 * driver/singleop.c) walk the tree and check its shape themselves, so their
 * messages name their own fields; every value keeps the line it starts on.
 * The parser takes RFC 8259 JSON: objects, arrays, strings (with JSON's
 * escapes; \u escapes for ASCII only), numbers, true, false, null; at most
 * JSON_MAX_DEPTH levels of nesting; a syntax error is one line
 * "PATH:LINE: malformed JSON: expected X, got Y".
 */
#ifndef COMMON_JSON_IN_H
#define COMMON_JSON_IN_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/status.h"

enum { JSON_MAX_DEPTH = 64 };

typedef enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json_value json_value;
struct json_value {
  json_type type;
  int line;           /* 1-based line of the value's first character */
  int boolean;        /* JSON_BOOL: 0 or 1 */
  double number;      /* JSON_NUMBER */
  int is_int;         /* JSON_NUMBER written without fraction or exponent, within int64 */
  int64_t integer;    /* JSON_NUMBER with is_int */
  const char *string; /* JSON_STRING: NUL-terminated (a NUL escape is refused) */
  int n;              /* JSON_ARRAY / JSON_OBJECT: items */
  json_value **items; /* n values */
  const char **keys;  /* JSON_OBJECT: n keys, in the file's order */
};

/* Reads the text file at path (at most max_bytes; flag names the option in
 * messages, e.g. "--singleop") into a NUL-terminated buffer of a. */
status json_read_file(const char *path, const char *flag, size_t max_bytes, arena *a, char **text_out,
                      diag *d);

/* Parses text (path names it in messages) into *root_out; every value and
 * string lives in a. */
status json_parse(const char *text, const char *path, arena *a, json_value **root_out, diag *d);

/* The value of key in object obj, or NULL (also when obj is not an object).
 * With a repeated key, the first. */
const json_value *json_get(const json_value *obj, const char *key);

/* "an object", "an array", "a string", "a number", "true or false", "null". */
const char *json_type_name(json_type t);

#endif
