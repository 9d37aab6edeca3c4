/* pass.h - the pass interface and the state passes share.
 *
 * A pass is a function over the graph plus a pass_ctx. Each pass file opens
 * with its contract: what it needs, what it changes, what it leaves true. The
 * order is the array in passes/pipeline.c. The driver (driver/compile.c)
 * fills the inputs of pass_ctx, runs the pipeline, and reads the outputs.
 *
 * IR contract between the graph passes and the lowering passes (true after
 * `fuse`): every value has a known shape and dtype; no Shape/Size/Constant/
 * Range/ConstantOfShape subgraphs remain (folded; a Gather remains only when
 * its data or indices are computed at run time); Gemm/MatMul of a [1,K] A by a constant 2-D B have become
 * Reshape -> Conv 1x1 -> Reshape; BatchNormalization after a Conv is folded
 * into its weights and bias; Conv may carry a residual (in[3]) and
 * act/clip_min/clip_max attributes; Identity is gone except where it connects
 * a graph input directly to a graph output.
 */
#ifndef PASSES_PASS_H
#define PASSES_PASS_H

#include <stdint.h>

#include "backend/om_write.h"
#include "common/om_format.h"
#include "common/status.h"
#include "ir/ir.h"
#include "socs/soc.h"

/* Per-op precision control: atc's --keep_dtype, --customize_dtypes and
 * --modify_mixlist (driver/precision_cfg.h reads the files;
 * passes/precision.c applies them). Each entry says where it was written,
 * "keep.cfg:3" or "mix.json:4: black-list.to-add", for messages. */
typedef enum prec_list { PREC_LIST_GRAY, PREC_LIST_BLACK, PREC_LIST_WHITE } prec_list;
typedef struct prec_entry {
  const char *name; /* an ONNX node name, or an op type when op_type */
  int op_type;      /* 1: name is an op type (keep_dtype's "OpType::Name"; every mixlist entry) */
  prec_list list;   /* mixlist: the list the op type joins (a to-remove: GRAY) */
  int remove;       /* mixlist: 1 for a to-remove, which needs the op type on `from` */
  prec_list from;
  const char *where;
  const char *reason; /* keep entries atc chose itself (--precision_calibration_input): why; else NULL */
  int fp16;           /* customize_dtypes: 1 computes in fp16, 0 in fp32 */
  int nin, nout;      /* customize_dtypes: the dtypes the line gives for the inputs and outputs */
} prec_entry;
typedef struct prec_cfg {
  const prec_entry *keep; /* --keep_dtype, in file order */
  int nkeep;
  const prec_entry *custom; /* --customize_dtypes, in file order; they win over keep and the lists */
  int ncustom;
  const prec_entry *mix; /* --modify_mixlist: to-removes first, then to-adds */
  int nmix;
} prec_cfg;

typedef struct pass_ctx {
  /* inputs, set by the driver */
  const soc_info *soc;
  om_precision precision;
  int winograd;        /* 1: Winograd F(4x4,3x3) where eligible (--op_select_implmode=high_performance) */
  unsigned fusion_off; /* FUSION_* bits of the rules turned off (atc --fusion_switch_file);
                          all of them: the op-by-op build, one task per ONNX op */
  int no_reuse;        /* memplan: 1 gives every workspace value memory of its own */
  int no_weight_clip;  /* precision, layout: 1 (atc --is_weight_clip=0) stores a finite f32 constant beyond
                          fp16's range as +-inf when it becomes fp16; 0 (the default, as ATC's) as +-65504 */
  const char *no_reuse_nodes; /* memplan: "name,OpType,..." whose outputs get memory of their own, or NULL */
  const char *model_name;     /* written into the om */
  const char *cmdline;        /* written into the om */
  const char *singleop;       /* atc --singleop's record for the om (om_model_def.singleop), or NULL */
  /* A gear of a package with several (driver/gears.h): emit appends the
   * graph's tasks to ctx->writer, the driver's, whose om_writer_begin_gear
   * started the gear, instead of making a package of its own; with
   * copy_weights it copies the constants into the package (the graph is
   * freed before the package is written; the writer keeps one copy of
   * payloads equal to earlier gears'). */
  int gear_append, copy_weights;
  /* Graph I/O the driver asks for in another dtype or layout, indexed by
   * graph input i then output ninputs + k (NULL: none): io_dtype[i] is the
   * dtype precision gives it (DT_UNDEFINED: the model's; --input_fp16_nodes,
   * --output_type), io_nc1hwc0[i] 1 when layout makes it NC1HWC0
   * (--is_input_adjust_hw_layout, --is_output_adjust_hw_layout). */
  const int *io_dtype;
  const uint8_t *io_nc1hwc0;
  const prec_cfg *prec; /* --keep_dtype, --modify_mixlist; NULL: none */
  /* Called with one line per decision worth reporting (atc --log=info: the
   * nodes kept in fp32 and why); may be NULL. msg is valid during the call. */
  void (*note)(void *user, const char *msg);
  void *note_user;
  /* outputs, set by passes */
  uint64_t workspace_bytes;       /* memplan: size of the planned arena */
  uint64_t workspace_lower_bound; /* memplan: max over time of live bytes */
  uint64_t weights_bytes;         /* emit */
  int ntasks;                     /* emit */
  om_writer *writer;              /* emit: the package; owned by the ctx, freed by the driver;
                                     borrows the graph's constants (serialise it first) */
} pass_ctx;

/* Fusion rules: each merges several ONNX ops into one task, and each can be
 * turned off by name (atc --fusion_switch_file "Name:off"; "ALL:off" turns
 * off every one). */
enum {
  FUSION_CONV_BN = 1u << 0,          /* bn_fold: a BN after a Conv folds into its weights */
  FUSION_CONV_ADD_RELU = 1u << 1,    /* fuse: bias Add, residual Add, Relu/Clip into the Conv */
  FUSION_VECTOR_PROGRAM = 1u << 2,   /* vectorize: programs of different ops merge */
  FUSION_CONV_EPILOGUE = 1u << 3,    /* epilogue: a Conv's reader program runs in its tiles */
  FUSION_CONV_INPUT_SCALE = 1u << 4, /* fuse: a per-channel Mul before a 1x1 Conv scales its staged input */
  FUSION_MATMUL_ADD_ACT = 1u << 5,   /* fuse: bias Add, residual Add, Relu/Clip into the MatMul */
  FUSION_MATMUL_EPILOGUE = 1u << 6,  /* epilogue: a MatMul's reader program runs in its tiles */
  FUSION_MATMUL_TRANSPOSE = 1u << 7, /* fuse: a Transpose before a MatMul becomes its operand's view */
  FUSION_LAYERNORM = 1u << 8,        /* norm: decomposed LayerNorm / RMSNorm chains -> one LayerNorm */
  FUSION_ATTENTION = 1u << 9,        /* attention: MatMul, scale, masks, Softmax, MatMul -> one task */
  FUSION_ATTENTION_VIEW = 1u << 10,  /* attention: head split / merge copies become operand views */
  FUSION_CONV_PATCHES = 1u << 11,    /* conv_patches: a patch Conv of few channels -> MatMul */
};
typedef struct fusion_rule {
  const char *name; /* as written in the switch file */
  unsigned bit;
  const char *what; /* one line, for help text */
} fusion_rule;
extern const fusion_rule fusion_rules[];
extern const int fusion_rule_count;
#define FUSION_ALL                                                                                           \
  (FUSION_CONV_BN | FUSION_CONV_ADD_RELU | FUSION_VECTOR_PROGRAM | FUSION_CONV_EPILOGUE |                    \
   FUSION_CONV_INPUT_SCALE | FUSION_MATMUL_ADD_ACT | FUSION_MATMUL_EPILOGUE | FUSION_MATMUL_TRANSPOSE |      \
   FUSION_LAYERNORM | FUSION_ATTENTION | FUSION_ATTENTION_VIEW | FUSION_CONV_PATCHES)

typedef status (*pass_fn)(ir_graph *g, pass_ctx *ctx, diag *d);

typedef struct pass {
  const char *name; /* as used by --dump_graph file names and --log=info lines */
  pass_fn run;
} pass;

extern const pass pass_pipeline[];
extern const int pass_pipeline_count;

/* The passes, in pipeline order (each in passes/<name>.c). */
status pass_shape_infer(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_constfold(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_dce(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_norm(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_attention(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_lower_gemm(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_qfold(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_qconv(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_qmatmul(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_qsink(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_bn_fold(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_conv_taps(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_conv_patches(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_fuse(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_vectorize(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_precision(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_qlut(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_layout(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_epilogue(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_tiling(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_memplan(ir_graph *g, pass_ctx *ctx, diag *d);
status pass_emit(ir_graph *g, pass_ctx *ctx, diag *d);

/* Whether the lowering passes have a rule for an ops.def lay value (layout)
 * or task kind (tiling, emit): the op table's completeness check
 * (tests/unit/test_lowering.c walks every op). */
int pass_layout_has_rule(ir_lay lay);
int pass_tiling_has_rule(om_task_kind kind);
int pass_emit_has_rule(om_task_kind kind);

/* Looks a pass up by name (pass_golden tests); NULL when unknown. */
const pass *pass_find(const char *name);

#endif
