/* replay.c - replays the fuzz regression corpus through the fuzz targets, in
 * any build (ctest fuzz/regressions; under ASan/UBSan in CI).
 *
 *   fuzz_replay DIR_OR_FILE...
 *
 * A file's target is the name of its directory (regressions/<target>/<file>);
 * a directory is walked one level deep, and a directory named after a target
 * replays every file in it. Per input it asserts what issue 5 promises: no
 * crash (a sanitizer report or a signal ends the process, and ctest sees it),
 * and every refusal carries a specific message: non-empty, naming the model
 * (FUZZ_ONNX_LABEL) for the ONNX targets or the om header / partition /
 * runtime call for the om targets ("jpeg: " / "png: " for the decoders), and
 * saying more than that name.
 * Prints one line per input with the outcome; exit status 1 if any check
 * failed.
 *
 *   fuzz_replay --dump-compile FILE OUT.onnx   writes a compile input's model
 *
 *   fuzz_replay --sweep FILE.om [PREFIX_BYTES [RANDOM [TRUNCATIONS]]]
 * The om damage sweep of issue 5 (tests/fuzz/sweep.sh): truncates at
 * TRUNCATIONS (default 1000) random lengths, flips every bit of RANDOM
 * (default 4096) random byte positions, then every bit of the first
 * PREFIX_BYTES (default 65536), in one buffer loaded from memory with each
 * flip applied in place and reverted (no file I/O per case); each damaged
 * copy must be refused with a message naming the om header or partition
 * ("om ..."), or, if it loads
 * (a flip no checksum covers), give outputs identical to the original's on
 * the same input. Prints the counts; exit status 1 on any violation.
 *
 *   fuzz_replay --semantic N [SEED]
 * N om_semantic recipes drawn from a generator seeded with SEED (default 1):
 * each a seed package and 1..8 random mutation records. Every refusal must
 * carry a specific message, as above; a write into the read-only package
 * or inputs ends the process. Prints the counts by outcome and mutation
 * kind (ctest fuzz/om_semantic; tests/fuzz/README.md).
 */
#include <stdint.h>
#include "omrt.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_targets.h"

typedef struct target {
  const char *name;
  int (*run)(const uint8_t *, size_t);
  const char *must_name; /* a refusal message starts with this */
} target;

static const target targets[] = {
    {"onnx", fuzz_onnx, FUZZ_ONNX_LABEL ": "},
    {"compile", fuzz_compile, FUZZ_ONNX_LABEL ": "},
    {"om", fuzz_om, "om"},
    {"om_mutate", fuzz_om_mutate, "om"},
    {"om_semantic", fuzz_om_semantic, "om"},
    {"jpeg", fuzz_jpeg, "jpeg: "},
    {"png", fuzz_png, "png: "},
};

static int failures, inputs;

static const target *target_named(const char *name) {
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
    if (!strcmp(targets[i].name, name)) return &targets[i];
  return NULL;
}

static uint8_t *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *buf = NULL;
  size_t cap = 0, n = 0, got;
  do {
    if (n == cap) {
      uint8_t *nb = realloc(buf, cap = cap ? 2 * cap : 65536);
      if (!nb) break;
      buf = nb;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  fclose(f);
  *size = n;
  return buf ? buf : malloc(1);
}

static void replay_file(const target *t, const char *path) {
  size_t size = 0;
  uint8_t *data = read_all(path, &size);
  inputs++;
  if (!data) {
    printf("FAIL %s: cannot read\n", path);
    failures++;
    return;
  }
  t->run(data, size);
  free(data);
  const char *msg = fuzz_last.msg;
  size_t prefix = strlen(t->must_name);
  if (!fuzz_last.rejected) {
    printf("ok   %s [%s]: accepted\n", path, t->name);
  } else if (strncmp(msg, t->must_name, prefix) != 0 || strlen(msg) < prefix + 12) {
    printf("FAIL %s [%s]: refusal message is not specific: \"%s\"\n", path, t->name, msg);
    failures++;
  } else {
    printf("ok   %s [%s]: %s\n", path, t->name, msg);
  }
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s && s[1] ? s + 1 : path;
}

static void replay_dir(const char *dir, const target *t) {
  DIR *d = opendir(dir);
  if (!d) {
    printf("FAIL %s: cannot open\n", dir);
    failures++;
    return;
  }
  struct dirent *e;
  char **names = NULL;
  size_t n = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char **nn = realloc(names, (n + 1) * sizeof *names);
    if (!nn) break;
    names = nn;
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  for (size_t i = 0; i < n; i++) { /* sorted would be nicer; order does not matter */
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
      const target *sub = target_named(names[i]);
      if (sub) replay_dir(path, sub);
    } else if (t && strcmp(names[i], "README.md") != 0) {
      replay_file(t, path);
    }
    free(names[i]);
  }
  free(names);
}

/* Runs m once on a fixed input pattern; returns malloc'd concatenated outputs. */
static uint8_t *run_model(omrt_model *m, size_t *bytes_out) {
  int nin = omrt_model_num_inputs(m), nout = omrt_model_num_outputs(m);
  const void *in[64];
  void *out[64];
  size_t total = 0, off = 0;
  omrt_tensor_desc d;
  if (nin > 64 || nout > 64) return NULL;
  for (int i = 0; i < nout; i++)
    total += omrt_model_output(m, i, &d) == OMRT_OK ? d.bytes : 0;
  uint8_t *all = calloc(1, total + 1);
  for (int i = 0; i < nin; i++) {
    omrt_model_input(m, i, &d);
    uint8_t *p = malloc(d.bytes + 1);
    for (size_t k = 0; p && k < d.bytes; k++)
      p[k] = (uint8_t)(k % 251 == 0 ? 0 : 0x3c); /* f16/f32 ~1.0 */
    in[i] = p;
  }
  for (int i = 0; i < nout; i++) {
    omrt_model_output(m, i, &d);
    out[i] = all + off;
    off += d.bytes;
  }
  omrt_context *ctx = NULL;
  omrt_status s = omrt_context_new(m, &ctx);
  if (s == OMRT_OK) s = omrt_execute(ctx, in, out);
  omrt_context_free(ctx);
  for (int i = 0; i < nin; i++)
    free((void *)in[i]);
  if (s != OMRT_OK) {
    free(all);
    return NULL;
  }
  *bytes_out = total;
  return all;
}

static int sweep(const char *path, size_t prefix, size_t nrandom, size_t ntrunc) {
  size_t size = 0;
  uint8_t *file = read_all(path, &size);
  if (!file) return fprintf(stderr, "%s: cannot read\n", path), 1;
  uint8_t *good = aligned_alloc(64, (size + 64) / 64 * 64), *buf = aligned_alloc(64, (size + 64) / 64 * 64);
  memcpy(good, file, size);
  free(file);
  omrt_model *m = NULL;
  if (omrt_model_load_memory(good, size, NULL, &m) != OMRT_OK)
    return fprintf(stderr, "%s: %s\n", path, omrt_last_error()), 1;
  size_t ref_bytes = 0;
  uint8_t *ref = run_model(m, &ref_bytes);
  omrt_model_free(m);
  if (!ref) return fprintf(stderr, "%s: reference run failed: %s\n", path, omrt_last_error()), 1;
  /* Cases in order of cost: truncations (refused by the length checks),
   * then the random positions, then the prefix (bytes past the small
   * partitions are in WEIGHTS, whose refusal needs a CRC over all of it), so
   * a run cut short has covered the cheap kinds; progress lines carry the
   * counts so far. */
  long refused = 0, loaded_same = 0, bad = 0;
  uint64_t rng = 0x5eed;
  size_t nprefix = (prefix < size ? prefix : size) * 8, nrand = nrandom * 8;
  size_t total = ntrunc + nrand + nprefix;
  memcpy(buf, good, size);
  for (size_t f = 0; f < total; f++) {
    size_t len = size, byte = 0;
    int bit = 0;
    if (f < ntrunc) {
      rng = rng * 6364136223846793005u + 1442695040888963407u;
      len = (size_t)((rng >> 16) % size);
    } else if (f < ntrunc + nrand) {
      size_t k = f - ntrunc;
      if (k % 8 == 0) rng = rng * 6364136223846793005u + 1442695040888963407u;
      byte = (size_t)((rng >> 16) % size), bit = (int)(k % 8);
    } else {
      size_t k = f - ntrunc - nrand;
      byte = k / 8, bit = (int)(k % 8);
    }
    if (len == size) buf[byte] ^= (uint8_t)(1u << bit);
    omrt_model *dm = NULL;
    omrt_status s = omrt_model_load_memory(buf, len, NULL, &dm);
    if (s != OMRT_OK) {
      const char *msg = omrt_last_error();
      if (strncmp(msg, "om", 2) != 0 || strlen(msg) < 16) {
        bad++;
        printf("FAIL byte %zu bit %d len %zu: refusal without a specific message: \"%s\"\n", byte, bit, len,
               msg);
      }
      refused++;
    } else {
      size_t ob = 0;
      uint8_t *o = run_model(dm, &ob);
      if (!o || ob != ref_bytes || memcmp(o, ref, ob) != 0) {
        bad++;
        printf("FAIL byte %zu bit %d len %zu: loaded but outputs differ\n", byte, bit, len);
      } else {
        loaded_same++;
      }
      free(o);
    }
    omrt_model_free(dm);
    if (len == size) buf[byte] ^= (uint8_t)(1u << bit);
    if ((f + 1) % 20000 == 0 || f + 1 == ntrunc || f + 1 == ntrunc + nrand) {
      printf("sweep progress: %zu/%zu cases (%s): %ld refused, %ld loaded with identical outputs, %ld "
             "violations\n",
             f + 1, total,
             f < ntrunc           ? "truncations done"
             : f < ntrunc + nrand ? "random flips"
                                  : "prefix flips",
             refused, loaded_same, bad);
      fflush(stdout);
    }
  }
  size_t nflips = nrand + nprefix;
  printf("sweep %s (%zu bytes): %zu bit flips + %zu truncations: %ld refused, %ld loaded with "
         "identical outputs, %ld violations\n",
         path, size, nflips, ntrunc, refused, loaded_same, bad);
  free(ref);
  free(good);
  free(buf);
  return bad ? 1 : 0;
}

/* A refusal's message names the om part or runtime call and says more. */
static int specific(const char *msg) { return strncmp(msg, "om", 2) == 0 && strlen(msg) >= 16; }

static int semantic(uint64_t n, uint64_t rng) {
  const target *t = target_named("om_semantic");
  uint8_t recipe[1 + 12 * 9]; /* up to 9 mutations of 12 bytes */
  long bad = 0;
  for (uint8_t k = 0; k < FUZZ_OM_SEMANTIC_SEEDS; k++) { /* each seed package as it is: loads and runs, */
    t->run(&k, 1); /* but for indices its random inputs put outside their axis, which execute refuses */
    if (fuzz_last.rejected && !strstr(fuzz_last.msg, "in the input data is out of range"))
      bad++, printf("FAIL seed %u: %s\n", k, fuzz_last.msg);
  }
  for (uint64_t i = 0; i < n; i++) {
    size_t len = 0;
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    const unsigned k = (unsigned)((rng >> 33) % 16); /* half of them one mutation, else 2..9 */
    len = 1 + 12 * (k < 8 ? 1 : k - 6);              /* 12 bytes cover a record and its value */
    for (size_t k = 0; k < len; k++) {
      rng = rng * 6364136223846793005u + 1442695040888963407u;
      recipe[k] = (uint8_t)(rng >> 40);
    }
    t->run(recipe, len);
    if (fuzz_last.rejected && !specific(fuzz_last.msg)) {
      bad++;
      printf("FAIL recipe %llu: refusal without a specific message: \"%s\"\n", (unsigned long long)i,
             fuzz_last.msg);
    }
    if ((i + 1) % 100000 == 0) fuzz_om_semantic_stats(stdout), fflush(stdout);
  }
  fuzz_om_semantic_stats(stdout);
  printf("fuzz_replay --semantic: %llu recipes, %ld without a specific refusal\n", (unsigned long long)n,
         bad);
  return bad ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[1], "--semantic")) {
    setenv("OMRT_THREADS", "1", 0);
    return semantic(strtoull(argv[2], NULL, 0), argc > 3 ? strtoull(argv[3], NULL, 0) : 1);
  }
  if (argc >= 3 && !strcmp(argv[1], "--sweep"))
    return sweep(argv[2], argc > 3 ? strtoull(argv[3], NULL, 0) : 65536,
                 argc > 4 ? strtoull(argv[4], NULL, 0) : 4096, argc > 5 ? strtoull(argv[5], NULL, 0) : 1000);
  setenv("OMRT_THREADS", "1", 0);
  if (argc == 4 && !strcmp(argv[1], "--dump-compile")) {
    size_t size = 0, out_size = 0;
    uint8_t *data = read_all(argv[2], &size), *out = NULL;
    if (!data || fuzz_compile_model_bytes(data, size, &out, &out_size) != 0) return 1;
    FILE *f = fopen(argv[3], "wb");
    int ok = f && fwrite(out, 1, out_size, f) == out_size;
    if (f) fclose(f);
    free(data);
    free(out);
    return ok ? 0 : 1;
  }
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      printf("FAIL %s: not found\n", argv[i]);
      failures++;
    } else if (S_ISDIR(st.st_mode)) {
      replay_dir(argv[i], target_named(base_name(argv[i])));
    } else {
      char dir[4096];
      snprintf(dir, sizeof dir, "%s", argv[i]);
      char *slash = strrchr(dir, '/');
      if (slash) *slash = '\0';
      const target *t = target_named(slash ? base_name(dir) : ".");
      if (!t) {
        printf("FAIL %s: its directory names no target\n", argv[i]);
        failures++;
      } else {
        replay_file(t, argv[i]);
      }
    }
  }
  printf("fuzz_replay: %d inputs, %d failed\n", inputs, failures);
  return failures ? 1 : 0;
}
