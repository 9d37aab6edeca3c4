/* test_jit_cache.c - libomrt_jit's dedup and on-disk cache (runtime/jit/
 * jit_cache.h, omrt_jit_set_cache), built only with the JIT.
 *
 *   1. jit_cache.c alone: an entry stored is read back; a truncated file, a
 *      flipped byte anywhere, another key under the same name, a file
 *      writable by others and a symlink are all misses.
 *   2. Through models: a cold load compiles and fills the cache (one entry
 *      per distinct body); a new jit on the same directory reads it (hit,
 *      nothing compiled) and gives the interpreter's exact output; a second
 *      model with the same program shares the loaded code; a corrupt entry
 *      (bad checksum) and a well-formed entry whose object LLVM cannot load
 *      are ignored: the program is compiled, runs right, and the entry is
 *      rewritten; a directory others may write is refused by name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "runtime/jit/jit_cache.h"
#include "vprog_pkg.h"

static char root[256], dir[300];

/* The single *.o entry of dir into path (returns how many there are). */
static int entries(char *path, size_t n) {
  DIR *d = opendir(dir);
  int count = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len > 2 && strcmp(e->d_name + len - 2, ".o") == 0) {
      count++;
      snprintf(path, n, "%s/%s", dir, e->d_name);
    }
  }
  if (d) closedir(d);
  return count;
}

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)len);
  *n = buf && fread(buf, 1, (size_t)len, f) == (size_t)len ? (size_t)len : 0;
  fclose(f);
  return buf;
}

static void spit(const char *path, const void *p, size_t n, mode_t mode) {
  unlink(path);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (fd < 0 || write(fd, p, n) != (ssize_t)n) fprintf(stderr, "cannot write %s\n", path);
  if (fd >= 0) fchmod(fd, mode), close(fd);
}

static void test_cache_file(void) {
  static const char key[] = "key one", obj[] = "an object file";
  size_t n = 0;
  CHECKF(jitc_store(dir, key, sizeof key, obj, sizeof obj) == 0, "store");
  void *got = jitc_load(dir, key, sizeof key, &n);
  CHECKF(got && n == sizeof obj && !memcmp(got, obj, n), "stored entry read back");
  free(got);
  CHECKF(!jitc_load(dir, "key two", 8, &n), "a missing key is a miss");
  char path[512];
  CHECKF(entries(path, sizeof path) == 1, "one entry");
  size_t len;
  uint8_t *file = slurp(path, &len);
  CHECKF(file && len == 32 + sizeof key + sizeof obj, "file layout: %zu bytes", len);
  if (!file) return;
  /* Every single flipped byte (header, key, object) is a miss. */
  int bad = 0;
  for (size_t i = 0; i < len; i++) {
    file[i] ^= 0x20;
    spit(path, file, len, 0600);
    void *p = jitc_load(dir, key, sizeof key, &n);
    bad += p != NULL;
    free(p);
    file[i] ^= 0x20;
  }
  CHECKF(bad == 0, "%d of %zu single-byte corruptions were accepted", bad, len);
  for (size_t cut = 0; cut < len; cut += 7) { /* truncated */
    spit(path, file, cut, 0600);
    void *p = jitc_load(dir, key, sizeof key, &n);
    CHECKF(!p, "a file truncated to %zu bytes was accepted", cut);
    free(p);
  }
  /* Another key whose entry has the same name (a hash clash): its checksums are right, the key is not. */
  uint8_t *other = malloc(len);
  memcpy(other, file, len);
  other[32] ^= 1;
  uint32_t c = crc32c(0, other + 32, len - 32);
  for (int k = 0; k < 4; k++)
    other[24 + k] = (uint8_t)(c >> (8 * k));
  spit(path, other, len, 0600);
  void *p = jitc_load(dir, key, sizeof key, &n);
  CHECKF(!p, "an entry with another key was accepted");
  free(p);
  free(other);
  spit(path, file, len, 0622); /* writable by others */
  p = jitc_load(dir, key, sizeof key, &n);
  CHECKF(!p, "an entry others may write was accepted");
  free(p);
  char target[600];
  snprintf(target, sizeof target, "%s/elsewhere", root);
  spit(target, file, len, 0600);
  unlink(path);
  CHECKF(symlink(target, path) == 0, "symlink: %s", strerror(errno));
  p = jitc_load(dir, key, sizeof key, &n);
  CHECKF(!p, "a symlinked entry was followed");
  free(p);
  unlink(path);
  unlink(target);
  spit(path, file, len, 0600);
  p = jitc_load(dir, key, sizeof key, &n);
  CHECKF(p != NULL, "the restored entry is read again");
  free(p);
  unlink(path);
  free(file);
}

/* SiLU over 1000 f32 elements: x * sigmoid(x). */
static const om_vinstr silu[4] = {{.op = VOP_LOAD, .dtype = DT_FLOAT32, .dst = 0, .a = 0},
                                  {.op = VOP_SIGMOID, .dtype = DT_FLOAT32, .dst = 1, .a = 0},
                                  {.op = VOP_MUL, .dtype = DT_FLOAT32, .dst = 2, .a = 0, .b = 1},
                                  {.op = VOP_STORE, .dtype = DT_FLOAT32, .a = 0, .b = 2}};
enum { N = 1000 };
static void *pkg;
static size_t pkg_size;
static float x[N], want[N];

/* Loads pkg through jit (NULL: interpreted), runs it, checks the output
 * against want (when have_want) and returns the load's stats. */
static omrt_jit_stats load_run(omrt_jit *jit, float *out, omrt_model **keep) {
  omrt_jit_stats st = {0};
  omrt_load_options lo = {.threads = 1, .vprog_compiler = jit ? omrt_jit_compiler(jit) : NULL};
  omrt_model *m = NULL;
  omrt_context *ctx = NULL;
  if (omrt_model_load_memory(pkg, pkg_size, &lo, &m) != OMRT_OK) {
    CHECKF(0, "load: %s", omrt_last_error());
    return st;
  }
  if (jit) omrt_jit_last_stats(jit, &st);
  const void *in[1] = {x};
  void *outs[1] = {out};
  CHECKF(omrt_context_new(m, &ctx) == OMRT_OK && omrt_execute(ctx, in, outs) == OMRT_OK, "run: %s",
         omrt_last_error());
  omrt_context_free(ctx);
  if (keep)
    *keep = m;
  else
    omrt_model_free(m);
  return st;
}

static omrt_jit *new_jit(const char *cache) {
  omrt_jit *jit = NULL;
  if (omrt_jit_new(&jit) != OMRT_OK) {
    fprintf(stderr, "the JIT is unavailable: %s\n", omrt_last_error());
    exit(1);
  }
  CHECKF(omrt_jit_set_cache(jit, cache) == OMRT_OK, "set_cache: %s", omrt_last_error());
  return jit;
}

static void check_out(const float *out, const char *what) {
  CHECKF(!memcmp(out, want, sizeof want), "%s: output differs from the interpreter's", what);
}

static void test_models(void) {
  om_vprog h = {.ninputs = 1, .noutputs = 1, .nregs = 3, .ninstrs = 4};
  operand ops[2] = {{DT_FLOAT32, LAYOUT_ND, 1, {N}}, {DT_FLOAT32, LAYOUT_ND, 1, {N}}};
  pkg = make_pkg(&h, silu, ops, NULL, &pkg_size);
  CHECKF(pkg != NULL, "package");
  for (int i = 0; i < N; i++)
    x[i] = (float)(i - N / 2) / 37.0f;
  float out[N];
  load_run(NULL, want, NULL);

  /* cold: compiled, stored */
  omrt_jit *a = new_jit(dir);
  omrt_jit_stats st = load_run(a, out, NULL);
  check_out(out, "cold");
  CHECKF(st.programs == 1 && st.unique == 1 && st.compiled == 1 && st.cached == 0, "cold: %u/%u/%u/%u",
         st.programs, st.unique, st.compiled, st.cached);
  char path[512];
  CHECKF(entries(path, sizeof path) == 1, "one cache entry after the cold load");
  omrt_jit_free(a);

  /* warm: read from the cache by a new jit; a second model shares the code */
  omrt_jit *b = new_jit(dir);
  omrt_model *m1 = NULL, *m2 = NULL;
  st = load_run(b, out, &m1);
  check_out(out, "cached");
  CHECKF(st.cached == 1 && st.compiled == 0 && st.unique == 1, "warm: compiled %u, cached %u", st.compiled,
         st.cached);
  st = load_run(b, out, &m2);
  check_out(out, "shared");
  CHECKF(st.shared == 1 && st.compiled == 0 && st.cached == 0,
         "second model: shared %u compiled %u cached %u", st.shared, st.compiled, st.cached);
  omrt_model_free(m1);
  st = load_run(b, out, NULL); /* m2 still holds the code */
  CHECKF(st.shared == 1, "still shared after the first model went: %u", st.shared);
  omrt_model_free(m2);
  st = load_run(b, out, NULL); /* no model holds it: loaded again, from the cache */
  CHECKF(st.cached == 1 && st.shared == 0, "reloaded: cached %u shared %u", st.cached, st.shared);
  check_out(out, "reloaded");
  omrt_jit_free(b);

  /* corrupt entry: ignored, compiled, rewritten */
  size_t len;
  uint8_t *file = slurp(path, &len);
  CHECKF(file && len > 64, "entry readable");
  if (!file) return;
  file[len - 5] ^= 0xff;
  spit(path, file, len, 0600);
  omrt_jit *c = new_jit(dir);
  st = load_run(c, out, NULL);
  check_out(out, "after a corrupt entry");
  CHECKF(st.compiled == 1 && st.cached == 0, "corrupt entry: compiled %u cached %u", st.compiled, st.cached);
  omrt_jit_free(c);
  size_t len2;
  uint8_t *fixed = slurp(path, &len2);
  file[len - 5] ^= 0xff;
  CHECKF(fixed && len2 == len && !memcmp(fixed, file, len), "the corrupt entry was rewritten");
  free(fixed);

  /* a well-formed entry (right key and checksums) holding no object LLVM can load */
  uint32_t klen =
      (uint32_t)file[12] | (uint32_t)file[13] << 8 | (uint32_t)file[14] << 16 | (uint32_t)file[15] << 24;
  CHECKF(32 + (size_t)klen < len, "key length");
  unlink(path);
  CHECKF(jitc_store(dir, file + 32, klen, "garbage, not an ELF file", 24) == 0, "store garbage");
  CHECKF(entries(path, sizeof path) == 1, "the garbage entry has the real entry's name");
  omrt_jit *e = new_jit(dir);
  st = load_run(e, out, NULL);
  check_out(out, "after an unloadable entry");
  CHECKF(st.compiled == 1 && st.cached == 0, "unloadable entry: compiled %u cached %u", st.compiled,
         st.cached);
  omrt_jit_free(e);
  free(file);

  /* a directory others may write is refused, naming it */
  char open_dir[400];
  snprintf(open_dir, sizeof open_dir, "%s/open", root);
  mkdir(open_dir, 0700);
  chmod(open_dir, 0777);
  omrt_jit *f = NULL;
  CHECKF(omrt_jit_new(&f) == OMRT_OK, "jit");
  CHECKF(omrt_jit_set_cache(f, open_dir) == OMRT_ERR_ARG && strstr(omrt_last_error(), open_dir),
         "a world-writable cache dir was accepted (%s)", omrt_last_error());
  CHECKF(omrt_jit_cache_dir(f) == NULL, "no cache after the refusal");
  omrt_jit_free(f);
  rmdir(open_dir);
  free(pkg);
}

int main(void) {
  unsetenv("OMRT_JIT_CACHE");
  snprintf(root, sizeof root, "%s/tmp/jit_cache_XXXXXX", ATC_BUILD_DIR);
  char parent[300];
  snprintf(parent, sizeof parent, "%s/tmp", ATC_BUILD_DIR);
  mkdir(parent, 0777);
  if (!mkdtemp(root)) {
    fprintf(stderr, "mkdtemp %s: %s\n", root, strerror(errno));
    return 1;
  }
  snprintf(dir, sizeof dir, "%s/cache", root);
  char why[256];
  CHECKF(jitc_dir_ok(dir, why, sizeof why) == 0, "cache dir: %s", why);
  test_cache_file();
  test_models();
  char path[512];
  while (entries(path, sizeof path) > 0)
    unlink(path);
  rmdir(dir);
  rmdir(root);
  return test_summary("test_jit_cache");
}
