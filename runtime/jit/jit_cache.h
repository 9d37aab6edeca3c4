/* jit_cache.h - libomrt_jit's optional on-disk cache of compiled vector
 * programs (runtime/jit/jit_cache.c).
 *
 * An entry is one object file (the code of one program body) stored under
 * its key: a byte string the JIT builds from everything the code depends on
 * (LLVM version, target triple, host CPU name and features, the code
 * generator's settings, and the program's unoptimized LLVM IR, which holds
 * the program, its broadcast pattern, how exp is computed and the function's
 * name). The file name is a hash of the key; the file holds the whole key,
 * so two keys that share a name never mix.
 *
 * A cache file is input from disk and is never trusted: jitc_load returns
 * an entry only when the directory and the file belong to the current user
 * and nobody else may write them, the file is a regular file (no symlink)
 * of a sane size, its header, lengths and CRC32C checksums are right and
 * the stored key equals the wanted key byte for byte; anything else is a
 * miss. jitc_store writes a temporary file in the directory and renames it
 * over the entry (readers see the old entry or the whole new one); errors
 * are not reported, a cache that cannot be written is just not filled.
 *
 * File layout (little-endian):
 *   0   8 bytes  magic "OMRTJITC"
 *   8   u32      format version (1)
 *   12  u32      key bytes K
 *   16  u64      object bytes N
 *   24  u32      CRC32C of the K + N bytes after the header
 *   28  u32      CRC32C of bytes 0..27
 *   32  K bytes  key, then N bytes the object file; the file is exactly 32 + K + N bytes.
 */
#ifndef RUNTIME_JIT_JIT_CACHE_H
#define RUNTIME_JIT_JIT_CACHE_H

#include <stddef.h>

enum { JITC_MAX_FILE = 64 << 20 }; /* larger files are rejected (bytes) */

/* Creates dir (mode 0700) when it does not exist and checks that it is a
 * directory owned by the current user and not writable by group or others.
 * Returns 0, or -1 with a reason in why[0..why_n). */
int jitc_dir_ok(const char *dir, char *why, size_t why_n);

/* The object stored under key in dir, malloc'd (free() it), its size in
 * *size_out; NULL on a miss or on any invalid entry. */
void *jitc_load(const char *dir, const void *key, size_t key_n, size_t *size_out);

/* Stores obj under key in dir; 0 on success, -1 when it could not. */
int jitc_store(const char *dir, const void *key, size_t key_n, const void *obj, size_t obj_n);

#endif
