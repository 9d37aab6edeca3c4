/* fuzz_om_semantic.c - target `om_semantic`: checksum-valid semantic mutants
 * of real packages (issue 24 item 2; fuzz_targets.h).
 *
 * The om targets damage bytes; a damaged byte almost always dies at a CRC,
 * and om_mutate's field mutator sets one field of a record at a time. This
 * target mutates what a package means, several fields at once, and then
 * makes every CRC (and file_len) consistent again, so that libomrt's
 * verifier alone stands between the mutant and memory. Its input is a
 * recipe:
 *   byte 0      the seed package: one of SEEDS, built on first use from the
 *               IR graphs below through every pass of atc's pipeline
 *               (passes/pipeline.c) and its om writer, in force_fp16 and in
 *               must_keep_origin_dtype (nothing binary is committed);
 *               together they hold every task kind;
 *   bytes 1...  up to MAX_MUTATIONS records, an opcode byte (its kind,
 *               mod MUT_COUNT) and argument bytes (missing bytes read 0):
 *               a tensor's field (region, I/O index, dtype, layout, rank,
 *               offset, bytes, a dim), a tensor aliased onto another's
 *               region and offset (the overlaps of the memory rule), a
 *               task's kind / block_dim / ntensors, a tensor slot, a
 *               param, a task record copied over another, a vector
 *               program's instruction or header, a model definition field,
 *               an I/O entry. Values come from a table of boundaries,
 *               small numbers, the field's value plus or minus a little, or
 *               another record's field.
 * libomrt loads the mutant from a read-only mapping of it, and a mutant
 * that loads is run once with one thread on inputs filled from the recipe,
 * read-only too (the harness writes both through a second, writable
 * mapping of the same memory). A kernel writing into the package (the
 * weights) or into an input is thus a SIGSEGV the fuzzer reports, as is any
 * sanitizer finding; outputs and the workspace are ordinary memory under
 * ASan.
 * Execution is skipped past FUZZ_MAX_EXEC_BYTES of workspace and I/O, as in
 * fuzz_om.c. Per mutation kind and outcome, counts are kept
 * (fuzz_om_semantic_stats).
 */
#define _GNU_SOURCE /* memfd_create */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_targets.h"

#include "backend/om_write.h"
#include "common/om_format.h"
#include "ir/ir.h"
#include "omrt.h"
#include "passes/pass.h"

#define FUZZ_MAX_EXEC_BYTES ((uint64_t)64 << 20)
enum { MAX_MUTATIONS = 8 };

/* --- the seeds */

static const char *const graphs[] = {
    /* a CNN: an RGB stem reading the input in place, Winograd with a residual, a strided conv with
     * the pool's output as residual, a conv written over its residual, depthwise with clip, grouped,
     * squeeze-excitation into a 1x1 conv's x_scale with a SiLU epilogue, pools, a fully connected
     * conv, softmax, and a vector program with an output of its own */
    "graph cnn opset 17\n"
    "input %x : f32[1,3,16,16]\n"
    "const %w1 : f32[16,3,3,3] = rand(1)\n"
    "const %b1 : f32[16] = rand(2)\n"
    "%c1 : ?[?] = Conv(%x, %w1, %b1) {kernel_shape=[3,3], pads=[1,1,1,1], strides=[1,1]}  # stem\n"
    "%r1 : ?[?] = Relu(%c1)  # relu1\n"
    "const %w2 : f32[16,16,3,3] = rand(3)\n"
    "%c2 : ?[?] = Conv(%r1, %w2) {kernel_shape=[3,3], pads=[1,1,1,1], strides=[1,1]}  # wino\n"
    "%a2 : ?[?] = Add(%c2, %r1)  # res\n"
    "%r2 : ?[?] = Relu(%a2)  # relu2\n"
    "const %w3 : f32[16,16,3,3] = rand(4)\n"
    "%c3 : ?[?] = Conv(%r2, %w3) {kernel_shape=[3,3], pads=[1,1,1,1], strides=[2,2]}  # down\n"
    "%a3 : ?[?] = MaxPool(%r2) {kernel_shape=[2,2], strides=[2,2]}  # pool\n"
    "%a4 : ?[?] = Add(%c3, %a3)  # res2\n"
    "const %w5 : f32[16,16,1,1] = rand(11)\n"
    "const %w6 : f32[16,16,1,1] = rand(12)\n"
    "%c5 : ?[?] = Conv(%a4, %w5)  # side\n"
    "%c6 : ?[?] = Conv(%a4, %w6)  # main\n"
    "%a6 : ?[?] = Add(%c6, %c5)  # inplace\n"
    "const %wd : f32[16,1,3,3] = rand(5)\n"
    "%d : ?[?] = Conv(%a6, %wd) {group=16, kernel_shape=[3,3], pads=[1,1,1,1], strides=[1,1]}  # dw\n"
    "%dr : ?[?] = Clip(%d) {max=6.0, min=0.0}  # relu6\n"
    "const %wg : f32[32,8,1,1] = rand(6)\n"
    "%gc : ?[?] = Conv(%dr, %wg) {group=2, kernel_shape=[1,1]}  # grouped\n"
    "%g : ?[?] = GlobalAveragePool(%gc)  # squeeze\n"
    "const %wse : f32[32,32,1,1] = rand(7)\n"
    "%f : ?[?] = Conv(%g, %wse)  # fc_se\n"
    "%s : ?[?] = Sigmoid(%f)  # gate\n"
    "%m : ?[?] = Mul(%gc, %s)  # excite\n"
    "const %wp : f32[24,32,1,1] = rand(8)\n"
    "%y : ?[?] = Conv(%m, %wp)  # project\n"
    "%sg : ?[?] = Sigmoid(%y)  # sig\n"
    "%sl : ?[?] = Mul(%y, %sg)  # silu\n"
    "%ap : ?[?] = AveragePool(%sl) {kernel_shape=[3,3], pads=[1,1,1,1], strides=[2,2]}  # avg\n"
    "%fl : ?[?] = Flatten(%ap) {axis=1}  # flat\n"
    "const %W : f32[10,384] = rand(9)\n"
    "const %B : f32[10] = rand(10)\n"
    "%o : ?[?] = Gemm(%fl, %W, %B) {transB=1}  # fc\n"
    "%sm : ?[?] = Softmax(%o) {axis=1}  # softmax\n"
    "%e : ?[?] = Tanh(%gc)  # tanh\n"
    "const %two : f32[1] = [2.0]\n"
    "%e2 : ?[?] = Mul(%e, %two)  # scale\n"
    "%e3 : ?[?] = Sub(%e2, %gc)  # sub\n"
    "output %sm, %e3\n",
    /* the index and view kinds, a run-time MatMul, Resize, a 1-D pool, Concat by copies */
    "graph ix opset 18\n"
    "input %x : f32[4,6]\n"
    "input %i : i64[3]\n"
    "input %u : f32[2,6]\n"
    "input %ni : i64[2,1]\n"
    "input %im : f32[1,2,3,4]\n"
    "input %v : f32[1,2,8]\n"
    "const %ov : f32[2] = [0.0, 1.0]\n"
    "const %gi : i64[4,1] = [1, 0, -1, 3]\n"
    "%tv : ?[?], %ti : ?[?] = TopK(%x) {axis=1, k=3, largest=1, sorted=1}  # topk\n"
    "%g : ?[?] = Gather(%x, %i) {axis=0}  # gather\n"
    "%gn : ?[?] = GatherND(%x, %gi) {batch_dims=1}  # gather_nd\n"
    "%sn : ?[?] = ScatterND(%x, %ni, %u) {reduction=\"add\"}  # scatter_nd\n"
    "%cs : ?[?] = CumSum(%x) {axis=1, exclusive=1, reverse=0}  # cumsum\n"
    "%oh : ?[?] = OneHot(%i, %ov) {axis=-1, depth=6}  # onehot\n"
    "%pd : ?[?] = Pad(%x) {mode=\"reflect\", pads=[1,2,1,2]}  # pad\n"
    "%tr : ?[?] = Transpose(%pd) {perm=[1,0]}  # transpose\n"
    "%sl : ?[?] = Slice(%tr) {axes=[0], ends=[-100], starts=[-1], steps=[-2]}  # slice\n"
    "%rd : ?[?] = Reduce(%tr) {axes=[1], keepdims=1, mode=\"sum\"}  # reduce\n"
    "%xt : ?[?] = Transpose(%x) {perm=[1,0]}  # xt\n"
    "%mm : ?[?] = MatMul(%x, %xt)  # matmul\n"
    "%cc : ?[?] = Concat(%x, %sn) {axis=0}  # concat\n"
    "%sm : ?[?] = Softmax(%cc) {axis=0}  # softmax\n"
    "%rs : ?[?] = Resize(%im) {coordinate_transformation_mode=\"half_pixel\", mode=\"linear\", "
    "scales=[1.0,1.0,2.0,2.0]}  # resize\n"
    "%mp : ?[?] = MaxPool(%v) {dilations=[2], kernel_shape=[2], pads=[1,1]}  # pool1d\n"
    "%am : ?[?] = Reduce(%x) {axes=[1], keepdims=0, mode=\"argmax\", select_last_index=1}  # argmax\n"
    "%gg : ?[?] = Concat(%g, %g) {axis=1}  # concat_twice\n"
    "output %tv, %ti, %gg, %gn, %cs, %oh, %sl, %rd, %mm, %sm, %rs, %mp, %am\n",
    /* run-time conv weights (WPACK), a conv epilogue with a constant and a run-time input,
     * depthwise, a vector program, Concat by copies */
    "graph misc opset 17\n"
    "input %x : f32[1,3,8,8]\n"
    "input %w : f32[8,3,3,3]\n"
    "input %gt : f32[1,8,1,1]\n"
    "%c : ?[?] = Conv(%x, %w) {kernel_shape=[3,3], pads=[1,1,1,1]}  # runtime_w\n"
    "%r : ?[?] = Relu(%c)  # relu\n"
    "const %w2 : f32[8,8,1,1] = rand(1)\n"
    "const %k : f32[8,1,1] = rand(2)\n"
    "%c2 : ?[?] = Conv(%r, %w2)  # conv2\n"
    "%t2 : ?[?] = Mul(%c2, %k)  # scale\n"
    "%sg : ?[?] = Sigmoid(%gt)  # gate\n"
    "%u2 : ?[?] = Mul(%t2, %sg)  # gated\n"
    "const %wd : f32[8,1,3,3] = rand(3)\n"
    "%d : ?[?] = Conv(%u2, %wd) {group=8, kernel_shape=[3,3], pads=[1,1,1,1]}  # dw\n"
    "%ds : ?[?] = Sigmoid(%d)  # dsig\n"
    "%dm : ?[?] = Mul(%d, %ds)  # dsilu\n"
    "%cc : ?[?] = Concat(%dm, %r) {axis=1}  # cat\n"
    "output %cc\n",
};
enum { NGRAPHS = sizeof graphs / sizeof *graphs, SEEDS = 2 * NGRAPHS };
_Static_assert((int)SEEDS == (int)FUZZ_OM_SEMANTIC_SEEDS, "fuzz_targets.h counts the seeds");

typedef struct seed {
  uint8_t *data; /* the package, 64-aligned, malloc'd once */
  size_t size;
} seed;

static seed seeds[SEEDS];

/* Compiles graphs[i / 2] in force_fp16 (even i) or must_keep_origin_dtype. */
static void build_seed(int i) {
  diag d;
  diag_init(&d);
  soc_info soc;
  ir_graph *g = NULL;
  status st = soc_load("Ascend310", &soc, &d);
  if (st == ST_OK) st = ir_parse(graphs[i / 2], "om_semantic seed", &g, &d);
  pass_ctx ctx = {.soc = &soc,
                  .precision = i % 2 ? OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE : OM_PRECISION_FORCE_FP16,
                  .winograd = 1,
                  .model_name = "om_semantic",
                  .cmdline = "om_semantic seed"};
  for (int k = 0; st == ST_OK && k < pass_pipeline_count; k++)
    if ((st = pass_pipeline[k].run(g, &ctx, &d)) == ST_OK) st = ir_verify(g, &d);
  void *data = NULL;
  if (st == ST_OK) st = om_writer_to_memory(ctx.writer, &data, &seeds[i].size, &d);
  om_writer_free(ctx.writer);
  ir_graph_free(g);
  if (st != ST_OK) { /* the test itself is broken */
    fprintf(stderr, "om_semantic: seed %d does not compile: %s\n", i, d.msg);
    abort();
  }
  seeds[i].data = data;
}

/* --- the package's records, located from its (valid) partition table */

typedef struct view {
  uint8_t *base;
  om_model_def *def;
  uint32_t *io;
  uint32_t nio;
  om_tensor *t;
  uint32_t nt;
  om_task *k;
  uint32_t nk;
  uint8_t *vp;
  uint64_t vbytes;
} view;

static void locate(uint8_t *base, view *v) {
  *v = (view){.base = base};
  const om_header *h = (const om_header *)base;
  const om_partition *p = (const om_partition *)(base + sizeof *h);
  for (uint32_t i = 0; i < h->npartitions; i++) {
    uint8_t *at = base + p[i].offset;
    switch (p[i].type) {
    case OM_PART_MODEL:
      v->def = (om_model_def *)at;
      v->io = (uint32_t *)(at + sizeof(om_model_def));
      v->nio = (uint32_t)((p[i].size - sizeof(om_model_def)) / 4);
      break;
    case OM_PART_TENSORS: v->t = (om_tensor *)at, v->nt = (uint32_t)(p[i].size / sizeof(om_tensor)); break;
    case OM_PART_TASKS: v->k = (om_task *)at, v->nk = (uint32_t)(p[i].size / sizeof(om_task)); break;
    case OM_PART_VPROGS: v->vp = at, v->vbytes = p[i].size; break;
    }
  }
}

/* --- mutations */

typedef enum mut_kind {
  MUT_TENSOR_FIELD,
  MUT_TENSOR_ALIAS,
  MUT_TASK_FIELD,
  MUT_TASK_SLOT,
  MUT_TASK_PARAM,
  MUT_TASK_COPY,
  MUT_VPROG_INSTR,
  MUT_VPROG_HEADER,
  MUT_MODEL_FIELD,
  MUT_IO_ENTRY,
  MUT_COUNT,
} mut_kind;

static const char *const mut_names[MUT_COUNT] = {
    "tensor field", "tensor alias", "task field",   "task slot",   "task param",
    "task copy",    "vprog instr",  "vprog header", "model field", "io entry",
};

typedef struct cursor {
  const uint8_t *p, *end;
} cursor;

/* One byte per call, so a recipe reads the same in every build. */
static unsigned take(cursor *c) { return c->p < c->end ? *c->p++ : 0; }

static const uint64_t boundaries[] = {0,
                                      1,
                                      2,
                                      3,
                                      4,
                                      8,
                                      15,
                                      16,
                                      17,
                                      63,
                                      64,
                                      255,
                                      256,
                                      4096,
                                      65535,
                                      65536,
                                      0x7fffffff,
                                      0x80000000u,
                                      0xffffffffu,
                                      0x100000000ull,
                                      0x7fffffffffffffffull,
                                      0x8000000000000000ull,
                                      0xffffffffffffffffull};

/* A new value for a field holding cur (of `width` bytes), or another record's `other`. */
static uint64_t pick_value(cursor *c, uint64_t cur, uint64_t other) {
  const unsigned how = take(c) % 6;
  const unsigned b = take(c);
  switch (how) {
  case 0: return boundaries[b % (sizeof boundaries / sizeof *boundaries)];
  case 1: return b;                             /* small: kinds, indices, dims, enums */
  case 2: return cur + (uint64_t)(b % 33) - 16; /* a little off */
  case 3: return b & 1 ? cur * 2 : cur / 2;
  case 4: return other;
  default: return (uint64_t)0 - (b % 17); /* small negatives */
  }
}

static uint64_t get_field(const void *at, size_t width) {
  uint64_t v = 0;
  memcpy(&v, at, width); /* little-endian host */
  return v;
}

static void set_field(void *at, size_t width, uint64_t v) { memcpy(at, &v, width); }

typedef struct field {
  size_t offset, width;
} field;

#define F(type, member)                                                                                      \
  { offsetof(type, member), sizeof(((type *)0)->member) }
static const field tensor_fields[] = {F(om_tensor, region), F(om_tensor, index),   F(om_tensor, dtype),
                                      F(om_tensor, layout), F(om_tensor, rank),    F(om_tensor, offset),
                                      F(om_tensor, bytes),  F(om_tensor, dims[0]), F(om_tensor, name)};
static const field task_fields[] = {F(om_task, kind), F(om_task, block_dim), F(om_task, ntensors),
                                    F(om_task, name)};
static const field instr_fields[] = {F(om_vinstr, op),   F(om_vinstr, dtype), F(om_vinstr, dst),
                                     F(om_vinstr, a),    F(om_vinstr, b),     F(om_vinstr, c),
                                     F(om_vinstr, imm.i)};
static const field vprog_fields[] = {F(om_vprog, ninputs), F(om_vprog, noutputs), F(om_vprog, nregs),
                                     F(om_vprog, ninstrs)};
static const field model_fields[] = {F(om_model_def, workspace_bytes), F(om_model_def, l1_bytes),
                                     F(om_model_def, l0a_bytes),       F(om_model_def, l0b_bytes),
                                     F(om_model_def, l0c_bytes),       F(om_model_def, ub_bytes),
                                     F(om_model_def, ai_cores),        F(om_model_def, precision),
                                     F(om_model_def, ntensors),        F(om_model_def, ntasks)};
#undef F
#define NFIELDS(a) (sizeof(a) / sizeof *(a))

/* Applies field f of record `rec` (its twin in record `other`) a new value. */
static void mutate_field(cursor *c, uint8_t *rec, const uint8_t *other, field f, unsigned extra) {
  uint8_t *at = rec + f.offset + extra;
  set_field(at, f.width, pick_value(c, get_field(at, f.width), get_field(other + f.offset + extra, f.width)));
}

/* A vector program some task names (a VPROG's or a conv epilogue's), or NULL. */
static uint8_t *some_program(const view *v, unsigned pick) {
  uint32_t offs[64], n = 0;
  for (uint32_t i = 0; i < v->nk && n < 64; i++) {
    const om_task *t = &v->k[i];
    if (t->kind == OM_TASK_VPROG) offs[n++] = (uint32_t)t->params[OM_VPROG_P_PROGRAM];
    if ((t->kind == OM_TASK_CONV2D || t->kind == OM_TASK_DWCONV) && t->params[OM_CONV_P_EPILOGUE] == 1)
      offs[n++] = (uint32_t)t->params[OM_CONV_P_EPILOGUE_OFFSET];
  }
  if (!n || !v->vp) return NULL;
  uint32_t off = offs[pick % n]; /* a misaligned one (an earlier mutant's) is the loader's to refuse */
  return off % _Alignof(om_vprog) == 0 && off + sizeof(om_vprog) <= v->vbytes ? v->vp + off : NULL;
}

static uint64_t counts[MUT_COUNT], mutants, loaded, executed, refused_at_exec;

static void mutate(cursor *c, view *v) {
  const mut_kind kind = (mut_kind)(take(c) % MUT_COUNT);
  const unsigned a = take(c), b = take(c), which = take(c);
  unsigned extra = take(c);
  counts[kind]++;
  switch (kind) {
  case MUT_TENSOR_FIELD: {
    field f = tensor_fields[which % NFIELDS(tensor_fields)];
    if (f.offset == offsetof(om_tensor, dims))
      f.width = 8, extra = extra % MAX_RANK * 8; /* dims[k] */
    else
      extra = 0;
    mutate_field(c, (uint8_t *)&v->t[a % v->nt], (const uint8_t *)&v->t[b % v->nt], f, extra);
    break;
  }
  case MUT_TENSOR_ALIAS: { /* tensor a moved onto tensor b's memory, at b's offset + 0/16/.../112 bytes */
    om_tensor *x = &v->t[a % v->nt];
    const om_tensor *y = &v->t[b % v->nt];
    x->region = y->region, x->index = y->index, x->offset = y->offset + (uint64_t)(which % 8) * 16;
    break;
  }
  case MUT_TASK_FIELD:
    mutate_field(c, (uint8_t *)&v->k[a % v->nk], (const uint8_t *)&v->k[b % v->nk],
                 task_fields[which % NFIELDS(task_fields)], 0);
    break;
  case MUT_TASK_SLOT: { /* another tensor, OM_NONE, or a value */
    uint32_t *slot = &v->k[a % v->nk].tensors[which % OM_TASK_MAX_TENSORS];
    const unsigned how = extra % 4;
    *slot = how < 2 ? b % v->nt : how == 2 ? OM_NONE : (uint32_t)pick_value(c, *slot, v->nt);
    break;
  }
  case MUT_TASK_PARAM: {
    int32_t *p = &v->k[a % v->nk].params[which % OM_TASK_MAX_PARAMS];
    *p = (int32_t)pick_value(c, (uint64_t)(int64_t)*p,
                             (uint64_t)(int64_t)v->k[b % v->nk].params[which % OM_TASK_MAX_PARAMS]);
    break;
  }
  case MUT_TASK_COPY: v->k[a % v->nk] = v->k[b % v->nk]; break;
  case MUT_VPROG_INSTR: {
    uint8_t *prog = some_program(v, a);
    if (!prog) break;
    const om_vprog *h = (const om_vprog *)prog;
    const uint64_t room = (uint64_t)(v->vp + v->vbytes - prog - sizeof *h) / sizeof(om_vinstr);
    const uint64_t n = h->ninstrs < room ? h->ninstrs : room;
    if (!n) break;
    uint8_t *ins = prog + sizeof *h + (b % n) * sizeof(om_vinstr);
    mutate_field(c, ins, prog + sizeof *h + (extra % n) * sizeof(om_vinstr),
                 instr_fields[which % NFIELDS(instr_fields)], 0);
    break;
  }
  case MUT_VPROG_HEADER: {
    uint8_t *prog = some_program(v, a);
    if (prog) mutate_field(c, prog, prog, vprog_fields[which % NFIELDS(vprog_fields)], 0);
    break;
  }
  case MUT_MODEL_FIELD:
    mutate_field(c, (uint8_t *)v->def, (const uint8_t *)v->def, model_fields[which % NFIELDS(model_fields)],
                 0);
    break;
  case MUT_IO_ENTRY:
    if (v->nio) v->io[a % v->nio] = b % v->nt;
    break;
  case MUT_COUNT: break;
  }
}

/* --- loading and running from read-only memory
 *
 * Two areas live across calls, one for the package and one for the inputs,
 * each a memfd mapped twice: read-only for libomrt, writable for the
 * harness to fill (remapping or mprotect per call would spend the time in
 * TLB shootdowns). */

typedef struct ro_area {
  uint8_t *rw, *ro; /* the same bytes */
  size_t len;       /* bytes mapped, whole pages */
} ro_area;

static ro_area pkg_area, in_area;

/* Zeroes size bytes of a (growing it first) and returns its writable view; NULL on failure. */
static uint8_t *area_open(ro_area *a, size_t size) {
  const size_t ps = (size_t)sysconf(_SC_PAGESIZE), len = ((size ? size : 1) + ps - 1) / ps * ps;
  if (len > a->len) {
    if (a->len) munmap(a->rw, a->len), munmap(a->ro, a->len);
    a->len = 0;
    int fd = memfd_create("om_semantic", MFD_CLOEXEC);
    if (fd < 0) return NULL;
    if (ftruncate(fd, (off_t)len) == 0) {
      a->rw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      a->ro = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
      if (a->rw != MAP_FAILED && a->ro != MAP_FAILED) a->len = len;
    }
    close(fd);
    if (!a->len) return NULL;
  }
  memset(a->rw, 0, size);
  return a->rw;
}

/* size input bytes at p: zeros, random bytes (NaNs, infinities, huge and
 * negative indices) or small ones, from the generator *fill. */
static void fill_input(uint8_t *p, size_t size, uint64_t *fill) {
  const unsigned style = (unsigned)(*fill % 3);
  for (size_t i = 0; style && i < size; i++) { /* xorshift */
    *fill ^= *fill << 13, *fill ^= *fill >> 7, *fill ^= *fill << 17;
    p[i] = (uint8_t)(style == 1 ? *fill : *fill % 4);
  }
  *fill += 0x9e3779b97f4a7c15ull;
}

static void record(void) {
  fuzz_last.rejected = 1;
  snprintf(fuzz_last.msg, sizeof fuzz_last.msg, "%s", omrt_last_error());
}

static void run(omrt_model *m, uint64_t fill) {
  enum { MAX_IO = 16 };
  const int nin = omrt_model_num_inputs(m), nout = omrt_model_num_outputs(m);
  if (nin > MAX_IO || nout > MAX_IO) return;
  omrt_tensor_desc d;
  uint64_t total = omrt_model_workspace_bytes(m);
  size_t in_bytes[MAX_IO] = {0};
  for (int i = 0; i < nin; i++)
    total += omrt_model_input(m, i, &d) == OMRT_OK ? (in_bytes[i] = d.bytes) : 0;
  for (int i = 0; i < nout; i++)
    total += omrt_model_output(m, i, &d) == OMRT_OK ? d.bytes : 0;
  if (total > FUZZ_MAX_EXEC_BYTES) return;
  const void *in[MAX_IO] = {0};
  void *out[MAX_IO] = {0};
  size_t at[MAX_IO + 1] = {0}; /* each input 64-byte aligned in one read-only area */
  for (int i = 0; i < nin; i++)
    at[i + 1] = at[i] + (in_bytes[i] + 63) / 64 * 64;
  uint8_t *area = area_open(&in_area, at[nin]);
  int ok = area != NULL;
  for (int i = 0; ok && i < nin; i++)
    fill_input(area + at[i], in_bytes[i], &fill), in[i] = in_area.ro + at[i];
  for (int i = 0; ok && i < nout; i++)
    ok = omrt_model_output(m, i, &d) == OMRT_OK && (out[i] = calloc(1, d.bytes ? d.bytes : 1));
  if (ok) {
    omrt_context *ctx = NULL;
    omrt_status s = omrt_context_new(m, &ctx);
    if (s == OMRT_OK) s = omrt_execute(ctx, in, out);
    if (s != OMRT_OK) {
      record();
      refused_at_exec++;
    } else {
      executed++;
    }
    omrt_context_free(ctx);
  }
  for (int i = 0; i < nout; i++)
    free(out[i]);
}

int fuzz_om_semantic(const uint8_t *data, size_t size) {
  fuzz_last.rejected = 0;
  fuzz_last.msg[0] = '\0';
  cursor c = {data, data + size};
  const unsigned which = take(&c) % SEEDS;
  if (!seeds[which].data) build_seed((int)which);
  const seed *s = &seeds[which];
  uint8_t *buf = area_open(&pkg_area, s->size);
  if (!buf) return 0;
  memcpy(buf, s->data, s->size);
  view v;
  locate(buf, &v);
  uint64_t fill = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < MAX_MUTATIONS && c.p < c.end; i++) {
    mutate(&c, &v);
    fill = fill * 31 + (uint64_t)(c.end - c.p);
  }
  fuzz_om_repair(buf, s->size);
  mutants++;
  omrt_load_options opts = {.threads = 1};
  omrt_model *m = NULL;
  if (omrt_model_load_memory(pkg_area.ro, s->size, &opts, &m) != OMRT_OK) {
    record();
  } else {
    loaded++;
    run(m, fill | 1);
  }
  omrt_model_free(m);
  return 0;
}

void fuzz_om_semantic_stats(FILE *f) {
  fprintf(f, "om_semantic: %llu mutants: %llu refused at load, %llu loaded (%llu ran, %llu refused at run)\n",
          (unsigned long long)mutants, (unsigned long long)(mutants - loaded), (unsigned long long)loaded,
          (unsigned long long)executed, (unsigned long long)refused_at_exec);
  fprintf(f, "om_semantic: mutations by kind:");
  for (int k = 0; k < MUT_COUNT; k++)
    fprintf(f, "%s %s %llu", k ? "," : "", mut_names[k], (unsigned long long)counts[k]);
  fprintf(f, "\n");
}
