/* precision_cfg.h - atc's per-op precision files (driver/precision_cfg.c):
 *
 *   --keep_dtype=FILE      one entry a line: an ONNX node name, or
 *                          "OpType::Name" for every node of op type Name;
 *                          blank lines and lines starting with '#' skipped.
 *   --customize_dtypes=FILE one entry a line, as ATC writes them:
 *                            Name::InputDtype:d1,...,OutputDtype:d1,...
 *                            OpType::Type:InputDtype:d1,...,OutputDtype:d1,...
 *                          a dtype per input and per output of the ONNX
 *                          node (the precision pass checks the counts);
 *                          every d float16 (the node computes in fp16) or
 *                          every d float32 (in fp32): a node here computes
 *                          in one precision, so mixed lines and other
 *                          dtypes are refused; blanks and '#' as above.
 *   --modify_mixlist=FILE  JSON, as CANN writes it:
 *                            {"black-list": {"to-remove": [...], "to-add": [...]},
 *                             "white-list": {...}, "gray-list": {"to-add": [...]}}
 *                          op types moved between allow_mix_precision's
 *                          lists (passes/precision.h has the defaults): a
 *                          to-add moves the op type onto that list, a
 *                          to-remove moves it from that list to the gray
 *                          list (it must be on it).
 * Op types are ONNX's (Conv, Softmax, ReduceMean, ...) or the IR's own
 * (LayerNorm, FusedAttention); an unknown one is an error. Node names are
 * checked against the model by the precision pass. Every error is one
 * line naming the file, the line (and the JSON field) and the value.
 */
#ifndef DRIVER_PRECISION_CFG_H
#define DRIVER_PRECISION_CFG_H

#include "common/arena.h"
#include "common/status.h"
#include "passes/pass.h"

/* Reads the files (each NULL when not given) into *cfg, whose entries and
 * strings are allocated from a and live as long as it. */
status atc_precision_cfg(const char *keep_dtype, const char *customize_dtypes, const char *modify_mixlist,
                         arena *a, prec_cfg *cfg, diag *d);

#endif
