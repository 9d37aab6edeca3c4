/* singleop.h - atc --singleop: a single-operator description file compiled
 * into one op model per description (driver/singleop.c).
 *
 * The file is AscendCL's JSON: an array of operator descriptions
 *   {"op": "MatMul", "name": "matmul",                      (name optional)
 *    "input_desc":  [{"format": "ND", "shape": [3, 4], "type": "float16"}, ...],
 *    "output_desc": [{"format": "ND", "shape": [3, 5], "type": "float16"}],
 *    "attr": [{"name": "transpose_x1", "type": "bool", "value": false}, ...]}
 * Each description's operator (an Ascend IR op type: Add, MatMul, Cast,
 * SoftmaxV2, ...; singleop.c's table lists them and their attributes)
 * becomes a small IR graph whose inputs are the described inputs, compiled
 * by the normal pipeline (atc_compile) into DIR/NAME.om, NAME being the
 * description's "name" or ATC's default
 * "INDEX_OP_{dtype}_{format}_{dims...}..." over the inputs then outputs
 * (AscendCL's aclDataType and aclFormat numbers). The om records the op
 * type, the tensor descriptions and every attribute value in its model
 * definition's `singleop` string (docs/om-format.md), which libascendcl
 * matches aclopExecuteV2 calls against.
 *
 * Every error is one line naming the file, the description's index and op
 * type, and the field: "ops.json: op 2 (MatMul): input_desc[1].shape: ...".
 */
#ifndef DRIVER_SINGLEOP_H
#define DRIVER_SINGLEOP_H

#include "common/status.h"
#include "driver/compile.h"

/* Called after each op model is written with its path and compile result. */
typedef void (*atc_singleop_written)(void *user, const char *om_path, const atc_result *res);

/* Compiles every description of json_path into out_dir (which must exist).
 * base carries the other options (soc_version, precision, high_performance,
 * cmdline, on_phase ...); its model_path and output_path are ignored. The
 * descriptions are all checked before any om is written; an error stops at
 * the first bad description (op models already written stay). */
status atc_singleop(const char *json_path, const char *out_dir, const atc_options *base,
                    atc_singleop_written on_written, void *user, diag *d);

#endif
