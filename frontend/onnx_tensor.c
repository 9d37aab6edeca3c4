/* onnx_tensor.c - TensorProto -> constant value.
 *
 * A TensorProto stores its elements in exactly one place: raw_data
 * (little-endian bytes, copied as is on this little-endian-only build), one
 * typed field chosen by the dtype (float_data, double_data, int64_data,
 * uint64_data, or int32_data for every type of 32 bits or less, where float16
 * and bfloat16 are the uint16 bit pattern, a float8 its byte, and the 4- and
 * 2-bit types one packed byte per int32), or an external file. The storage
 * dtypes (common/types.h) are kept as ONNX packs them. Whatever the form, the
 * element count must equal the product of the dims, and every mismatch is
 * reported with the tensor, the field, the dims and the dtype.
 *
 * External data is the one place a model reaches outside its own bytes, so it
 * is fenced in: the location must be a relative path inside the model's
 * directory with no ".." component; every component is checked with
 * fstatat(AT_SYMLINK_NOFOLLOW) and opened with openat(O_NOFOLLOW) from the
 * directory's fd, so no symlink anywhere in the path is followed; the file
 * must be regular with a single link (a hard link could point anywhere on the
 * same file system); offset + length must lie within it; and the bytes read
 * from one file over the whole model may not exceed its size, so a thousand
 * tensors naming the same gigabyte cannot make us allocate a terabyte.
 *
 * Two users share tensor_check and tensor_fill: onnx_tensor_const
 * (initializers, Constant nodes) and onnx_read_tensor_file (a lone serialized
 * TensorProto, such as the input/output files of ONNX's node tests, for the
 * conformance runner). Both allocate the destination first and have the
 * elements written straight into it, so no weight is held twice on the way:
 * an external file is read into the constant, raw_data is copied into it
 * while the model's bytes it came from are given back (tensor_fill).
 */
#include "frontend/onnx_internal.h"

#include "common/bigmem.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ONNX raw_data and external data are little-endian and are copied as is"
#endif

struct onnx_ext_file {
  dev_t dev;
  ino_t ino;
  uint64_t size, read_bytes; /* bytes */
};

const char *onnx_dtype_name(int dt) {
  switch (dt) {
  case DT_FLOAT32: return "float32";
  case DT_UINT8: return "uint8";
  case DT_INT8: return "int8";
  case DT_UINT16: return "uint16";
  case DT_INT16: return "int16";
  case DT_INT32: return "int32";
  case DT_INT64: return "int64";
  case DT_STRING: return "string";
  case DT_BOOL: return "bool";
  case DT_FLOAT16: return "float16";
  case DT_DOUBLE: return "float64";
  case DT_UINT32: return "uint32";
  case DT_UINT64: return "uint64";
  case 14: return "complex64";
  case 15: return "complex128";
  case DT_BFLOAT16: return "bfloat16";
  case DT_FLOAT8E4M3FN: return "float8e4m3fn";
  case DT_FLOAT8E4M3FNUZ: return "float8e4m3fnuz";
  case DT_FLOAT8E5M2: return "float8e5m2";
  case DT_FLOAT8E5M2FNUZ: return "float8e5m2fnuz";
  case DT_UINT4: return "uint4";
  case DT_INT4: return "int4";
  case DT_FLOAT4E2M1: return "float4e2m1";
  case DT_FLOAT8E8M0: return "float8e8m0";
  case DT_UINT2: return "uint2";
  case DT_INT2: return "int2";
  default: return "unknown";
  }
}

const char *onnx_dims_str(int rank, const int64_t *dims, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%" PRId64, i ? ", " : "", dims[i]);
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}

/* --- typed fields */

/* The typed field a dtype's values live in. */
static const char *typed_field_for(int dt) {
  switch (dt) {
  case DT_FLOAT32: return "float_data";
  case DT_DOUBLE: return "double_data";
  case DT_INT64: return "int64_data";
  case DT_UINT32:
  case DT_UINT64: return "uint64_data";
  default: return "int32_data";
  }
}

/* Element count of a typed field by name (string_data included). */
static size_t typed_count(const Onnx__TensorProto *t, const char *field) {
  if (!strcmp(field, "float_data")) return t->n_float_data;
  if (!strcmp(field, "double_data")) return t->n_double_data;
  if (!strcmp(field, "int64_data")) return t->n_int64_data;
  if (!strcmp(field, "uint64_data")) return t->n_uint64_data;
  if (!strcmp(field, "int32_data")) return t->n_int32_data;
  return t->n_string_data;
}

static const char *const typed_fields[] = {"float_data",  "double_data", "int64_data",
                                           "uint64_data", "int32_data",  "string_data"};

/* The first non-empty typed field, or NULL. */
static const char *typed_present(const Onnx__TensorProto *t) {
  for (size_t i = 0; i < sizeof typed_fields / sizeof *typed_fields; i++)
    if (typed_count(t, typed_fields[i])) return typed_fields[i];
  return NULL;
}

/* Range of int32_data values for dtypes stored there. */
static void int32_range(int dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
  case DT_INT16:
    *lo = INT16_MIN;
    *hi = INT16_MAX;
    break;
  case DT_INT8:
    *lo = INT8_MIN;
    *hi = INT8_MAX;
    break;
  case DT_UINT16:
  case DT_FLOAT16:
  case DT_BFLOAT16:
    *lo = 0;
    *hi = UINT16_MAX;
    break;
  case DT_UINT8:
    *lo = 0;
    *hi = UINT8_MAX;
    break;
  case DT_BOOL:
    *lo = 0;
    *hi = 1;
    break;
  default:
    *lo = dtype_is_storage(dt) ? 0 : INT32_MIN; /* float8 bytes and packed bytes */
    *hi = dtype_is_storage(dt) ? UINT8_MAX : INT32_MAX;
    break;
  }
}

/* Entries of the typed field for `count` elements: one per element, but
 * for the packed dtypes, whose int32_data holds one byte per entry. */
static uint64_t typed_entries(int dt, uint64_t count) {
  uint64_t bytes;
  return dtype_bits(dt) < 8 && !dtype_bytes(dt, count, &bytes) ? bytes : count;
}

/* Whether `t` holds its values in dtype dt's typed field only, count of
 * them: checked before the buffer for them is allocated, so that dims
 * claiming terabytes next to a one-element field are refused, not
 * allocated (found by tests/fuzz, onnx). */
static status typed_check(onnx_ctx *c, const Onnx__TensorProto *t, const char *what, int dt, int rank,
                          const int64_t *dims, uint64_t count) {
  const char *field = typed_field_for(dt);
  for (size_t i = 0; i < sizeof typed_fields / sizeof *typed_fields; i++) {
    const char *other = typed_fields[i];
    if (strcmp(other, field) && typed_count(t, other))
      return onnx_fail(c, ST_ERR_INVALID, "%s: %s is set, but %s tensors store their values in %s", what,
                       other, onnx_dtype_name(dt), field);
  }
  size_t n = typed_count(t, field);
  char dbuf[256];
  if (n != typed_entries(dt, count))
    return onnx_fail(c, ST_ERR_INVALID, "%s: %s has %zu elements, dims %s need %" PRIu64, what, field, n,
                     onnx_dims_str(rank, dims, dbuf, sizeof dbuf), typed_entries(dt, count));
  return ST_OK;
}

/* Converts the typed field of `t` (typed_check passed) into dst. */
static status from_typed(onnx_ctx *c, const Onnx__TensorProto *t, const char *what, int dt,
                         unsigned char *dst) {
  size_t n = typed_count(t, typed_field_for(dt));
  if (n == 0) return ST_OK; /* an empty tensor: the typed field is NULL, memcpy must not see it */
  switch (dt) {
  case DT_FLOAT32: memcpy(dst, t->float_data, n * 4); break;
  case DT_DOUBLE: memcpy(dst, t->double_data, n * 8); break;
  case DT_INT64: memcpy(dst, t->int64_data, n * 8); break;
  case DT_UINT64: memcpy(dst, t->uint64_data, n * 8); break;
  case DT_UINT32:
    for (size_t i = 0; i < n; i++) {
      if (t->uint64_data[i] > UINT32_MAX)
        return onnx_fail(c, ST_ERR_INVALID, "%s: uint64_data[%zu] = %" PRIu64 " does not fit uint32", what, i,
                         t->uint64_data[i]);
      uint32_t v = (uint32_t)t->uint64_data[i];
      memcpy(dst + 4 * i, &v, 4);
    }
    break;
  default: {
    int64_t lo, hi;
    int32_range(dt, &lo, &hi);
    size_t es = (size_t)(dtype_bits(dt) + 7) / 8;
    for (size_t i = 0; i < n; i++) {
      int32_t v = t->int32_data[i];
      if (v < lo || v > hi)
        return onnx_fail(c, ST_ERR_INVALID, "%s: int32_data[%zu] = %d does not fit %s", what, i, v,
                         onnx_dtype_name(dt));
      if (es == 4) {
        memcpy(dst + 4 * i, &v, 4);
      } else if (es == 2) {
        uint16_t u = (uint16_t)v;
        memcpy(dst + 2 * i, &u, 2);
      } else {
        dst[i] = (uint8_t)v;
      }
    }
  }
  }
  return ST_OK;
}

/* --- external data */

/* Parses a decimal uint64 ("0" .. "18446744073709551615"), digits only. */
static int parse_u64(const char *s, uint64_t *out) {
  uint64_t v = 0;
  if (!*s) return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    if (mul_u64(v, 10, &v) || add_u64(v, (uint64_t)(*s - '0'), &v)) return -1;
  }
  *out = v;
  return 0;
}

typedef struct ext_ref {
  const char *location;
  uint64_t offset, length; /* bytes */
  int has_length;
} ext_ref;

static status parse_ext_keys(onnx_ctx *c, const Onnx__TensorProto *t, const char *what, ext_ref *r) {
  int seen_location = 0, seen_offset = 0, seen_checksum = 0;
  memset(r, 0, sizeof *r);
  for (size_t i = 0; i < t->n_external_data; i++) {
    const char *key = t->external_data[i]->key ? t->external_data[i]->key : "";
    const char *val = t->external_data[i]->value ? t->external_data[i]->value : "";
    int *seen = !strcmp(key, "location")   ? &seen_location
                : !strcmp(key, "offset")   ? &seen_offset
                : !strcmp(key, "length")   ? &r->has_length
                : !strcmp(key, "checksum") ? &seen_checksum
                                           : NULL;
    if (!seen) return onnx_fail(c, ST_ERR_INVALID, "%s: unknown external_data key '%s'", what, key);
    if (*seen) return onnx_fail(c, ST_ERR_INVALID, "%s: external_data key '%s' is given twice", what, key);
    *seen = 1;
    if (!strcmp(key, "location")) {
      r->location = val;
    } else if (!strcmp(key, "offset") || !strcmp(key, "length")) {
      if (parse_u64(val, !strcmp(key, "offset") ? &r->offset : &r->length) != 0)
        return onnx_fail(c, ST_ERR_INVALID, "%s: external_data %s '%s' is not a non-negative decimal integer",
                         what, key, val);
    }
  }
  if (!r->location || !*r->location)
    return onnx_fail(c, ST_ERR_INVALID, "%s: external data has %s location", what,
                     r->location ? "an empty" : "no");
  return ST_OK;
}

/* Splits `loc` (a scratch copy) into its path components, dropping "" and
 * "."; rejects absolute paths and "..". */
static status split_location(onnx_ctx *c, const char *what, const char *location, char ***comps_out,
                             int *n_out) {
  if (location[0] == '/')
    return onnx_fail(c, ST_ERR_SECURITY,
                     "%s: external data location '%s' is an absolute path; only paths relative to "
                     "the model's directory are allowed",
                     what, location);
  size_t len = strlen(location);
  char *copy = arena_strdup(&c->scratch, location);
  char **comps = arena_array(&c->scratch, len / 2 + 1, sizeof *comps);
  if (!copy || !comps) return onnx_fail(c, ST_ERR_NOMEM, "%s: out of memory", what);
  int n = 0;
  for (char *s = copy, *end; s; s = end) {
    end = strchr(s, '/');
    if (end) *end++ = '\0';
    if (!strcmp(s, ".."))
      return onnx_fail(c, ST_ERR_SECURITY,
                       "%s: external data location '%s' has a '..' component; it must stay inside "
                       "the model's directory",
                       what, location);
    if (*s && strcmp(s, ".")) comps[n++] = s;
  }
  if (n == 0)
    return onnx_fail(c, ST_ERR_INVALID, "%s: external data location '%s' names no file", what, location);
  *comps_out = comps;
  *n_out = n;
  return ST_OK;
}

/* Opens location relative to c->dir without following any symlink; on
 * success *fd_out is a regular file with one link and *st_out its stat. */
static status open_external(onnx_ctx *c, const char *what, const char *location, int *fd_out,
                            struct stat *st_out) {
  char **comps = NULL;
  int n = 0;
  status s = split_location(c, what, location, &comps, &n);
  if (s) return s;
  if (c->dirfd < 0) {
    c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (c->dirfd < 0)
      return onnx_fail(c, ST_ERR_IO, "%s: cannot open the model directory '%s': %s", what, c->dir,
                       strerror(errno));
  }
  int cur = c->dirfd, fd = -1;
  for (int k = 0; k < n && !s; k++) {
    struct stat st;
    int last = k == n - 1;
    if (fstatat(cur, comps[k], &st, AT_SYMLINK_NOFOLLOW) != 0) {
      s = onnx_fail(c, ST_ERR_IO, "%s: external data '%s': cannot stat '%s': %s", what, location, comps[k],
                    strerror(errno));
    } else if (S_ISLNK(st.st_mode)) {
      s = onnx_fail(c, ST_ERR_SECURITY,
                    "%s: external data '%s': '%s' is a symbolic link; links are not followed", what, location,
                    comps[k]);
    } else if (!last && !S_ISDIR(st.st_mode)) {
      s = onnx_fail(c, ST_ERR_INVALID, "%s: external data '%s': '%s' is not a directory", what, location,
                    comps[k]);
    } else if (!last) {
      int next = openat(cur, comps[k], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0)
        s = onnx_fail(c, ST_ERR_SECURITY, "%s: external data '%s': cannot open directory '%s': %s", what,
                      location, comps[k], strerror(errno));
      if (cur != c->dirfd) close(cur);
      cur = next;
    } else if (!S_ISREG(st.st_mode)) {
      s = onnx_fail(c, ST_ERR_SECURITY, "%s: external data '%s' is not a regular file", what, location);
    } else if (st.st_nlink > 1) {
      s = onnx_fail(c, ST_ERR_SECURITY,
                    "%s: external data '%s' has %ju hard links; a hard-linked file may live "
                    "outside the model's directory",
                    what, location, (uintmax_t)st.st_nlink);
    } else {
      /* O_NONBLOCK: if the file was swapped for a FIFO since fstatat, do not hang. */
      fd = openat(cur, comps[k], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      struct stat st2;
      if (fd < 0) {
        s = onnx_fail(c, ST_ERR_SECURITY, "%s: external data '%s': cannot open: %s", what, location,
                      strerror(errno));
      } else if (fstat(fd, &st2) != 0 || !S_ISREG(st2.st_mode) || st2.st_nlink != 1 ||
                 st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
        s = onnx_fail(c, ST_ERR_SECURITY, "%s: external data '%s' changed while being opened", what,
                      location);
      } else {
        *st_out = st2;
      }
    }
  }
  if (cur >= 0 && cur != c->dirfd) close(cur);
  if (s && fd >= 0) close(fd);
  if (!s) *fd_out = fd;
  return s;
}

/* Charges `length` bytes to the file's read total. */
static status charge_file(onnx_ctx *c, const char *what, const char *location, const struct stat *st,
                          uint64_t length) {
  onnx_ext_file *f = NULL;
  for (int i = 0; i < c->ext_count && !f; i++)
    if (c->ext[i].dev == st->st_dev && c->ext[i].ino == st->st_ino) f = &c->ext[i];
  if (!f) {
    if (arena_grow(&c->scratch, (void **)&c->ext, &c->ext_cap, c->ext_count, sizeof *c->ext))
      return onnx_fail(c, ST_ERR_NOMEM, "%s: out of memory", what);
    f = &c->ext[c->ext_count++];
    *f = (onnx_ext_file){st->st_dev, st->st_ino, (uint64_t)st->st_size, 0};
  }
  uint64_t total;
  if (add_u64(f->read_bytes, length, &total) || total > f->size)
    return onnx_fail(c, ST_ERR_LIMIT,
                     "%s: external data '%s': tensors read more bytes from it than it holds (%" PRIu64
                     "); overlapping regions are not allowed",
                     what, location, f->size);
  f->read_bytes = total;
  return ST_OK;
}

/* Reads the external bytes of `t` (exactly `need` of them) into a malloc'd
 * buffer the caller frees. */
static status read_external(onnx_ctx *c, const Onnx__TensorProto *t, const char *what, int dt, int rank,
                            const int64_t *dims, uint64_t need, unsigned char *dst) {
  ext_ref r;
  status s = parse_ext_keys(c, t, what, &r);
  if (s) return s;
  if (!c->dir)
    return onnx_fail(c, ST_ERR_UNSUPPORTED,
                     "%s: external data '%s' needs the model's directory (the model was loaded "
                     "from memory without one)",
                     what, r.location);
  int fd = -1;
  struct stat st = {0};
  if ((s = open_external(c, what, r.location, &fd, &st))) return s;

  uint64_t size = (uint64_t)st.st_size, end;
  char dbuf[256];
  if (!r.has_length) r.length = r.offset <= size ? size - r.offset : 0;
  if (r.length != need)
    s = onnx_fail(c, ST_ERR_INVALID,
                  "%s: external data '%s': length %" PRIu64 ", but dims %s x %s need %" PRIu64 " bytes", what,
                  r.location, r.length, onnx_dims_str(rank, dims, dbuf, sizeof dbuf), onnx_dtype_name(dt),
                  need);
  else if (add_u64(r.offset, r.length, &end) || end > size)
    s = onnx_fail(c, ST_ERR_INVALID,
                  "%s: external data '%s': offset %" PRIu64 " + length %" PRIu64
                  " runs past the end of the file (%" PRIu64 " bytes)",
                  what, r.location, r.offset, r.length, size);
  else
    s = charge_file(c, what, r.location, &st, need);

  for (uint64_t got = 0; !s && got < need;) {
    ssize_t n = pread(fd, dst + got, need - got, (off_t)(r.offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      s = onnx_fail(c, ST_ERR_IO, "%s: external data '%s': read failed at byte %" PRIu64 ": %s", what,
                    r.location, r.offset + got, n < 0 ? strerror(errno) : "file shrank");
    else
      got += (uint64_t)n;
  }
  close(fd);
  return s;
}

void onnx_tensor_done(onnx_ctx *c) {
  if (c->dirfd >= 0) close(c->dirfd);
  c->dirfd = -1;
}

/* --- decoding: the one place a TensorProto's elements are read */

/* Where a TensorProto's elements are. */
enum { IN_RAW, IN_TYPED, IN_EXTERNAL };

/* Checks `t`: its dtype, its dims, and that its elements are in exactly one
 * place (*where_out) holding exactly the *bytes_out bytes the dims need
 * (an external file is checked when tensor_fill reads it). */
static status tensor_check(onnx_ctx *c, const Onnx__TensorProto *t, const char *what, int *dt_out,
                           int *rank_out, int64_t *dims, uint64_t *bytes_out, int *where_out) {
  if (!t) /* a TENSOR-typed attribute whose `t` field is unset (found by tests/fuzz, onnx) */
    return onnx_fail(c, ST_ERR_INVALID, "%s: holds no tensor (field t is not set)", what);
  int dt = t->has_data_type ? t->data_type : DT_UNDEFINED;
  if (!dtype_bits(dt))
    return onnx_fail(c, ST_ERR_UNSUPPORTED, "%s: data_type %d (%s) is not supported", what, dt,
                     onnx_dtype_name(dt));
  if (t->n_dims > MAX_RANK)
    return onnx_fail(c, ST_ERR_LIMIT, "%s: rank %zu is more than the limit of %d", what, t->n_dims, MAX_RANK);
  int rank = (int)t->n_dims;
  uint64_t count = 1, need;
  char dbuf[256];
  for (int i = 0; i < rank; i++) {
    dims[i] = t->dims[i];
    if (dims[i] < 0)
      return onnx_fail(c, ST_ERR_INVALID, "%s: dim %d is negative (%" PRId64 ")", what, i, dims[i]);
    if (mul_u64(count, (uint64_t)dims[i], &count))
      return onnx_fail(c, ST_ERR_LIMIT, "%s: dims %s overflow the element count", what,
                       onnx_dims_str(rank, t->dims, dbuf, sizeof dbuf));
  }
  if (dtype_bytes(dt, count, &need) || need > SIZE_MAX / 2)
    return onnx_fail(c, ST_ERR_LIMIT, "%s: dims %s x %s overflow the byte size", what,
                     onnx_dims_str(rank, dims, dbuf, sizeof dbuf), onnx_dtype_name(dt));
  if (t->segment) return onnx_fail(c, ST_ERR_UNSUPPORTED, "%s: segmented tensors are not supported", what);
  *dt_out = dt;
  *rank_out = rank;
  *bytes_out = need;

  const char *typed = typed_present(t);
  int external = t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  if (!external && t->n_external_data)
    return onnx_fail(c, ST_ERR_INVALID, "%s: has external_data entries but data_location is not EXTERNAL",
                     what);
  if (external) {
    if (t->has_raw_data || typed)
      return onnx_fail(c, ST_ERR_INVALID, "%s: data_location is EXTERNAL but %s is also set", what,
                       t->has_raw_data ? "raw_data" : typed);
    *where_out = IN_EXTERNAL;
    return ST_OK;
  }
  if (t->has_raw_data) {
    if (typed) return onnx_fail(c, ST_ERR_INVALID, "%s: both raw_data and %s are set", what, typed);
    if (t->raw_data.len != need)
      return onnx_fail(c, ST_ERR_INVALID, "%s: raw_data has %zu bytes, dims %s x %s need %" PRIu64, what,
                       t->raw_data.len, onnx_dims_str(rank, dims, dbuf, sizeof dbuf), onnx_dtype_name(dt),
                       need);
    *where_out = IN_RAW;
    return ST_OK;
  }
  *where_out = IN_TYPED;
  return typed_check(c, t, what, dt, rank, dims, count);
}

enum { FILL_CHUNK_BYTES = 32 << 20 };

/* Writes the `need` bytes of t's elements (tensor_check's findings) to dst
 * in C order. raw_data that lies in the bytes of the model being loaded
 * (c->src) is copied a chunk at a time, each chunk of dst faulted in just
 * before and each chunk of the source given back just after: a weight of a
 * gigabyte never sits in memory twice. */
static status tensor_fill(onnx_ctx *c, const Onnx__TensorProto *t, const char *what, int where, int dt,
                          int rank, const int64_t *dims, uint64_t need, unsigned char *dst) {
  if (where == IN_EXTERNAL) return read_external(c, t, what, dt, rank, dims, need, dst);
  if (where == IN_TYPED) return from_typed(c, t, what, dt, dst);
  const unsigned char *src = t->raw_data.data;
  for (uint64_t at = 0; at < need; at += FILL_CHUNK_BYTES) {
    size_t n = need - at < FILL_CHUNK_BYTES ? (size_t)(need - at) : FILL_CHUNK_BYTES;
    bigmem_populate(dst + at, n);
    memcpy(dst + at, src + at, n);
    if (c->src) onnx_proto_consumed(c->src, src + at, n);
  }
  return ST_OK;
}

/* --- the entry points */

status onnx_tensor_const(onnx_ctx *c, const Onnx__TensorProto *t, const char *name, const char *what,
                         ir_value **out) {
  int dt, rank, where;
  int64_t dims[MAX_RANK];
  uint64_t bytes;
  status s = tensor_check(c, t, what, &dt, &rank, dims, &bytes, &where);
  if (!s && !(*out = ir_const_new(c->g, name, (dtype)dt, rank, dims, NULL, (size_t)bytes)))
    s = onnx_fail(c, ST_ERR_NOMEM, "%s: out of memory for %" PRIu64 " bytes", what, bytes);
  if (!s) s = tensor_fill(c, t, what, where, dt, rank, dims, bytes, (unsigned char *)(*out)->data);
  return s;
}

status onnx_read_tensor_file(const char *path, arena *a, onnx_tensor *out, diag *d) {
  memset(out, 0, sizeof *out);
  void *bytes = NULL;
  size_t size = 0;
  status s = onnx_read_file(path, (size_t)4 << 30, &bytes, &size, d);
  if (s) return s;
  onnx_proto p;
  s = onnx_proto_unpack_tensor(bytes, size, path, &p, d);
  bigmem_free(bytes, size); /* the unpacked tensor holds its own copies */
  if (s) return s;

  /* External data, if any, is relative to the file's directory. */
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
  onnx_ctx c = {.label = path, .dir = dir, .dirfd = -1, .d = d};
  arena_init(&c.scratch, 0);
  const Onnx__TensorProto *t = p.tensor;
  uint64_t nbytes = 0;
  int where = 0;
  if (!dir) s = diag_set(d, ST_ERR_NOMEM, "%s: out of memory", path);
  if (!s) s = tensor_check(&c, t, "TensorProto", &out->dtype, &out->rank, out->dims, &nbytes, &where);
  if (!s) {
    out->bytes = (size_t)nbytes;
    out->data = arena_alloc_aligned(a, out->bytes ? out->bytes : 1, 64);
    out->name = arena_strdup(a, t->name ? t->name : "");
    if (!out->data || !out->name)
      s = diag_set(d, ST_ERR_NOMEM, "%s: out of memory for %zu bytes", path, out->bytes);
  }
  if (!s)
    s = tensor_fill(&c, t, "TensorProto", where, out->dtype, out->rank, out->dims, nbytes,
                    (unsigned char *)out->data);
  onnx_tensor_done(&c);
  arena_free(&c.scratch);
  free(dir);
  onnx_proto_free(&p);
  return s;
}
