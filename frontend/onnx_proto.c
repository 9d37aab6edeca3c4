/* onnx_proto.c - bytes -> Onnx__ModelProto (or a lone TensorProto), safely.
 *
 * protobuf-c's unpacker recurses once per nested message and sizes its
 * allocations from what the bytes claim, so a hostile file could exhaust the
 * stack (a few kilobytes of AttributeProto.g -> GraphProto -> NodeProto
 * nesting) or make it allocate far more than the file holds (every two-byte
 * empty NodeProto becomes a struct of ~100 bytes). So before unpacking we walk
 * the wire format once against the generated descriptors: every tag, varint,
 * length and wire type is checked, nesting is bounded by MAX_NESTING, and the
 * first bad byte is reported by offset and field path ("graph.node.attribute").
 * The unpack then runs with an allocator that charges every allocation to a
 * byte budget proportional to the input size; running out is ST_ERR_LIMIT.
 *
 * A model's weights are nearly all of its bytes, in the raw_data of the
 * TensorProtos of ModelProto.graph.initializer. Unpacking them with the rest
 * would copy them all while the file's bytes are still held: twice the file
 * in memory at once. So once the wire check has passed, the model is
 * unpacked from a copy of the bytes without those fields (compact), and each
 * initializer is unpacked on its own when the loader reaches it
 * (onnx_proto_initializer), in file order, from a copy without its raw_data,
 * which is then pointed at the bytes in place. When the proto owns the bytes
 * (the file onnx_load_file read) the pages before the initializer being read
 * go back to the system, so the loader's constants take the file's place
 * instead of adding to it.
 */
#include "frontend/onnx_internal.h"

#include "common/bigmem.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_NESTING = 64 }; /* ONNX needs ~6 + 3 per subgraph level */

/* Unpacked structs take at most a few times the wire bytes for real models
 * (packed one-byte varints of int64_data are the worst: 8x). */
#define BUDGET_BASE ((size_t)256 << 20)
#define BUDGET_PER_BYTE 8

status onnx_read_file(const char *path, size_t max_bytes, void **data_out, size_t *size_out, diag *d) {
  *data_out = NULL;
  *size_out = 0;
  /* O_NONBLOCK: opening a FIFO must not hang; we reject it after fstat. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return diag_set(d, ST_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return diag_set(d, ST_ERR_IO, "%s: not a regular file", path);
  }
  if ((uint64_t)st.st_size > max_bytes) {
    close(fd);
    return diag_set(d, ST_ERR_LIMIT, "%s: file has %lld bytes, more than the limit of %zu", path,
                    (long long)st.st_size, max_bytes);
  }
  size_t size = (size_t)st.st_size;
  unsigned char *buf = bigmem_alloc(size);
  if (!buf) {
    close(fd);
    return diag_set(d, ST_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, size);
  }
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, buf + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : 0;
      bigmem_free(buf, size);
      close(fd);
      return diag_set(d, ST_ERR_IO, "%s: read failed after %zu of %zu bytes%s%s", path, got, size,
                      err ? ": " : " (file shrank)", err ? strerror(err) : "");
    }
    got += (size_t)n;
  }
  close(fd);
  *data_out = buf;
  *size_out = size;
  return ST_OK;
}

/* --- the budgeted allocator: each block carries its size in a header.
 * protobuf-c's many small structs come from malloc; a big block (a typed
 * field, a Constant node's tensor) from bigmem. */

typedef union alloc_header {
  size_t bytes;
  max_align_t align;
} alloc_header;

static void *budget_alloc(void *ud, size_t bytes) {
  onnx_proto *p = ud;
  if (bytes > p->budget_bytes - p->used_bytes) {
    p->over_budget = 1;
    return NULL;
  }
  size_t total = sizeof(alloc_header) + bytes;
  alloc_header *h = total < BIGMEM_MIN_BYTES ? malloc(total) : bigmem_alloc(total);
  if (!h) {
    p->out_of_memory = 1;
    return NULL;
  }
  h->bytes = bytes;
  p->used_bytes += bytes;
  return h + 1;
}

static void budget_free(void *ud, void *ptr) {
  onnx_proto *p = ud;
  if (!ptr) return;
  alloc_header *h = (alloc_header *)ptr - 1;
  size_t total = sizeof *h + h->bytes;
  p->used_bytes -= h->bytes;
  if (total < BIGMEM_MIN_BYTES)
    free(h);
  else
    bigmem_free(h, total);
}

/* --- the wire-format pre-check */

typedef struct wire_walk {
  const uint8_t *buf;
  size_t bad_at;   /* offset of the first bad byte */
  const char *why; /* static text */
  const char *path[MAX_NESTING + 1];
  int bad_depth; /* path[0..bad_depth) names the enclosing fields */
} wire_walk;

static int read_varint(const uint8_t *buf, size_t end, size_t *pos, uint64_t *v) {
  uint64_t r = 0;
  for (int i = 0; i < 10 && *pos < end; i++) {
    uint8_t b = buf[(*pos)++];
    r |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *v = r;
      return 0;
    }
  }
  return -1;
}

/* The wire type a non-packed field of this protobuf-c type uses. */
static int wire_type_of(ProtobufCType t) {
  switch (t) {
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_FIXED32:
  case PROTOBUF_C_TYPE_FLOAT: return 5;
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_DOUBLE: return 1;
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_BYTES:
  case PROTOBUF_C_TYPE_MESSAGE: return 2;
  default: return 0;
  }
}

static int wire_bad(wire_walk *w, size_t at, int depth, const char *why) {
  w->bad_at = at;
  w->why = why;
  w->bad_depth = depth;
  return -1;
}

/* Checks the message of type `desc` in buf[pos, end). */
static int wire_check(wire_walk *w, size_t pos, size_t end, const ProtobufCMessageDescriptor *desc,
                      int depth) {
  const uint8_t *buf = w->buf;
  while (pos < end) {
    size_t at = pos;
    uint64_t tag, len;
    if (read_varint(buf, end, &pos, &tag) != 0) return wire_bad(w, at, depth, "truncated tag");
    uint64_t number = tag >> 3;
    int wt = (int)(tag & 7);
    if (number == 0 || number > 0x1fffffff) return wire_bad(w, at, depth, "bad field number");
    const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(desc, (unsigned)number);
    if (fd) {
      int want = wire_type_of(fd->type);
      int packed = wt == 2 && want != 2 && fd->label == PROTOBUF_C_LABEL_REPEATED;
      if (wt != want && !packed) return wire_bad(w, at, depth, "wrong wire type for the field");
    }
    switch (wt) {
    case 0:
      if (read_varint(buf, end, &pos, &len) != 0) return wire_bad(w, at, depth, "truncated varint");
      break;
    case 1:
    case 5: {
      size_t n = wt == 1 ? 8 : 4;
      if (end - pos < n) return wire_bad(w, at, depth, "truncated fixed-width value");
      pos += n;
      break;
    }
    case 2:
      if (read_varint(buf, end, &pos, &len) != 0) return wire_bad(w, at, depth, "truncated length");
      if (len > end - pos) return wire_bad(w, at, depth, "length runs past the end");
      if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE) {
        w->path[depth] = fd->name;
        if (depth + 1 > MAX_NESTING) return wire_bad(w, at, depth + 1, "messages nested too deeply");
        if (wire_check(w, pos, pos + (size_t)len, fd->descriptor, depth + 1) != 0) return -1;
      }
      pos += (size_t)len;
      break;
    default: return wire_bad(w, at, depth, "unsupported wire type (groups)");
    }
  }
  return 0;
}

/* Checks the wire format of a message of type `desc` ("ModelProto",
 * "TensorProto" in messages). */
static status check_message(const ProtobufCMessageDescriptor *desc, const void *data, size_t size,
                            const char *label, diag *d) {
  const char *kind = desc->short_name;
  if (size == 0) return diag_set(d, ST_ERR_PARSE, "%s: not a valid ONNX %s (the file is empty)", label, kind);
  wire_walk w = {.buf = data};
  if (wire_check(&w, 0, size, desc, 0) == 0) return ST_OK;
  char path[512];
  size_t n = (size_t)snprintf(path, sizeof path, "%s", kind);
  for (int i = 0; i < w.bad_depth && n < sizeof path; i++)
    n += (size_t)snprintf(path + n, sizeof path - n, ".%s", w.path[i]);
  return diag_set(d, ST_ERR_PARSE,
                  "%s: not a valid ONNX %s (protobuf parse failed at byte %zu of %zu in %s: %s)", label, kind,
                  w.bad_at, size, path, w.why);
}

/* Unpacks checked bytes with p's allocator, under a byte budget. */
static status unpack_message(const ProtobufCMessageDescriptor *desc, const void *data, size_t size,
                             const char *label, onnx_proto *p, ProtobufCMessage **msg_out, diag *d) {
  const char *kind = desc->short_name;
  p->budget_bytes =
      size > (SIZE_MAX - BUDGET_BASE) / BUDGET_PER_BYTE ? SIZE_MAX : BUDGET_BASE + size * BUDGET_PER_BYTE;
  p->alloc = (ProtobufCAllocator){.alloc = budget_alloc, .free = budget_free, .allocator_data = p};
  *msg_out = protobuf_c_message_unpack(desc, &p->alloc, size, data);
  if (*msg_out) return ST_OK;
  if (p->out_of_memory) return diag_set(d, ST_ERR_NOMEM, "%s: out of memory unpacking the %s", label, kind);
  if (p->over_budget)
    return diag_set(d, ST_ERR_LIMIT, "%s: unpacking the %s needs more than %zu bytes", label, kind,
                    p->budget_bytes);
  return diag_set(d, ST_ERR_PARSE, "%s: not a valid ONNX %s (protobuf parse failed: protobuf-c rejected it)",
                  label, kind);
}

/* --- the model without its initializers, an initializer without its raw_data */

/* Field numbers in onnx.proto. */
enum { MODEL_GRAPH = 7, GRAPH_INITIALIZER = 5, TENSOR_RAW_DATA = 9 };

typedef struct wire_field {
  uint64_t number;
  size_t start, value, end; /* the tag's first byte; the value (after its length); one past */
} wire_field;

/* The field at *pos in buf[0, end), which wire_check has passed; advances *pos. */
static void next_field(const uint8_t *buf, size_t end, size_t *pos, wire_field *f) {
  uint64_t tag = 0, v = 0;
  f->start = *pos;
  read_varint(buf, end, pos, &tag);
  f->number = tag >> 3;
  switch (tag & 7) {
  case 0:
    read_varint(buf, end, pos, &v);
    v = 0;
    break;
  case 1: v = 8; break;
  case 5: v = 4; break;
  default: read_varint(buf, end, pos, &v); /* 2: a length */
  }
  f->value = *pos;
  *pos += (size_t)v;
  f->end = *pos;
}

static size_t put_varint(uint8_t *out, uint64_t v) {
  size_t n = 0;
  do {
    if (out) out[n] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
    n++;
    v >>= 7;
  } while (v);
  return n;
}

/* Copies the fields of the message in buf[0, size) to out (NULL: only
 * counts) except those numbered `skip`, whose values' ranges in buf go to
 * spans[*nspans...] (NULL: only counted), in order. Returns the bytes copied. */
static size_t copy_without(const uint8_t *buf, size_t size, uint64_t skip, uint8_t *out, onnx_span *spans,
                           size_t *nspans) {
  size_t n = 0;
  for (size_t pos = 0; pos < size;) {
    wire_field f;
    next_field(buf, size, &pos, &f);
    if (f.number == skip) {
      if (spans) spans[*nspans] = (onnx_span){f.value, f.end - f.value};
      ++*nspans;
    } else {
      if (out) memcpy(out + n, buf + f.start, f.end - f.start);
      n += f.end - f.start;
    }
  }
  return n;
}

/* Copies the ModelProto in buf[0, size) to out (NULL: only counts) without
 * the initializer fields of its graph field(s), re-encoding each graph's
 * length; the initializers' ranges go to inits (NULL: only counted) in file
 * order, which is the order protobuf gives them, as a second graph field
 * merges into the first. Returns the bytes of the copy. */
static size_t compact(const uint8_t *buf, size_t size, uint8_t *out, onnx_span *inits, size_t *ninits) {
  size_t n = 0;
  *ninits = 0;
  for (size_t pos = 0; pos < size;) {
    wire_field f;
    next_field(buf, size, &pos, &f);
    if (f.number != MODEL_GRAPH) {
      if (out) memcpy(out + n, buf + f.start, f.end - f.start);
      n += f.end - f.start;
      continue;
    }
    const uint8_t *graph = buf + f.value;
    size_t graph_bytes = f.end - f.value, counted = 0;
    size_t glen = copy_without(graph, graph_bytes, GRAPH_INITIALIZER, NULL, NULL, &counted);
    n += put_varint(out ? out + n : NULL, MODEL_GRAPH << 3 | 2);
    n += put_varint(out ? out + n : NULL, glen);
    size_t first = *ninits;
    n += copy_without(graph, graph_bytes, GRAPH_INITIALIZER, out ? out + n : NULL, inits, ninits);
    for (size_t i = first; inits && i < *ninits; i++)
      inits[i].offset += f.value;
  }
  return n;
}

status onnx_proto_unpack(const void *data, size_t size, int owned, const char *label, onnx_proto *p,
                         diag *d) {
  memset(p, 0, sizeof *p);
  p->data = data;
  p->size = size;
  p->owned = owned;
  p->label = label;
  status s = check_message(&onnx__model_proto__descriptor, data, size, label, d);
  if (s) return s;
  p->compact_bytes = compact(data, size, NULL, NULL, &p->ninits);
  p->compact = bigmem_alloc(p->compact_bytes);
  p->inits = bigmem_alloc(p->ninits * sizeof *p->inits);
  if (!p->compact || !p->inits)
    return diag_set(d, ST_ERR_NOMEM, "%s: out of memory for the model's %zu bytes", label, size);
  compact(data, size, p->compact, p->inits, &p->ninits);
  ProtobufCMessage *m;
  s = unpack_message(&onnx__model_proto__descriptor, p->compact, p->compact_bytes, label, p, &m, d);
  p->model = (Onnx__ModelProto *)m;
  return s;
}

status onnx_proto_initializer(onnx_proto *p, size_t i, onnx_proto *t, diag *d) {
  const uint8_t *buf = (const uint8_t *)p->data + p->inits[i].offset;
  size_t size = p->inits[i].bytes, nraw = 0;
  if (p->owned) bigmem_discard((void *)p->data, p->inits[i].offset);
  memset(t, 0, sizeof *t);
  /* Unpacked without its raw_data, which then points into p's bytes (the
   * last one, as protobuf keeps the last of a repeated scalar field). */
  t->compact_bytes = copy_without(buf, size, TENSOR_RAW_DATA, NULL, NULL, &nraw);
  t->compact = bigmem_alloc(t->compact_bytes);
  onnx_span *raw = bigmem_alloc(nraw * sizeof *raw);
  status s = ST_OK;
  if (!t->compact || !raw) {
    s = diag_set(d, ST_ERR_NOMEM, "%s: out of memory for initializer %zu", p->label, i);
  } else {
    nraw = 0;
    copy_without(buf, size, TENSOR_RAW_DATA, t->compact, raw, &nraw);
    ProtobufCMessage *m;
    s = unpack_message(&onnx__tensor_proto__descriptor, t->compact, t->compact_bytes, p->label, t, &m, d);
    t->tensor = (Onnx__TensorProto *)m;
  }
  if (!s && nraw) {
    t->tensor->has_raw_data = 1;
    t->tensor->raw_data = (ProtobufCBinaryData){raw[nraw - 1].bytes, (uint8_t *)buf + raw[nraw - 1].offset};
    t->raw_borrowed = 1;
  }
  bigmem_free(raw, nraw * sizeof *raw);
  return s;
}

void onnx_proto_consumed(const onnx_proto *p, const void *bytes, size_t n) {
  const char *base = p->data, *b = bytes;
  if (p->owned && b >= base && n <= p->size && (size_t)(b - base) <= p->size - n)
    bigmem_discard((void *)b, n);
}

status onnx_proto_unpack_tensor(const void *data, size_t size, const char *label, onnx_proto *p, diag *d) {
  memset(p, 0, sizeof *p);
  ProtobufCMessage *m;
  status s = check_message(&onnx__tensor_proto__descriptor, data, size, label, d);
  if (!s) s = unpack_message(&onnx__tensor_proto__descriptor, data, size, label, p, &m, d);
  p->tensor = s ? NULL : (Onnx__TensorProto *)m;
  return s;
}

void onnx_proto_free(onnx_proto *p) {
  if (p->tensor && p->raw_borrowed) p->tensor->raw_data.data = NULL; /* not protobuf-c's to free */
  if (p->model) onnx__model_proto__free_unpacked(p->model, &p->alloc);
  if (p->tensor) onnx__tensor_proto__free_unpacked(p->tensor, &p->alloc);
  bigmem_free(p->compact, p->compact_bytes);
  bigmem_free(p->inits, p->ninits * sizeof *p->inits);
  if (p->owned) bigmem_free((void *)p->data, p->size);
  memset(p, 0, sizeof *p);
}
