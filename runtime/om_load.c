/* om_load.c - loads and verifies an om package (common/om_format.h).
 *
 * The package is read in place: from a read-only private mapping of the file
 * or from the caller's 64-byte aligned memory. Nothing in it is trusted until
 * checked, and the checks run in dependency order so every check only reads
 * bytes an earlier check proved to be in bounds:
 *   1. header: size, magic, major version, header_len / npartitions,
 *      file_len, header CRC;
 *   2. partition table: known types, no duplicates, aligned and in-bounds
 *      extents, CRCs, required partitions present (VPROGS is optional: the
 *      VPROG check rejects a task whose program it does not contain);
 *   3. STRINGS (so later messages can quote names), MODEL, TENSORS, then
 *      the IO and GEARS partitions with every gear's io[] (om_gears.c),
 *      then TASKS gear by gear (each task's tensors its gear's, each task
 *      checked by its kernel's check function, then held
 *      to its kind's tensor access, om_format.h: what it writes lies in
 *      WORKSPACE or OUTPUT and overlaps nothing else it uses, but in place
 *      where the kind allows it; so no package, checksums valid or not,
 *      makes a task write into the weights, the mapped package or the
 *      caller's inputs);
 *   4. side tables: kinds with a prepare hook (VPROG) build their per-task
 *      data into m->task_aux, so execute only reads it;
 *   5. with a vprog compiler in the load options (vprog_compiler.h), native
 *      code for the VPROG plans.
 * With the caller's weight memory in the load options, the WEIGHTS
 * partition is copied there right after its CRC is checked, and m->weights
 * points there for every later check and for execution. A package with a
 * ZMAP partition (zero chunks elided) is decoded the same way, into the
 * caller's weight memory or memory of the model's own: the bitmap is checked
 * against both partitions' sizes before a byte is copied.
 * All size arithmetic goes through mul_u64 / add_u64. Every rejection names
 * the partition (and its offset), the record index, its name when known and
 * the field, and goes through rt_error so omrt_last_error() reports it.
 * The omrt_tensor_desc arrays for the model's inputs and outputs are built
 * at load (om_gears.c), once, so the accessors and the executor just read
 * them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "common/vprog.h"
#include "common/zmap.h"
#include "runtime/rt.h"
#include "runtime/vprog_compiler.h"

enum {
  MAX_PARTITIONS = 16,
  MIN_BUFFER_BYTES = 256,      /* per-core buffer capacities: kernels stage at */
  MAX_BUFFER_BYTES = 64 << 20, /* least a row of 16 f32 lanes in each */
  MAX_AI_CORES = 1024,
  MAX_THREADS = 1024,
  MAX_BLOCK_DIM = 65535,
};

static const char *part_name(uint32_t type) {
  switch (type) {
  case OM_PART_MODEL: return "MODEL";
  case OM_PART_TENSORS: return "TENSORS";
  case OM_PART_TASKS: return "TASKS";
  case OM_PART_WEIGHTS: return "WEIGHTS";
  case OM_PART_STRINGS: return "STRINGS";
  case OM_PART_VPROGS: return "VPROGS";
  case OM_PART_IO: return "IO";
  case OM_PART_GEARS: return "GEARS";
  case OM_PART_SOURCES: return "SOURCES";
  case OM_PART_COUNTS: return "COUNTS";
  case OM_PART_ZMAP: return "ZMAP";
  case OM_PART_ONODES: return "ONODES";
  }
  return "?";
}

const char *rt_region_name(uint32_t r) {
  switch (r) {
  case OM_REGION_WEIGHTS: return "WEIGHTS";
  case OM_REGION_WORKSPACE: return "WORKSPACE";
  case OM_REGION_INPUT: return "INPUT";
  case OM_REGION_OUTPUT: return "OUTPUT";
  }
  return "?";
}

const char *rt_string(const omrt_model *m, uint32_t offset) {
  return offset < m->strings_bytes ? m->strings + offset : "";
}

static omrt_status check_header(const uint8_t *base, size_t size) {
  if (size < sizeof(om_header))
    return rt_error(OMRT_ERR_FORMAT, "om header: file is %zu bytes, shorter than the 64-byte header", size);
  const om_header *h = (const om_header *)base;
  if (memcmp(h->magic, OM_MAGIC, sizeof h->magic) != 0)
    return rt_error(OMRT_ERR_FORMAT, "om header: bad magic (not an om package)");
  if (h->major != OM_VERSION_MAJOR)
    return rt_error(OMRT_ERR_VERSION, "om version %u.%u is not supported by this runtime (reads %d.x)",
                    h->major, h->minor, OM_VERSION_MAJOR);
  if (h->npartitions < 1 || h->npartitions > MAX_PARTITIONS)
    return rt_error(OMRT_ERR_FORMAT, "om header: npartitions %u outside 1..%d", h->npartitions,
                    MAX_PARTITIONS);
  uint64_t want = sizeof(om_header) + (uint64_t)h->npartitions * sizeof(om_partition);
  if (h->header_len != want)
    return rt_error(OMRT_ERR_FORMAT, "om header: header_len %u != 64 + %u partitions x 32", h->header_len,
                    h->npartitions);
  if (h->header_len > size)
    return rt_error(OMRT_ERR_FORMAT, "om header: header_len %u exceeds the file size %zu", h->header_len,
                    size);
  if (h->file_len != size)
    return rt_error(OMRT_ERR_FORMAT, "om header: file_len %llu != actual size %zu (truncated or padded?)",
                    (unsigned long long)h->file_len, size);
  uint32_t zero = 0, crc = crc32c(0, base, offsetof(om_header, header_crc));
  crc = crc32c(crc, &zero, sizeof zero);
  crc = crc32c(crc, base + offsetof(om_header, header_crc) + 4,
               h->header_len - offsetof(om_header, header_crc) - 4);
  if (crc != h->header_crc)
    return rt_error(OMRT_ERR_CHECKSUM, "om header: header CRC32C 0x%08x != stored 0x%08x", crc,
                    h->header_crc);
  return OMRT_OK;
}

static omrt_status check_partitions(const uint8_t *base, size_t size, rt_part refs[OM_PART_TYPE_COUNT]) {
  const om_header *h = (const om_header *)base;
  const om_partition *pt = (const om_partition *)(base + sizeof(om_header));
  for (uint32_t i = 0; i < h->npartitions; i++) {
    const om_partition *p = &pt[i];
    if (p->type < OM_PART_MODEL || p->type >= OM_PART_TYPE_COUNT)
      return rt_error(OMRT_ERR_FORMAT, "om partition table entry %u: unknown partition type %u", i, p->type);
    const char *name = part_name(p->type);
    if (refs[p->type].present)
      return rt_error(OMRT_ERR_FORMAT, "om partition table entry %u: duplicate %s partition", i, name);
    uint64_t end;
    if (p->offset % OM_ALIGN != 0)
      return rt_error(OMRT_ERR_FORMAT, "om partition %s (offset %llu): offset not a multiple of %d", name,
                      (unsigned long long)p->offset, OM_ALIGN);
    if (p->offset < h->header_len || add_u64(p->offset, p->size, &end) || end > size)
      return rt_error(
          OMRT_ERR_FORMAT,
          "om partition %s (offset %llu): %llu bytes outside the file (header %u, file %zu bytes)", name,
          (unsigned long long)p->offset, (unsigned long long)p->size, h->header_len, size);
    uint32_t crc = crc32c(0, base + p->offset, (size_t)p->size);
    if (crc != p->crc32c)
      return rt_error(OMRT_ERR_CHECKSUM, "om partition %s (offset %llu): CRC32C 0x%08x != stored 0x%08x",
                      name, (unsigned long long)p->offset, crc, p->crc32c);
    refs[p->type] = (rt_part){1, p->offset, p->size};
  }
  for (uint32_t t = OM_PART_MODEL; t <= OM_PART_STRINGS; t++) /* all but VPROGS, IO, GEARS and SOURCES */
    if (!refs[t].present)
      return rt_error(OMRT_ERR_FORMAT, "om package: required partition %s missing", part_name(t));
  return OMRT_OK;
}

static omrt_status check_strings(const omrt_model *m, const rt_part *p) {
  if (p->size == 0 || m->strings[0] != '\0' || m->strings[p->size - 1] != '\0')
    return rt_error(OMRT_ERR_FORMAT,
                    "om partition STRINGS (offset %llu): must be non-empty and start and end with NUL",
                    (unsigned long long)p->offset);
  return OMRT_OK;
}

/* Checks a string field; where/what describe it for the message. */
static omrt_status check_str(const omrt_model *m, uint32_t off, const char *where, const char *what) {
  if (off >= m->strings_bytes)
    return rt_error(OMRT_ERR_FORMAT, "%s: %s string offset %u outside the string table (%llu bytes)", where,
                    what, off, (unsigned long long)m->strings_bytes);
  return OMRT_OK;
}

static omrt_status check_model_def(const omrt_model *m, const rt_part *p) {
  char where[64];
  snprintf(where, sizeof where, "om partition MODEL (offset %llu)", (unsigned long long)p->offset);
  if (p->size < sizeof(om_model_def))
    return rt_error(OMRT_ERR_FORMAT, "%s: %llu bytes, shorter than the 96-byte model definition", where,
                    (unsigned long long)p->size);
  const om_model_def *d = m->def;
  uint64_t want = sizeof(om_model_def) + 4 * ((uint64_t)d->ninputs + d->noutputs);
  if (p->size != want)
    return rt_error(OMRT_ERR_FORMAT, "%s: %llu bytes != 96 + 4 x (%u inputs + %u outputs)", where,
                    (unsigned long long)p->size, d->ninputs, d->noutputs);
  omrt_status s;
  if ((s = check_str(m, d->name, where, "name")) || (s = check_str(m, d->soc, where, "soc")) ||
      (s = check_str(m, d->atc_version, where, "atc_version")) ||
      (s = check_str(m, d->cmdline, where, "cmdline")) || (s = check_str(m, d->singleop, where, "singleop")))
    return s;
  if (d->noutputs == 0) return rt_error(OMRT_ERR_FORMAT, "%s: the model has no outputs", where);
  if (d->ninputs > INT_MAX || d->noutputs > INT_MAX)
    return rt_error(OMRT_ERR_FORMAT, "%s: too many inputs or outputs", where);
  if (d->precision > OM_PRECISION_ALLOW_MIX_PRECISION)
    return rt_error(OMRT_ERR_FORMAT, "%s: unknown precision mode %u", where, d->precision);
  if (d->ai_cores < 1 || d->ai_cores > MAX_AI_CORES)
    return rt_error(OMRT_ERR_FORMAT, "%s: ai_cores %u outside 1..%d", where, d->ai_cores, MAX_AI_CORES);
  if (d->workspace_bytes > OM_MAX_WORKSPACE_BYTES || d->workspace_bytes > SIZE_MAX)
    return rt_error(OMRT_ERR_FORMAT, "%s: workspace_bytes %llu exceeds 2^40", where,
                    (unsigned long long)d->workspace_bytes);
  const struct {
    const char *name;
    uint32_t bytes;
  } bufs[] = {
      {"l1_bytes", d->l1_bytes},   {"l0a_bytes", d->l0a_bytes}, {"l0b_bytes", d->l0b_bytes},
      {"l0c_bytes", d->l0c_bytes}, {"ub_bytes", d->ub_bytes},
  };
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
    if (bufs[i].bytes < MIN_BUFFER_BYTES || bufs[i].bytes > MAX_BUFFER_BYTES)
      return rt_error(OMRT_ERR_FORMAT, "%s: %s %u outside 256 bytes..64 MiB", where, bufs[i].name,
                      bufs[i].bytes);
  return OMRT_OK;
}

/* "1 x 3 x 224 x 224" (or "scalar") into buf. */
static const char *dims_str(const om_tensor *t, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  if (t->rank == 0) snprintf(buf, n, "scalar");
  for (uint32_t i = 0; i < t->rank && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? " x " : "", (long long)t->dims[i]);
  return buf;
}

/* An element's size for messages: "4" (bytes), or "4 bits" for a packed dtype. */
static const char *esize_str(int dt, char *buf, size_t n) {
  int bits = dtype_bits(dt);
  snprintf(buf, n, bits % 8 ? "%d bits" : "%d", bits % 8 ? bits : bits / 8);
  return buf;
}

static omrt_status check_tensor(const omrt_model *m, const rt_part *p, uint32_t i) {
  const om_tensor *t = &m->tensors[i];
  const om_model_def *d = m->def;
  char where[160], dims[160], es[16];
  snprintf(where, sizeof where, "om partition TENSORS (offset %llu): tensor %u",
           (unsigned long long)p->offset, i);
  omrt_status s = check_str(m, t->name, where, "name");
  if (s) return s;
  snprintf(where, sizeof where, "om partition TENSORS (offset %llu): tensor %u '%s'",
           (unsigned long long)p->offset, i, rt_string(m, t->name));
  if (dtype_bits((int)t->dtype) == 0)
    return rt_error(OMRT_ERR_UNSUPPORTED, "%s: unknown dtype %u", where, t->dtype);
  if (dtype_is_storage((int)t->dtype) && t->layout != LAYOUT_ND)
    return rt_error(OMRT_ERR_FORMAT, "%s: dtype %s is ND only, has layout %s", where,
                    dtype_name((int)t->dtype),
                    layout_name((int)t->layout) ? layout_name((int)t->layout) : "?");
  if (!layout_name((int)t->layout))
    return rt_error(OMRT_ERR_UNSUPPORTED, "%s: unknown layout %u", where, t->layout);
  if (t->rank > MAX_RANK)
    return rt_error(OMRT_ERR_FORMAT, "%s: rank %u exceeds %d", where, t->rank, MAX_RANK);
  int rank_max, rank_min = layout_ranks((int)t->layout, &rank_max);
  if ((int)t->rank < rank_min || (int)t->rank > rank_max)
    return rt_error(OMRT_ERR_FORMAT, "%s: layout %s needs rank %s%d, has %u", where,
                    layout_name((int)t->layout), rank_min == rank_max ? "" : ">= ", rank_min, t->rank);
  for (uint32_t k = 0; k < t->rank; k++)
    if (t->dims[k] < 0)
      return rt_error(OMRT_ERR_FORMAT, "%s: dim %u is negative (%lld)", where, k, (long long)t->dims[k]);
  uint64_t elems, bytes;
  if (layout_elements((int)t->layout, (int)t->rank, t->dims, &elems) ||
      dtype_bytes((int)t->dtype, elems, &bytes))
    return rt_error(OMRT_ERR_FORMAT, "%s: dims %s overflow the size arithmetic", where,
                    dims_str(t, dims, sizeof dims));
  if (t->bytes != bytes) {
    if (t->layout == LAYOUT_ND)
      return rt_error(OMRT_ERR_FORMAT, "%s: bytes %llu != %s elements x %s", where,
                      (unsigned long long)t->bytes, dims_str(t, dims, sizeof dims),
                      esize_str((int)t->dtype, es, sizeof es));
    return rt_error(OMRT_ERR_FORMAT, "%s: bytes %llu != %s [%s] = %llu elements x %s", where,
                    (unsigned long long)t->bytes, layout_name((int)t->layout), dims_str(t, dims, sizeof dims),
                    (unsigned long long)elems, esize_str((int)t->dtype, es, sizeof es));
  }
  uint64_t end;
  if (add_u64(t->offset, t->bytes, &end)) end = UINT64_MAX;
  switch (t->region) {
  case OM_REGION_WEIGHTS:
    if (t->offset % OM_ALIGN != 0)
      return rt_error(OMRT_ERR_FORMAT, "%s: WEIGHTS offset %llu not a multiple of %d", where,
                      (unsigned long long)t->offset, OM_ALIGN);
    if (end > m->weights_bytes)
      return rt_error(OMRT_ERR_FORMAT,
                      "%s: WEIGHTS offset %llu + %llu bytes exceeds the WEIGHTS partition (%llu bytes)",
                      where, (unsigned long long)t->offset, (unsigned long long)t->bytes,
                      (unsigned long long)m->weights_bytes);
    break;
  case OM_REGION_WORKSPACE: {
    const size_t esize = (size_t)(dtype_bits((int)t->dtype) + 7) / 8; /* a packed dtype's bytes: 1 */
    if (t->offset % esize != 0)
      return rt_error(OMRT_ERR_FORMAT, "%s: WORKSPACE offset %llu not a multiple of the element size %zu",
                      where, (unsigned long long)t->offset, esize);
    if (end > d->workspace_bytes)
      return rt_error(OMRT_ERR_FORMAT, "%s: WORKSPACE offset %llu + %llu bytes exceeds workspace_bytes %llu",
                      where, (unsigned long long)t->offset, (unsigned long long)t->bytes,
                      (unsigned long long)d->workspace_bytes);
    break;
  }
  case OM_REGION_INPUT:
  case OM_REGION_OUTPUT: {
    uint32_t n = t->region == OM_REGION_INPUT ? d->ninputs : d->noutputs;
    if (t->index >= n)
      return rt_error(OMRT_ERR_FORMAT, "%s: %s index %u but the model has %u", where,
                      rt_region_name(t->region), t->index, n);
    if (t->offset != 0)
      return rt_error(OMRT_ERR_FORMAT, "%s: %s offset %llu must be 0", where, rt_region_name(t->region),
                      (unsigned long long)t->offset);
    break;
  }
  default: return rt_error(OMRT_ERR_FORMAT, "%s: unknown region %u", where, t->region);
  }
  return OMRT_OK;
}

/* Where tensor t lives, for messages: "WORKSPACE bytes 64..127", "OUTPUT 0 bytes 0..3999". */
static const char *range_str(const om_tensor *t, char *buf, size_t n) {
  if (t->region == OM_REGION_INPUT || t->region == OM_REGION_OUTPUT)
    snprintf(buf, n, "%s %u bytes %llu..%llu", rt_region_name(t->region), t->index,
             (unsigned long long)t->offset, (unsigned long long)(t->offset + t->bytes) - 1);
  else
    snprintf(buf, n, "%s bytes %llu..%llu", rt_region_name(t->region), (unsigned long long)t->offset,
             (unsigned long long)(t->offset + t->bytes) - 1);
  return buf;
}

uint32_t rt_task_writes(const omrt_model *m, const om_task *t) {
  const rt_access a = rt_kind_access(t->kind);
  uint32_t writes = a.writes & (OM_SLOT(OM_TASK_MAX_TENSORS) - 1);
  if (a.writes & OM_WRITES_OUTPUTS) { /* a program's outputs: slots ninputs .. ntensors-1 */
    const om_vprog *h = (const om_vprog *)(m->vprogs + (uint32_t)t->params[OM_VPROG_P_PROGRAM]);
    writes |= (OM_SLOT(t->ntensors) - 1) & ~(OM_SLOT(h->ninputs) - 1);
  }
  return writes;
}

/* 1 when a and b share bytes: one region (and I/O buffer), ranges that
 * meet (offset + bytes was bounds-checked with the tensor). */
static int overlap(const om_tensor *a, const om_tensor *b) {
  if (a->region != b->region || a->bytes == 0 || b->bytes == 0) return 0;
  if ((a->region == OM_REGION_INPUT || a->region == OM_REGION_OUTPUT) && a->index != b->index) return 0;
  return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

/* Task i against its kind's tensor access (om_format.h): every tensor it
 * writes in WORKSPACE or OUTPUT, every one it reads in a region a task may
 * read (all four), and no written tensor sharing bytes with another slot's
 * tensor, unless that slot is read and the kind allows it in place and the
 * two are the same bytes. Runs after the kind's check (a VPROG's program
 * header was verified there). */
static omrt_status check_access(const omrt_model *m, const char *where, uint32_t i) {
  const om_task *t = &m->tasks[i];
  const char *kind = rt_kernels[t->kind].name;
  const rt_access a = rt_kind_access(t->kind);
  if (a.writes == 0)
    return rt_error(OMRT_ERR_UNSUPPORTED, "%s (%s): the kind declares no tensor access (om_format.h)", where,
                    kind);
  uint32_t writes = rt_task_writes(m, t);
  char wr[96], rd[96];
  for (uint32_t s = 0; s < t->ntensors; s++) {
    if (t->tensors[s] == OM_NONE) continue;
    const om_tensor *ts = &m->tensors[t->tensors[s]];
    const int w = (writes & OM_SLOT(s)) != 0;
    if (w ? ts->region != OM_REGION_WORKSPACE && ts->region != OM_REGION_OUTPUT
          : ts->region > OM_REGION_OUTPUT)
      return rt_error(OMRT_ERR_FORMAT, "%s (%s): tensors[%u] '%s', which it %s, is in the %s region: %s",
                      where, kind, s, rt_string(m, ts->name), w ? "writes" : "reads",
                      rt_region_name(ts->region),
                      w ? "a task writes only WORKSPACE or OUTPUT" : "unknown region");
    if (!w) continue;
    for (uint32_t r = 0; r < t->ntensors; r++) {
      if (r == s || t->tensors[r] == OM_NONE) continue;
      const om_tensor *tr = &m->tensors[t->tensors[r]];
      if (!overlap(ts, tr)) continue;
      const int rw = (writes & OM_SLOT(r)) != 0;
      if (!rw && (a.in_place & OM_SLOT(r)) && ts->region == tr->region && ts->offset == tr->offset &&
          ts->bytes == tr->bytes)
        continue; /* in place, as the kind allows */
      return rt_error(OMRT_ERR_FORMAT,
                      "%s (%s): tensors[%u] '%s' it writes (%s) overlaps tensors[%u] '%s' it %s (%s)%s",
                      where, kind, s, rt_string(m, ts->name), range_str(ts, wr, sizeof wr), r,
                      rt_string(m, tr->name), rw ? "writes" : "reads", range_str(tr, rd, sizeof rd),
                      !rw && (a.in_place & OM_SLOT(r)) ? "; in place it must be the same bytes" : "");
    }
  }
  return OMRT_OK;
}

static omrt_status check_task(const omrt_model *m, const rt_part *p, const rt_gear *g, uint32_t i) {
  const om_task *t = &m->tasks[i];
  char where[160];
  snprintf(where, sizeof where, "om partition TASKS (offset %llu): task %u", (unsigned long long)p->offset,
           i);
  omrt_status s = check_str(m, t->name, where, "name");
  if (s) return s;
  snprintf(where, sizeof where, "om partition TASKS (offset %llu): task %u '%s'",
           (unsigned long long)p->offset, i, rt_string(m, t->name));
  if (t->kind >= rt_kernel_count || !rt_kernels[t->kind].run || !rt_kernels[t->kind].check)
    return rt_error(OMRT_ERR_UNSUPPORTED, "%s: task kind %u is not supported by this runtime", where,
                    t->kind);
  if (t->block_dim < 1 || t->block_dim > MAX_BLOCK_DIM)
    return rt_error(OMRT_ERR_FORMAT, "%s (%s): block_dim %u outside 1..%d", where, rt_kernels[t->kind].name,
                    t->block_dim, MAX_BLOCK_DIM);
  if (t->ntensors > OM_TASK_MAX_TENSORS)
    return rt_error(OMRT_ERR_FORMAT, "%s (%s): ntensors %u exceeds %d", where, rt_kernels[t->kind].name,
                    t->ntensors, OM_TASK_MAX_TENSORS);
  for (uint32_t k = 0; k < t->ntensors; k++)
    if (t->tensors[k] != OM_NONE && t->tensors[k] >= m->def->ntensors)
      return rt_error(OMRT_ERR_FORMAT, "%s (%s): tensors[%u] = %u outside the tensor table (%u tensors)",
                      where, rt_kernels[t->kind].name, k, t->tensors[k], m->def->ntensors);
    else if (t->tensors[k] != OM_NONE &&
             (t->tensors[k] < g->first_tensor || t->tensors[k] - g->first_tensor >= g->ntensors))
      return rt_error(OMRT_ERR_FORMAT, "%s (%s): tensors[%u] = %u is not one of its gear's tensors %u..%u",
                      where, rt_kernels[t->kind].name, k, t->tensors[k], g->first_tensor,
                      g->first_tensor + g->ntensors - 1);
  s = rt_kernels[t->kind].check(m, i, t);
  if (s != OMRT_OK) { /* the kernel's message names the task; add the partition */
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", omrt_last_error());
    return rt_error(s, "om partition TASKS (offset %llu): %s", (unsigned long long)p->offset, msg);
  }
  return check_access(m, where, i);
}

/* Builds the side data of every task whose kind has a prepare hook. */
static omrt_status prepare_tasks(omrt_model *m) {
  for (uint32_t i = 0; i < m->def->ntasks; i++) {
    const om_task *t = &m->tasks[i];
    rt_prepare_fn prepare = rt_kernels[t->kind].prepare;
    if (!prepare) continue;
    if (!m->task_aux && !(m->task_aux = calloc(m->def->ntasks, sizeof *m->task_aux)))
      return rt_error(OMRT_ERR_NOMEM, "om load: out of memory for task side tables");
    omrt_status s = prepare(m, i, t, &m->task_aux[i]);
    if (s != OMRT_OK) return s;
  }
  return OMRT_OK;
}

static omrt_status pick_threads(const omrt_load_options *opts, uint32_t ai_cores, uint32_t *out) {
  if (opts && opts->threads) {
    if (opts->threads > MAX_THREADS)
      return rt_error(OMRT_ERR_ARG, "load options: threads %u outside 1..%d", opts->threads, MAX_THREADS);
    *out = opts->threads;
    return OMRT_OK;
  }
  const char *env = getenv("OMRT_THREADS");
  if (env && *env) {
    char *end;
    errno = 0;
    long v = strtol(env, &end, 10);
    if (errno || *end || v < 1 || v > MAX_THREADS)
      return rt_error(OMRT_ERR_ARG, "OMRT_THREADS='%s': expected an integer 1..%d", env, MAX_THREADS);
    *out = (uint32_t)v;
    return OMRT_OK;
  }
  long host = sysconf(_SC_NPROCESSORS_ONLN);
  *out = host >= 1 && (unsigned long)host < ai_cores ? (uint32_t)host : ai_cores;
  return OMRT_OK;
}

/* Drops the pages of a mapped package's weights once they were copied or
 * decoded elsewhere: they are never read again. */
static void drop_pages(const omrt_model *m, const uint8_t *lo8, uint64_t bytes) {
  if (!m->mapped || !bytes) return;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo = (uintptr_t)lo8, hi = lo + bytes;
  lo = (lo + page - 1) / page * page, hi = hi / page * page;
  if (lo < hi) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* The caller's weight memory (omrt_load_options.weights) is 64-byte
 * aligned and holds the package's `bytes` of weights. */
static omrt_status check_caller_weights(const omrt_load_options *opts, uint64_t bytes) {
  if ((uintptr_t)opts->weights % OM_ALIGN != 0)
    return rt_error(OMRT_ERR_ARG, "load options: weights %p is not %d-byte aligned", opts->weights, OM_ALIGN);
  if (opts->weights_bytes < bytes)
    return rt_error(OMRT_ERR_ARG,
                    "load options: weights_bytes %zu is less than the package's %llu weight bytes",
                    opts->weights_bytes, (unsigned long long)bytes);
  return OMRT_OK;
}

/* The ZMAP partition (om_format.h): checks its header and bitmap against
 * the WEIGHTS partition, then decodes the weights image into the caller's
 * weight memory or an allocation the model owns. */
static omrt_status unzip_weights(omrt_model *m, const rt_part *pz, const rt_part *pw,
                                 const omrt_load_options *opts) {
  char where[64];
  snprintf(where, sizeof where, "om partition ZMAP (offset %llu)", (unsigned long long)pz->offset);
  om_zmap h;
  if (pz->size < sizeof h)
    return rt_error(OMRT_ERR_FORMAT, "%s: %llu bytes, shorter than its 16-byte header", where,
                    (unsigned long long)pz->size);
  memcpy(&h, m->base + pz->offset, sizeof h);
  if (h.chunk_bytes != OM_ZMAP_CHUNK || h.reserved || h.logical_bytes % OM_ZMAP_CHUNK)
    return rt_error(
        OMRT_ERR_FORMAT,
        "%s: chunk_bytes %u, reserved %u, logical_bytes %llu: expected %d, 0 and a multiple of %d", where,
        h.chunk_bytes, h.reserved, (unsigned long long)h.logical_bytes, OM_ZMAP_CHUNK, OM_ZMAP_CHUNK);
  uint64_t nchunks = h.logical_bytes / OM_ZMAP_CHUNK, map_bytes = (nchunks + 7) / 8;
  if (pz->size - sizeof h != map_bytes)
    return rt_error(OMRT_ERR_FORMAT,
                    "%s: a bitmap of %llu bytes for %llu chunks of %llu logical bytes needs %llu", where,
                    (unsigned long long)(pz->size - sizeof h), (unsigned long long)nchunks,
                    (unsigned long long)h.logical_bytes, (unsigned long long)map_bytes);
  const uint8_t *bits = m->base + pz->offset + sizeof h;
  int stray;
  uint64_t kept = zmap_kept(bits, nchunks, &stray);
  if (stray || kept * OM_ZMAP_CHUNK != pw->size)
    return rt_error(OMRT_ERR_FORMAT,
                    "%s: the bitmap keeps %llu chunks (%llu bytes)%s, but WEIGHTS has %llu bytes", where,
                    (unsigned long long)kept, (unsigned long long)(kept * OM_ZMAP_CHUNK),
                    stray ? " and sets bits past its last chunk" : "", (unsigned long long)pw->size);
  uint8_t *dst;
  if (opts && opts->weights) {
    omrt_status s = check_caller_weights(opts, h.logical_bytes);
    if (s) return s;
    dst = opts->weights;
  } else {
    if (h.logical_bytes > SIZE_MAX - OM_ALIGN ||
        posix_memalign((void **)&dst, OM_ALIGN, (size_t)h.logical_bytes))
      return rt_error(OMRT_ERR_NOMEM, "%s: cannot allocate the %llu bytes of decoded weights", where,
                      (unsigned long long)h.logical_bytes);
    m->weights_owned = dst;
  }
  zmap_decode(bits, nchunks, m->base + pw->offset, dst);
  drop_pages(m, m->base + pw->offset, pw->size);
  m->weights = dst;
  m->weights_bytes = h.logical_bytes;
  return OMRT_OK;
}

/* Moves the weights to the caller's memory (omrt_load_options.weights). The
 * copied pages of a mapped file are dropped: they are never read again. */
static omrt_status place_weights(omrt_model *m, const omrt_load_options *opts) {
  omrt_status s = check_caller_weights(opts, m->weights_bytes);
  if (s) return s;
  memcpy(opts->weights, m->weights, (size_t)m->weights_bytes);
  drop_pages(m, m->weights, m->weights_bytes);
  m->weights = opts->weights;
  return OMRT_OK;
}

/* The SOURCES partition (om_format.h): one record per task, every name
 * inside names[] and the string table, slot names only on written slots.
 * Runs after the tasks were checked. */
static omrt_status check_sources(omrt_model *m, const rt_part *p) {
  char where[64];
  snprintf(where, sizeof where, "om partition SOURCES (offset %llu)", (unsigned long long)p->offset);
  const uint8_t *at = m->base + p->offset;
  om_sources h;
  if (p->size < sizeof h)
    return rt_error(OMRT_ERR_FORMAT, "%s: %llu bytes, shorter than its 8-byte header", where,
                    (unsigned long long)p->size);
  memcpy(&h, at, sizeof h);
  uint64_t want = sizeof h + (uint64_t)h.ntasks * sizeof(om_task_source) + (uint64_t)h.nnames * 4;
  if (h.ntasks != m->def->ntasks || p->size != want)
    return rt_error(
        OMRT_ERR_FORMAT, "%s: %u tasks and %u names (%llu bytes) for a model of %u tasks in %llu bytes",
        where, h.ntasks, h.nnames, (unsigned long long)want, m->def->ntasks, (unsigned long long)p->size);
  m->sources = (const om_task_source *)(at + sizeof h);
  m->source_names = (const uint32_t *)(at + sizeof h + (size_t)h.ntasks * sizeof(om_task_source));
  for (uint32_t i = 0; i < h.nnames; i++) {
    omrt_status s = check_str(m, m->source_names[i], where, "name");
    if (s) return s;
  }
  for (uint32_t i = 0; i < h.ntasks; i++) {
    const om_task_source *r = &m->sources[i];
    const om_task *t = &m->tasks[i];
    if ((uint64_t)r->first + r->nnodes + t->ntensors > h.nnames)
      return rt_error(OMRT_ERR_FORMAT, "%s: task %u '%s': names %u + %u nodes + %u slots past the %u names",
                      where, i, rt_string(m, t->name), r->first, r->nnodes, t->ntensors, h.nnames);
    uint32_t writes = rt_task_writes(m, t);
    for (uint32_t s = 0; s < t->ntensors; s++)
      if (m->source_names[r->first + r->nnodes + s] != 0 && !(writes & OM_SLOT(s)))
        return rt_error(OMRT_ERR_FORMAT,
                        "%s: task %u '%s': slot %u, which the task reads, names an ONNX tensor", where, i,
                        rt_string(m, t->name), s);
  }
  return OMRT_OK;
}

/* A partition of n records of rec bytes each (`what`: "tasks", ...):
 * its size must be exactly that. */
static omrt_status check_records(const rt_part *p, uint32_t type, uint32_t n, const char *what, size_t rec) {
  uint64_t want;
  if (!mul_u64(n, rec, &want) && p->size == want) return OMRT_OK;
  return rt_error(OMRT_ERR_FORMAT, "om partition %s (offset %llu): %llu bytes != %u %s x %zu",
                  part_name(type), (unsigned long long)p->offset, (unsigned long long)p->size, n, what, rec);
}

/* The COUNTS partition (om_format.h): one record per output; a counted
 * output is ND with the axis inside its rank, its count an ND i64
 * one-element WORKSPACE tensor; no gears. Marks the outputs' descriptors. */
static omrt_status check_counts(omrt_model *m, const rt_part *p) {
  const om_model_def *d = m->def;
  const om_count *c = (const om_count *)(m->base + p->offset);
  omrt_status s = check_records(p, OM_PART_COUNTS, d->noutputs, "outputs", sizeof *c);
  if (s) return s;
  if (m->ngears > 1 || m->gear_kind)
    return rt_error(OMRT_ERR_FORMAT, "om partition COUNTS (offset %llu): not allowed with gears",
                    (unsigned long long)p->offset);
  for (uint32_t i = 0; i < d->noutputs; i++) {
    const om_tensor *y = &m->tensors[m->io[d->ninputs + i]];
    if (c[i].axis == OM_NONE && c[i].count == OM_NONE) continue;
    const om_tensor *t = c[i].count < d->ntensors ? &m->tensors[c[i].count] : NULL;
    if (c[i].axis >= y->rank || y->layout != LAYOUT_ND || !t || t->region != OM_REGION_WORKSPACE ||
        t->dtype != DT_INT64 || t->bytes != 8)
      return rt_error(OMRT_ERR_FORMAT,
                      "om partition COUNTS (offset %llu): output %u '%s': axis %u, count tensor %u: expected "
                      "an axis of the ND output and an i64 [1] WORKSPACE tensor",
                      (unsigned long long)p->offset, i, rt_string(m, y->name), c[i].axis, c[i].count);
    m->outputs[i].count_axis = m->gears[0].outputs[i].count_axis = (int)c[i].axis;
  }
  m->counts = c;
  return OMRT_OK;
}

/* The ONODES partition (om_format.h): one record per output, its node a
 * string (0 with edge 0: none), known flags, reserved zero. */
static omrt_status check_onodes(omrt_model *m, const rt_part *p) {
  const om_model_def *d = m->def;
  const om_onode *o = (const om_onode *)(m->base + p->offset);
  omrt_status s = check_records(p, OM_PART_ONODES, d->noutputs, "outputs", sizeof *o);
  if (s) return s;
  for (uint32_t i = 0; i < d->noutputs; i++) {
    char where[96];
    snprintf(where, sizeof where, "om partition ONODES (offset %llu): output %u",
             (unsigned long long)p->offset, i);
    s = check_str(m, o[i].node, where, "node");
    if (s) return s;
    if ((!o[i].node && o[i].edge) || o[i].edge > 0xFFFF || (o[i].flags & ~(uint32_t)OM_ONODE_PICKED) ||
        o[i].reserved)
      return rt_error(OMRT_ERR_FORMAT,
                      "%s: edge %u, flags %u, reserved %u: expected an edge below 65536 (0 "
                      "without a node), flags of OM_ONODE_PICKED only and reserved 0",
                      where, o[i].edge, o[i].flags, o[i].reserved);
  }
  m->onodes = o;
  return OMRT_OK;
}

/* Verifies the package at base[0, size) and fills m (base/size/mapped set by
 * the caller). On failure the caller frees m. */
static omrt_status verify(omrt_model *m, const omrt_load_options *opts) {
  const uint8_t *base = m->base;
  rt_part refs[OM_PART_TYPE_COUNT] = {{0}};
  omrt_status s;
  if ((s = check_header(base, m->size)) || (s = check_partitions(base, m->size, refs))) return s;
  m->header = (const om_header *)base;

  const rt_part *ps = &refs[OM_PART_STRINGS];
  m->strings = (const char *)base + ps->offset;
  m->strings_bytes = ps->size;
  if ((s = check_strings(m, ps))) return s;

  m->weights = base + refs[OM_PART_WEIGHTS].offset;
  m->weights_bytes = refs[OM_PART_WEIGHTS].size;
  if (refs[OM_PART_ZMAP].present) {
    if ((s = unzip_weights(m, &refs[OM_PART_ZMAP], &refs[OM_PART_WEIGHTS], opts))) return s;
  } else if (opts && opts->weights && (s = place_weights(m, opts))) {
    return s;
  }
  if (refs[OM_PART_VPROGS].present) {
    m->vprogs = base + refs[OM_PART_VPROGS].offset;
    m->vprogs_bytes = refs[OM_PART_VPROGS].size;
  }

  const rt_part *pm = &refs[OM_PART_MODEL];
  m->def = (const om_model_def *)(base + pm->offset);
  if ((s = check_model_def(m, pm))) return s;
  const om_model_def *d = m->def;
  m->io = (const uint32_t *)(base + pm->offset + sizeof(om_model_def));

  const rt_part *pt = &refs[OM_PART_TENSORS];
  if ((s = check_records(pt, OM_PART_TENSORS, d->ntensors, "tensors", sizeof(om_tensor)))) return s;
  m->tensors = (const om_tensor *)(base + pt->offset);
  for (uint32_t i = 0; i < d->ntensors; i++)
    if ((s = check_tensor(m, pt, i))) return s;

  const rt_part *pk = &refs[OM_PART_TASKS];
  if ((s = check_records(pk, OM_PART_TASKS, d->ntasks, "tasks", sizeof(om_task)))) return s;
  m->tasks = (const om_task *)(base + pk->offset);
  if ((s = rt_load_gears(m, &refs[OM_PART_IO], &refs[OM_PART_GEARS], pt))) return s;
  for (uint32_t gi = 0; gi < m->ngears; gi++)
    for (uint32_t i = m->gears[gi].first_task; i < m->gears[gi].first_task + m->gears[gi].ntasks; i++)
      if ((s = check_task(m, pk, &m->gears[gi], i))) return s;
  if (refs[OM_PART_SOURCES].present && (s = check_sources(m, &refs[OM_PART_SOURCES]))) return s;
  if (refs[OM_PART_COUNTS].present && (s = check_counts(m, &refs[OM_PART_COUNTS]))) return s;
  if (refs[OM_PART_ONODES].present && (s = check_onodes(m, &refs[OM_PART_ONODES]))) return s;
  if ((s = prepare_tasks(m))) return s;
  if ((s = pick_threads(opts, d->ai_cores, &m->threads))) return s;
  if (opts && opts->vprog_compiler && m->task_aux) { /* native vector programs (vprog_compiler.h) */
    m->vprog_compiler = opts->vprog_compiler;
    return m->vprog_compiler->compile(m->vprog_compiler, m, &m->vprog_native);
  }
  return OMRT_OK;
}

void omrt_model_free(omrt_model *model) {
  if (!model) return;
  free(model->inputs);
  free(model->outputs);
  for (uint32_t i = 0; model->gears && i < model->ngears; i++) {
    free(model->gears[i].inputs);
    free(model->gears[i].outputs);
  }
  free(model->gears);
  if (model->task_aux)
    for (uint32_t i = 0; i < model->def->ntasks; i++)
      free(model->task_aux[i]);
  free(model->task_aux);
  if (model->vprog_compiler) model->vprog_compiler->release(model->vprog_compiler, model->vprog_native);
  if (model->mapped) munmap((void *)model->base, model->size);
  free(model->weights_owned);
  free(model);
}

/* Takes ownership of the mapping (if mapped) whatever the outcome. */
static omrt_status load(const void *data, size_t size, int mapped, const omrt_load_options *opts,
                        omrt_model **model_out) {
  omrt_model *m = calloc(1, sizeof *m);
  if (!m) {
    if (mapped) munmap((void *)data, size);
    return rt_error(OMRT_ERR_NOMEM, "om load: out of memory");
  }
  m->base = data;
  m->size = size;
  m->mapped = mapped;
  omrt_status s = verify(m, opts);
  if (s != OMRT_OK) {
    omrt_model_free(m);
    return s;
  }
  *model_out = m;
  return OMRT_OK;
}

omrt_status omrt_model_load_memory(const void *data, size_t size, const omrt_load_options *opts,
                                   omrt_model **model_out) {
  if (!model_out) return rt_error(OMRT_ERR_ARG, "omrt_model_load_memory: model_out is NULL");
  *model_out = NULL;
  if (!data) return rt_error(OMRT_ERR_ARG, "omrt_model_load_memory: data is NULL");
  if ((uintptr_t)data % OM_ALIGN != 0)
    return rt_error(OMRT_ERR_ARG, "omrt_model_load_memory: data %p is not %d-byte aligned", data, OM_ALIGN);
  return load(data, size, 0, opts, model_out);
}

/* Re-records the current error with "path: " in front. */
static omrt_status prefix_path(omrt_status s, const char *path) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", omrt_last_error());
  return rt_error(s, "%s: %s", path, msg);
}

omrt_status omrt_model_load_file(const char *path, const omrt_load_options *opts, omrt_model **model_out) {
  if (!model_out) return rt_error(OMRT_ERR_ARG, "omrt_model_load_file: model_out is NULL");
  *model_out = NULL;
  if (!path) return rt_error(OMRT_ERR_ARG, "omrt_model_load_file: path is NULL");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return rt_error(OMRT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return rt_error(OMRT_ERR_IO, "%s: cannot stat: %s", path, strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return rt_error(OMRT_ERR_IO, "%s: not a regular file", path);
  }
  if (st.st_size == 0) {
    close(fd);
    return rt_error(OMRT_ERR_FORMAT, "%s: empty file (not an om package)", path);
  }
  if ((uint64_t)st.st_size > SIZE_MAX) {
    close(fd);
    return rt_error(OMRT_ERR_IO, "%s: %lld bytes do not fit in memory", path, (long long)st.st_size);
  }
  size_t size = (size_t)st.st_size;
  void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    close(fd);
    return rt_error(OMRT_ERR_IO, "%s: cannot map %zu bytes: %s", path, size, strerror(err));
  }
  /* A file that shrank between fstat and mmap would fault on access. */
  struct stat st2;
  int changed = fstat(fd, &st2) != 0 || st2.st_size != st.st_size;
  close(fd);
  if (changed) {
    munmap(p, size);
    return rt_error(OMRT_ERR_IO, "%s: file changed size while being loaded", path);
  }
  omrt_status s = load(p, size, 1, opts, model_out);
  return s == OMRT_OK ? s : prefix_path(s, path);
}

int omrt_model_num_inputs(const omrt_model *model) { return model ? (int)model->def->ninputs : 0; }
int omrt_model_num_outputs(const omrt_model *model) { return model ? (int)model->def->noutputs : 0; }

omrt_status omrt_model_input(const omrt_model *model, int index, omrt_tensor_desc *desc_out) {
  if (!model || !desc_out) return rt_error(OMRT_ERR_ARG, "omrt_model_input: NULL argument");
  if (index < 0 || (uint32_t)index >= model->def->ninputs)
    return rt_error(OMRT_ERR_ARG, "omrt_model_input: index %d outside 0..%d", index,
                    (int)model->def->ninputs - 1);
  *desc_out = model->inputs[index];
  return OMRT_OK;
}

omrt_status omrt_model_output(const omrt_model *model, int index, omrt_tensor_desc *desc_out) {
  if (!model || !desc_out) return rt_error(OMRT_ERR_ARG, "omrt_model_output: NULL argument");
  if (index < 0 || (uint32_t)index >= model->def->noutputs)
    return rt_error(OMRT_ERR_ARG, "omrt_model_output: index %d outside 0..%d", index,
                    (int)model->def->noutputs - 1);
  *desc_out = model->outputs[index];
  return OMRT_OK;
}

omrt_status omrt_model_output_node(const omrt_model *model, int index, omrt_output_node *node_out) {
  if (!model || !node_out) return rt_error(OMRT_ERR_ARG, "omrt_model_output_node: NULL argument");
  if (index < 0 || (uint32_t)index >= model->def->noutputs)
    return rt_error(OMRT_ERR_ARG, "omrt_model_output_node: index %d outside 0..%d", index,
                    (int)model->def->noutputs - 1);
  const om_onode *o = model->onodes ? &model->onodes[index] : NULL;
  *node_out = (omrt_output_node){.node = o && o->node ? rt_string(model, o->node) : NULL,
                                 .edge = o ? (int)o->edge : 0,
                                 .picked = o && (o->flags & OM_ONODE_PICKED)};
  return OMRT_OK;
}

const char *omrt_model_name(const omrt_model *model) {
  return model ? rt_string(model, model->def->name) : "";
}
const char *omrt_model_singleop(const omrt_model *model) {
  return model ? rt_string(model, model->def->singleop) : "";
}
const char *omrt_model_soc(const omrt_model *model) { return model ? rt_string(model, model->def->soc) : ""; }
size_t omrt_model_workspace_bytes(const omrt_model *model) {
  return model ? (size_t)model->def->workspace_bytes : 0;
}
size_t omrt_model_weights_bytes(const omrt_model *model) { return model ? (size_t)model->weights_bytes : 0; }
