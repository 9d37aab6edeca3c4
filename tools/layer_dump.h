/* layer_dump.h - layer dumps: every task's outputs as float32 .npy files in
 * ONNX layout, named after the ONNX tensors they hold, with an index
 * DIR/dump.json (tools/layer_dump.c). A task hook (omrt.h) for omrun
 * --dump and omcompare. Messages go to stderr; functions return 0 on
 * success, 1 after printing. */
#ifndef TOOLS_LAYER_DUMP_H
#define TOOLS_LAYER_DUMP_H

#include "omrt.h"

typedef struct layer_dump layer_dump;

/* Dumps into `dir` (created) for model m (borrowed; it outlives the dump).
 * nodes: NULL for every task, else comma-separated names; a task is dumped
 * when its name, one of its ONNX nodes, or one of its outputs' ONNX or om
 * tensor names is listed. */
int layer_dump_open(const omrt_model *m, const char *dir, const char *nodes, layer_dump **out);
/* The task hook: pass it to omrt_context_set_task_hook with the dump as
 * user. Writes the task's outputs (once the last task writing each has
 * run); returns nonzero (stopping the run) when a file cannot be written. */
int layer_dump_hook(void *user, const omrt_task_info *info);
/* The path of the .npy file written for ONNX tensor `onnx_name`, or NULL
 * (not dumped yet, or no task holds it). Owned by d. */
const char *layer_dump_file(const layer_dump *d, const char *onnx_name);
/* Writes DIR/dump.json from what the hook saw, and frees d (NULL is fine).
 * Sets *files_out (may be NULL) to the .npy files written. */
int layer_dump_close(layer_dump *d, int *files_out);

#endif
