/* om_write.c - builds an om package in memory and serialises it
 * (backend/om_write.h, common/om_format.h).
 *
 * The writer is a plain serialiser: it owns growable malloc'd arrays of
 * tensors and tasks and a string table, keeps the weights as a list of
 * segments (its own copies, or the caller's bytes borrowed until the package
 * is serialised, so that the compiler's tens of megabytes of constants are
 * copied once, into the package), and lays everything out in
 * om_writer_serialise. It does not judge what it is given (the runtime's
 * loader is the one verifier), so tests can craft broken packages with it.
 * Strings are de-duplicated through a small open-addressing hash table of
 * string-table offsets; offset 0 is always "". Allocation failures in the
 * add functions are sticky: they return OM_NONE / -1 and make the final
 * serialisation fail with ST_ERR_NOMEM, so callers may check once at the end.
 *
 * Vector programs are appended to the VPROGS blob at 8-byte aligned offsets
 * and de-duplicated by content: each stored program keeps an FNV-1a hash of
 * its bytes, and an add first looks for an equal hash and equal bytes (a
 * linear scan; models hold hundreds of programs, not millions). Weights are
 * de-duplicated the same way (a CRC32C of the bytes, then memcmp): a
 * payload equal to one already added gets that one's offset, so a package
 * of several gears, whose compiles convert the same constants again, holds
 * them once.
 *
 * Gears (om_format.h): om_writer_begin_gear starts a gear; the tensors,
 * tasks, io and workspace size given after it are that gear's. Without
 * it the package has one implicit gear and no GEARS partition.
 *
 * Zero chunks (om_writer_set_zmap): the writer maps which 16-byte chunks of
 * the weights are all zero (a pass over the segments; the gaps between them
 * are zero by construction) and, when asked to or when it saves at least
 * 1/50 of the weights, writes the ZMAP partition and only the other chunks
 * as WEIGHTS. Segments start 64-byte aligned, so a chunk overlaps at most one
 * segment and the rest of it is zero.
 *
 * File layout produced: header, partition table (5 entries, up to 12), then
 * MODEL, TENSORS, TASKS, STRINGS, VPROGS (only when a program was added),
 * IO (only when formats were set), GEARS (only with gears), SOURCES (only
 * when set), COUNTS (only when set), ONODES (only when set), ZMAP (only
 * when zero chunks are elided), WEIGHTS, each at a 64-byte aligned offset with the gaps zeroed.
 */
#include "om_write.h"

#include <stdlib.h>
#include <string.h>

#include "common/atomic_file.h"
#include "common/bigmem.h"
#include "common/crc32c.h"

typedef struct bytes_buf {
  uint8_t *data;
  size_t len, cap; /* bytes */
} bytes_buf;

struct om_writer {
  om_model_def def;
  om_tensor *tensors;
  uint32_t ntensors, tensors_cap;
  om_task *tasks;
  uint32_t ntasks, tasks_cap;
  uint32_t *io; /* inputs then outputs */
  uint32_t ninputs, noutputs;
  bytes_buf strings;
  struct weight_seg {       /* one stored weight payload */
    uint64_t offset, bytes; /* in the WEIGHTS partition */
    const void *data;
    int owned;    /* the writer's copy (bigmem), else borrowed */
    uint32_t crc; /* of the bytes, for de-duplication */
  } * segs;
  uint32_t nsegs, segs_cap;
  uint64_t weights_bytes; /* the WEIGHTS partition's length */
  uint32_t *str_slots;    /* hash table: string offset + 1, 0 = empty */
  size_t str_nslots, str_count;
  bytes_buf vprogs;  /* the VPROGS partition */
  struct vprog_ref { /* one per stored program, for de-duplication */
    uint64_t hash;
    uint32_t offset, bytes;
  } * vprog_refs;
  uint32_t nvprogs, vprogs_cap;
  uint32_t *formats; /* [ninputs + noutputs] om_io_format, or NULL: no IO partition */
  uint32_t nformats;
  om_count *counts; /* [noutputs], or NULL: no COUNTS partition */
  uint32_t ncounts;
  om_onode *onodes; /* [noutputs], or NULL: no ONODES partition */
  uint32_t nonodes;
  struct gear_rec { /* om_writer_begin_gear */
    om_gear g;      /* counts filled in by plan */
    uint32_t *io;   /* [nio], from om_writer_set_io while the gear was current */
    uint32_t nio;
  } * gears;
  uint32_t ngears, gears_cap, gear_kind, gear_nvalues;
  bytes_buf sources; /* the SOURCES partition, whole (om_writer_add_sources) */
  int zmap_mode;     /* om_zmap_mode */
  struct zmap_plan { /* zmap_build's result, valid while weights_bytes and nsegs are unchanged */
    uint8_t *part;   /* the ZMAP partition: om_zmap + bitmap (malloc'd), NULL: not built */
    size_t part_bytes;
    uint64_t stored; /* chunks kept */
    uint32_t crc;    /* CRC32C of the kept chunks, in order: the WEIGHTS partition's */
    uint64_t for_bytes;
    uint32_t for_segs;
    int use; /* 1: the package has the ZMAP partition */
  } zmap;
  int nomem; /* an add function failed to allocate */
};

static uint64_t align_up(uint64_t n) { return (n + OM_ALIGN - 1) & ~(uint64_t)(OM_ALIGN - 1); }

/* Makes room for `extra` more bytes. 0 ok, -1 on overflow or allocation failure. */
static int buf_reserve(bytes_buf *b, size_t extra) {
  if (extra <= b->cap - b->len) return 0;
  size_t need = b->len + extra, cap = b->cap ? b->cap : 256;
  if (need < b->len) return -1;
  while (cap < need) {
    if (cap > SIZE_MAX / 2) return -1;
    cap *= 2;
  }
  uint8_t *p = realloc(b->data, cap);
  if (!p) return -1;
  b->data = p;
  b->cap = cap;
  return 0;
}

/* Grows an array of elem_bytes-sized items to hold one more. 0 ok, -1 nomem. */
static int array_grow(void **items, uint32_t *cap, uint32_t count, size_t elem_bytes) {
  if (count < *cap) return 0;
  if (count >= UINT32_MAX / 2) return -1;
  uint32_t ncap = *cap ? *cap * 2 : 16;
  void *p = realloc(*items, (size_t)ncap * elem_bytes);
  if (!p) return -1;
  *items = p;
  *cap = ncap;
  return 0;
}

om_writer *om_writer_new(void) {
  om_writer *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  if (buf_reserve(&w->strings, 1) != 0) {
    free(w);
    return NULL;
  }
  w->strings.data[w->strings.len++] = '\0'; /* offset 0 = "" */
  return w;
}

void om_writer_free(om_writer *w) {
  if (!w) return;
  free(w->tensors);
  free(w->tasks);
  free(w->io);
  free(w->strings.data);
  for (uint32_t i = 0; i < w->nsegs; i++)
    if (w->segs[i].owned) bigmem_free((void *)w->segs[i].data, (size_t)w->segs[i].bytes);
  free(w->segs);
  free(w->str_slots);
  free(w->vprogs.data);
  free(w->vprog_refs);
  free(w->sources.data);
  free(w->formats);
  free(w->counts);
  free(w->onodes);
  for (uint32_t i = 0; i < w->ngears; i++)
    free(w->gears[i].io);
  free(w->gears);
  free(w->zmap.part);
  free(w);
}

static uint64_t hash_bytes(const void *p, size_t n) {
  const uint8_t *s = p;
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++)
    h = (h ^ s[i]) * 1099511628211ull;
  return h;
}

static uint64_t hash_str(const char *s, size_t n) { return hash_bytes(s, n); }

/* Doubles the hash table (or creates it) and re-inserts every string. */
static int rehash(om_writer *w) {
  size_t n = w->str_nslots ? w->str_nslots * 2 : 256;
  uint32_t *slots = calloc(n, sizeof *slots);
  if (!slots) return -1;
  for (size_t i = 0; i < w->str_nslots; i++) {
    uint32_t v = w->str_slots[i];
    if (!v) continue;
    const char *s = (const char *)w->strings.data + (v - 1);
    size_t j = hash_str(s, strlen(s)) & (n - 1);
    while (slots[j])
      j = (j + 1) & (n - 1);
    slots[j] = v;
  }
  free(w->str_slots);
  w->str_slots = slots;
  w->str_nslots = n;
  return 0;
}

uint32_t om_writer_string(om_writer *w, const char *s) {
  if (!s || !*s) return 0;
  if ((w->str_count + 1) * 2 > w->str_nslots && rehash(w) != 0) goto nomem;
  size_t n = strlen(s);
  size_t mask = w->str_nslots - 1, j = hash_str(s, n) & mask;
  for (; w->str_slots[j]; j = (j + 1) & mask) {
    const char *t = (const char *)w->strings.data + (w->str_slots[j] - 1);
    if (strcmp(s, t) == 0) return w->str_slots[j] - 1;
  }
  if (w->strings.len + n + 1 >= UINT32_MAX || buf_reserve(&w->strings, n + 1) != 0) goto nomem;
  uint32_t off = (uint32_t)w->strings.len;
  memcpy(w->strings.data + off, s, n + 1);
  w->strings.len += n + 1;
  w->str_slots[j] = off + 1;
  w->str_count++;
  return off;
nomem:
  w->nomem = 1;
  return OM_NONE;
}

void om_writer_set_model(om_writer *w, const om_model_def *def) {
  w->def = *def;
  if (w->ngears) w->gears[w->ngears - 1].g.workspace_bytes = def->workspace_bytes;
}

int om_writer_begin_gear(om_writer *w, uint32_t kind, const int64_t *values, uint32_t nvalues) {
  if (nvalues > OM_GEAR_MAX_VALUES ||
      array_grow((void **)&w->gears, &w->gears_cap, w->ngears, sizeof *w->gears) != 0) {
    w->nomem = 1;
    return -1;
  }
  struct gear_rec *r = &w->gears[w->ngears++];
  memset(r, 0, sizeof *r);
  r->g.first_tensor = w->ntensors;
  r->g.first_task = w->ntasks;
  for (uint32_t i = 0; i < nvalues; i++)
    r->g.values[i] = values[i];
  w->gear_kind = kind;
  w->gear_nvalues = nvalues;
  return 0;
}

int om_writer_set_io_formats(om_writer *w, const uint32_t *formats, uint32_t n) {
  uint32_t *f = malloc(n ? n * sizeof *f : 1);
  if (!f) {
    w->nomem = 1;
    return -1;
  }
  if (n) memcpy(f, formats, n * sizeof *f);
  free(w->formats);
  w->formats = f;
  w->nformats = n;
  return 0;
}

/* *dst (freed first) becomes a copy of src's n records of `size` bytes. */
static int set_records(om_writer *w, void **dst, uint32_t *ndst, const void *src, uint32_t n, size_t size) {
  void *c = malloc(n ? n * size : 1);
  if (!c) {
    w->nomem = 1;
    return -1;
  }
  if (n) memcpy(c, src, n * size);
  free(*dst);
  *dst = c;
  *ndst = n;
  return 0;
}

int om_writer_set_counts(om_writer *w, const om_count *counts, uint32_t n) {
  return set_records(w, (void **)&w->counts, &w->ncounts, counts, n, sizeof *counts);
}

int om_writer_set_onodes(om_writer *w, const om_onode *onodes, uint32_t n) {
  return set_records(w, (void **)&w->onodes, &w->nonodes, onodes, n, sizeof *onodes);
}

uint32_t om_writer_add_tensor(om_writer *w, const om_tensor *t) {
  if (array_grow((void **)&w->tensors, &w->tensors_cap, w->ntensors, sizeof *t) != 0) {
    w->nomem = 1;
    return OM_NONE;
  }
  w->tensors[w->ntensors] = *t;
  return w->ntensors++;
}

int om_writer_add_sources(om_writer *w, const om_task_source *tasks, uint32_t ntasks, const uint32_t *names,
                          uint32_t nnames) {
  om_sources h = {0, 0}; /* what the partition holds so far */
  if (w->sources.len) memcpy(&h, w->sources.data, sizeof h);
  size_t old_recs = (size_t)h.ntasks * sizeof *tasks, old_names = (size_t)h.nnames * sizeof *names;
  size_t bytes =
      sizeof h + old_recs + (size_t)ntasks * sizeof *tasks + old_names + (size_t)nnames * sizeof *names;
  bytes_buf next = {0};
  if (buf_reserve(&next, bytes) != 0) {
    w->nomem = 1;
    return -1;
  }
  /* header, old records, new records (first moved past the old names), old names, new names */
  om_sources nh = {h.ntasks + ntasks, h.nnames + nnames};
  uint8_t *at = next.data;
  memcpy(at, &nh, sizeof nh);
  at += sizeof nh;
  if (old_recs) memcpy(at, w->sources.data + sizeof h, old_recs);
  at += old_recs;
  for (uint32_t i = 0; i < ntasks; i++, at += sizeof *tasks) {
    om_task_source r = tasks[i];
    r.first += h.nnames;
    memcpy(at, &r, sizeof r);
  }
  if (old_names) memcpy(at, w->sources.data + sizeof h + old_recs, old_names);
  at += old_names;
  if (nnames) memcpy(at, names, (size_t)nnames * sizeof *names);
  next.len = bytes;
  free(w->sources.data);
  w->sources = next;
  return 0;
}

uint32_t om_writer_add_task(om_writer *w, const om_task *t) {
  if (array_grow((void **)&w->tasks, &w->tasks_cap, w->ntasks, sizeof *t) != 0) {
    w->nomem = 1;
    return OM_NONE;
  }
  w->tasks[w->ntasks] = *t;
  return w->ntasks++;
}

/* The offset of a stored payload equal to data[0, bytes) (crc its CRC32C),
 * or -1. */
static int64_t find_seg(const om_writer *w, const void *data, uint64_t bytes, uint32_t crc) {
  for (uint32_t i = 0; i < w->nsegs; i++) {
    const struct weight_seg *g = &w->segs[i];
    if (g->crc == crc && g->bytes == bytes && (bytes == 0 || memcmp(g->data, data, (size_t)bytes) == 0))
      return (int64_t)g->offset;
  }
  return -1;
}

/* Appends a segment at the next 64-aligned offset. 0 ok, -1 nomem. */
static int add_seg(om_writer *w, const void *data, uint64_t bytes, int owned, uint32_t crc,
                   uint64_t *offset_out) {
  uint64_t off = align_up(w->weights_bytes), end;
  if (add_u64(off, bytes, &end) || end > SIZE_MAX ||
      array_grow((void **)&w->segs, &w->segs_cap, w->nsegs, sizeof *w->segs) != 0) {
    w->nomem = 1;
    return -1;
  }
  w->segs[w->nsegs++] = (struct weight_seg){off, bytes, data, owned, crc};
  w->weights_bytes = end;
  *offset_out = off;
  return 0;
}

/* The CRC32C of a payload, or sets nomem (bytes past the address space). */
static int seg_crc(om_writer *w, const void *data, uint64_t bytes, uint32_t *crc) {
  if (bytes > SIZE_MAX) {
    w->nomem = 1;
    return -1;
  }
  *crc = crc32c(0, data, (size_t)bytes);
  return 0;
}

int om_writer_add_weights(om_writer *w, const void *data, uint64_t bytes, uint64_t *offset_out) {
  uint32_t crc;
  if (seg_crc(w, data, bytes, &crc)) return -1;
  int64_t at = find_seg(w, data, bytes, crc);
  if (at >= 0) return *offset_out = (uint64_t)at, 0;
  void *copy = NULL;
  if (bytes && !(copy = bigmem_alloc((size_t)bytes))) {
    w->nomem = 1;
    return -1;
  }
  if (bytes) memcpy(copy, data, (size_t)bytes);
  if (add_seg(w, copy, bytes, 1, crc, offset_out) == 0) return 0;
  bigmem_free(copy, (size_t)bytes);
  return -1;
}

int om_writer_add_weights_ref(om_writer *w, const void *data, uint64_t bytes, uint64_t *offset_out) {
  uint32_t crc;
  if (seg_crc(w, data, bytes, &crc)) return -1;
  int64_t at = find_seg(w, data, bytes, crc);
  if (at >= 0) return *offset_out = (uint64_t)at, 0;
  return add_seg(w, data, bytes, 0, crc, offset_out);
}

int om_writer_add_vprog(om_writer *w, const om_vprog *hdr, const om_vinstr *instrs, uint32_t *offset_out) {
  size_t code = (size_t)hdr->ninstrs * sizeof *instrs, bytes = sizeof *hdr + code;
  uint64_t h = hash_bytes(hdr, sizeof *hdr);
  h ^= hash_bytes(instrs, code) * 31;
  for (uint32_t i = 0; i < w->nvprogs; i++) {
    const struct vprog_ref *r = &w->vprog_refs[i];
    const uint8_t *at = w->vprogs.data + r->offset;
    if (r->hash == h && r->bytes == bytes && memcmp(at, hdr, sizeof *hdr) == 0 &&
        memcmp(at + sizeof *hdr, instrs, code) == 0) {
      *offset_out = r->offset;
      return 0;
    }
  }
  size_t off = (w->vprogs.len + 7) & ~(size_t)7;
  if (off + bytes >= UINT32_MAX || buf_reserve(&w->vprogs, off + bytes - w->vprogs.len) != 0 ||
      array_grow((void **)&w->vprog_refs, &w->vprogs_cap, w->nvprogs, sizeof *w->vprog_refs) != 0) {
    w->nomem = 1;
    return -1;
  }
  memset(w->vprogs.data + w->vprogs.len, 0, off - w->vprogs.len);
  memcpy(w->vprogs.data + off, hdr, sizeof *hdr);
  if (code) memcpy(w->vprogs.data + off + sizeof *hdr, instrs, code);
  w->vprogs.len = off + bytes;
  w->vprog_refs[w->nvprogs++] = (struct vprog_ref){h, (uint32_t)off, (uint32_t)bytes};
  *offset_out = (uint32_t)off;
  return 0;
}

int om_writer_set_io(om_writer *w, const uint32_t *inputs, int ninputs, const uint32_t *outputs,
                     int noutputs) {
  if (ninputs < 0 || noutputs < 0) return -1;
  size_t n = (size_t)ninputs + (size_t)noutputs;
  uint32_t *io = malloc(n ? n * sizeof *io : 1);
  if (!io) {
    w->nomem = 1;
    return -1;
  }
  if (ninputs) memcpy(io, inputs, (size_t)ninputs * sizeof *io);
  if (noutputs) memcpy(io + ninputs, outputs, (size_t)noutputs * sizeof *io);
  free(w->io);
  w->io = io;
  w->ninputs = (uint32_t)ninputs;
  w->noutputs = (uint32_t)noutputs;
  if (w->ngears) { /* the current gear's too */
    struct gear_rec *r = &w->gears[w->ngears - 1];
    free(r->io);
    if (!(r->io = malloc(n ? n * sizeof *io : 1))) {
      w->nomem = 1;
      return -1;
    }
    if (n) memcpy(r->io, io, n * sizeof *io);
    r->nio = (uint32_t)n;
  }
  return 0;
}

void om_writer_set_zmap(om_writer *w, int mode) { w->zmap_mode = mode; }

/* Chunk c (bytes [16c, 16c + 16) of the weights) into out: the part of it
 * segment g holds, zeros elsewhere. */
static void chunk_of(const struct weight_seg *g, uint64_t c, uint8_t out[OM_ZMAP_CHUNK]) {
  uint64_t lo = c * OM_ZMAP_CHUNK, hi = lo + OM_ZMAP_CHUNK;
  uint64_t a = lo > g->offset ? lo : g->offset, b = hi < g->offset + g->bytes ? hi : g->offset + g->bytes;
  memset(out, 0, OM_ZMAP_CHUNK);
  if (a < b) memcpy(out + (a - lo), (const uint8_t *)g->data + (a - g->offset), (size_t)(b - a));
}

static int chunk_zero(const uint8_t *c) {
  uint64_t a, b;
  memcpy(&a, c, 8), memcpy(&b, c + 8, 8);
  return (a | b) == 0;
}

/* Whether chunk c, which overlaps segment g, is all zero: read in place
 * when the segment holds all of it. */
static int seg_chunk_zero(const struct weight_seg *g, uint64_t c) {
  uint64_t lo = c * OM_ZMAP_CHUNK;
  if (lo >= g->offset && lo + OM_ZMAP_CHUNK <= g->offset + g->bytes)
    return chunk_zero((const uint8_t *)g->data + (lo - g->offset));
  uint8_t buf[OM_ZMAP_CHUNK];
  chunk_of(g, c, buf);
  return chunk_zero(buf);
}

/* Calls fn on every chunk that overlaps a segment, in order: the chunks
 * the bitmap can keep (the gaps between segments are zero). */
static void each_chunk(const om_writer *w, void (*fn)(void *ctx, const struct weight_seg *g, uint64_t c),
                       void *ctx) {
  for (uint32_t i = 0; i < w->nsegs; i++) {
    const struct weight_seg *g = &w->segs[i];
    if (!g->bytes) continue;
    for (uint64_t c = g->offset / OM_ZMAP_CHUNK; c * OM_ZMAP_CHUNK < g->offset + g->bytes; c++)
      fn(ctx, g, c);
  }
}

struct kept_walk {
  const uint8_t *bits;
  void (*fn)(void *ctx, const uint8_t *chunk);
  void *ctx;
};

static void kept_chunk(void *ctx, const struct weight_seg *g, uint64_t c) {
  const struct kept_walk *k = ctx;
  uint8_t buf[OM_ZMAP_CHUNK];
  if (k->bits[c / 8] >> (c % 8) & 1) chunk_of(g, c, buf), k->fn(k->ctx, buf);
}

/* Calls fn on every chunk the bitmap keeps, in order. */
static void each_kept(const om_writer *w, void (*fn)(void *ctx, const uint8_t *chunk), void *ctx) {
  struct kept_walk k = {w->zmap.part + sizeof(om_zmap), fn, ctx};
  each_chunk(w, kept_chunk, &k);
}

/* zmap_build's marking: the bit of every chunk that is not all zero. */
static void mark_chunk(void *ctx, const struct weight_seg *g, uint64_t c) {
  struct zmap_plan *z = ctx;
  if (!seg_chunk_zero(g, c)) z->part[sizeof(om_zmap) + c / 8] |= (uint8_t)(1u << (c % 8)), z->stored++;
}

static void crc_chunk(void *ctx, const uint8_t *chunk) {
  *(uint32_t *)ctx = crc32c(*(uint32_t *)ctx, chunk, OM_ZMAP_CHUNK);
}

/* Maps the zero chunks of the weights as they are now and decides whether
 * the package elides them. 0 ok, -1 nomem. */
static int zmap_build(om_writer *w) {
  struct zmap_plan *z = &w->zmap;
  if (w->zmap_mode == OM_ZMAP_OFF || !w->weights_bytes) return z->use = 0, 0;
  if (z->part && z->for_bytes == w->weights_bytes && z->for_segs == w->nsegs) return 0;
  free(z->part);
  uint64_t logical = align_up(w->weights_bytes), nchunks = logical / OM_ZMAP_CHUNK;
  size_t map_bytes = (size_t)((nchunks + 7) / 8);
  z->part_bytes = sizeof(om_zmap) + map_bytes;
  if (!(z->part = calloc(1, z->part_bytes))) return w->nomem = 1, -1;
  om_zmap h = {.logical_bytes = logical, .chunk_bytes = OM_ZMAP_CHUNK};
  memcpy(z->part, &h, sizeof h);
  z->stored = 0;
  each_chunk(w, mark_chunk, z);
  z->for_bytes = w->weights_bytes, z->for_segs = w->nsegs;
  uint64_t zipped = z->stored * OM_ZMAP_CHUNK + align_up(z->part_bytes);
  z->use = w->zmap_mode == OM_ZMAP_ON || zipped + logical / 50 <= logical;
  z->crc = 0;
  if (z->use) each_kept(w, crc_chunk, &z->crc);
  return 0;
}

enum { MAX_PARTS = 12 };

/* Where each partition goes: what om_writer_size and om_writer_serialise share. */
typedef struct om_layout {
  om_model_def def;   /* with the counts filled in */
  const uint32_t *io; /* MODEL's io[]: the writer's, or gear 0's */
  size_t io_bytes;
  size_t gears_bytes; /* the GEARS partition, 0 without gears */
  struct part_src {
    uint32_t type;
    const void *data; /* NULL for MODEL (def and io) and WEIGHTS (segments) */
    size_t size;
  } parts[MAX_PARTS];
  int nparts;
  uint64_t header_len, offsets[MAX_PARTS], end; /* bytes */
} om_layout;

static status plan(om_writer *w, om_layout *l, diag *d) {
  if (zmap_build(w) != 0 || w->nomem)
    return diag_set(d, ST_ERR_NOMEM, "om writer: out of memory while building the package");
  memset(l, 0, sizeof *l);
  l->def = w->def;
  l->def.ninputs = w->ninputs;
  l->def.noutputs = w->noutputs;
  l->def.ntensors = w->ntensors;
  l->def.ntasks = w->ntasks;
  l->io = w->io;
  uint32_t nio = w->ninputs + w->noutputs;
  if (w->nformats && w->nformats != nio)
    return diag_set(d, ST_ERR_INVALID, "om writer: %u I/O formats for %u inputs and outputs", w->nformats,
                    nio);
  if (w->counts && (w->ncounts != w->noutputs || w->ngears))
    return diag_set(d, ST_ERR_INVALID, "om writer: %u counts for %u outputs%s", w->ncounts, w->noutputs,
                    w->ngears ? " (and gears)" : "");
  if (w->onodes && w->nonodes != w->noutputs)
    return diag_set(d, ST_ERR_INVALID, "om writer: %u output nodes for %u outputs", w->nonodes, w->noutputs);
  if (w->ngears) { /* counts from the next gear's start; the workspace is the largest gear's */
    l->def.workspace_bytes = 0;
    for (uint32_t i = 0; i < w->ngears; i++) {
      om_gear *g = &w->gears[i].g;
      g->ntensors = (i + 1 < w->ngears ? w->gears[i + 1].g.first_tensor : w->ntensors) - g->first_tensor;
      g->ntasks = (i + 1 < w->ngears ? w->gears[i + 1].g.first_task : w->ntasks) - g->first_task;
      if (g->workspace_bytes > l->def.workspace_bytes) l->def.workspace_bytes = g->workspace_bytes;
      if (w->gears[i].nio != nio)
        return diag_set(d, ST_ERR_INVALID, "om writer: gear %u has %u I/O tensors, not %u", i,
                        w->gears[i].nio, nio);
    }
    l->io = w->gears[0].io;
    l->gears_bytes = sizeof(om_gears) + w->ngears * (sizeof(om_gear) + (size_t)nio * sizeof(uint32_t));
  }

  /* Partition contents in file order. */
  l->io_bytes = ((size_t)w->ninputs + w->noutputs) * sizeof(uint32_t);
  struct part_src *parts = l->parts;
  parts[0] = (struct part_src){OM_PART_MODEL, NULL, sizeof l->def + l->io_bytes};
  parts[1] = (struct part_src){OM_PART_TENSORS, w->tensors, (size_t)w->ntensors * sizeof(om_tensor)};
  parts[2] = (struct part_src){OM_PART_TASKS, w->tasks, (size_t)w->ntasks * sizeof(om_task)};
  parts[3] = (struct part_src){OM_PART_STRINGS, w->strings.data, w->strings.len};
  l->nparts = 4;
  if (w->vprogs.len) parts[l->nparts++] = (struct part_src){OM_PART_VPROGS, w->vprogs.data, w->vprogs.len};
  if (w->formats)
    parts[l->nparts++] = (struct part_src){OM_PART_IO, w->formats, (size_t)nio * sizeof(uint32_t)};
  if (w->ngears) parts[l->nparts++] = (struct part_src){OM_PART_GEARS, NULL, l->gears_bytes};
  if (w->sources.len)
    parts[l->nparts++] = (struct part_src){OM_PART_SOURCES, w->sources.data, w->sources.len};
  if (w->counts)
    parts[l->nparts++] = (struct part_src){OM_PART_COUNTS, w->counts, (size_t)w->ncounts * sizeof(om_count)};
  if (w->onodes)
    parts[l->nparts++] = (struct part_src){OM_PART_ONODES, w->onodes, (size_t)w->nonodes * sizeof(om_onode)};
  if (w->zmap.use) {
    parts[l->nparts++] = (struct part_src){OM_PART_ZMAP, w->zmap.part, w->zmap.part_bytes};
    parts[l->nparts++] = (struct part_src){OM_PART_WEIGHTS, NULL, (size_t)(w->zmap.stored * OM_ZMAP_CHUNK)};
  } else {
    parts[l->nparts++] = (struct part_src){OM_PART_WEIGHTS, NULL, w->weights_bytes};
  }
  l->header_len = sizeof(om_header) + l->nparts * sizeof(om_partition);
  l->end = l->header_len;
  for (int i = 0; i < l->nparts; i++) {
    l->offsets[i] = align_up(l->end);
    if (add_u64(l->offsets[i], parts[i].size, &l->end))
      return diag_set(d, ST_ERR_LIMIT, "om writer: package size overflows");
  }
  if (l->end > SIZE_MAX - OM_ALIGN) return diag_set(d, ST_ERR_LIMIT, "om writer: package too large");
  return ST_OK;
}

status om_writer_size(om_writer *w, size_t *size_out, diag *d) {
  om_layout l;
  status st = plan(w, &l, d);
  *size_out = st == ST_OK ? (size_t)l.end : 0;
  return st;
}

/* Every partition before WEIGHTS into out (its first l->offsets[WEIGHTS]
 * bytes, zeroed), the header and partition table left for put_header. */
static void put_parts(const om_writer *w, const om_layout *l, uint8_t *out) {
  memcpy(out + l->offsets[0], &l->def, sizeof l->def);
  if (l->io_bytes) memcpy(out + l->offsets[0] + sizeof l->def, l->io, l->io_bytes);
  for (int i = 1; i < l->nparts - 1; i++) {
    if (l->parts[i].data && l->parts[i].size) memcpy(out + l->offsets[i], l->parts[i].data, l->parts[i].size);
    if (l->parts[i].type == OM_PART_GEARS) { /* header, records, then every gear's io[] */
      uint8_t *at = out + l->offsets[i];
      om_gears hdr = {.kind = w->gear_kind, .ngears = w->ngears, .nvalues = w->gear_nvalues};
      memcpy(at, &hdr, sizeof hdr);
      at += sizeof hdr;
      for (uint32_t g = 0; g < w->ngears; g++, at += sizeof(om_gear))
        memcpy(at, &w->gears[g].g, sizeof(om_gear));
      for (uint32_t g = 0; g < w->ngears; g++, at += l->io_bytes)
        if (l->io_bytes) memcpy(at, w->gears[g].io, l->io_bytes);
    }
  }
}

/* The CRC32C of the WEIGHTS partition, read from the segments (zeros in
 * the gaps between them), so that it needs no copy of the partition. */
static uint32_t weights_crc(const om_writer *w) {
  static const uint8_t zeros[OM_ALIGN];
  if (w->zmap.use) return w->zmap.crc;
  uint32_t crc = 0;
  uint64_t at = 0;
  for (uint32_t i = 0; i < w->nsegs; i++) {
    crc = crc32c(crc, zeros, (size_t)(w->segs[i].offset - at)); /* < OM_ALIGN */
    crc = crc32c(crc, w->segs[i].data, (size_t)w->segs[i].bytes);
    at = w->segs[i].offset + w->segs[i].bytes;
  }
  return crc;
}

/* The header and partition table into out, with each partition's CRC
 * computed from out but that of WEIGHTS, which is given. */
static void put_header(const om_layout *l, uint8_t *out, uint32_t weights_crc) {
  om_header h = {0};
  memcpy(h.magic, OM_MAGIC, sizeof h.magic);
  h.major = OM_VERSION_MAJOR;
  h.minor = OM_VERSION_MINOR;
  h.header_len = (uint32_t)l->header_len;
  h.file_len = l->end;
  h.npartitions = (uint32_t)l->nparts;
  memcpy(out, &h, sizeof h);
  for (int i = 0; i < l->nparts; i++) {
    om_partition p = {0};
    p.type = l->parts[i].type;
    p.offset = l->offsets[i];
    p.size = l->parts[i].size;
    p.crc32c = i == l->nparts - 1 ? weights_crc : crc32c(0, out + l->offsets[i], l->parts[i].size);
    memcpy(out + sizeof h + (size_t)i * sizeof p, &p, sizeof p);
  }
  h.header_crc = crc32c(0, out, (size_t)l->header_len);
  memcpy(out + offsetof(om_header, header_crc), &h.header_crc, sizeof h.header_crc);
}

static void copy_chunk(void *ctx, const uint8_t *chunk) {
  uint8_t **at = ctx;
  memcpy(*at, chunk, OM_ZMAP_CHUNK);
  *at += OM_ZMAP_CHUNK;
}

void om_writer_serialise(om_writer *w, void *buf) {
  om_layout l;
  diag d;
  diag_init(&d);
  if (plan(w, &l, &d) != ST_OK) return; /* the caller's om_writer_size reported it */
  uint8_t *out = buf, *weights = out + l.offsets[l.nparts - 1];
  put_parts(w, &l, out);
  if (w->zmap.use) {
    each_kept(w, copy_chunk, &weights);
  } else {
    for (uint32_t i = 0; i < w->nsegs; i++)
      if (w->segs[i].bytes) memcpy(weights + w->segs[i].offset, w->segs[i].data, (size_t)w->segs[i].bytes);
  }
  put_header(&l, out, weights_crc(w));
}

/* Streams the kept chunks to a file through a buffer. */
typedef struct chunk_sink {
  atomic_file *f;
  diag *d;
  status st;
  size_t n;
  uint8_t buf[64 << 10];
} chunk_sink;

static void sink_flush(chunk_sink *k) {
  if (k->st == ST_OK && k->n) k->st = atomic_file_write(k->f, k->buf, k->n, k->d);
  k->n = 0;
}

static void sink_chunk(void *ctx, const uint8_t *chunk) {
  chunk_sink *k = ctx;
  if (k->n == sizeof k->buf) sink_flush(k);
  memcpy(k->buf + k->n, chunk, OM_ZMAP_CHUNK);
  k->n += OM_ZMAP_CHUNK;
}

status om_writer_write_to(om_writer *w, atomic_file *f, size_t *size_out, diag *d) {
  om_layout l;
  status st = plan(w, &l, d);
  if (st != ST_OK) return st;
  size_t head = (size_t)l.offsets[l.nparts - 1];
  uint8_t *out = calloc(1, head);
  if (!out) return diag_set(d, ST_ERR_NOMEM, "om writer: cannot allocate %zu bytes", head);
  put_parts(w, &l, out);
  put_header(&l, out, weights_crc(w));
  st = atomic_file_write(f, out, head, d);
  free(out);
  static const uint8_t zeros[OM_ALIGN];
  if (st == ST_OK && w->zmap.use) {
    chunk_sink *k = malloc(sizeof *k);
    if (!k) return diag_set(d, ST_ERR_NOMEM, "om writer: cannot allocate a write buffer");
    k->f = f, k->d = d, k->st = ST_OK, k->n = 0;
    each_kept(w, sink_chunk, k);
    sink_flush(k);
    st = k->st;
    free(k);
    if (st == ST_OK) *size_out = (size_t)l.end;
    return st;
  }
  uint64_t at = 0;
  for (uint32_t i = 0; st == ST_OK && i < w->nsegs; i++) {
    st = atomic_file_write(f, zeros, (size_t)(w->segs[i].offset - at), d); /* < OM_ALIGN */
    if (st == ST_OK) st = atomic_file_write(f, w->segs[i].data, (size_t)w->segs[i].bytes, d);
    at = w->segs[i].offset + w->segs[i].bytes;
  }
  if (st == ST_OK) *size_out = (size_t)l.end;
  return st;
}

status om_writer_to_memory(om_writer *w, void **data_out, size_t *size_out, diag *d) {
  size_t size;
  status st = om_writer_size(w, &size, d);
  if (st != ST_OK) return st;
  uint8_t *out = NULL;
  if (posix_memalign((void **)&out, OM_ALIGN, (size_t)align_up(size)) != 0)
    return diag_set(d, ST_ERR_NOMEM, "om writer: cannot allocate %zu bytes", size);
  memset(out, 0, size);
  om_writer_serialise(w, out);
  *data_out = out;
  *size_out = size;
  return ST_OK;
}

status om_writer_write_file(om_writer *w, const char *path, diag *d) {
  atomic_file f;
  size_t size;
  status st = atomic_file_begin(&f, path, d);
  if (st == ST_OK) st = om_writer_write_to(w, &f, &size, d);
  if (st == ST_OK) return atomic_file_commit(&f, d);
  atomic_file_abort(&f);
  return st;
}
