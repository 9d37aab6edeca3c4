/* onnx_internal.h - what the frontend's files share (not a public API).
 *
 * The frontend is split along its seams:
 *   onnx_proto.c   bytes -> Onnx__ModelProto: file reading, a wire-format
 *                  pre-check (nesting depth, lengths, offsets for messages)
 *                  and unpacking under a byte budget;
 *   onnx_tensor.c  TensorProto -> constant value, for every storage form and
 *                  for external data files;
 *   onnx_load.c    the public API: opsets, initializers, graph inputs and
 *                  --input_shape, Constant nodes, name resolution, outputs,
 *                  topological order;
 *   onnx_ops.c     the per-op importers that normalise ONNX nodes (per opset)
 *                  into the IR contract of ir/ops.def (with onnx_ops_index.c,
 *                  onnx_counted.c, onnx_resize.c, onnx_conv.c, the onnx_decomp*.c
 *                  decompositions, onnx_control.c's If, Loop and Scan and
 *                  onnx_seq.c's sequences);
 *   onnx_attrs.c   what those importers share: reading a node's attributes
 *                  and constant inputs, setting attributes on the IR node.
 * One onnx_ctx lives for one load; every message goes through onnx_fail or
 * onnx_node_fail so it starts with the model's label.
 */
#ifndef FRONTEND_ONNX_INTERNAL_H
#define FRONTEND_ONNX_INTERNAL_H

#include <stdint.h>

#include "frontend/onnx_import.h"
#include "onnx.pb-c.h"

/* ONNX Runtime's contrib-op domain: the frontend imports the quantized ops
 * of it that int8 model zoos use (onnx_ops.c's second table). */
#define ONNX_MS_DOMAIN "com.microsoft"

/* --- onnx_proto.c */

/* A byte range: bytes from offset. */
typedef struct onnx_span {
  size_t offset, bytes;
} onnx_span;

/* An unpacked model (or tensor) and the budgeted allocator that owns its
 * memory. The struct must not move between onnx_proto_unpack and
 * onnx_proto_free. */
typedef struct onnx_proto {
  Onnx__ModelProto *model;   /* set by onnx_proto_unpack; its graph has no initializers */
  Onnx__TensorProto *tensor; /* set by onnx_proto_unpack_tensor / onnx_proto_initializer */
  ProtobufCAllocator alloc;
  size_t used_bytes, budget_bytes; /* charged to the allocator */
  int over_budget;                 /* an allocation was refused by the budget */
  int out_of_memory;               /* an allocation failed */
  /* onnx_proto_unpack: */
  const void *data; /* the serialized model: borrowed, or owned (bigmem) when `owned` */
  size_t size;      /* bytes at data */
  int owned;
  const char *label; /* borrowed, for messages */
  onnx_span *inits;  /* graph.initializer values in data, in order (bigmem) */
  size_t ninits;
  void *compact; /* what `model` or `tensor` was unpacked from: the bytes without the
                    initializers or the raw_data (bigmem) */
  size_t compact_bytes;
  int raw_borrowed; /* onnx_proto_initializer: tensor->raw_data points into the model's bytes */
} onnx_proto;

/* Reads all of `path` (a regular file of at most max_bytes) into a bigmem
 * buffer (common/bigmem.h) the caller frees with bigmem_free(*data_out,
 * *size_out) or hands over to onnx_proto_unpack. */
status onnx_read_file(const char *path, size_t max_bytes, void **data_out, size_t *size_out, diag *d);
/* Checks and unpacks `size` bytes of a ModelProto; ST_ERR_PARSE names the
 * byte offset and the field path of the first malformed piece. `p` is
 * cleared first. p->model lacks the graph's initializers: p->inits locates
 * them and onnx_proto_initializer unpacks them. `data` must outlive p, or,
 * when `owned`, is a bigmem buffer (from onnx_read_file) that p takes over
 * whatever the outcome. `label` names the model in messages and must outlive
 * p. Call onnx_proto_free in every case. */
status onnx_proto_unpack(const void *data, size_t size, int owned, const char *label, onnx_proto *p, diag *d);
/* Unpacks initializer i of p into t (cleared first; onnx_proto_free(t) in
 * every case); its raw_data is not copied but points into p's bytes, valid
 * while p is and until the next call. Call it for i = 0, 1, ... in order:
 * when p owns the bytes, those before initializer i are given back. */
status onnx_proto_initializer(onnx_proto *p, size_t i, onnx_proto *t, diag *d);
/* Says the n bytes at `bytes` have been copied out and will not be read
 * again: when they lie in bytes p owns, the memory they occupy goes back to
 * the system (whole 2 MiB extents only). Anything else is ignored. */
void onnx_proto_consumed(const onnx_proto *p, const void *bytes, size_t n);
/* Checks and unpacks a serialized TensorProto (the input_N.pb / output_N.pb
 * files of ONNX node tests). */
status onnx_proto_unpack_tensor(const void *data, size_t size, const char *label, onnx_proto *p, diag *d);
void onnx_proto_free(onnx_proto *p);

/* --- shared load state */

typedef struct onnx_ext_file onnx_ext_file;

typedef struct onnx_ctx {
  ir_graph *g;
  const char *label;       /* the model's name in messages */
  const char *dir;         /* directory for external data, or NULL */
  int dirfd;               /* `dir` opened on first use; -1 before */
  int opset;               /* default-domain opset */
  int ms_opset;            /* com.microsoft opset (ONNX_MS_DOMAIN), 0 when the model imports none */
  const onnx_options *opt; /* never NULL */
  diag *d;
  arena scratch;      /* freed at the end of the load */
  onnx_ext_file *ext; /* external files read so far (onnx_tensor.c) */
  int ext_count, ext_cap;
  const onnx_proto *src;  /* the model whose bytes raw_data borrows, while initializers load; or NULL */
  int64_t unrolled_nodes; /* subgraph nodes imported so far (onnx_import_subgraph) */
  struct onnx_seq **seqs; /* per IR value id: the sequence the value names, or NULL (onnx_seq.c) */
  int seqs_cap;           /* entries in seqs */
} onnx_ctx;

/* The import state of one graph (onnx_load.c): the main graph or a subgraph,
 * with its names and the enclosing graph's. */
typedef struct onnx_scope onnx_scope;

/* Records "label: <message>" and returns code. */
status onnx_fail(onnx_ctx *c, status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* --- onnx_tensor.c */

/* "float32", "int64", ... for messages; "unknown" otherwise. */
const char *onnx_dtype_name(int dt);
/* Writes "[d0, d1, ...]" into buf. */
const char *onnx_dims_str(int rank, const int64_t *dims, char *buf, size_t size);
/* Makes a constant named `name` from `t`. `what` names the tensor in messages
 * ("initializer 'fc.weight'", "node 'c1' (Constant) attribute 'value'"). */
status onnx_tensor_const(onnx_ctx *c, const Onnx__TensorProto *t, const char *name, const char *what,
                         ir_value **out);
/* Closes what onnx_tensor_const opened (the directory fd). */
void onnx_tensor_done(onnx_ctx *c);

/* --- onnx_seq.c: ONNX sequences, resolved at import into the tensors they hold */

/* The items of a sequence known at compile time, in order. They live in the
 * load's scratch arena. */
typedef struct onnx_seq {
  int n;
  ir_value **items;
} onnx_seq;

/* The sequence v names, or NULL when v is a tensor. */
const onnx_seq *onnx_seq_of(const onnx_ctx *c, const ir_value *v);
/* Makes v (an ONNX value with no producer) name the sequence of items[0..n),
 * which are copied. */
status onnx_seq_set(onnx_ctx *c, const ir_value *v, int n, ir_value *const *items);

/* --- onnx_ops.c */

/* One ONNX node with its names resolved (by onnx_load.c). */
typedef struct onnx_node {
  onnx_ctx *c;
  const Onnx__NodeProto *np;
  int index; /* position in graph.node */
  int nin, nout;
  ir_value **in;           /* in[i] NULL: input omitted ("" name) */
  ir_value **out;          /* out[i] NULL: output omitted */
  const int *uses;         /* readers (node inputs and graph outputs) of each output */
  const onnx_scope *scope; /* the graph the node is in: where its subgraphs resolve outer names */
} onnx_node;

/* Records "label: node 'name' (Op): <message>" and returns code. */
status onnx_node_fail(const onnx_node *nd, status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "node 'name' (Op)", or "node #7 (Op)" for an unnamed node. */
const char *onnx_node_label(const Onnx__NodeProto *np, int index, char *buf, size_t size);
/* The node of nd's graph that alone reads nd's output k (its only use),
 * or NULL (several readers, a graph output, a subgraph's). Points into
 * the model's proto. */
const Onnx__NodeProto *onnx_sole_reader(const onnx_node *nd, int k);
/* Imports one node: checks arity, attributes and opset, then adds the IR
 * node(s) to c->g. */
status onnx_import_node(onnx_node *nd);

/* Subgraph nodes a whole load may import, plus one per import (If branches
 * once, Loop and Scan bodies once per iteration): what bounds unrolling. */
enum { ONNX_UNROLL_MAX_NODES = 1 << 16 };

/* onnx_load.c: infers the IR nodes made since g->nodes[first], as the loader
 * does after each importer (dtypes, dims, small constants folded); best
 * effort, only ST_ERR_NOMEM fails. onnx_control.c calls it on the nodes it
 * made before a subgraph reads them. */
status onnx_infer_nodes(onnx_ctx *c, int first);

/* onnx_load.c: imports subgraph gp of node nd (an If branch, a Loop or Scan
 * body) into the IR graph once more: its formal inputs are bound to in[0 ..
 * gp->n_input), its names not defined in it resolve in the enclosing graphs,
 * its nodes are imported and inferred as the main graph's are, and out[k] is
 * set to the value of its output k (a value of the IR graph, owned by it).
 * Constants among the bound inputs fold through the body, so an iteration
 * number or a constant condition makes constants downstream. */
status onnx_import_subgraph(onnx_node *nd, const Onnx__GraphProto *gp, ir_value *const *in, ir_value **out);

/* --- onnx_attrs.c: checking and reading a node's attributes and compile-time inputs,
 * setting attributes on the IR node (ownership and lifetimes: the top of
 * that file). */

/* Checks every attribute of nd against `spec` (an importer row's attribute
 * spec, syntax at the top of onnx_ops.c): a unique name the spec lists, of
 * its kind, not removed by the model's opset; copies the plain ones onto n
 * (none when n is NULL: a decomposition reads them itself). */
status onnx_check_attrs(onnx_node *nd, const char *spec, ir_node *n);
int onnx_attr_type(const Onnx__AttributeProto *a); /* ONNX AttributeType, inferred if unset */
const char *onnx_attr_type_name(int type);         /* "INT", "FLOATS", ... */
/* Attribute `name` of the node, or NULL; points into the model. */
const Onnx__AttributeProto *onnx_attr(const onnx_node *nd, const char *name);
/* INT / FLOAT attribute `name`, or def when absent. */
int64_t onnx_attr_int(const onnx_node *nd, const char *name, int64_t def);
double onnx_attr_float(const onnx_node *nd, const char *name, double def);
/* Whether STRING attribute `name` (def when absent) equals s. */
int onnx_attr_string_is(const onnx_node *nd, const char *name, const char *def, const char *s);
/* STRING attribute `name` (def when absent) copied into buf, truncated to
 * size - 1 bytes; returns buf. */
const char *onnx_attr_string(const onnx_node *nd, const char *name, const char *def, char *buf, size_t size);
/* INTS attribute `name`: its values (pointing into the model) and *count, or
 * NULL and *count = 0 when absent. */
const int64_t *onnx_attr_ints(const onnx_node *nd, const char *name, int *count);
/* INTS attribute `name`: copies up to max values into out and returns the
 * attribute's count (which may exceed max), or -1 when absent. */
int onnx_attr_ints_copy(const onnx_node *nd, const char *name, int64_t *out, int max);
/* For a message on a value v that is not known at compile time: "; it
 * depends on the input's values through node 'N' (Op) ..." naming the
 * nearest producer whose output size is known only at run time, and what the
 * user can do; "" when v has none. Written into buf, returned. */
const char *onnx_data_origin(onnx_ctx *c, const ir_value *v, char *buf, size_t size);
/* Input i, which must be present and a constant; `what` names it in messages. */
status onnx_const_input(onnx_node *nd, int i, const char *what, const ir_value **out);
/* A one-element numeric constant input, as a double. */
status onnx_scalar_input(onnx_node *nd, int i, const char *what, double *out);
/* A rank <= 1 int64 constant input of at most `max` values, copied into out. */
status onnx_ints_input(onnx_node *nd, int i, const char *what, int64_t *out, int max, int *count);
/* Set one attribute on n; ST_ERR_NOMEM "out of memory setting 'name'". */
status onnx_set_int(onnx_node *nd, ir_node *n, const char *name, int64_t v);
status onnx_set_float(onnx_node *nd, ir_node *n, const char *name, double v);
status onnx_set_string(onnx_node *nd, ir_node *n, const char *name, const char *v);
status onnx_set_ints(onnx_node *nd, ir_node *n, const char *name, int count, const int64_t *v);
/* INT attribute `name` (def when absent), which must be 0 or 1, set on n. */
status onnx_set_flag(onnx_node *nd, ir_node *n, const char *name, int64_t def);
/* INTS attribute `name` with `count` (<= 2 * MAX_RANK) values >= min, or
 * `count` copies of def when absent, set on n. */
/* Conv's attributes onto IR Conv node n (kernel_shape, strides, pads,
 * dilations, auto_pad, group, from nd's attributes; w is the weight, whose
 * dims give the kernel shape when the attribute is absent; 2-D or 3-D): the
 * importer's normalisation, for the decompositions that build a Conv. */
status onnx_conv_window(onnx_node *nd, ir_node *n, const ir_value *w);
/* MaxPool's attributes onto its IR node n (window, ceil_mode; storage_order
 * checked): the importer's normalisation, for the MaxPool decomposition. */
status onnx_maxpool_attrs(onnx_node *nd, ir_node *n);
/* AveragePool's (window, ceil_mode, count_include_pad), likewise: for QLinearAveragePool. */
status onnx_avgpool_attrs(onnx_node *nd, ir_node *n);

/* One row of an importer table: an ONNX op of one domain and how it is
 * imported (onnx_ops.c's `importers` for the default domain, whose top
 * comment says what the fields mean; onnx_decomp_qms.c's for com.microsoft). */
typedef struct onnx_importer {
  const char *op_type; /* ONNX op */
  const char *ir_name; /* the IR op it becomes; NULL: fn builds a subgraph (onnx_decomp.h) */
  int min_opset;       /* of the row's domain */
  int min_in, max_in;  /* ONNX inputs, over every handled opset */
  int max_out;         /* ONNX outputs; those past the IR op's must be unused */
  const char *attrs;   /* accepted attributes (onnx_ops.c's top comment) */
  status (*fn)(onnx_node *nd, ir_node *n);
} onnx_importer;

/* A com.microsoft row and its inputs' names, comma separated, "name?" for
 * an optional one before min_in (which may be omitted: ""), for messages. */
typedef struct onnx_ms_importer {
  onnx_importer im;
  const char *inputs;
} onnx_ms_importer;

/* onnx_decomp_msft.c: the rows of ONNX Runtime's transformer ops, which
 * onnx_ms_importer_find reads after its own. */
extern const onnx_ms_importer onnx_msft_importers[];
extern const int onnx_msft_importer_count;
/* onnx_decomp_qms.c: the com.microsoft row of op_type, or NULL. */
const onnx_ms_importer *onnx_ms_importer_find(const char *op_type);
/* "QLinearAdd, QLinearMul, ..." (the com.microsoft ops) into buf; buf. */
const char *onnx_ms_op_list(char *buf, size_t size);
status onnx_set_ints_default(onnx_node *nd, ir_node *n, const char *name, int count, int64_t def,
                             int64_t min);

/* onnx_ops_index.c: the importers of TopK, Scatter/ScatterElements,
 * ScatterND, CumSum/CumProd, GatherND, OneHot, Compress, NonZero and
 * NonMaxSuppression, and of Shape and Size of counted values (rows of
 * onnx_ops.c's table). */
status onnx_import_topk(onnx_node *nd, ir_node *n);
status onnx_import_scatter(onnx_node *nd, ir_node *n);
status onnx_import_scatternd(onnx_node *nd, ir_node *n);
status onnx_import_tensorscatter(onnx_node *nd, ir_node *n);
status onnx_import_cumulative(onnx_node *nd, ir_node *n);
status onnx_import_gathernd(onnx_node *nd, ir_node *n);
status onnx_import_onehot(onnx_node *nd, ir_node *n);
status onnx_import_compress(onnx_node *nd, ir_node *n);
status onnx_import_nonzero(onnx_node *nd, ir_node *n);
status onnx_import_unique(onnx_node *nd, ir_node *n);
status onnx_import_tfidf(onnx_node *nd, ir_node *n);
status onnx_import_nms(onnx_node *nd, ir_node *n);
/* Shape and Size of a value counted along an axis they read (ir/count.h):
 * the count, a run-time value, in place of the axis' extent. */
status onnx_import_shape(onnx_node *nd, ir_node *n);
status onnx_import_size(onnx_node *nd, ir_node *n);
/* Gather n of the run-time shape onnx_import_shape made of a counted value
 * with constant indices that pick static dims only: n becomes the Identity
 * of those dims, a constant. Does nothing otherwise. */
status onnx_counted_shape_gather(onnx_node *nd, ir_node *n);
/* Concat n along an axis some input is counted on: n copies the inputs'
 * bounds (attr with_padding) and a Gather of the valid rows, counted by
 * their number, produces the ONNX output. Does nothing otherwise. */
status onnx_counted_concat(onnx_node *nd, ir_node *n);
/* Slice n along the axis its input is counted on (constant start, end >= 0,
 * step 1): a Gather of the rows below the count, counted by their number,
 * feeds n, which keeps its other axes. Does nothing otherwise. */
status onnx_counted_slice(onnx_node *nd, ir_node *n);
/* Reduce n over the axis its input is counted on, in a mode with a
 * neutral element (float max, min, logsumexp; sum, prod, l1, sumsquare): the
 * padding is replaced by that element (Where of iota < count) and n reads
 * the result whole (attr with_padding). Does nothing otherwise. */
status onnx_counted_reduce(onnx_node *nd, ir_node *n);

/* onnx_counted.c: shape arithmetic on counts (its top comment). */
/* The compile-time bound of count value c (the extent of the axis it counts
 * on its producer's output), or -1 when c counts none. */
int64_t onnx_count_bound(const ir_value *c);
/* Slice nd (opset 10+) with a run-time end holding a count: to the input's
 * own count along that axis the end becomes INT64_MAX (onnx_counted_slice
 * keeps the valid rows); to a count c along a dense axis (from 0, step 1)
 * nd's and n's input becomes the Gather of rows [0, c), counted by c. Refused by
 * name when the count cannot be placed; does nothing otherwise. */
status onnx_counted_slice_end(onnx_node *nd, ir_node *n);
/* Reshape or Expand n with a run-time shape of constants and counts: the
 * counts become their bounds (Expand: the attribute, rows copied to a count
 * counted after). Refused by name when the input is not counted by them. */
status onnx_counted_shape_input(onnx_node *nd, ir_node *n);
/* Reshape n (constant shape) of x counted along an axis it merges with the
 * axes after it: n reshapes the bound (attr with_padding) and a Gather of
 * the prefix of count x their extents, counted by that product, is the
 * output. Does nothing otherwise. */
status onnx_counted_reshape_merge(onnx_node *nd, ir_node *n);
/* Flatten n of x counted along an axis it merges with the axes after it
 * (torchvision's mask_prob[index, labels] flattens [count, classes, h, w]
 * to [count x classes, h x w]): n becomes the Reshape to its two extents,
 * merged as above. Does nothing otherwise. */
status onnx_counted_flatten(onnx_node *nd, ir_node *n);
/* ConstantOfShape n of a run-time shape of constants and one count: n
 * becomes the Identity of `value` filled to the bound, a constant counted
 * along that axis by that count. 1 when it applies (*st then says how it
 * went), 0 when the shape is not such a value. */
int onnx_counted_fill(onnx_node *nd, ir_node *n, const ir_value *value, status *st);
/* Range n from s to s + count, step 1: the Identity of the constant s,
 * s + 1, ... at the count's bound, counted by it. Does nothing otherwise. */
status onnx_counted_range(onnx_node *nd, ir_node *n);
/* ScatterElements n with indices and updates counted alike: the padding
 * indices point at a spare slot past x's extent along the axis (n scatters
 * into x with that slot, attr with_padding), and a Gather of x's slots,
 * counted as x is, is the output. Does nothing for dense indices. */
status onnx_counted_scatter(onnx_node *nd, ir_node *n);
/* NonZero n of a counted input: it reads the input with zeros past the
 * count. */
status onnx_counted_nonzero_input(onnx_node *nd, ir_node *n);
/* Where(iota < count, x, neutral) along x's counted axis (names tagged
 * `tag`), or NULL out of memory. */
ir_value *onnx_counted_masked(onnx_node *nd, ir_value *x, double neutral, const char *tag);

/* onnx_resize.c: Resize (opset >= 10) and Upsample into the IR Resize. */
status onnx_import_resize(onnx_node *nd, ir_node *n);
status onnx_import_upsample(onnx_node *nd, ir_node *n);

/* The dtype of an imported node's outputs from its inputs' dtypes and its
 * attributes: ONNX's type inference, which needs no shapes. The loader runs
 * it in dependency order where shape inference cannot run yet; the
 * decomposition builder on each node it makes. DT_UNDEFINED when an input
 * it reads is. */
dtype onnx_result_dtype(const ir_node *n);

#endif
