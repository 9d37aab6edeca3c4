/* attention.h - the ATTENTION task's tiles (lower/attention.c): the
 * attention pass fuses only what some tiling fits, and the tiling pass
 * picks the tiles with the same function. */
#ifndef LOWER_ATTENTION_H
#define LOWER_ATTENTION_H

#include <stdint.h>

#include "socs/soc.h"

typedef struct attn_tiles {
  int64_t q, kv;   /* tile_q query rows, tile_kv keys: multiples of 16 */
  uint64_t blocks; /* block_dim: the tiles, at most 65535 */
} attn_tiles;

/* Tiles for `batch` products of Sq queries and Skv keys of D (q, k) and
 * Dv (v) elements in operands of esize bytes, within om_format.h's
 * ATTENTION guarantees for the SoC; 0 with *t_out set, or -1 when none
 * fits. */
int attn_tile(const soc_info *soc, uint64_t batch, int64_t sq, int64_t skv, int64_t d, int64_t dv,
              uint64_t esize, attn_tiles *t_out);

#endif
