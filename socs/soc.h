/* soc.h - a target SoC as described by socs/<name>.yaml.
 *
 * The YAML file (read with libyaml) is a flat mapping:
 *   name: Ascend310          ai_cores: 2          clock_mhz: 1000
 *   cube: {m: 16, n: 16, k: 16}
 *   buffers: {l1: 1048576, l0a: 65536, l0b: 65536, l0c: 262144, ub: 262144}   # bytes per AI core
 *   vector_bytes: 256        # bytes the vector unit processes per cycle
 *   aipp: {formats: "YUV420SP_U8 RGB888_U8", scaling: false}
 *                            # AIPP (atc --insert_op_conf): the input formats
 *                            # the SoC's AIPP reads, and whether it scales
 *   dvpp: {pngd: false}      # DVPP: whether it has the PNG decoder (libascendcl's
 *                            # PNGD calls check the SoC name the same way)
 * Unknown keys are errors (a misspelt key must not be silently ignored).
 */
#ifndef SOCS_SOC_H
#define SOCS_SOC_H

#include <stdint.h>

#include "common/status.h"

typedef struct soc_info {
  char name[64];
  char path[1024];                                              /* the file it was read from */
  int ai_cores;                                                 /* 1..1024 */
  int cube_m, cube_n, cube_k;                                   /* 16 each on every Da Vinci core */
  uint32_t l1_bytes, l0a_bytes, l0b_bytes, l0c_bytes, ub_bytes; /* per AI core */
  uint32_t vector_bytes;
  double clock_mhz;
  char aipp_formats[160]; /* AIPP input formats, space-separated ("YUV420SP_U8 RGB888_U8") */
  int aipp_scaling;       /* 1: AIPP scales (resize, aclmdlSetAIPPScfParams) */
  int dvpp_pngd;          /* 1: DVPP decodes PNG (acldvppPngDecodeAsync) */
} soc_info;

/* Loads <name>.yaml, searching $ATC_SOC_DIR, then the share/atc/socs of
 * the prefix the running program is installed in (found from its own path,
 * so a moved prefix works), then the source tree's socs/ (for the build
 * tree). An unknown name lists the available ones in the message. */
status soc_load(const char *name, soc_info *out, diag *d);
/* Loads one YAML file. */
status soc_load_file(const char *path, soc_info *out, diag *d);

#endif
