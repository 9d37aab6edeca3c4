/* attention.c - the ATTENTION task's tiles (lower/attention.h).
 *
 * tile_kv keys per block: as many as L0B holds (a block of k or v rows),
 * up to 512 and the keys there are; fewer blocks mean fewer rescales of
 * the running output. tile_q query rows per tile: up to 128, within L0A
 * (the q rows), L0C (the block's scores and the output accumulators) and
 * the UB (the block's probabilities); each tile stages every key block, so
 * taller tiles stage k and v fewer times. Then tile_q shrinks, 16 rows at
 * a time, while there are fewer tiles than AI cores, and finally evens out
 * the query blocks (197 queries in tiles of 128 become two of 112).
 */
#include "lower/attention.h"

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static uint64_t round16(uint64_t a) { return ceil_div(a, 16) * 16; }

/* om_format.h's ATTENTION capacities for tiles (tq, tkv). */
static int fits(const soc_info *soc, uint64_t tq, uint64_t tkv, uint64_t d, uint64_t dv16, uint64_t es) {
  uint64_t w = tkv > d ? tkv : d;
  w = w > dv16 ? w : dv16;
  return tq * d * es <= soc->l0a_bytes && tkv * (d > dv16 ? d : dv16) * es <= soc->l0b_bytes &&
         tq * (tkv + dv16) * 4 <= soc->l0c_bytes && (tq * (tkv + 2) + w) * 4 <= soc->ub_bytes;
}

int attn_tile(const soc_info *soc, uint64_t batch, int64_t sq, int64_t skv, int64_t d, int64_t dv,
              uint64_t esize, attn_tiles *t) {
  if (batch == 0 || sq < 1 || skv < 1 || d < 1 || dv < 1) return -1;
  const uint64_t dv16 = round16((uint64_t)dv), q16 = round16((uint64_t)sq);
  uint64_t tkv = round16((uint64_t)skv) < 512 ? round16((uint64_t)skv) : 512, tq = 0;
  for (; tkv >= 16; tkv -= 16) {
    for (tq = q16 < 128 ? q16 : 128; tq >= 16 && !fits(soc, tq, tkv, (uint64_t)d, dv16, esize); tq -= 16)
      ;
    if (tq >= 16) break;
  }
  if (tkv < 16) return -1;
  const uint64_t cores = soc->ai_cores ? (uint64_t)soc->ai_cores : 1;
  while (tq > 16 && batch * ceil_div((uint64_t)sq, tq) < cores)
    tq -= 16;
  tq = round16(ceil_div((uint64_t)sq, ceil_div((uint64_t)sq, tq)));
  uint64_t tiles = batch * ceil_div((uint64_t)sq, tq);
  *t = (attn_tiles){(int64_t)tq, (int64_t)tkv, tiles < 65535 ? tiles : 65535};
  return 0;
}
