/* rt.h - libomrt internals: the loaded model, the execution context, and the
 * kernel interface between the executor (exec.c) and the kernels
 * (kernels_*.c). Never included by applications (they use include/omrt.h)
 * and never includes compiler headers.
 *
 * Lifetimes: an rt_model owns its mapping (or borrows the caller's memory)
 * and the descriptor arrays it allocates at load; everything a task needs is
 * resolved and checked at load, so execute does no validation and no
 * allocation. A kind with a `prepare` hook (VPROG) also gets a per-task side
 * table built at load (task_aux[i], one malloc'd block each, e.g. a vector
 * program's decoded steps and broadcast strides), freed with the model and
 * handed to the kernel as rt_args.aux.
 */
#ifndef RUNTIME_RT_H
#define RUNTIME_RT_H

#include <stddef.h>
#include <stdint.h>

#include "common/om_format.h"
#include "omrt.h"

/* Records the message for omrt_last_error() on this thread; returns s. */
omrt_status rt_error(omrt_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One gear of the model (om_format.h's GEARS partition; a package without
 * one has a single gear covering every task). The descriptors are the
 * gear's own dims and bytes. */
typedef struct rt_gear {
  const om_gear *rec;                 /* the record, NULL for the implicit gear */
  const om_task *tasks;               /* its tasks, ntasks of them, from tasks[first_task] */
  uint32_t first_task, ntasks;        /* in the whole task table */
  uint32_t first_tensor, ntensors;    /* its tensor descriptors */
  uint64_t workspace_bytes;           /* the bytes of the workspace its tensors use */
  const uint32_t *io;                 /* [ninputs + noutputs] tensor indices */
  omrt_tensor_desc *inputs, *outputs; /* malloc'd at load */
} rt_gear;

struct omrt_model {
  const uint8_t *base; /* the whole package (mapped or caller's memory) */
  size_t size;         /* bytes */
  int mapped;          /* 1: munmap(base, size) on free */
  const om_header *header;
  const om_model_def *def;
  const uint32_t *io; /* [ninputs + noutputs] tensor indices */
  const om_tensor *tensors;
  const om_task *tasks;
  const uint8_t *weights; /* the WEIGHTS partition, the caller's copy (omrt_load_options.weights), or
                             weights_owned */
  uint64_t weights_bytes;
  void *weights_owned; /* the weights decoded from a ZMAP package without caller memory (free()), or NULL */
  const char *strings;
  uint64_t strings_bytes;
  const uint8_t *vprogs; /* the VPROGS partition (NULL when absent) */
  uint64_t vprogs_bytes;
  const om_task_source *sources;             /* [ntasks] of the SOURCES partition (NULL when absent) */
  const uint32_t *source_names;              /* its names[] (string offsets) */
  void **task_aux;                           /* [ntasks]: prepare hooks' side data (NULL entries for other
                                                kinds; the array itself NULL when no task has any); free() each */
  const omrt_vprog_compiler *vprog_compiler; /* from the load options; NULL: none */
  void *vprog_native;                        /* its per-model state (vprog_compiler.h) */
  /* The model's inputs and outputs across its gears (malloc'd at load,
   * names point into strings): a dim that differs between gears is -1,
   * bytes the largest gear's. */
  omrt_tensor_desc *inputs, *outputs;
  const uint32_t *formats; /* [ninputs + noutputs] om_io_format (IO partition), or NULL: all ND */
  const om_count *counts;  /* [noutputs] (COUNTS partition, checked), or NULL: every output dense */
  const om_onode *onodes;  /* [noutputs] (ONODES partition, checked), or NULL: not recorded */
  rt_gear *gears;          /* [ngears], malloc'd at load; >= 1 */
  uint32_t ngears;
  uint32_t gear_kind; /* om_gear_kind, 0 without a GEARS partition */
  uint32_t gear_nvalues;
  uint32_t threads; /* worker threads a context starts */
};

/* Per-AI-core scratch, sized from om_model_def at context creation; a kernel
 * stages its tiles here (L0A/L0B: cube operands, L0C: fp32 accumulators, UB:
 * vector working set). 64-byte aligned.
 * run numbers the task runs on this core (exec.c sets it before a task's
 * blocks or pieces run: a new number for every task of every execution; 0
 * outside the executor), so that a kernel can keep in L1 what the next
 * piece of the same task wants (rt_l1_holds in kernels.h). */
typedef struct rt_core {
  int id;
  uint8_t *l1, *l0a, *l0b, *l0c, *ub;
  size_t l1_bytes, l0a_bytes, l0b_bytes, l0c_bytes, ub_bytes;
  uint64_t run;
  struct rt_l1_key {
    uint64_t run;
    const void *what;
    int64_t a, b, c;
  } l1_key; /* what L1 holds, in the kernel's terms (valid in task run l1_key.run only) */
  /* An index outside its axis met in run-time data (rt_index_fault): the
   * kernel reads zeros instead and writes nothing there, records the first
   * such index here and goes on; omrt_execute fails the execution after the
   * task's barrier, naming the task (exec.c). */
  int fault;                      /* 0: none */
  int64_t fault_index, fault_dim; /* the index and the dim it must lie in [-dim, dim) */
  int nworkers;                   /* the workers of the team the core runs in (exec.c); 0 outside one */
} rt_core;

/* A task's tensors resolved to addresses for one execution: data[i] is the
 * address of om tensor task->tensors[i] (NULL for OM_NONE), desc[i] its
 * descriptor (NULL for OM_NONE); aux is the task's load-time side data
 * (omrt_model.task_aux; NULL for kinds without a prepare hook). */
typedef struct rt_args {
  void *data[OM_TASK_MAX_TENSORS];
  const om_tensor *desc[OM_TASK_MAX_TENSORS];
  const void *aux;
} rt_args;

/* Runs block `block` (0 <= block < task->block_dim) of a task. Kernels never
 * fail at run time: everything that could go wrong was checked at load, but
 * for indices that are data (Gather, Scatter with run-time indices): those
 * are checked as they are read, and one outside its axis is recorded in the
 * core (rt_index_fault) instead of being read or written through. */
typedef void (*rt_kernel_fn)(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);

/* Load-time check of one task against its kind's contract in om_format.h:
 * tensor count, which slots may be OM_NONE, layouts, dtypes, rank, dims
 * consistency (e.g. conv output dims from input dims and params), params in
 * range, tile sizes fitting the model's buffer capacities. `tensors` is the
 * whole tensor table (indices already bounds-checked). Returns OMRT_OK or
 * rt_error(OMRT_ERR_FORMAT or OMRT_ERR_UNSUPPORTED, "task %u (%s) '<name>': ...").
 */
typedef omrt_status (*rt_check_fn)(const omrt_model *m, uint32_t task_index, const om_task *task);

/* Optional, run at load after check succeeded: builds the task's side data
 * (*aux_out, one malloc'd block, freed by omrt_model_free) so that run does
 * no decoding. Fails only with rt_error(OMRT_ERR_NOMEM, ...). */
typedef omrt_status (*rt_prepare_fn)(const omrt_model *m, uint32_t task_index, const om_task *task,
                                     void **aux_out);

/* Optional, for kinds whose blocks divide at run time into pieces that an
 * idle AI core may take over from a busy one (exec.c): returns the task's
 * units (kernels.h's table: CONV2D tiles) and sets *parts to the pieces each
 * unit divides into, for the team `core` runs in (its nworkers), and *grain
 * to the pieces a core takes at a time while its share lasts (a power of
 * two dividing parts; team.c); block b's pieces are [lo * parts, hi * parts)
 * for its units [lo, hi) = rt_block_range(units, block_dim, b), and
 * run_piece runs pieces [first, first + count) of one unit as one piece
 * (count a power of two dividing both parts and first). Returns 0 when this
 * task's blocks do not divide. */
typedef uint64_t (*rt_pieces_fn)(const om_task *task, const rt_args *args, const rt_core *core,
                                 uint32_t *parts, uint32_t *grain);
typedef void (*rt_piece_fn)(const om_task *task, const rt_args *args, uint64_t first, uint32_t count,
                            uint32_t parts, rt_core *core);

typedef struct rt_kernel {
  const char *name; /* "CONV2D", ... */
  rt_kernel_fn run;
  rt_check_fn check;
  rt_prepare_fn prepare; /* NULL: the kind needs no side data */
  rt_pieces_fn pieces;   /* NULL: blocks are the finest work */
  rt_piece_fn run_piece;
} rt_kernel;

/* The kernel table, indexed by om_task_kind; entries with run == NULL are
 * kinds this runtime does not know. */
extern const rt_kernel rt_kernels[];
extern const uint32_t rt_kernel_count;

/* The tensor access of a task kind (om_format.h, OM_TASK_ACCESS): the slots
 * it writes (OM_WRITES_OUTPUTS: its program's outputs) and the read slots
 * it may write over in place; writes 0 for a kind without one. */
typedef struct rt_access {
  uint32_t writes, in_place;
} rt_access;
rt_access rt_kind_access(uint32_t kind);

/* The slots task t writes (OM_SLOT bits): its kind's access, a VPROG's
 * program outputs. t's program must have been checked. */
uint32_t rt_task_writes(const omrt_model *m, const om_task *t);

/* Task i as omrt_task_info (tasks.c), its outputs' data from args (NULL:
 * none). */
void rt_task_info(const omrt_model *m, uint32_t i, const rt_args *args, omrt_task_info *info);
/* Input k of task i (the k-th slot it reads, slot order; data from args):
 * 1, or 0 past the last (tasks.c). */
int rt_task_input(const omrt_model *m, uint32_t i, const rt_args *args, int k, omrt_task_tensor *out);
/* OMRT_ERR_OVERFLOW, naming the task, its nodes and the tensor, when a float
 * output of `info` (with data) holds inf or NaN; else OMRT_OK. */
omrt_status rt_check_overflow(const omrt_model *m, const omrt_task_info *info);

/* Task name from the string table (checked at load). */
const char *rt_string(const omrt_model *m, uint32_t offset);
const char *rt_region_name(uint32_t region); /* "WEIGHTS", ... */

/* A partition's extent (om_load.c's check_partitions). */
typedef struct rt_part {
  int present;
  uint64_t offset, size; /* bytes */
} rt_part;

/* om_gears.c: the IO and GEARS partitions (either may be absent), the
 * gears and their I/O descriptors, after the tensor table was checked
 * (tensors: its partition, for messages) and m->tasks set. */
omrt_status rt_load_gears(omrt_model *m, const rt_part *io, const rt_part *gears, const rt_part *tensors);
/* kernels_aipp.c: checks record p against an AIPP task whose y has dims
 * ydims ([N, C, H, W]) and whose src holds src_bytes (om_format.h's
 * rules); 0 when it holds, else 1 with the broken rule in msg. */
int rt_aipp_validate(const om_aipp_params *p, const int64_t ydims[4], uint64_t src_bytes, char *msg,
                     size_t len);
const char *rt_aipp_format_name(uint32_t format); /* "YUV420SP_U8", ... */
/* kernels_aipp.c: checks the params tensor recs (bytes: 1 record or one
 * per image) against an AIPP task as rt_aipp_validate does each record,
 * and that the records agree on what the images share; image_size_gears:
 * ATC's rule (no crop, no padding) too. 0 or 1 with msg. */
int rt_aipp_validate_records(const uint8_t *recs, uint64_t bytes, const int64_t ydims[4], uint64_t src_bytes,
                             int image_size_gears, char *msg, size_t len);
/* aipp.c: the AIPP task of gear `gear` whose src is model input `input`,
 * or NULL; the bytes of input's dynamic AIPP parameters (the largest
 * gear's: one record an image), 0 without; cfgs (1: every image, or one
 * an image of the largest gear) checked against input's dynamic AIPP (a
 * gear that takes them) and packed into buf (bytes), *params_input the
 * input that carries them (fn names the API call in messages); every
 * dynamic AIPP record of gear g's tasks in inputs checked before a run. */
const om_task *rt_aipp_task(const omrt_model *m, uint32_t gear, uint32_t input);
uint64_t rt_aipp_params_bytes(const omrt_model *m, int input);
omrt_status rt_aipp_pack(const omrt_model *m, int input, const omrt_aipp *cfgs, uint64_t ncfgs, void *buf,
                         size_t bytes, const char *fn, int *params_input);
omrt_status rt_aipp_check_run(const omrt_model *m, const rt_gear *g, const void *const *inputs);

/* The model's gears as text for messages ("1, 2, 4, 8"). */
void rt_gear_list(const omrt_model *m, char *buf, size_t n);

#endif
