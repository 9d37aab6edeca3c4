/* soc.h - a target SoC as described by socs/<name>.yaml.
 *
 * The YAML file (read with libyaml) is a flat mapping:
 *   name: Ascend310          ai_cores: 2          clock_mhz: 1000
 *   cube: {m: 16, n: 16, k: 16}
 *   buffers: {l1: 1048576, l0a: 65536, l0b: 65536, l0c: 262144, ub: 262144}   # bytes per AI core
 *   vector_bytes: 256        # bytes the vector unit processes per cycle
 * Unknown keys are errors (a misspelt key must not be silently ignored).
 */
#ifndef SOCS_SOC_H
#define SOCS_SOC_H

#include <stdint.h>

#include "common/status.h"

typedef struct soc_info {
  char name[64];
  int ai_cores;                                                 /* 1..1024 */
  int cube_m, cube_n, cube_k;                                   /* 16 each on every Da Vinci core */
  uint32_t l1_bytes, l0a_bytes, l0b_bytes, l0c_bytes, ub_bytes; /* per AI core */
  uint32_t vector_bytes;
  double clock_mhz;
} soc_info;

/* Loads socs/<name>.yaml, searching $ATC_SOC_DIR, then the source tree's
 * socs/, then the installed share/atc/socs. An unknown name lists the
 * available ones in the message. */
status soc_load(const char *name, soc_info *out, diag *d);
/* Loads one YAML file. */
status soc_load_file(const char *path, soc_info *out, diag *d);

#endif
