/* jit.c - libomrt_jit: the vprog compiler (runtime/vprog_compiler.h) built
 * on LLVM's OrcJIT (LLJIT) through the LLVM C API.
 *
 * One omrt_jit holds one LLJIT for the host (triple, CPU name and features
 * from LLVM's host detection; codegen at -O2) whose main JITDylib defines
 * the scalar functions generated code calls as absolute symbols
 * (vpir_externs: the libm functions the interpreter calls) and falls back to
 * the process's symbols for the code generator's own libcalls.
 *
 * A body is one distinct (program bytes, inner broadcast mask) pair; the
 * jit keeps the bodies loaded models use in a list, each with a reference
 * count, its own resource tracker and its function's address. A model's
 * load (compile) takes a reference to the body of each of its VPROG tasks;
 * a body no model holds yet gets its code: one LLVM module with one
 * function (jit_emit.c, named omrt_vp_<hash of the body>),
 * either read from the on-disk cache (jit_cache.c; the key is the module's
 * IR plus the host identity) or optimized with the O2 pipeline for the
 * host's target machine (without loop vectorization and unrolling: the IR
 * is vector code already), turned into an object file by that machine
 * (stored in the cache) and added to the LLJIT as an object under the
 * body's tracker. The model's state is its list of bodies: release drops
 * the references, and the last one removes the code. Loads are serialized
 * by a mutex (the pass pipeline and the target machine are not shared
 * across threads); models run concurrently.
 */
#include "runtime/jit/omrt_jit.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/jit/jit_cache.h"
#include "runtime/jit/jit_emit.h"
#include "runtime/rt.h"
#include "runtime/vprog_compiler.h"
#include "runtime/vprog_plan.h"

/* One distinct compiled program (program bytes + inner broadcast mask),
 * shared by every loaded model that runs it; freed with its last user. */
typedef struct body {
  struct body *next; /* jit->bodies */
  uint8_t *prog;     /* copy of the program: header, then instructions */
  size_t bytes;
  uint32_t mask;
  uint64_t hash; /* of prog and mask */
  uint32_t refs; /* models using it */
  char name[48]; /* its function's symbol */
  LLVMOrcResourceTrackerRef tracker;
  LLVMOrcExecutorAddress addr;
} body;

struct omrt_jit {
  omrt_vprog_compiler hook; /* first: the hook's address is the jit's */
  LLVMOrcLLJITRef lljit;
  LLVMTargetMachineRef tm; /* the host's, for the IR pass pipeline */
  pthread_mutex_t mu;      /* serializes compile */
  uint64_t seq;            /* functions named so far (under mu) */
  omrt_jit_stats last;     /* under mu */
  body *bodies;            /* the programs loaded models use (under mu) */
  char *cache_dir;         /* the on-disk cache (jit_cache.h), or NULL */
  char *host_id;           /* the cache key's first part: LLVM version, target, CPU, features, settings */
};

/* Turns an LLVM error into rt_error(OMRT_ERR_UNSUPPORTED, "jit: <what>: <llvm's message>"). */
static omrt_status llvm_fail(LLVMErrorRef err, const char *what) {
  char *msg = LLVMGetErrorMessage(err);
  omrt_status s = rt_error(OMRT_ERR_UNSUPPORTED, "jit: %s: %s", what, msg);
  LLVMDisposeErrorMessage(msg);
  return s;
}

/* A target machine for the host CPU with all its features, at -O2. */
static LLVMTargetMachineRef host_machine(char **err_out) {
  char *triple = LLVMGetDefaultTargetTriple(), *cpu = LLVMGetHostCPUName(),
       *features = LLVMGetHostCPUFeatures();
  LLVMTargetRef target;
  LLVMTargetMachineRef tm = NULL;
  if (!LLVMGetTargetFromTriple(triple, &target, err_out))
    tm = LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelDefault, LLVMRelocDefault,
                                 LLVMCodeModelJITDefault);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  return tm;
}

static omrt_status define_externs(omrt_jit *jit) {
  size_t n = 0;
  while (vpir_externs[n].name)
    n++;
  LLVMOrcCSymbolMapPair *syms = calloc(n ? n : 1, sizeof *syms);
  if (!syms) return rt_error(OMRT_ERR_NOMEM, "omrt_jit_new: out of memory");
  for (size_t i = 0; i < n; i++)
    syms[i] = (LLVMOrcCSymbolMapPair){
        LLVMOrcLLJITMangleAndIntern(jit->lljit, vpir_externs[i].name),
        {(LLVMOrcExecutorAddress)(uintptr_t)vpir_externs[i].addr, {LLVMJITSymbolGenericFlagsExported, 0}}};
  LLVMOrcJITDylibRef main = LLVMOrcLLJITGetMainJITDylib(jit->lljit);
  LLVMErrorRef err = LLVMOrcJITDylibDefine(main, LLVMOrcAbsoluteSymbols(syms, n));
  free(syms);
  if (err) return llvm_fail(err, "defining the math functions");
  LLVMOrcDefinitionGeneratorRef gen;
  err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit->lljit),
                                                             NULL, NULL);
  if (err) return llvm_fail(err, "searching the process's symbols");
  LLVMOrcJITDylibAddGenerator(main, gen);
  return OMRT_OK;
}

static omrt_status jit_compile(const omrt_vprog_compiler *self, omrt_model *m, void **state_out);
static void jit_release(const omrt_vprog_compiler *self, void *state);

/* Everything besides the IR that the generated object code depends on. */
static omrt_status host_identity(omrt_jit *jit) {
  unsigned major, minor, patch;
  LLVMGetVersion(&major, &minor, &patch);
  char *triple = LLVMGetDefaultTargetTriple(), *cpu = LLVMGetHostCPUName(),
       *features = LLVMGetHostCPUFeatures();
  size_t n = strlen(triple) + strlen(cpu) + strlen(features) + 160;
  if ((jit->host_id = malloc(n)))
    snprintf(jit->host_id, n,
             "libomrt_jit object cache 1\nllvm %u.%u.%u\ntriple %s\ncpu %s\nfeatures %s\n"
             "codegen O2, no loop/SLP vectorization, no unrolling, JIT code model\n",
             major, minor, patch, triple, cpu, features);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  return jit->host_id ? OMRT_OK : rt_error(OMRT_ERR_NOMEM, "omrt_jit_new: out of memory");
}

const char *omrt_jit_cache_dir(const omrt_jit *jit) { return jit ? jit->cache_dir : NULL; }

omrt_status omrt_jit_set_cache(omrt_jit *jit, const char *dir) {
  if (!jit) return rt_error(OMRT_ERR_ARG, "omrt_jit_set_cache: jit is NULL");
  char why[512], *copy = NULL;
  if (dir && *dir) {
    if (jitc_dir_ok(dir, why, sizeof why))
      return rt_error(OMRT_ERR_ARG, "jit cache (OMRT_JIT_CACHE): %s", why);
    if (!(copy = strdup(dir))) return rt_error(OMRT_ERR_NOMEM, "omrt_jit_set_cache: out of memory");
  }
  pthread_mutex_lock(&jit->mu);
  free(jit->cache_dir);
  jit->cache_dir = copy;
  pthread_mutex_unlock(&jit->mu);
  return OMRT_OK;
}

omrt_status omrt_jit_new(omrt_jit **jit_out) {
  if (!jit_out) return rt_error(OMRT_ERR_ARG, "omrt_jit_new: jit_out is NULL");
  *jit_out = NULL;
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter())
    return rt_error(OMRT_ERR_UNSUPPORTED, "jit: LLVM has no code generator for this host");
  omrt_jit *jit = calloc(1, sizeof *jit);
  if (!jit) return rt_error(OMRT_ERR_NOMEM, "omrt_jit_new: out of memory");
  jit->hook = (omrt_vprog_compiler){jit_compile, jit_release};
  pthread_mutex_init(&jit->mu, NULL);
  char *msg = NULL;
  omrt_status s0;
  LLVMTargetMachineRef codegen_tm = host_machine(&msg);
  jit->tm = codegen_tm ? host_machine(&msg) : NULL;
  if (!jit->tm) {
    omrt_status s =
        rt_error(OMRT_ERR_UNSUPPORTED, "jit: no target machine for the host: %s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    if (codegen_tm) LLVMDisposeTargetMachine(codegen_tm);
    omrt_jit_free(jit);
    return s;
  }
  if ((s0 = host_identity(jit)) == OMRT_OK) s0 = omrt_jit_set_cache(jit, getenv("OMRT_JIT_CACHE"));
  if (s0) {
    LLVMDisposeTargetMachine(codegen_tm);
    omrt_jit_free(jit);
    return s0;
  }
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
      builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(codegen_tm));
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&jit->lljit, builder); /* consumes the builder */
  omrt_status s = err ? llvm_fail(err, "creating the LLJIT") : define_externs(jit);
  if (s) {
    omrt_jit_free(jit);
    return s;
  }
  *jit_out = jit;
  return OMRT_OK;
}

void omrt_jit_free(omrt_jit *jit) {
  if (!jit) return;
  if (jit->lljit) {
    LLVMErrorRef err = LLVMOrcDisposeLLJIT(jit->lljit);
    if (err) LLVMConsumeError(err);
  }
  if (jit->tm) LLVMDisposeTargetMachine(jit->tm);
  while (jit->bodies) { /* bodies of models not freed first; their code went with the LLJIT */
    body *b = jit->bodies;
    jit->bodies = b->next;
    free(b->prog);
    free(b);
  }
  pthread_mutex_destroy(&jit->mu);
  free(jit->cache_dir);
  free(jit->host_id);
  free(jit);
}

const omrt_vprog_compiler *omrt_jit_compiler(omrt_jit *jit) { return jit ? &jit->hook : NULL; }

void omrt_jit_last_stats(omrt_jit *jit, omrt_jit_stats *stats_out) {
  pthread_mutex_lock(&jit->mu);
  *stats_out = jit->last;
  pthread_mutex_unlock(&jit->mu);
}

/* ---- compiling a model ---- */

/* A model's state: the bodies it holds a reference to. */
typedef struct model_code {
  uint32_t n;
  body *b[];
} model_code;

static uint64_t fnv1a(const void *p, size_t n, uint64_t h) {
  const uint8_t *s = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ s[i]) * 0x100000001b3ull;
  return h;
}

static double clock_ms(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The cache key of mod (jit_cache.h): what the code depends on besides the IR, then the IR. */
static char *cache_key(omrt_jit *jit, LLVMModuleRef mod, size_t *n_out) {
  char *ir = LLVMPrintModuleToString(mod);
  size_t n = strlen(jit->host_id) + strlen(ir) + 2;
  char *key = malloc(n);
  if (key) snprintf(key, n, "%s\n%s", jit->host_id, ir);
  LLVMDisposeMessage(ir);
  *n_out = key ? n - 1 : 0;
  return key;
}

/* Optimizes mod and generates its object file (*obj_out); disposes mod. */
static omrt_status codegen(omrt_jit *jit, LLVMModuleRef mod, LLVMMemoryBufferRef *obj_out) {
  char *msg = NULL;
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
    omrt_status s = rt_error(OMRT_ERR_UNSUPPORTED, "jit: invalid IR generated for a vector program: %s", msg);
    LLVMDisposeMessage(msg);
    LLVMDisposeModule(mod);
    return s;
  }
  LLVMDisposeMessage(msg);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  /* The IR is vectorized already (jit_emit.c); the loop vectorizer and the
   * unroller would only multiply the code (and the compile time) by 3-5x. */
  LLVMPassBuilderOptionsSetLoopVectorization(po, 0);
  LLVMPassBuilderOptionsSetSLPVectorization(po, 0);
  LLVMPassBuilderOptionsSetLoopUnrolling(po, 0);
  LLVMErrorRef err = LLVMRunPasses(mod, "default<O2>", jit->tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (err) {
    LLVMDisposeModule(mod);
    return llvm_fail(err, "optimizing");
  }
  msg = NULL;
  LLVMBool failed = LLVMTargetMachineEmitToMemoryBuffer(jit->tm, mod, LLVMObjectFile, &msg, obj_out);
  LLVMDisposeModule(mod);
  if (failed) {
    omrt_status s = rt_error(OMRT_ERR_UNSUPPORTED, "jit: code generation: %s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return s;
  }
  return OMRT_OK;
}

/* Adds object file obj (consumed) under a new tracker and resolves b->name in it. */
static omrt_status add_object(omrt_jit *jit, body *b, LLVMMemoryBufferRef obj) {
  LLVMOrcJITDylibRef main = LLVMOrcLLJITGetMainJITDylib(jit->lljit);
  b->tracker = LLVMOrcJITDylibCreateResourceTracker(main);
  LLVMErrorRef err = LLVMOrcLLJITAddObjectFileWithRT(jit->lljit, b->tracker, obj); /* owns obj */
  if (!err) err = LLVMOrcLLJITLookup(jit->lljit, &b->addr, b->name);
  return err ? llvm_fail(err, "loading the code") : OMRT_OK;
}

static void remove_code(LLVMOrcResourceTrackerRef tracker) {
  LLVMErrorRef err = LLVMOrcResourceTrackerRemove(tracker);
  if (err) LLVMConsumeError(err);
  LLVMOrcReleaseResourceTracker(tracker);
}

/* Gives b (prog, mask, name set) its code: from the on-disk cache when it has a valid entry (*cached_out =
 * 1), else compiled (and stored there). */
static omrt_status make_code(omrt_jit *jit, body *b, int *cached_out) {
  *cached_out = 0;
  LLVMContextRef cx = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("vprog", cx);
  vpir_build(mod, b->name, (const om_vprog *)(const void *)b->prog,
             (const om_vinstr *)(const void *)(b->prog + sizeof(om_vprog)), b->mask);
  size_t key_n = 0, obj_n = 0;
  char *key = jit->cache_dir ? cache_key(jit, mod, &key_n) : NULL;
  void *bytes = key ? jitc_load(jit->cache_dir, key, key_n, &obj_n) : NULL;
  omrt_status s = OMRT_OK;
  if (bytes) {
    LLVMDisposeModule(mod);
    LLVMMemoryBufferRef obj = LLVMCreateMemoryBufferWithMemoryRangeCopy(bytes, obj_n, b->name);
    free(bytes);
    if (add_object(jit, b, obj) == OMRT_OK) {
      *cached_out = 1;
    } else { /* an entry LLVM cannot load: compile instead */
      remove_code(b->tracker);
      b->tracker = NULL;
      mod = LLVMModuleCreateWithNameInContext("vprog", cx);
      vpir_build(mod, b->name, (const om_vprog *)(const void *)b->prog,
                 (const om_vinstr *)(const void *)(b->prog + sizeof(om_vprog)), b->mask);
    }
  }
  if (!*cached_out) {
    LLVMMemoryBufferRef obj = NULL;
    s = codegen(jit, mod, &obj);
    if (s == OMRT_OK) {
      if (key) jitc_store(jit->cache_dir, key, key_n, LLVMGetBufferStart(obj), LLVMGetBufferSize(obj));
      s = add_object(jit, b, obj);
    }
  }
  LLVMContextDispose(cx);
  free(key);
  return s;
}

/* Drops one reference to b; the last one removes its code. Under jit->mu. */
static void body_unref(omrt_jit *jit, body *b) {
  if (--b->refs) return;
  body **p = &jit->bodies;
  while (*p != b)
    p = &(*p)->next;
  *p = b->next;
  if (b->tracker) remove_code(b->tracker);
  free(b->prog);
  free(b);
}

/* The body for (h, mask) with one more reference, compiled or loaded if no
 * model holds it yet (counted in *st). Under jit->mu. */
static omrt_status body_ref(omrt_jit *jit, const om_vprog *h, uint32_t mask, omrt_jit_stats *st, body **out) {
  size_t bytes = sizeof *h + (size_t)h->ninstrs * sizeof(om_vinstr);
  uint64_t hash = fnv1a(&mask, sizeof mask, fnv1a(h, bytes, 0xcbf29ce484222325ull));
  int clash = 0;
  for (body *b = jit->bodies; b; b = b->next) {
    if (b->hash != hash) continue;
    if (b->mask == mask && b->bytes == bytes && !memcmp(b->prog, h, bytes)) {
      b->refs++;
      st->shared++;
      *out = b;
      return OMRT_OK;
    }
    clash = 1;
  }
  body *b = calloc(1, sizeof *b);
  uint8_t *prog = malloc(bytes);
  if (!b || !prog) {
    free(b), free(prog);
    return rt_error(OMRT_ERR_NOMEM, "jit: out of memory");
  }
  memcpy(prog, h, bytes);
  *b = (body){.prog = prog, .bytes = bytes, .mask = mask, .hash = hash, .refs = 1};
  /* Named by content, so a cached object defines the name asked for; a
   * (64-bit) hash clash gets a unique suffix. */
  if (clash)
    snprintf(b->name, sizeof b->name, "omrt_vp_%016llx_%llu", (unsigned long long)hash,
             (unsigned long long)jit->seq++);
  else
    snprintf(b->name, sizeof b->name, "omrt_vp_%016llx", (unsigned long long)hash);
  int cached;
  omrt_status s = make_code(jit, b, &cached);
  b->next = jit->bodies;
  jit->bodies = b;
  if (s) {
    body_unref(jit, b);
    return s;
  }
  if (cached)
    st->cached++;
  else
    st->compiled++;
  *out = b;
  return OMRT_OK;
}

static omrt_status jit_compile(const omrt_vprog_compiler *self, omrt_model *m, void **state_out) {
  omrt_jit *jit = (omrt_jit *)(void *)self;
  *state_out = NULL;
  uint32_t ntasks = m->def->ntasks;
  model_code *mc = calloc(1, sizeof *mc + (size_t)ntasks * sizeof(body *));
  body **which = calloc(ntasks ? ntasks : 1, sizeof *which);
  if (!mc || !which) {
    free(mc), free(which);
    return rt_error(OMRT_ERR_NOMEM, "jit: out of memory");
  }
  pthread_mutex_lock(&jit->mu);
  double t0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
  omrt_jit_stats st = {0};
  omrt_status s = OMRT_OK;
  for (uint32_t i = 0; i < ntasks && s == OMRT_OK; i++) {
    const rt_vplan *p = rt_task_vplan(m, i); /* a VPROG task's, or a conv's epilogue */
    if (!p) continue;
    const om_vprog *h = (const om_vprog *)(const void *)(m->vprogs + p->prog);
    size_t bytes = sizeof *h + (size_t)h->ninstrs * sizeof(om_vinstr);
    uint32_t mask = rt_vplan_inner_mask(p);
    st.programs++;
    for (uint32_t k = 0; k < mc->n && !which[i]; k++) /* the model's own bodies first */
      if (mc->b[k]->mask == mask && mc->b[k]->bytes == bytes && !memcmp(mc->b[k]->prog, h, bytes))
        which[i] = mc->b[k];
    if (which[i]) continue;
    if ((s = body_ref(jit, h, mask, &st, &which[i])) == OMRT_OK) mc->b[mc->n++] = which[i];
  }
  if (s == OMRT_OK) {
    for (uint32_t i = 0; i < ntasks; i++)
      if (which[i]) rt_task_vplan(m, i)->native = (rt_vnative_fn)(uintptr_t)which[i]->addr;
    st.unique = mc->n;
    st.ms = clock_ms(CLOCK_MONOTONIC) - t0;
    st.cpu_ms = clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
    jit->last = st;
    *state_out = mc;
  } else {
    for (uint32_t k = 0; k < mc->n; k++)
      body_unref(jit, mc->b[k]);
    free(mc);
  }
  pthread_mutex_unlock(&jit->mu);
  free(which);
  return s;
}

static void jit_release(const omrt_vprog_compiler *self, void *state) {
  omrt_jit *jit = (omrt_jit *)(void *)self;
  model_code *mc = state;
  if (!mc) return;
  pthread_mutex_lock(&jit->mu);
  for (uint32_t k = 0; k < mc->n; k++)
    body_unref(jit, mc->b[k]);
  pthread_mutex_unlock(&jit->mu);
  free(mc);
}
