/* zmap.c - the ZMAP bitmap (see zmap.h). */
#include "zmap.h"

#include <string.h>

#include "om_format.h"

uint64_t zmap_kept(const uint8_t *bits, uint64_t nchunks, int *stray) {
  uint64_t map_bytes = (nchunks + 7) / 8, kept = 0;
  for (uint64_t i = 0; i < map_bytes; i++)
    kept += (uint64_t)__builtin_popcount(bits[i]);
  *stray = nchunks % 8 && bits[map_bytes - 1] >> (nchunks % 8);
  return kept;
}

void zmap_decode(const uint8_t *bits, uint64_t nchunks, const uint8_t *src, uint8_t *dst) {
  for (uint64_t c = 0; c < nchunks; c++, dst += OM_ZMAP_CHUNK) {
    if (bits[c / 8] >> (c % 8) & 1)
      memcpy(dst, src, OM_ZMAP_CHUNK), src += OM_ZMAP_CHUNK;
    else
      memset(dst, 0, OM_ZMAP_CHUNK);
  }
}
