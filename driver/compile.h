/* compile.h - the compiler as a library: ONNX file in, om package out.
 *
 * atc_compile runs: SoC file -> ONNX frontend -> --out_nodes -> verifier ->
 * every pass of passes/pipeline.c (verifying the graph after each) -> the om
 * writer; with shape gears (--dynamic_batch_size ...) the frontend and the
 * passes run once per gear, each gear's tasks going into the one package. It prints nothing; each phase is
 * reported through an optional callback so the CLI can print progress and timings, and the result struct
 * carries the figures the CLI reports (memory plan, sizes).
 */
#ifndef DRIVER_COMPILE_H
#define DRIVER_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/om_format.h"
#include "common/status.h"

struct ir_graph; /* ir/ir.h */

typedef struct atc_options {
  const char *model_path; /* --model: the ONNX file; with model_data, only the name in messages */
  /* The ONNX bytes in memory instead of a file (the conformance runner's
   * path); NULL: read model_path. Borrowed for the call. External data is
   * rejected (there is no model directory). */
  const void *model_data;
  size_t model_size;       /* bytes at model_data */
  const char *output_path; /* the .om to write (atomically); NULL: keep in memory only */
  const char *input_shape; /* --input_shape "name:1,3,224,224;..." or NULL; -1 = a gear's dim */
  /* Shape gears (driver/gears.h), at most one of the three, or NULL:
   * --dynamic_batch_size "1,2,4,8", --dynamic_image_size "224,224;320,320",
   * --dynamic_dims "32,32;64,64". The package holds the model compiled for
   * every gear. */
  const char *dynamic_batch_size, *dynamic_image_size, *dynamic_dims;
  /* --input_format: what the dims of rank-4 inputs mean, "NCHW" (the
   * default), "NHWC" or "ND" (recorded in the om's IO partition; H and W
   * for --dynamic_image_size). NULL: NCHW. */
  const char *input_format;
  /* I/O dtypes and layouts (driver/io_types.h), each NULL when not given:
   * --input_fp16_nodes, --is_input_adjust_hw_layout, --output_type,
   * --is_output_adjust_hw_layout. */
  const char *input_fp16_nodes, *is_input_adjust_hw_layout, *output_type, *is_output_adjust_hw_layout;
  /* --insert_op_conf: an aipp_op file (driver/aipp.h), or NULL: AIPP in
   * front of the image inputs it names. */
  const char *insert_op_conf;
  const char *soc_version; /* --soc_version, e.g. "Ascend310" */
  om_precision precision;  /* --precision_mode */
  int high_performance;    /* --op_select_implmode=high_performance (atc's default except under
                              must_keep_origin_dtype): Winograd F(4x4,3x3) for eligible 3x3
                              convs; 0: direct convolution only */
  /* Per-op precision (driver/precision_cfg.h), each NULL when not given:
   * --keep_dtype FILE (nodes kept in their original dtype under the fp16
   * modes), --customize_dtypes FILE (nodes or op types computed in float16
   * or float32), --modify_mixlist FILE (allow_mix_precision's lists,
   * edited). */
  const char *keep_dtype, *customize_dtypes, *modify_mixlist;
  /* --precision_calibration_input "a.bin[,b.bin]": raw sample inputs (one
   * file per model input, as omrun reads them); under allow_mix_precision
   * the nodes that lose the most accuracy on it are kept in fp32
   * (driver/calibrate.c). NULL: none. */
  const char *calibration_input;
  /* --enable_compress_weight: 0 (the default) elides the all-zero 16-byte
   * chunks of the weights (fractal padding, grouped weights' off-diagonal
   * blocks) when that saves at least 1/50 of them; 1 always; -1 never (the
   * om's WEIGHTS then maps in place at load, with no decoded copy). */
  int compress_weight;
  const char *out_nodes; /* --out_nodes "node:0;node2:1" or NULL */
  unsigned fusion_off;   /* fusion rules turned off (--fusion_switch_file; atc_fusion_rule_bit);
                            0: every rule on (the default) */
  /* --disable_reuse_memory=1: every workspace tensor in memory of its own;
   * no_reuse_nodes (OP_NO_REUSE_MEM, "name,OpType,..."; NULL: none): the
   * same for the outputs of the nodes named or of those op types. */
  int no_reuse;
  const char *no_reuse_nodes;
  /* --is_weight_clip=0: a finite f32 constant (weight, immediate) beyond
   * fp16's range becomes +-inf when the fp16 modes store it as fp16;
   * 0 (the default, --is_weight_clip=1 as in ATC): +-65504. */
  int no_weight_clip;
  const char *dump_graph_dir; /* --dump_graph: IR text + DOT after every pass, or NULL */
  /* atc --singleop (driver/singleop.h): the graph comes from build_graph
   * (called with build_user; the graph it makes in *g_out is the compiler's
   * to free, also after an error) instead of an ONNX model, model_path only
   * naming it in messages; singleop is the record the om keeps for
   * AscendCL to match calls against (om_model_def.singleop). NULL: none. */
  status (*build_graph)(void *build_user, struct ir_graph **g_out, diag *d);
  void *build_user;
  const char *singleop;
  const char *cmdline; /* recorded in the om */
  /* atc --mode=3: check that the model is supported without compiling it.
   * Every node the frontend cannot import is reported through on_unsupported
   * (one line naming the node, op type and reason; see onnx_options), then,
   * if every node imported, the passes run up to layout, the last pass that
   * can refuse a model; nothing is tiled, planned, emitted or written. The
   * result is ST_OK when the model would compile. */
  int precheck;
  void (*on_unsupported)(void *user, const char *msg);
  /* Called after each phase ("parse", "shape_infer", ..., "write") with its
   * wall time; may be NULL. */
  void (*on_phase)(void *user, const char *phase, double ms);
  /* Called with one line per precision decision worth reporting (the nodes
   * kept out of fp16 and why: atc --log=info); may be NULL. */
  void (*on_note)(void *user, const char *msg);
  void *user;
} atc_options;

typedef struct atc_result {
  uint64_t workspace_bytes;       /* the memory plan's arena */
  uint64_t workspace_lower_bound; /* max live bytes at any point: no plan can beat it */
  uint64_t weights_bytes;
  uint64_t om_bytes;
  int ntasks, nnodes_in; /* tasks emitted (all gears); ONNX nodes read */
  int ngears;            /* 0 for a static model */
  void *om_data;         /* with output_path NULL: the package (free() it), else NULL */
  char soc_file[1024];   /* the SoC file read (socs/soc.h's search) */
} atc_result;

/* Parses a --precision_mode value; -1 when unknown. */
int atc_precision_from_name(const char *name);
const char *atc_precision_name(om_precision p);

/* The fusion rules --fusion_switch_file names (passes/pass.h): rule i's name
 * and one-line description for i in [0, count), NULL past the end; the
 * bit of `name` for atc_options.fusion_off, every bit for "ALL", 0 when
 * there is no such rule. */
const char *atc_fusion_rule(int i, const char **what);
unsigned atc_fusion_rule_bit(const char *name);

status atc_compile(const atc_options *opt, atc_result *res, diag *d);

#endif
