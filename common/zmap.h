/* zmap.h - the ZMAP partition's bitmap (om_format.h), shared by the loader
 * (runtime/om_load.c, which checks a package before decoding it) and the
 * JSON dump (backend/om_json.c, which reads a package the loader passed).
 * The writer (backend/om_write.c) builds the bitmap. */
#ifndef COMMON_ZMAP_H
#define COMMON_ZMAP_H

#include <stdint.h>

/* Chunks the bitmap bits[0, (nchunks + 7) / 8) keeps; *stray is set to 1
 * when a bit past chunk nchunks - 1 is set (a malformed map), else 0. */
uint64_t zmap_kept(const uint8_t *bits, uint64_t nchunks, int *stray);
/* Decodes nchunks chunks of OM_ZMAP_CHUNK bytes into dst: chunk i is the
 * next chunk of src when bit i is set, else zeros. src must hold
 * zmap_kept(bits, nchunks) chunks. */
void zmap_decode(const uint8_t *bits, uint64_t nchunks, const uint8_t *src, uint8_t *dst);

#endif
