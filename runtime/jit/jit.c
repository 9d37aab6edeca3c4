/* jit.c - libomrt_jit: the vprog compiler (runtime/vprog_compiler.h) built
 * on LLVM's OrcJIT (LLJIT) through the LLVM C API.
 *
 * One omrt_jit holds one LLJIT for the host (triple, CPU name and features
 * from LLVM's host detection; codegen at -O2) whose main JITDylib defines
 * the scalar functions generated code calls as absolute symbols
 * (vpir_externs: the libm functions the interpreter calls) and falls back to
 * the process's symbols for the code generator's own libcalls.
 *
 * EXP is inlined as vector code (vprog_ir.c: glibc's expf algorithm, with
 * the FMA contractions when the host has FMA and AVX2, as glibc's ifunc
 * then picks its FMA build) only if, at omrt_jit_new, that code agrees bit
 * for bit with the process's expf on 2^18 inputs spread over every binade
 * plus the special cases and thresholds; otherwise generated code calls
 * expf. Either way the JIT computes what the interpreter computes.
 *
 * A model's load (compile) builds one LLVM module holding one function per
 * distinct (program bytes, inner broadcast mask) pair of its VPROG tasks
 * (vprog_ir.c), runs the O2 pipeline on it for the host's target machine
 * (without loop vectorization and unrolling: the IR is vector code already),
 * adds it to the LLJIT under a resource tracker of its own, looks the
 * functions up and stores them in the tasks' plans. The tracker is the
 * model's state: release removes the model's code. Function names carry a
 * per-jit sequence number, so the models sharing the LLJIT never collide.
 * Loads are serialized by a mutex (the pass pipeline and the target
 * machine are not shared across threads); models run concurrently.
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

#include "runtime/jit/vprog_ir.h"
#include "runtime/rt.h"
#include "runtime/vprog_compiler.h"
#include "runtime/vprog_plan.h"

struct omrt_jit {
  omrt_vprog_compiler hook; /* first: the hook's address is the jit's */
  LLVMOrcLLJITRef lljit;
  LLVMTargetMachineRef tm; /* the host's, for the IR pass pipeline */
  pthread_mutex_t mu;      /* serializes compile */
  uint64_t seq;            /* functions named so far (under mu) */
  vpir_exp exp_mode;       /* how generated code computes exp */
  omrt_jit_stats last;     /* under mu */
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
  char *triple = LLVMGetDefaultTargetTriple(), *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
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
  LLVMOrcCSymbolMapPair syms[32];
  size_t n = 0;
  for (const vpir_extern *e = vpir_externs; e->name; e++, n++)
    syms[n] = (LLVMOrcCSymbolMapPair){
        LLVMOrcLLJITMangleAndIntern(jit->lljit, e->name),
        {(LLVMOrcExecutorAddress)(uintptr_t)e->addr, {LLVMJITSymbolGenericFlagsExported, 0}}};
  LLVMOrcJITDylibRef main = LLVMOrcLLJITGetMainJITDylib(jit->lljit);
  LLVMErrorRef err = LLVMOrcJITDylibDefine(main, LLVMOrcAbsoluteSymbols(syms, n));
  if (err) return llvm_fail(err, "defining the math functions");
  LLVMOrcDefinitionGeneratorRef gen;
  err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit->lljit), NULL, NULL);
  if (err) return llvm_fail(err, "searching the process's symbols");
  LLVMOrcJITDylibAddGenerator(main, gen);
  return OMRT_OK;
}

static omrt_status jit_compile(const omrt_vprog_compiler *self, omrt_model *m, void **state_out);
static void jit_release(const omrt_vprog_compiler *self, void *state);
static omrt_status pick_exp_mode(omrt_jit *jit);

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
  LLVMTargetMachineRef codegen_tm = host_machine(&msg);
  jit->tm = codegen_tm ? host_machine(&msg) : NULL;
  if (!jit->tm) {
    omrt_status s = rt_error(OMRT_ERR_UNSUPPORTED, "jit: no target machine for the host: %s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    if (codegen_tm) LLVMDisposeTargetMachine(codegen_tm);
    omrt_jit_free(jit);
    return s;
  }
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(codegen_tm));
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&jit->lljit, builder); /* consumes the builder */
  omrt_status s = err ? llvm_fail(err, "creating the LLJIT") : define_externs(jit);
  if (!s) s = pick_exp_mode(jit);
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
  pthread_mutex_destroy(&jit->mu);
  free(jit);
}

const omrt_vprog_compiler *omrt_jit_compiler(omrt_jit *jit) { return jit ? &jit->hook : NULL; }

void omrt_jit_last_stats(omrt_jit *jit, omrt_jit_stats *stats_out) {
  pthread_mutex_lock(&jit->mu);
  *stats_out = jit->last;
  pthread_mutex_unlock(&jit->mu);
}

/* ---- compiling a model ---- */

typedef struct variant {
  const om_vprog *h; /* the program (header, then instructions) */
  size_t bytes;
  uint32_t mask;
  uint64_t hash;
  char name[40];
} variant;

static uint64_t fnv1a(const void *p, size_t n, uint64_t h) {
  const uint8_t *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
  return h;
}

static double clock_ms(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The index in vs[0..*n) of task's variant, adding it (and its function to mod) if new. */
static uint32_t variant_of(omrt_jit *jit, LLVMModuleRef mod, variant *vs, uint32_t *n, const om_vprog *h,
                           uint32_t mask) {
  size_t bytes = sizeof *h + (size_t)h->ninstrs * sizeof(om_vinstr);
  uint64_t hash = fnv1a(&mask, sizeof mask, fnv1a(h, bytes, 0xcbf29ce484222325ull));
  for (uint32_t k = 0; k < *n; k++)
    if (vs[k].hash == hash && vs[k].mask == mask && vs[k].bytes == bytes && !memcmp(vs[k].h, h, bytes)) return k;
  variant *v = &vs[(*n)++];
  *v = (variant){.h = h, .bytes = bytes, .mask = mask, .hash = hash};
  snprintf(v->name, sizeof v->name, "omrt_vprog_%llu", (unsigned long long)jit->seq++);
  vpir_build(mod, v->name, h, (const om_vinstr *)(h + 1), mask, jit->exp_mode);
  return (uint32_t)(v - vs);
}

/* Optimizes mod, adds it under a new tracker (*rt_out) and resolves every variant's address. */
static omrt_status emit(omrt_jit *jit, LLVMOrcThreadSafeContextRef tsc, LLVMModuleRef mod, variant *vs, uint32_t n,
                        LLVMOrcExecutorAddress *addrs, LLVMOrcResourceTrackerRef *rt_out) {
  char *msg = NULL;
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
    omrt_status s = rt_error(OMRT_ERR_UNSUPPORTED, "jit: invalid IR generated for a vector program: %s", msg);
    LLVMDisposeMessage(msg);
    LLVMDisposeModule(mod);
    return s;
  }
  LLVMDisposeMessage(msg);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  /* The IR is vectorized already (vprog_ir.c); the loop vectorizer and the
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
  LLVMOrcJITDylibRef main = LLVMOrcLLJITGetMainJITDylib(jit->lljit);
  *rt_out = LLVMOrcJITDylibCreateResourceTracker(main);
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc); /* owns mod */
  if ((err = LLVMOrcLLJITAddLLVMIRModuleWithRT(jit->lljit, *rt_out, tsm))) {
    LLVMOrcDisposeThreadSafeModule(tsm);
    return llvm_fail(err, "adding the module");
  }
  for (uint32_t k = 0; k < n; k++)
    if ((err = LLVMOrcLLJITLookup(jit->lljit, &addrs[k], vs[k].name))) return llvm_fail(err, "code generation");
  return OMRT_OK;
}

static omrt_status jit_compile(const omrt_vprog_compiler *self, omrt_model *m, void **state_out) {
  omrt_jit *jit = (omrt_jit *)(void *)self;
  *state_out = NULL;
  uint32_t ntasks = m->def->ntasks, n = 0, programs = 0;
  variant *vs = calloc(ntasks ? ntasks : 1, sizeof *vs);
  uint32_t *which = calloc(ntasks ? ntasks : 1, sizeof *which);
  LLVMOrcExecutorAddress *addrs = calloc(ntasks ? ntasks : 1, sizeof *addrs);
  if (!vs || !which || !addrs) {
    free(vs), free(which), free(addrs);
    return rt_error(OMRT_ERR_NOMEM, "jit: out of memory");
  }
  pthread_mutex_lock(&jit->mu);
  double t0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("vprogs", LLVMOrcThreadSafeContextGetContext(tsc));
  for (uint32_t i = 0; i < ntasks; i++) {
    const rt_vplan *p = m->task_aux[i];
    if (m->tasks[i].kind != OM_TASK_VPROG || !p) continue;
    const om_vprog *h = (const om_vprog *)(const void *)(m->vprogs + (uint32_t)m->tasks[i].params[0]);
    which[i] = variant_of(jit, mod, vs, &n, h, rt_vplan_inner_mask(p));
    programs++;
  }
  LLVMOrcResourceTrackerRef tracker = NULL;
  omrt_status s = OMRT_OK;
  if (n) s = emit(jit, tsc, mod, vs, n, addrs, &tracker);
  else LLVMDisposeModule(mod);
  LLVMOrcDisposeThreadSafeContext(tsc); /* the module keeps the context alive */
  *state_out = tracker;
  if (s == OMRT_OK) {
    for (uint32_t i = 0; i < ntasks; i++)
      if (m->tasks[i].kind == OM_TASK_VPROG && m->task_aux[i])
        ((rt_vplan *)m->task_aux[i])->native = (rt_vnative_fn)(uintptr_t)addrs[which[i]];
    jit->last = (omrt_jit_stats){programs, n, clock_ms(CLOCK_MONOTONIC) - t0, clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0,
                                 jit->exp_mode != VPIR_EXP_CALL};
  }
  pthread_mutex_unlock(&jit->mu);
  free(vs), free(which), free(addrs);
  return s;
}

static void remove_code(LLVMOrcResourceTrackerRef tracker) {
  LLVMErrorRef err = LLVMOrcResourceTrackerRemove(tracker);
  if (err) LLVMConsumeError(err);
  LLVMOrcReleaseResourceTracker(tracker);
}

static void jit_release(const omrt_vprog_compiler *self, void *state) {
  if (state) remove_code(state);
  (void)self;
}

/* ---- choosing how exp is computed ---- */

enum { EXPCHECK_N = (1 << 18) + 16 };

/* Does inline exp in `mode` give expf's bits on every sample? */
static omrt_status exp_agrees(omrt_jit *jit, vpir_exp mode, int *agrees_out) {
  static const uint32_t special[16] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                       0x42b17217u, 0x42b17218u, 0xc2ce8ecfu, 0xc2ce8ed0u, 0xc2cff1b4u,
                                       0xc2cff1b5u, 0x42b00000u, 0xc2b00000u, 0x00000001u, 0x3f800000u,
                                       0xbf800000u};
  om_vinstr ins[3] = {{.op = VOP_LOAD, .dtype = DT_FLOAT32, .dst = 0, .a = 0},
                      {.op = VOP_EXP, .dtype = DT_FLOAT32, .dst = 1, .a = 0},
                      {.op = VOP_STORE, .dtype = DT_FLOAT32, .a = 0, .b = 1}};
  struct {
    om_vprog h;
    om_vinstr ins[3];
  } prog = {{.ninputs = 1, .noutputs = 1, .nregs = 2, .ninstrs = 3}, {ins[0], ins[1], ins[2]}};
  float *x = malloc(2 * EXPCHECK_N * sizeof *x);
  if (!x) return rt_error(OMRT_ERR_NOMEM, "jit: out of memory");
  float *y = x + EXPCHECK_N;
  for (uint32_t i = 0; i < EXPCHECK_N; i++) {
    uint32_t bits = i < 16 ? special[i] : (i - 16) * 16384u + (i * 2654435761u) % 16384u;
    memcpy(&x[i], &bits, sizeof bits);
  }
  variant v = {.h = &prog.h};
  snprintf(v.name, sizeof v.name, "omrt_vprog_expcheck_%d", (int)mode);
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("expcheck", LLVMOrcThreadSafeContextGetContext(tsc));
  vpir_build(mod, v.name, &prog.h, prog.ins, 1, mode);
  LLVMOrcExecutorAddress addr = 0;
  LLVMOrcResourceTrackerRef tracker = NULL;
  omrt_status s = emit(jit, tsc, mod, &v, 1, &addr, &tracker);
  LLVMOrcDisposeThreadSafeContext(tsc);
  if (s == OMRT_OK) {
    void *ptr[2] = {x, y};
    int64_t outer[2] = {0, 0};
    ((rt_vnative_fn)(uintptr_t)addr)(ptr, outer, 1, EXPCHECK_N);
    int same = 1;
    for (uint32_t i = 0; i < EXPCHECK_N && same; i++) {
      float want = expf(x[i]);
      same = memcmp(&want, &y[i], sizeof want) == 0 || (want != want && y[i] != y[i]);
    }
    *agrees_out = same;
  }
  if (tracker) remove_code(tracker);
  free(x);
  return s;
}

/* Is "+name" one of the comma-separated host features? */
static int has_feature(const char *features, const char *name) {
  size_t n = strlen(name);
  for (const char *p = features; (p = strstr(p, name)); p += n)
    if (p > features && p[-1] == '+' && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}

static omrt_status pick_exp_mode(omrt_jit *jit) {
  char *features = LLVMGetHostCPUFeatures();
  int fma = (has_feature(features, "fma") && has_feature(features, "avx2")) || has_feature(features, "fma4");
  LLVMDisposeMessage(features);
  int agrees = 0;
  omrt_status s = exp_agrees(jit, fma ? VPIR_EXP_INLINE_FMA : VPIR_EXP_INLINE, &agrees);
  jit->exp_mode = !agrees ? VPIR_EXP_CALL : fma ? VPIR_EXP_INLINE_FMA : VPIR_EXP_INLINE;
  return s;
}
