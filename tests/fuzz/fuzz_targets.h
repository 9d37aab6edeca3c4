/* fuzz_targets.h - the fuzz targets, shared by the libFuzzer executables
 * (fuzz_main.c, clang, ATC_FUZZ=ON) and the regression replayer (replay.c,
 * any compiler, a ctest in the normal build).
 *
 * Each target takes one input and runs it through the same entry points a
 * user's file reaches: the ONNX frontend, the whole compiler, the om loader
 * and executor. A target never fails on its own: a crash, a sanitizer report,
 * a hang or a huge allocation is the finding. What the target does report is
 * the outcome of the last call (fuzz_last), so the replayer can check issue
 * 5 item 4: every rejection carries a non-empty, specific message that names
 * the file (the frontend's label) or the om partition.
 *
 * Targets (the name is also the regressions/<name>/ directory):
 *   onnx       raw bytes -> onnx_load_memory -> ir_verify
 *   compile    bytes -> mutations of a built-in seed model -> atc_compile in memory
 *   om         raw bytes -> omrt_model_load_memory -> context + execute on zeros
 *   om_mutate  an om file whose header length and CRCs are repaired before
 *              loading (so mutations reach the field checks and the kernels)
 *   om_semantic  a recipe of semantic mutations of a built-in seed package
 *              (fields of tensors, tasks, params, vector programs, the model
 *              definition), CRCs repaired, loaded from read-only memory and
 *              run on read-only inputs (fuzz_om_semantic.c)
 *   jpeg       raw bytes -> the DVPP JPEG decoder (acl/dvpp_jpeg.h): headers,
 *              then a whole decode of pictures up to 1 Mpixel (fuzz_jpeg.c)
 *   png        raw bytes -> the DVPP PNG decoder (acl/dvpp_png.h): IHDR, then
 *              a whole decode of pictures up to 1 Mpixel (fuzz_png.c)
 */
#ifndef TESTS_FUZZ_FUZZ_TARGETS_H
#define TESTS_FUZZ_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The label the ONNX targets give the frontend: every message must name it. */
#define FUZZ_ONNX_LABEL "fuzz.onnx"

typedef struct fuzz_outcome {
  int rejected;   /* 1: the input was refused with a status */
  char msg[1100]; /* the message of the refusal ("" when accepted) */
} fuzz_outcome;

/* The outcome of the last target call on this thread. */
extern _Thread_local fuzz_outcome fuzz_last;

int fuzz_onnx(const uint8_t *data, size_t size);
int fuzz_compile(const uint8_t *data, size_t size);
int fuzz_om(const uint8_t *data, size_t size);
int fuzz_om_mutate(const uint8_t *data, size_t size);
int fuzz_om_semantic(const uint8_t *data, size_t size);
int fuzz_jpeg(const uint8_t *data, size_t size);
int fuzz_png(const uint8_t *data, size_t size);
/* om_semantic's seed packages: a recipe's first byte picks one (mod this). */
enum { FUZZ_OM_SEMANTIC_SEEDS = 6 };

/* om_semantic's counts so far (mutants and outcomes, mutations by kind), as two lines. */
void fuzz_om_semantic_stats(FILE *f);

/* The om_mutate target's structure-aware mutator: with probability 1/2 sets
 * one 32/64-bit field of a MODEL, TENSORS or TASKS record to an interesting
 * value, otherwise applies `fallback` (libFuzzer's generic mutator). */
size_t fuzz_om_custom_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed,
                             size_t (*fallback)(uint8_t *, size_t, size_t));

/* Recomputes file_len, every in-bounds partition CRC and the header CRC of
 * an om image in place (no-op when it does not start with the magic). */
void fuzz_om_repair(uint8_t *data, size_t size);

/* Writes a compile-target input's model (after its mutations) as ONNX bytes
 * into a malloc'd buffer, for debugging a finding; 0 on success. */
int fuzz_compile_model_bytes(const uint8_t *data, size_t size, uint8_t **out, size_t *out_size);

#endif
