/* om_write.h - builds an om package (common/om_format.h) in memory and writes
 * it atomically.
 *
 * The writer owns copies of everything added to it, except the weights of
 * om_writer_add_weights_ref; the caller's other buffers can be reused as soon
 * as a call returns. Counts (ninputs, ntensors, ...) in the
 * model definition are filled in by the writer from what was added. Weights
 * are appended at 64-byte aligned offsets. Strings are de-duplicated.
 *
 * Used by the task-emission pass (passes/emit.c) and by tests that craft
 * packages by hand.
 */
#ifndef BACKEND_OM_WRITE_H
#define BACKEND_OM_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "common/atomic_file.h"
#include "common/om_format.h"
#include "common/status.h"
#include "common/vprog.h"

typedef struct om_writer om_writer;

om_writer *om_writer_new(void); /* NULL on allocation failure */
void om_writer_free(om_writer *w);

/* String-table offset of s (added once). Returns OM_NONE on allocation failure. */
uint32_t om_writer_string(om_writer *w, const char *s);
/* Copies def; its string fields must be offsets from om_writer_string. */
void om_writer_set_model(om_writer *w, const om_model_def *def);
/* Appends a tensor descriptor; returns its index (OM_NONE on failure). */
uint32_t om_writer_add_tensor(om_writer *w, const om_tensor *t);
/* Appends bytes to the WEIGHTS partition at a 64-aligned offset (*offset_out),
 * or gives the offset of an equal payload added before. 0 ok, -1 nomem. */
int om_writer_add_weights(om_writer *w, const void *data, uint64_t bytes, uint64_t *offset_out);
/* The same without a copy: `data` is borrowed and must stay valid and
 * unchanged until the last om_writer_size / om_writer_serialise /
 * om_writer_to_memory / om_writer_write_to / om_writer_write_file call. */
int om_writer_add_weights_ref(om_writer *w, const void *data, uint64_t bytes, uint64_t *offset_out);
/* Appends a vector program (common/vprog.h: header + hdr->ninstrs
 * instructions) to the VPROGS partition at an 8-aligned offset, returned in
 * *offset_out for the VPROG task's program param. Identical programs are stored
 * once. 0 ok, -1 nomem. */
int om_writer_add_vprog(om_writer *w, const om_vprog *hdr, const om_vinstr *instrs, uint32_t *offset_out);
/* Starts gear number ngears (om_format.h's GEARS partition) of `kind` with
 * values[0, nvalues): the tensors, tasks, io (om_writer_set_io) and
 * workspace_bytes (om_writer_set_model) given from now on are this gear's;
 * the package's workspace is the largest gear's, and MODEL's io[] gear 0's.
 * Every gear must set its io. Without a call the package has no GEARS
 * partition. 0 ok, -1 nomem. */
int om_writer_begin_gear(om_writer *w, uint32_t kind, const int64_t *values, uint32_t nvalues);
/* The IO partition: formats[i] is the om_io_format of input i, then of each
 * output (n = ninputs + noutputs). Not called: no IO partition. 0 ok, -1 nomem. */
int om_writer_set_io_formats(om_writer *w, const uint32_t *formats, uint32_t n);
/* The COUNTS partition: counts[i] for output i (n = noutputs; copied). Not
 * called: no COUNTS partition. Not with gears. 0 ok, -1 nomem. */
int om_writer_set_counts(om_writer *w, const om_count *counts, uint32_t n);
/* The ONODES partition: onodes[i] for output i (n = noutputs; copied; the
 * node names are strings of this writer). Not called: no ONODES partition.
 * 0 ok, -1 nomem. */
int om_writer_set_onodes(om_writer *w, const om_onode *onodes, uint32_t n);
/* Whether the package elides the all-zero 16-byte chunks of its weights
 * (the ZMAP partition, om_format.h): OM_ZMAP_OFF (the default: WEIGHTS as
 * added), OM_ZMAP_ON, or OM_ZMAP_AUTO (when that saves at least 1/50 of the
 * weights' bytes). */
enum om_zmap_mode { OM_ZMAP_OFF = 0, OM_ZMAP_AUTO = 1, OM_ZMAP_ON = 2 };
void om_writer_set_zmap(om_writer *w, int mode);
/* Appends a task; returns its index (OM_NONE on failure). */
uint32_t om_writer_add_task(om_writer *w, const om_task *t);
/* Appends to the SOURCES partition (common/om_format.h): one record per
 * task added since the previous call (a gear's tasks; the records follow
 * the task table's order) and the names they index (string offsets from
 * om_writer_string; `first` counts from this call's names[0]); copied.
 * Every task needs a record once any call was made. 0 ok, -1 nomem. */
int om_writer_add_sources(om_writer *w, const om_task_source *tasks, uint32_t ntasks, const uint32_t *names,
                          uint32_t nnames);
/* Declares which tensors are the model inputs and outputs, in order. 0 ok, -1 nomem. */
int om_writer_set_io(om_writer *w, const uint32_t *inputs, int ninputs, const uint32_t *outputs,
                     int noutputs);

/* The package's size in bytes; fails (ST_ERR_NOMEM) when an add function
 * did. */
status om_writer_size(om_writer *w, size_t *size_out, diag *d);
/* Serialises the package into `out`: om_writer_size bytes, 64-byte aligned
 * and zeroed (as from bigmem_alloc), owned by the caller. Call it only after
 * om_writer_size succeeded. */
void om_writer_serialise(om_writer *w, void *out);
/* Both in one: *data_out is 64-byte aligned, malloc'd (free()). */
status om_writer_to_memory(om_writer *w, void **data_out, size_t *size_out, diag *d);
/* Streams the package into f (common/atomic_file.h), which the caller
 * begun and will commit or abort: no copy of it is made in memory, the
 * weights going from their segments to the file. *size_out: its bytes. */
status om_writer_write_to(om_writer *w, atomic_file *f, size_t *size_out, diag *d);
/* Writes the package to `path` atomically: a temporary file in the same
 * directory, fsync, rename over `path`, fsync of the directory. On any failure
 * the old file at `path` is untouched and the temporary file is removed. */
status om_writer_write_file(om_writer *w, const char *path, diag *d);

/* atc --mode=1: verifies `om_path` with libomrt, then writes every header,
 * partition, tensor and task as JSON to `json_path` (atomically, as above). */
status om_dump_json(const char *om_path, const char *json_path, diag *d);
/* The same JSON for a package in memory (64-byte aligned `data`); `label`
 * names it in messages. *json_out is malloc'd (free()), NUL-terminated. */
status om_json_memory(const void *data, size_t size, const char *label, char **json_out, size_t *len_out,
                      diag *d);
/* atc --mode=6: verifies `om_path` with libomrt and describes it in a few
 * lines: name, SoC, precision, atc version and command line, sizes, the
 * inputs and outputs (dtype, format, dims with -1 where gears differ,
 * bytes) and the gears. *text_out is malloc'd (free()), NUL-terminated. */
status om_summary(const char *om_path, char **text_out, diag *d);

#endif
