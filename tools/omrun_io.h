/* omrun_io.h - omrun's files: the samples --input names and the outputs
 * --outfmt asks for (tools/omrun_io.c), and what omrun, omcompare and the
 * layer dump share: messages and JSON strings. Messages go to stderr as
 * "<tool_name>: ..."; every function returns 0 on success, 1 after printing. */
#ifndef TOOLS_OMRUN_IO_H
#define TOOLS_OMRUN_IO_H

#include <stddef.h>
#include <stdio.h>

#include "common/json_out.h" /* json_str, which the tools share */
#include "omrt.h"

/* The samples of --input: `list` is comma-separated paths, one per model
 * input, either all files (one sample) or all directories (msame's way:
 * each directory's regular files sorted by name, sample k taking the k-th
 * file of every directory; the counts must agree). */
typedef struct samples {
  int count;     /* samples */
  int ninputs;   /* paths per sample */
  int from_dirs; /* 1: the paths were directories */
  char **paths;  /* [count * ninputs], sample-major; malloc'd */
} samples;

/* The tool messages name ("omrun", "omcompare"): main sets it first. */
extern const char *tool_name;
/* Prints "<tool_name>: <message>\n" to stderr; returns 1. */
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "float32", "float16", ... for an OMRT_* dtype; "other" for the rest. */
const char *io_dtype_name(int dt);

int samples_list(const char *list, int ninputs, samples *out);
void samples_free(samples *s);
/* The name outputs of sample k are written under: "" for a single sample
 * of files, else the first input file's name without its extension. */
const char *sample_name(const samples *s, int k, char *buf, size_t n);

/* Reads `path` into buf; the file must be exactly `bytes` long (input
 * `index`, of what `who` names: "the model", "gear --dymBatch 4"). */
int read_input(const char *path, void *buf, size_t bytes, int index, const char *who);

typedef enum outfmt { OUTFMT_BIN, OUTFMT_TXT, OUTFMT_NPY } outfmt;
int outfmt_parse(const char *s, outfmt *out); /* BIN, TXT, NPY (any case) */

/* mkdir -p. */
int make_dirs(const char *dir);
/* Writes output `index` (described by d, data at data) as
 * DIR/[NAME_]output_<index>.{bin,txt,npy}: raw little-endian bytes, text
 * (one line per innermost row, values space-separated), or a NumPy .npy
 * file (format 1.0) of the tensor's dtype and shape. */
int write_output(const char *dir, const char *name, int index, const omrt_tensor_desc *d, const void *data,
                 outfmt fmt);

#endif
