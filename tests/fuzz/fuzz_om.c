/* fuzz_om.c - targets `om` and `om_mutate`: om packages into libomrt
 * (fuzz_targets.h).
 *
 * `om` gives the raw bytes to omrt_model_load_memory (from a 64-byte aligned
 * copy, as the API requires); a package that loads is executed once on
 * zero-filled inputs with a one-thread context. Seeded with real om files,
 * libFuzzer's own bit flips, byte changes and truncations are the "damaged
 * file" case: almost all of them must die at a checksum.
 *
 * `om_mutate` is the same after fuzz_om_repair has made file_len and every
 * CRC consistent again, so a mutation reaches the field checks, the kernels'
 * check functions and execution: what a package built by a buggy or hostile
 * writer (not a damaged one) looks like. Its custom mutator knows the record
 * layout and sets whole fields of MODEL, TENSORS and TASKS records to
 * boundary values, which bit flips reach only rarely.
 *
 * Execution is skipped when the workspace plus I/O would exceed
 * FUZZ_MAX_EXEC_BYTES: such a package is legal (the loader accepts up to 1 TiB
 * of workspace) and would only measure malloc. Everything the loader accepts
 * within that bound must run without a sanitizer report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"

#include "common/crc32c.h"
#include "common/om_format.h"
#include "omrt.h"

#define FUZZ_MAX_EXEC_BYTES ((uint64_t)64 << 20)

/* A refusal: its message (the replayer checks it is there and specific). */
static void record(void) {
  fuzz_last.rejected = 1;
  snprintf(fuzz_last.msg, sizeof fuzz_last.msg, "%s", omrt_last_error());
}

/* Runs a loaded model once on zeros; refusals are recorded. */
static void execute_zeros(omrt_model *m) {
  int nin = omrt_model_num_inputs(m), nout = omrt_model_num_outputs(m);
  uint64_t total = omrt_model_workspace_bytes(m);
  omrt_tensor_desc d;
  for (int i = 0; i < nin; i++)
    if (omrt_model_input(m, i, &d) == OMRT_OK) total += d.bytes;
  for (int i = 0; i < nout; i++)
    if (omrt_model_output(m, i, &d) == OMRT_OK) total += d.bytes;
  if (total > FUZZ_MAX_EXEC_BYTES) return;

  const void **in = calloc((size_t)nin + 1, sizeof *in);
  void **out = calloc((size_t)nout + 1, sizeof *out);
  int ok = in && out;
  for (int i = 0; ok && i < nin; i++) {
    ok = omrt_model_input(m, i, &d) == OMRT_OK && (in[i] = calloc(1, d.bytes ? d.bytes : 1));
  }
  for (int i = 0; ok && i < nout; i++) {
    ok = omrt_model_output(m, i, &d) == OMRT_OK && (out[i] = calloc(1, d.bytes ? d.bytes : 1));
  }
  if (ok) {
    omrt_context *ctx = NULL;
    omrt_status s = omrt_context_new(m, &ctx);
    if (s == OMRT_OK) s = omrt_execute(ctx, (const void *const *)in, (void *const *)out);
    if (s != OMRT_OK) record();
    omrt_context_free(ctx);
  }
  for (int i = 0; in && i < nin; i++)
    free((void *)in[i]);
  for (int i = 0; out && i < nout; i++)
    free(out[i]);
  free(in);
  free(out);
}

static int load_and_run(const uint8_t *data, size_t size, int repair) {
  fuzz_last.rejected = 0;
  fuzz_last.msg[0] = '\0';
  uint8_t *buf = aligned_alloc(OM_ALIGN, (size + OM_ALIGN) / OM_ALIGN * OM_ALIGN);
  if (!buf) return 0;
  memcpy(buf, data, size);
  if (repair) fuzz_om_repair(buf, size);
  omrt_load_options opts = {.threads = 1};
  omrt_model *m = NULL;
  omrt_status s = omrt_model_load_memory(buf, size, &opts, &m);
  if (s != OMRT_OK)
    record();
  else
    execute_zeros(m);
  omrt_model_free(m);
  free(buf);
  return 0;
}

int fuzz_om(const uint8_t *data, size_t size) { return load_and_run(data, size, 0); }
int fuzz_om_mutate(const uint8_t *data, size_t size) { return load_and_run(data, size, 1); }

void fuzz_om_repair(uint8_t *data, size_t size) {
  if (size < sizeof(om_header) || memcmp(data, OM_MAGIC, sizeof((om_header *)0)->magic) != 0) return;
  om_header h;
  memcpy(&h, data, sizeof h);
  h.file_len = size;
  uint64_t hl = h.header_len;
  if (hl < sizeof h || hl > size) return;
  size_t np = (hl - sizeof h) / sizeof(om_partition);
  if (np > h.npartitions) np = h.npartitions;
  for (size_t i = 0; i < np; i++) {
    om_partition p;
    memcpy(&p, data + sizeof h + i * sizeof p, sizeof p);
    if (p.offset <= size && p.size <= size - p.offset) {
      p.crc32c = crc32c(0, data + p.offset, (size_t)p.size);
      memcpy(data + sizeof h + i * sizeof p, &p, sizeof p);
    }
  }
  h.header_crc = 0;
  memcpy(data, &h, sizeof h);
  uint32_t crc = crc32c(0, data, (size_t)hl);
  memcpy(data + offsetof(om_header, header_crc), &crc, sizeof crc);
}

/* --- the structure-aware mutator */

static uint64_t next_rand(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static const uint64_t interesting[] = {0,
                                       1,
                                       2,
                                       3,
                                       4,
                                       7,
                                       8,
                                       15,
                                       16,
                                       17,
                                       31,
                                       32,
                                       63,
                                       64,
                                       65,
                                       127,
                                       128,
                                       255,
                                       256,
                                       4096,
                                       65535,
                                       65536,
                                       0x7fffffff,
                                       0x80000000u,
                                       0xfffffffeu,
                                       0xffffffffu,
                                       0x100000000ull,
                                       0x7fffffffffffffffull,
                                       0x8000000000000000ull,
                                       0xffffffffffffffffull,
                                       0x4000000000000000ull,
                                       0x0fffffffffffffffull};

size_t fuzz_om_custom_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed,
                             size_t (*fallback)(uint8_t *, size_t, size_t)) {
  uint64_t r = seed;
  om_header h;
  if ((next_rand(&r) & 1) || size < sizeof h || memcmp(data, OM_MAGIC, sizeof h.magic) != 0)
    return fallback(data, size, max_size);
  memcpy(&h, data, sizeof h);
  if (h.npartitions == 0 || h.npartitions > 16 || sizeof h + h.npartitions * sizeof(om_partition) > size)
    return fallback(data, size, max_size);
  om_partition p;
  size_t which = next_rand(&r) % h.npartitions;
  memcpy(&p, data + sizeof h + which * sizeof p, sizeof p);
  size_t rec = p.type == OM_PART_MODEL     ? sizeof(om_model_def)
               : p.type == OM_PART_TENSORS ? sizeof(om_tensor)
               : p.type == OM_PART_TASKS   ? sizeof(om_task)
                                           : 0;
  if (!rec || p.offset > size || p.size > size - p.offset || p.size < 4)
    return fallback(data, size, max_size);
  size_t nrec = p.size / rec ? p.size / rec : 1;
  size_t base = p.offset + (next_rand(&r) % nrec) * rec;
  size_t span = p.size - (base - p.offset) < rec ? p.size - (base - p.offset) : rec;
  uint64_t v = interesting[next_rand(&r) % (sizeof interesting / sizeof *interesting)];
  if (next_rand(&r) % 4 == 0) v = next_rand(&r) % 512; /* small values: indices, kinds, dims */
  if (next_rand(&r) & 1) v = ~v + 1;                   /* and their negatives */
  if (span >= 8 && (next_rand(&r) & 1)) {
    size_t at = base + (next_rand(&r) % (span / 8)) * 8;
    memcpy(data + at, &v, 8);
  } else if (span >= 4) {
    size_t at = base + (next_rand(&r) % (span / 4)) * 4;
    uint32_t v32 = (uint32_t)v;
    memcpy(data + at, &v32, 4);
  }
  return size;
}
