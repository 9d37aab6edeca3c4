/* fuzz_main.c - the libFuzzer entry of one target, chosen at compile time
 * with -DFUZZ_TARGET=<name> (tests/fuzz/CMakeLists.txt builds one executable
 * per target). The om_mutate target also installs its field-aware mutator;
 * om_semantic prints its counts (by outcome and mutation kind) at exit.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_targets.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#ifdef FUZZ_SEMANTIC_STATS
static void semantic_stats(void) { fuzz_om_semantic_stats(stderr); }
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("OMRT_THREADS", "1", 0); /* one fuzzer process is one core */
#ifdef FUZZ_SEMANTIC_STATS
  atexit(semantic_stats);
#endif
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return CAT(fuzz_, FUZZ_TARGET)(data, size); }

#ifdef FUZZ_CUSTOM_MUTATOR
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  return fuzz_om_custom_mutate(data, size, max_size, seed, LLVMFuzzerMutate);
}
#endif
