/* onnx_import.h - ONNX ModelProto -> IR graph.
 *
 * Parses with the protobuf-c code generated at build time from the system's
 * onnx.proto, then builds an ir_graph: initializers (raw_data and typed
 * fields) and Constant nodes become constants, graph inputs that are not
 * initializers become graph inputs with shapes from the model, overridden by
 * `input_shapes`; every node goes through its op importer, which normalises
 * opset differences into the IR contract of ir/ops.def.
 *
 * Every rejection names the file, the node (name and op type) or tensor, and
 * the field, e.g.
 *   resnet50.onnx: node 'Conv_12' (Conv): input 1 'w9' is produced by no node
 */
#ifndef FRONTEND_ONNX_IMPORT_H
#define FRONTEND_ONNX_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/types.h"
#include "ir/ir.h"

typedef struct onnx_input_shape {
  const char *name; /* graph input name */
  int rank;
  int64_t dims[MAX_RANK];
} onnx_input_shape;

typedef struct onnx_options {
  const onnx_input_shape *input_shapes; /* from --input_shape; may be NULL */
  int ninput_shapes;
  size_t max_file_bytes; /* 0 = default limit (4 GiB) */
  /* Precheck (atc --mode=3): when set, a node the compiler does not support
   * (ST_ERR_UNSUPPORTED: op, opset, attribute value, dtype) does not end the
   * load; its one-line message goes to on_unsupported and the next node is
   * imported. Nodes that fail only because an input comes from an unsupported
   * node are not reported again. The load still fails at the end, with
   * ST_ERR_UNSUPPORTED and "N of M nodes are not supported". Any other error
   * ends the load as usual. `msg` is valid during the call only. */
  void (*on_unsupported)(void *user, const char *msg);
  void *user;
  /* Import every node, also those no graph output reads (by default they are
   * left out, as unused branches of an export: --out_nodes, which picks its
   * outputs among them after the import, sets this). */
  int import_unread;
} onnx_options;

/* Parses "name:1,3,224,224;name2:1,10" into shapes (pointers into an arena).
 * A dim may be -1: dynamic, for the driver to replace per gear (the loader
 * refuses it). ST_ERR_PARSE naming the bad piece. */
status onnx_parse_input_shape(const char *spec, arena *a, onnx_input_shape **shapes_out, int *count_out,
                              diag *d);

/* Loads `path`. External data files are resolved relative to the model's
 * directory. On success *graph_out is a new graph the caller frees with
 * ir_graph_free; every input has a fully known shape (a symbolic dim not fixed
 * by input_shapes is an error naming the input and the dim). */
status onnx_load_file(const char *path, const onnx_options *opt, ir_graph **graph_out, diag *d);

/* Same from memory; `dir` is the directory external data is relative to (NULL:
 * external data is rejected). `label` names the model in messages. */
status onnx_load_memory(const void *data, size_t size, const char *dir, const char *label,
                        const onnx_options *opt, ir_graph **graph_out, diag *d);

/* 1 when the frontend imports ONNX op type `op_type` (at some opset). */
int onnx_op_known(const char *op_type);

/* One tensor read from a serialized TensorProto file (read by the
 * conformance runner from ONNX node tests' input_N.pb / output_N.pb). */
typedef struct onnx_tensor {
  const char *name; /* TensorProto.name, "" when unset; in the arena */
  int dtype;        /* ONNX DataType number (DT_FLOAT32, ...) */
  int rank;
  int64_t dims[MAX_RANK];
  void *data;   /* C-order little-endian elements, 64-byte aligned, in the arena */
  size_t bytes; /* product of dims x dtype size */
} onnx_tensor;

/* Reads the TensorProto in `path` with the same decoding (and the same
 * checks and messages) as initializers: raw_data, typed fields, external data
 * relative to the file's directory. Name and data are allocated from `a` and
 * live as long as it. */
status onnx_read_tensor_file(const char *path, arena *a, onnx_tensor *out, diag *d);

#endif
