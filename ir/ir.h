/* ir.h - the compiler's graph: values, nodes, attributes, one arena.
 *
 * A graph owns an arena; everything reachable from it (values, nodes, names,
 * attribute arrays, constant payloads) is allocated there and lives until
 * ir_graph_free. Pointers between graph objects are plain pointers into that
 * arena; nothing is freed individually, except a constant payload that
 * ir_value_replace_data supersedes or ir_graph_compact drops. Passes delete
 * by marking a node dead and calling ir_graph_compact().
 *
 * Values are SSA: each has at most one producer (NULL for graph inputs and
 * constants). A constant is a value with non-NULL `data` (C order in its own
 * dtype and layout). Graph inputs and outputs are listed in g->inputs and
 * g->outputs in ONNX order.
 *
 * g->nodes is kept in a topological order by every pass (ir_graph_toposort
 * restores it and detects cycles). ir_verify checks the invariants below.
 */
#ifndef IR_IR_H
#define IR_IR_H

#include <stdint.h>
#include <stdio.h>

#include "common/arena.h"
#include "common/om_format.h"
#include "common/status.h"
#include "common/types.h"

typedef enum ir_op {
#define OP(e, name, min_in, max_in, min_out, max_out, fusion, fp16, unit, lay, task) IR_OP_##e,
#include "ops.def"
#undef OP
  IR_OP_COUNT
} ir_op;

/* The columns of ops.def (its header says what each value means). */
typedef enum ir_fusion {
  IR_FUSE_ELEMWISE,
  IR_FUSE_BROADCAST,
  IR_FUSE_INJECTIVE,
  IR_FUSE_CUBE,
  IR_FUSE_OPAQUE
} ir_fusion;
typedef enum ir_fp16 { IR_FP16_ALWAYS, IR_FP16_FOLLOW, IR_FP16_NEVER } ir_fp16;
typedef enum ir_unit { IR_UNIT_CUBE, IR_UNIT_VECTOR, IR_UNIT_NONE } ir_unit;
typedef enum ir_lay {
  IR_LAY_NONE, /* unit NONE: folds at compile time (or is rewritten: Gemm) */
  IR_LAY_VECTORIZED,
  IR_LAY_FOLDED,
  IR_LAY_KEEP,
  IR_LAY_CONV,
  IR_LAY_POOL,
  IR_LAY_RESIZE,
  IR_LAY_VECPROG,
  IR_LAY_MATMUL,
  IR_LAY_CONCAT,
  IR_LAY_ND_FLOAT,
  IR_LAY_REDUCE,
  IR_LAY_VIEW,
  IR_LAY_GATHER,
  IR_LAY_INDEX,
  IR_LAY_COPY,
  IR_LAY_REINTERPRET,
  IR_LAY_AIPP,
  IR_LAY_QCONV,
  IR_LAY_QELTWISE,
  IR_LAY_QLUT,
  IR_LAY_QMATMUL,
  IR_LAY_DYNQUANT,
  IR_LAY_CONVERT,
  IR_LAY_COUNT
} ir_lay;

typedef struct ir_op_info {
  const char *name; /* the ONNX op_type */
  int min_in, max_in, min_out, max_out;
  ir_fusion fusion;
  ir_fp16 fp16;
  ir_unit unit;
  ir_lay lay;
  om_task_kind task; /* OM_TASK_NONE: no task */
} ir_op_info;

extern const ir_op_info ir_ops[IR_OP_COUNT];
int ir_op_from_name(const char *onnx_name); /* -1 when unknown */

typedef enum ir_attr_kind {
  IR_ATTR_INT,
  IR_ATTR_FLOAT,
  IR_ATTR_STRING,
  IR_ATTR_INTS,
  IR_ATTR_FLOATS
} ir_attr_kind;

typedef struct ir_attr {
  const char *name;
  ir_attr_kind kind;
  int64_t i;      /* INT */
  double f;       /* FLOAT */
  const char *s;  /* STRING */
  int n;          /* INTS / FLOATS: element count */
  int64_t *ints;  /* INTS */
  double *floats; /* FLOATS */
} ir_attr;

/* Where memory planning put a value (set by passes/memplan.c). */
typedef enum ir_region {
  IR_REGION_NONE = -1,
  IR_REGION_WEIGHTS = 0,
  IR_REGION_WORKSPACE = 1,
  IR_REGION_INPUT = 2,
  IR_REGION_OUTPUT = 3
} ir_region;

typedef struct ir_node ir_node;

typedef struct ir_value {
  int id;           /* index in g->values */
  const char *name; /* unique in the graph */
  dtype dtype;
  layout layout;
  int rank;               /* -1 until known */
  int64_t dims[MAX_RANK]; /* logical dims; -1 = not yet known */
  const void *data;       /* constant payload in the graph arena, or NULL */
  ir_node *producer;      /* NULL for graph inputs and constants */
  /* A counted value (data-dependent extent: NonZero, Compress, Unique,
   * NonMaxSuppression, TopK with a run-time k): along axis count_axis only
   * the first *count entries are valid at run time; dims[count_axis] is the
   * compile-time bound and the storage is the bound's. `count` is an i64
   * [1] value the producing task writes (the producer's last output, or
   * the count of the counted input this value was computed from: shape
   * inference propagates it through ops the padding does not affect and
   * refuses the others). count_axis -1, count NULL: a dense value. */
  int count_axis;
  struct ir_value *count;
  int input_index;  /* position in g->inputs, or -1 */
  int output_index; /* position in g->outputs, or -1 */
  /* memory plan (passes/memplan.c) */
  ir_region region;
  uint64_t offset; /* bytes from the region base */
  uint64_t bytes;  /* physical bytes (layout padding included) */
} ir_value;

struct ir_node {
  int id;           /* creation number, stable for the graph's life */
  const char *name; /* ONNX node name, or a generated unique one */
  ir_op op;
  int nin, nout;
  ir_value **in; /* in[i] may be NULL for an omitted optional input */
  ir_value **out;
  int nattrs, attr_cap;
  ir_attr *attrs;
  int dead;   /* marked for removal by ir_graph_compact */
  int origin; /* id of the source node this one computes part of: its own id
                 (ir_node_new), or the ONNX node's when a decomposition or a
                 lowering split one op into several (the op-by-op build keeps
                 one op's elementwise pieces in one vector program) */
};

/* One node of the source model as the frontend read it, in import order
 * (topological): its name (the ONNX node's, or its first output's when it
 * has none), op type and the names of the tensors it reads and writes. The
 * passes never change these; emit maps them onto tasks (passes/sources.c)
 * for the om's SOURCES partition, and omcompare reads them. */
typedef struct ir_source {
  const char *name, *op_type;
  int nin, nout;
  const char **in, **out; /* tensor names; "" for an omitted optional input */
} ir_source;

typedef struct ir_graph {
  arena arena;
  const char *name;
  int opset; /* the model's default-domain opset */
  ir_node **nodes;
  int nnodes, node_cap, next_node_id;
  ir_value **values;
  int nvalues, value_cap;
  ir_value **inputs;
  int ninputs, input_cap;
  ir_value **outputs;
  int noutputs, output_cap;
  int outputs_picked; /* the outputs are nodes' outputs atc --out_nodes chose */
  ir_source *src;     /* [nsrc], the source model's nodes */
  int nsrc, src_cap;
  /* Every value name ever given out, for uniqueness and ir_value_find:
   * open addressing, power-of-two capacity, never more than half full. */
  ir_value **names;
  int names_cap, names_count;
  /* The names of the nodes in g->nodes, for ir_node_new's uniqueness test:
   * the same kind of table, rebuilt by ir_graph_compact. */
  ir_node **node_names;
  int node_names_cap, node_names_count;
} ir_graph;

/* Graph lifetime. budget_bytes bounds the arena (0 = unlimited). */
ir_graph *ir_graph_new(const char *name, size_t budget_bytes);
void ir_graph_free(ir_graph *g);

/* New value with unknown shape (rank -1), dtype dt, layout ND. `name` is
 * copied; NULL or a name already used gets a unique generated name. */
ir_value *ir_value_new(ir_graph *g, const char *name, dtype dt);
/* Sets rank and dims (copied). */
void ir_value_set_shape(ir_value *v, int rank, const int64_t *dims);
/* New constant: copies `bytes` of data (must equal elements x dtype size).
 * data NULL: the payload is zero and the caller fills it; a large one is
 * not resident until written (arena_alloc_lazy). */
ir_value *ir_const_new(ir_graph *g, const char *name, dtype dt, int rank, const int64_t *dims,
                       const void *data, size_t bytes);
/* Makes `data` (in the graph arena) constant v's payload; v's dtype, shape
 * and layout are the caller's to match. The old payload's memory goes back
 * (arena_release) unless another value, live or compacted away, shares it
 * (dce lets an Identity's output share its input's). */
void ir_value_replace_data(ir_graph *g, ir_value *v, const void *data);
/* Converting a constant whose payload is then replaced (or dropped) reads
 * the old payload once, front to back. When that payload is large and its
 * own (no other value shares it: ir_value_replace_data would give it back),
 * ir_payload_read gives back the pages behind the read position every
 * 32 MiB and ir_payload_alloc's new payload is faulted in as it is written,
 * so a gigabyte weight and its converted form are never both resident in
 * full. `replaced`: the caller replaces c's payload afterwards (else it
 * keeps it and nothing is given back). */
typedef struct ir_payload_reader {
  const ir_value *c;
  uint64_t given; /* bytes of c->data given back so far */
  int consume;
} ir_payload_reader;
void ir_payload_reader_init(ir_graph *g, ir_payload_reader *r, const ir_value *c, int replaced);
/* The new payload, `bytes` zeroed bytes in g's arena (NULL: out of memory). */
void *ir_payload_alloc(ir_graph *g, const ir_payload_reader *r, size_t bytes);
/* The first `elems` elements of c's payload have been read. */
void ir_payload_read(ir_payload_reader *r, uint64_t elems);
ir_value *ir_value_find(const ir_graph *g, const char *name); /* NULL if no value in g has it */
/* a takes b's name and b a's (the driver puts a Cast after a graph output
 * and gives the output's name to the Cast's result). */
void ir_value_swap_names(ir_graph *g, ir_value *a, ir_value *b);
int ir_graph_add_input(ir_graph *g, ir_value *v);  /* 0 ok, -1 nomem */
int ir_graph_add_output(ir_graph *g, ir_value *v); /* 0 ok, -1 nomem */
/* Appends a source node (strings and arrays copied). 0 ok, -1 nomem. */
int ir_graph_add_source(ir_graph *g, const char *name, const char *op_type, int nin, const char *const *in,
                        int nout, const char *const *out);

/* Logical element count (-1 when the shape is unknown or overflows) and
 * physical bytes in the value's layout and dtype (-1 likewise). */
int64_t ir_value_elements(const ir_value *v);
int64_t ir_value_bytes(const ir_value *v);

/* New node appended at the end of g->nodes; in/out arrays are copied and each
 * output's producer is set. name NULL or taken: a unique one is generated. */
ir_node *ir_node_new(ir_graph *g, ir_op op, const char *name, int nin, ir_value *const *in, int nout,
                     ir_value *const *out);
/* Replaces input slot i (growing the input array if i == nin). */
int ir_node_set_input(ir_graph *g, ir_node *n, int i, ir_value *v);
/* Appends v as n's last output (v->producer = n). 0 ok, -1 nomem. */
int ir_node_add_output(ir_graph *g, ir_node *n, ir_value *v);

/* Attributes: setters replace an existing attribute of the same name.
 * Getters return `def` when absent or of another kind. Arrays are copied. */
int ir_attr_set_int(ir_graph *g, ir_node *n, const char *name, int64_t v);
int ir_attr_set_float(ir_graph *g, ir_node *n, const char *name, double v);
int ir_attr_set_string(ir_graph *g, ir_node *n, const char *name, const char *v);
int ir_attr_set_ints(ir_graph *g, ir_node *n, const char *name, int count, const int64_t *v);
int ir_attr_set_floats(ir_graph *g, ir_node *n, const char *name, int count, const double *v);
const ir_attr *ir_attr_find(const ir_node *n, const char *name);
int64_t ir_attr_int(const ir_node *n, const char *name, int64_t def);
double ir_attr_float(const ir_node *n, const char *name, double def);
const char *ir_attr_string(const ir_node *n, const char *name, const char *def);
/* Copies up to max ints into out; returns the count, or -1 when absent. */
int ir_attr_ints(const ir_node *n, const char *name, int64_t *out, int max);
/* Removes attribute `name` from n (nothing when absent). */
void ir_attr_remove(ir_node *n, const char *name);

/* Records an error about node n: "node 'NAME' (OpType): <fmt...>", the one
 * shape every pass uses for messages about a node. Returns code. */
status ir_node_error(diag *d, status code, const ir_node *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "[1,3,224,224]" into one of four rotating thread-local buffers (for
 * messages: at most four live results at a time). */
const char *ir_dims_str(int rank, const int64_t *dims);

/* Graph surgery. */
/* Makes every use of `from` (node inputs, graph outputs, and the count of
 * the values it counts) use `to`. */
void ir_replace_uses(ir_graph *g, ir_value *from, ir_value *to);
/* Number of node inputs (over live nodes) plus graph outputs that read v.
 * O(nodes): a pass asking about many values keeps an ir_uses table instead. */
int ir_value_use_count(const ir_graph *g, const ir_value *v);
/* The single live node reading v, or NULL when v has 0 or >1 readers or is a
 * graph output. O(nodes), like ir_value_use_count. */
ir_node *ir_value_single_user(const ir_graph *g, const ir_value *v);
/* The one live node reading v, however many of its inputs do (Mul(d, d)),
 * or NULL when none or several nodes read v or it is a graph output: what a
 * pattern matcher asks before it absorbs v into a fused node. O(nodes). */
ir_node *ir_value_sole_reader(const ir_graph *g, const ir_value *v);
/* v is a one-element f32 or f16 constant: 1 and its value in *f, else 0. */
int ir_value_float_scalar(const ir_value *v, double *f);
/* n is a QConv in its run-time zero point form (ops.def: ConvInteger's,
 * attribute rt_x_zp = 1). */
static inline int ir_qconv_dynamic(const ir_node *n) {
  return n->op == IR_OP_QCONV && ir_attr_int(n, "rt_x_zp", 0) == 1;
}

/* Readers of every value at once, for passes that ask about many values:
 * count[v->id] is ir_value_use_count(g, v) and, when that is 1 and v is not a
 * graph output, user[v->id] is ir_value_single_user(g, v). Built in
 * O(nodes + values); a pass that rewires inputs keeps it current with
 * ir_uses_node (or builds it again). Value ids must not change meanwhile
 * (ir_graph_compact renumbers them). The arrays live in the arena given. */
typedef struct ir_uses {
  int *count;     /* per value id: readers (live node inputs + graph outputs) */
  uintptr_t *sum; /* per value id: the sum of its reader nodes' addresses,
                     so with one reader, that reader */
  int nvalues;    /* entries (g->nvalues when built) */
} ir_uses;
status ir_uses_build(const ir_graph *g, arena *a, ir_uses *u, diag *d);
/* Adds (delta 1) or removes (delta -1) node n's inputs as readers. */
void ir_uses_node(ir_uses *u, ir_node *n, int delta);
/* ir_value_single_user from the table. */
ir_node *ir_uses_single(const ir_uses *u, const ir_value *v);
/* Drops dead nodes from g->nodes and values nothing refers to from g->values
 * (renumbering value ids); a dropped constant loses its data, whose memory
 * goes back (arena_release) unless another value shares it. */
void ir_graph_compact(ir_graph *g);
/* Reorders g->nodes topologically (stable for already-sorted graphs).
 * ST_ERR_INVALID naming a node on a cycle when there is one. */
status ir_graph_toposort(ir_graph *g, diag *d);

/* Structural checks: arity against the op table, every input produced by a
 * node earlier in g->nodes or a graph input or a constant, single producer,
 * unique value names, known dtypes, dims >= 0 where rank >= 0, and every
 * VectorProgram's program valid for its node (ir/ir_vprog.h). */
status ir_verify(const ir_graph *g, diag *d);

/* Text form, one line per node:
 *   graph NAME opset N
 *   input %x : f32[1,3,224,224]
 *   const %w : f32[64,3,7,7] FRACTAL_Z = <bytes 37632 crc 1a2b3c4d>
 *   %y : f16[1,64,112,112] NC1HWC0 = Conv(%x, %w, _) {kernel_shape=[7,7], strides=[2,2]} @workspace+0
 *   output %y
 * Layout is printed when not ND; a missing optional input prints as "_";
 * attributes are sorted by name; the memory plan is printed as
 * "@region+offset" when set. Small constants (<= 16 elements) print their
 * values ("= [1, 2, 3]") instead of the crc summary. */
void ir_print(const ir_graph *g, FILE *out);
/* ir_print into a malloc'd string the caller frees. */
char *ir_print_string(const ir_graph *g);
/* DOT for --dump_graph. */
void ir_print_dot(const ir_graph *g, FILE *out);

/* Parses the text form back (ir/ir_parse.c). Constants in text may be given
 * as "= [v, v, ...]" (all elements), "= fill(v)", or "= rand(seed)" (uniform
 * [-1, 1) from a fixed generator, for tests); the "<bytes N crc X>" summary
 * form cannot be parsed back. `label` names the text in messages
 * ("file.ir:12: ..."). */
status ir_parse(const char *text, const char *label, ir_graph **graph_out, diag *d);

#endif
