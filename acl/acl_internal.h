/* acl_internal.h - libascendcl's internals, shared by the sources in acl/. Built only on
 * libomrt's public API (include/omrt.h); never includes runtime/.
 *
 * State: one process-wide registry (acl_rt.c) of the contexts, their
 * streams, the loaded models and the memory handed out by aclrtMalloc /
 * aclrtMallocHost, under one mutex (acl_enter / acl_leave). Handles the
 * application holds are checked against it, so a destroyed or foreign
 * handle is an AscendCL error, not a crash. Serial numbers (never reused)
 * identify contexts across destroy and re-create.
 *
 * Lifetimes: a model in use by a call or queued on a stream counts a user
 * (acl_model.users); unloading takes it out of the registry, then waits for
 * the users to leave before freeing it. A stream's queued work runs on the
 * stream's own thread (acl_stream.c) and never takes the registry lock
 * while it runs libomrt.
 */
#ifndef ACL_ACL_INTERNAL_H
#define ACL_ACL_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "acl/acl_op.h"
#include "omrt.h"

/* --- errors (acl_err.c) */

/* Records "<message>" for aclGetRecentErrMsg on this thread and returns code. */
aclError acl_fail(aclError code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A call the software NPU does not provide: after the aclInit check every
 * call gets (acl_enter's code if it fails), records "<call>: <reason>" and
 * returns ACL_ERROR_FEATURE_UNSUPPORTED. */
aclError acl_unsupported(const char *call, const char *reason_fmt, ...) __attribute__((format(printf, 2, 3)));
/* The aclError for a failed libomrt call (its message is omrt_last_error()). */
aclError acl_from_omrt(omrt_status s);
/* err_msg_mode "1": the messages are the process's, not each thread's
 * (aclInit sets it, aclFinalize clears it). */
void acl_set_err_msg_process(int on);

/* --- configuration files (acl_init_config.c): aclInit's and aclmdlSetDump's */

enum { ACL_DUMP_OUTPUT = 1, ACL_DUMP_INPUT = 2, ACL_DUMP_ALL = 3 }; /* bits: outputs 1, inputs 2 */

typedef struct acl_dump_entry {
  char *model;   /* "model_name" (owned); NULL: every model */
  char **layers; /* "layer" [nlayers] (owned); none: every operator */
  int nlayers;
} acl_dump_entry;

typedef struct acl_dump_config {
  int on;     /* "dump_list" has entries */
  char *path; /* "dump_path" (owned), a writable directory when on */
  int mode;   /* ACL_DUMP_* ("output" when not given) */
  acl_dump_entry *list;
  int nlist;
} acl_dump_config;

typedef struct acl_init_config {
  int err_msg_process; /* "err_msg_mode": "1" */
  int default_device;  /* "defaultDevice": {"default_device": "0"} */
  acl_dump_config dump;
  int prof_on;       /* "profiler": {"switch": "on"} */
  char *prof_output; /* its "output" (owned; "." when not given) */
} acl_init_config;

/* Reads and checks the file `path` into cfg for `call` (aclInit; with
 * dump_only, aclmdlSetDump: the "dump" section alone); on failure the
 * aclError with its message recorded and cfg empty. acl_config_free frees
 * what a read kept. */
aclError acl_read_config(const char *call, const char *path, int dump_only, acl_init_config *cfg);
void acl_config_free(acl_init_config *cfg);

/* --- dump (acl_dump.c) and profiling (acl_prof.c) */

typedef struct acl_model acl_model;
typedef struct acl_dump_model acl_dump_model;

/* aclInit's dump and profiler sections (cfg's dump and prof_output are
 * taken). */
void acl_dump_init_config(acl_init_config *cfg);
void acl_prof_init_config(acl_init_config *cfg);
/* aclFinalize: the dump ends; profiling stops (its summary written) and the
 * subscriptions end. */
void acl_dump_finalize(void);
void acl_prof_finalize(void);
/* A model just loaded from `path` (NULL: from memory), its id given:
 * notes its file name, and under an active dump configuration that selects
 * it, the model dumps (am->dump). Under the registry lock. */
aclError acl_dump_attach(acl_model *am, const char *path);
void acl_dump_model_free(acl_dump_model *d);
/* The name a dump or profile gives model am (file name without its
 * extension, else the om's name). */
const char *acl_model_dump_name(const acl_model *am);

/* One execution of model m, under m->run (acl_trace.c glues these to
 * libomrt's task hooks): the dump's (NULL when the model does not dump
 * now) ... */
acl_dump_model *acl_dump_run_begin(acl_model *m);
/* before the task (its inputs), after it (its outputs and the file or
 * callback): non-zero on a failure, described in msg. */
int acl_dump_task_start(acl_dump_model *d, omrt_context *ctx, const omrt_model *m, const omrt_task_info *info,
                        char *msg, size_t n);
int acl_dump_task_end(acl_dump_model *d, const omrt_task_info *info, char *msg, size_t n);
void acl_dump_run_end(acl_dump_model *d);
/* ... and profiling's (NULL when nothing profiles m now). */
typedef struct acl_prof_run acl_prof_run;
acl_prof_run *acl_prof_run_begin(acl_model *m);
void acl_prof_task(acl_prof_run *r, const omrt_task_info *info, uint64_t start_ns, uint64_t end_ns);
void acl_prof_run_end(acl_prof_run *r); /* files the rows, sends the records; frees r */
/* Around one execution of m (under m->run): sets libomrt's task hooks when
 * the dump or profiling wants the run (*out non-NULL), else does nothing;
 * acl_trace_end takes them off and finishes both, giving the dump's failure
 * (message in msg) or ACL_SUCCESS. */
typedef struct acl_trace acl_trace;
void acl_trace_begin(acl_model *m, acl_trace **out);
aclError acl_trace_end(acl_trace *t, char *msg, size_t n);

/* --- the registry (acl_rt.c) */

typedef struct acl_stream acl_stream;

typedef struct acl_context {
  struct acl_context *next;
  uint64_t serial;
  int is_default;             /* the device's, from aclrtSetDevice */
  acl_stream *default_stream; /* created at first use of a NULL stream */
  int64_t sys_param[2];       /* aclrtCtxSetSysParamOpt's, by aclSysParamOpt */
} acl_context;

struct acl_model {
  struct acl_model *next;
  uint32_t id;
  uint64_t ctx_serial; /* the context it was loaded in */
  omrt_model *m;
  omrt_context *ctx;
  void *package;        /* our copy of aclmdlLoadFromMem*'s data (NULL for a file) */
  int users;            /* calls and queued runs using it (acl_model_use / acl_model_release) */
  pthread_mutex_t run;  /* one omrt_execute at a time */
  int nin, nout;        /* libomrt's inputs and outputs */
  int dyn;              /* 1 for a model with gears: input nin is ACL_DYNAMIC_TENSOR_NAME */
  int nvalues;          /* that input's int64 values (omrt_gear_desc.nvalues) */
  int cur_gear;         /* the gear the last aclmdlSet* call chose, -1 before one (aclmdlGetCurOutputDims) */
  char *file_name;      /* aclmdlLoadFromFile*'s file name without directory and extension (owned), or NULL */
  acl_dump_model *dump; /* the dump selection of a model loaded under a dump configuration (owned), or NULL */
  uint64_t prof_runs;   /* its executions in op summaries (acl_prof.c, under run) */
};

/* ACL_ERROR_RT_INVALID_DEVICEID naming `call` unless deviceId is 0. */
aclError acl_check_device(const char *call, int32_t deviceId);
/* Locks the registry if aclInit has run (else ACL_ERROR_UNINITIALIZE,
 * naming `call`, unlocked). */
aclError acl_enter(const char *call);
void acl_leave(void);
aclError acl_leave_with(aclError e); /* acl_leave(), then returns e */
/* acl_enter's aclInit check, then `mu` locked instead of the registry: the
 * entry of a module with state of its own (acl_dump.c, acl_prof.c). */
aclError acl_enter_module(const char *call, pthread_mutex_t *mu);

/* Under the lock: */
acl_context *acl_current(void);         /* the calling thread's context, NULL if none or destroyed */
void acl_add_model(acl_model *m);       /* gives it the next model id */
acl_model *acl_find_model(uint32_t id); /* NULL when no such model is loaded */
void acl_remove_model(acl_model *m);    /* out of the registry, then waits until unused */
void acl_model_use(acl_model *m);       /* users++ (with or without the lock) */
void acl_model_release(acl_model *m);   /* users--, waking acl_remove_model (with or without it) */
/* The device allocation holding [p, p + n): 1; memory no allocation holds: 0;
 * -1 when p is device memory but p + n runs past its allocation's end (*base
 * and *size then describe it). */
int acl_device_range(const void *p, size_t n, const void **base, size_t *size);
/* The stream `s` names (NULL: the current context's default, created now),
 * checked to be a live stream of the current context. */
aclError acl_resolve_stream(const char *call, aclrtStream s, acl_stream **out);
/* A new stream of the current context (aclrtCreateStream and the calls
 * with a configuration), of priority `priority` (acl_stream_priority). */
aclError acl_create_stream(const char *call, aclrtStream *stream, uint32_t priority);
/* Device memory as aclrtMalloc's, under the lock (aclmdlExecute's empty
 * output buffers); the free undoes one. */
aclError acl_alloc_device_locked(const char *call, void **devPtr, size_t size);
void acl_free_device_locked(void *devPtr);
/* aclrtMalloc and aclrtFree named `call` (without the lock). */
aclError acl_malloc_device(const char *call, void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError acl_free_device(const char *call, void *devPtr);
/* Notes the SoC of a model just loaded (aclrtGetSocName; under the lock). */
void acl_set_soc(const char *soc);

/* --- models (acl_mdl.c) */

void acl_model_free(acl_model *m); /* unused and out of the registry */
/* Every load, named `call`: the file `path`, or `size` bytes at `model`;
 * workPtr and weightPtr may be NULL (the runtime's memory). */
aclError acl_mdl_load(const char *call, const char *path, const void *model, size_t size, uint32_t *modelId,
                      void *workPtr, size_t workSize, void *weightPtr, size_t weightSize);
/* Reads and verifies an om without loading it (no context): the file
 * `path`, or `size` bytes at `model` (copied to *copy, which the caller
 * frees after omrt_model_free(*out)). */
aclError acl_mdl_read(const char *call, const char *path, const void *model, size_t size, omrt_model **out,
                      void **copy);
/* Fills am's nin, nout, dyn and nvalues from am->m. */
void acl_model_io(acl_model *am);
/* The loaded model `id`, of the current context (under the lock). */
aclError acl_mdl_find(const char *call, uint32_t id, acl_model **out);

/* A run's configuration (aclmdlSetExecConfigOpt, acl_config.c). */
struct aclmdlExecConfigHandle {
  int32_t stream_sync_timeout; /* ms, -1: none (aclmdlExecuteV2's wait) */
  int32_t event_sync_timeout;  /* ms, -1: none (kept; bounds nothing here) */
};

/* --- streams (acl_stream.c) */

typedef enum acl_op_kind {
  ACL_OP_COPY,     /* count bytes src -> dst */
  ACL_OP_COPY2D,   /* height rows of count bytes, pitches dpitch and spitch */
  ACL_OP_MEMSET,   /* count bytes of dst to value */
  ACL_OP_RUN,      /* a model run */
  ACL_OP_RECORD,   /* event reaches record number gen */
  ACL_OP_RESET,    /* event forgets its records up to gen */
  ACL_OP_WAIT,     /* the stream waits for event's record gen */
  ACL_OP_CALLBACK, /* fn(user) handed to the stream's subscribed thread */
  ACL_OP_OVERFLOW, /* count bytes at dst: the overflow flag (value 1: reset it instead) */
  ACL_OP_DVPP,     /* work(job): a media-processing task (acl_dvpp.c) */
} acl_op_kind;

typedef struct acl_event acl_event;

typedef struct acl_op {
  struct acl_op *next;
  acl_op_kind kind;
  void *dst; /* COPY, COPY2D, MEMSET */
  const void *src;
  size_t count;
  size_t dpitch, spitch, height; /* COPY2D */
  int value;                     /* MEMSET */
  acl_model *model;              /* RUN: holds a user until the run is done */
  int gear;                      /* RUN: the gear it runs */
  const void **in;               /* RUN: [model->nin] addresses, then out [model->nout], one allocation */
  void **out;
  acl_event *event; /* RECORD, RESET, WAIT: holds a reference until done */
  uint64_t gen;
  aclrtCallback fn; /* CALLBACK */
  void *user;
  int block;
  aclError (*work)(void *job, char *msg, size_t n); /* DVPP: failure message to msg */
  void *job;                                        /* DVPP: owned, freed after it ran (or was skipped) */
} acl_op;

acl_stream *acl_stream_new(acl_context *ctx); /* NULL when out of memory or threads */
/* Runs what is queued (a blocking callback no thread has taken is
 * withdrawn instead of waited for), joins the thread, ends the stream's
 * subscription. ACL_ERROR_RT_STREAM_NO_CB_REG (msg says why) when a
 * callback could not run. */
aclError acl_stream_free(acl_stream *s, char *msg, size_t n);
int acl_stream_stopping(acl_stream *s); /* acl_stream_free has begun */
acl_context *acl_stream_context(const acl_stream *s);
/* What the configuring calls set and the queries read (acl_rt_state.c):
 * the priority (kept: one stream's work never waits for another's here),
 * the overflow switch (kept), and the failure mode: stop_on_failure makes
 * the stream skip its copies, memsets, runs and DVPP tasks after a failure until the
 * next wait (event records, waits and callbacks still run, so nothing
 * waiting on them hangs). */
void acl_stream_set_priority(acl_stream *s, uint32_t priority);
uint32_t acl_stream_priority(acl_stream *s);
void acl_stream_set_overflow_switch(acl_stream *s, uint32_t on);
uint32_t acl_stream_overflow_switch(acl_stream *s);
void acl_stream_set_stop_on_failure(acl_stream *s, int stop);
int acl_stream_busy(acl_stream *s); /* work queued or running */
/* Queues op (taking it); the stream runs it in order. */
void acl_stream_push(acl_stream *s, acl_op *op);
/* Waits until everything queued has run; the first failure since the last
 * wait (code, message copied to msg) or ACL_SUCCESS. Without the lock.
 * timeout_ms -1: no limit; else ACL_ERROR_RT_STREAM_SYNC_TIMEOUT after it
 * (the failures are kept for the next wait). */
aclError acl_stream_wait(acl_stream *s, char *msg, size_t n, int32_t timeout_ms);
/* Runs one RUN: gear `gear`, omrt_execute under the model's run mutex; on
 * failure the message goes to msg. Used by aclmdlExecute too. */
aclError acl_run_model(acl_model *m, int gear, const void *const *in, void *const *out, char *msg, size_t n);

/* --- the device's state (acl_rt_state.c) */

/* After a run: when overflow is watched (aclrtGetOverflowStatus,
 * aclrtResetOverflowStatus or a stream's overflow switch was used), notes
 * whether a float output holds inf or NaN; and the run's time for
 * aclrtGetDeviceUtilizationRate. */
void acl_note_run(acl_model *m, int gear, void *const *out, int64_t ns);
/* What ACL_OP_OVERFLOW does. */
void acl_overflow_op(acl_op *op);

/* --- events and callbacks (acl_event.c): their own lock, never held while
 * taking the registry's. */

/* What a stream's thread does for RECORD, RESET, WAIT and CALLBACK ops
 * (the op's event reference is dropped); failures as acl_run_model's. */
aclError acl_event_op(acl_stream *s, acl_op *op, char *msg, size_t n);
void acl_event_forget_stream(acl_stream *s); /* its subscription goes (the stream is freed) */
void acl_event_wake(void);                   /* the streams' threads waiting for callbacks look again */
void acl_event_finalize(void);               /* every event and subscription goes (aclFinalize) */

/* --- single operators (acl_op.c: attributes and the calls; acl_op_model.c:
 * the loaded op models and matching; both under the registry lock) */

typedef struct acl_op_model acl_op_model;

/* An attribute of an aclopAttr, as text in the form of atc --singleop's
 * record (docs/om-format.md): type "bool", "int", "float", "string",
 * "data_type", "list_int", ...; value: the values separated by single
 * spaces (bools 0/1, floats %.9g of the float, strings %XX-escaped). */
typedef struct acl_op_attr_val {
  char *name, *type, *value; /* owned by the aclopAttr */
} acl_op_attr_val;
const acl_op_attr_val *acl_op_attr_find(const aclopAttr *attr, const char *name); /* attr may be NULL */
int acl_op_attr_count(const aclopAttr *attr);
const acl_op_attr_val *acl_op_attr_at(const aclopAttr *attr, int i);

/* One call's op type, descriptions and attributes (borrowed). */
typedef struct acl_op_call {
  const char *type;
  int nin, nout;
  const aclTensorDesc *const *in, *const *out;
  const aclopAttr *attr;
} acl_op_call;

/* Loads every .om of dir and its subdirectories (aclopSetModelDir), or
 * `size` bytes at data (copied; aclopLoad). */
aclError acl_op_load_dir(const char *call, const char *dir);
aclError acl_op_load_mem(const char *call, const void *data, size_t size);
/* The loaded op model the call matches, or the documented error naming the
 * closest model's first difference. */
aclError acl_op_find(const char *call, const acl_op_call *c, acl_op_model **out);
acl_model *acl_op_model_run(const acl_op_model *om); /* what acl_run_model runs */
void acl_op_finalize(void);                          /* every op model goes (aclFinalize, streams gone) */

/* --- data (acl_data.c) */

struct aclDataBuffer {
  void *data;
  size_t size; /* bytes */
};

struct aclTensorDesc {
  aclDataType dtype;
  aclFormat format;
  size_t rank;
  int64_t *dims; /* [rank], owned */
  char *name;    /* owned */
  /* What the single-operator calls would read (acl_tensor.c keeps them;
   * a dataset's copy does not): */
  aclFormat origin_format;   /* ACL_FORMAT_UNDEFINED: not set */
  size_t origin_rank;        /* with origin_dims */
  int64_t *origin_dims;      /* owned; NULL: not set */
  int64_t (*shape_range)[2]; /* [rank], owned; NULL: not set */
  size_t nvalue_ranges;      /* with value_range */
  int64_t (*value_range)[2]; /* owned; NULL: not set */
  void *const_data;          /* owned copy; NULL: not a constant */
  size_t const_bytes;
  int placement;       /* aclMemType */
  char *dynamic_input; /* owned; NULL: not set */
};

struct aclmdlDataset {
  size_t n, cap;
  aclDataBuffer **bufs;  /* [cap]; not owned */
  aclTensorDesc **descs; /* [cap]; owned, NULL where none was set */
};

/* A new description (dims copied); NULL when out of memory. */
aclTensorDesc *acl_tensor_desc(aclDataType dtype, aclFormat format, size_t rank, const int64_t *dims);
/* Replaces dataset->descs[index] by d (taken). */
void acl_dataset_put_desc(aclmdlDataset *dataset, size_t index, aclTensorDesc *d);
aclFormat acl_format(int omrt_format);

aclDataType acl_data_type(int omrt_dtype);

#endif
