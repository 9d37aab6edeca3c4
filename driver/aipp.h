/* aipp.h - atc --insert_op_conf: ATC's aipp_op configuration file, and
 * the AIPP node it puts in front of each image input it names.
 *
 * atc_aipp_parse reads the file once; atc_aipp_apply rewrites each
 * imported graph (before --input_fp16_nodes and the passes): input r of
 * an aipp_op block becomes the raw uint8 image (static: [N, H, W, C] of
 * the source image, YUV420SP as [N, H*3/2, W, 1]; dynamic: [N,
 * max_src_image_size]), read by an Aipp node whose output is the value
 * the model's first layer read before. Errors are one line naming the
 * file, the line, the key and the value.
 */
#ifndef DRIVER_AIPP_H
#define DRIVER_AIPP_H

#include "common/arena.h"
#include "common/om_format.h"
#include "common/status.h"
#include "ir/ir.h"
#include "socs/soc.h"

/* The name of dynamic AIPP's parameters input (AscendCL's
 * ACL_DYNAMIC_AIPP_NAME); a second one is "..._1", and so on. */
#define ATC_AIPP_PARAMS_INPUT "ascend_dynamic_aipp_data"

typedef struct atc_aipp_op {
  int line;                                       /* of "aipp_op {" */
  int dynamic;                                    /* aipp_mode: dynamic */
  int rank;                                       /* related_input_rank */
  int64_t max_src_image_size;                     /* dynamic: bytes per image */
  om_aipp_params p;                               /* static: as read; sizes 0 = not given */
  int src_line, crop_line, pad_line, format_line; /* where the keys were, for messages (0: absent) */
  int crop_on_line, pad_on_line;                  /* of the crop and padding switches */
} atc_aipp_op;

typedef struct atc_aipp_conf {
  const char *path;
  atc_aipp_op *ops; /* [nops], in the arena */
  int nops;
} atc_aipp_conf;

/* Reads path (aipp_op { key: value ... } blocks) into *conf, allocating in
 * a. Unknown keys, values out of range, keys of the other mode and what
 * soc's AIPP lacks (an input format, scaling) are errors. */
status atc_aipp_parse(const char *path, const soc_info *soc, arena *a, atc_aipp_conf *conf, diag *d);

/* The rules ATC sets for AIPP with shape gears (gear_kind: om_gear_kind,
 * 0 without): with image size gears a static block has no crop, no padding
 * and no src_image_size_w/h (the image is each gear's H x W). */
status atc_aipp_check_gears(const atc_aipp_conf *conf, int gear_kind, diag *d);

/* Puts the AIPP of every block in front of its input of g (each gear's
 * graph alike). nhwc (--input_format=NHWC): the inputs are [N, H, W, C];
 * AIPP gives [N, C, H, W] and a Transpose makes the input from it, which
 * the model's own Transposes back to NCHW cancel (they read AIPP's image). */
status atc_aipp_apply(ir_graph *g, const atc_aipp_conf *conf, int nhwc, diag *d);

/* 1 when graph input v is the raw image of an Aipp node; 2 when that AIPP
 * is dynamic (v is [N, bytes]). */
int atc_aipp_input_kind(const ir_graph *g, const ir_value *v);

#endif
