/* test_task_hooks.c - libomrt's task start hook and task inputs
 * (omrt_context_set_task_start_hook, omrt_context_task_input; AscendCL's
 * dump and profiling are built on them): on the Conv + Relu model compiled
 * under both precisions,
 *   - the start hook runs before each task and the task hook after it, in
 *     task order, once per task per execute;
 *   - every input a start hook sees holds what the task reads: the model's
 *     input (converted to float32, exactly the caller's values under
 *     must_keep_origin_dtype, within fp16 rounding under force_fp16) or
 *     what the task that wrote that om tensor left (bit for bit);
 *   - the weights are inputs too (their stored bytes, packed layouts
 *     included);
 *   - omrt_context_task_input outside a hook and past the last input is
 *     OMRT_ERR_ARG; a start hook returning non-zero stops the run before
 *     the task with OMRT_ERR_STOPPED naming it.
 */
#include <math.h>
#include <string.h>

#include "onnx_mb.h"

enum { MAX_SEEN = 64 };

typedef struct seen {
  omrt_context *ctx;
  char events[MAX_SEEN]; /* 's' start, 'e' end, in call order */
  int tasks[MAX_SEEN];
  int nevents;
  struct written {
    const char *tensor; /* om tensor name (the model's string) */
    float *f32;
    size_t count;
  } written[MAX_SEEN];
  int nwritten;
  const float *input; /* the caller's model input */
  size_t input_count;
  int inputs_checked, weights_seen, produced_matched, stop_at;
  double tol;
} seen;

static size_t count_of(const omrt_task_tensor *t) {
  size_t n = 1;
  for (int r = 0; r < t->rank; r++)
    n *= (size_t)t->dims[r];
  return n;
}

static int plain_layout(int layout) {
  return layout == OMRT_LAYOUT_ND || layout == OMRT_LAYOUT_NC1HWC0 || layout == OMRT_LAYOUT_NDC1HWC0;
}

static void note_event(seen *s, char kind, int task) {
  if (s->nevents < MAX_SEEN) s->events[s->nevents] = kind, s->tasks[s->nevents++] = task;
}

static int on_start(void *user, const omrt_task_info *info) {
  seen *s = user;
  note_event(s, 's', info->index);
  if (info->index == s->stop_at) return 1;
  omrt_task_tensor in;
  int k = 0;
  for (; omrt_context_task_input(s->ctx, k, &in) == OMRT_OK; k++) {
    CHECK(in.data != NULL && in.bytes > 0);
    if (!plain_layout(in.layout)) {
      s->weights_seen++;
      continue;
    }
    size_t n = count_of(&in);
    float *f = malloc(n * sizeof *f);
    CHECK_EQ_INT(omrt_task_tensor_to_f32(&in, f, n), OMRT_OK);
    const struct written *w = NULL;
    for (int i = s->nwritten - 1; i >= 0 && !w; i--)
      if (s->written[i].tensor == in.name) w = &s->written[i];
    if (w) { /* what the task writing it left */
      CHECK_EQ_INT((int)w->count, (int)n);
      CHECKF(w->count == n && memcmp(w->f32, f, n * sizeof *f) == 0,
             "  task %d input %d '%s' differs from its writer's", info->index, k, in.name);
      s->produced_matched++;
    } else if (n == s->input_count) { /* the model's input */
      double worst = 0;
      for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs((double)f[i] - s->input[i]));
      CHECKF(worst <= s->tol, "  task %d input %d '%s': off the model input by %g", info->index, k, in.name,
             worst);
    } else {
      s->weights_seen++; /* a bias or another constant */
    }
    s->inputs_checked++;
    free(f);
  }
  CHECK_EQ_INT(omrt_context_task_input(s->ctx, k, &in), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "has no input") != NULL);
  return 0;
}

static int on_end(void *user, const omrt_task_info *info) {
  seen *s = user;
  note_event(s, 'e', info->index);
  for (int k = 0; k < info->noutputs && s->nwritten < MAX_SEEN; k++) {
    const omrt_task_tensor *o = &info->outputs[k];
    if (!plain_layout(o->layout)) continue;
    struct written *w = &s->written[s->nwritten++];
    w->tensor = o->name;
    w->count = count_of(o);
    w->f32 = malloc(w->count * sizeof *w->f32);
    CHECK_EQ_INT(omrt_task_tensor_to_f32(o, w->f32, w->count), OMRT_OK);
  }
  return 0;
}

static void forget(seen *s) {
  for (int i = 0; i < s->nwritten; i++)
    free(s->written[i].f32);
  s->nwritten = 0;
  s->nevents = 0;
}

static void run(om_precision p, const char *name) {
  test_note("%s", name);
  mb m;
  conv_relu_model(&m);
  mb_run r;
  if (!mb_run_open(&m, name, p, &r)) return;
  float in[3 * 8 * 8], out[4 * 8 * 8];
  for (int i = 0; i < 3 * 8 * 8; i++)
    in[i] = (float)((i * 37) % 23) * 0.125f - 1.25f; /* exact in fp16 */
  const void *ins[1] = {in};
  void *outs[1] = {out};
  seen s = {.ctx = r.ctx, .input = in, .input_count = 3 * 8 * 8, .stop_at = -1, .tol = 0};
  omrt_task_tensor t;
  CHECK_EQ_INT(omrt_context_task_input(r.ctx, 0, &t), OMRT_ERR_ARG);
  CHECK(strstr(omrt_last_error(), "not called from a task hook") != NULL);
  CHECK_EQ_INT(omrt_context_set_task_start_hook(NULL, on_start, &s), OMRT_ERR_ARG);
  CHECK_EQ_INT(omrt_context_set_task_start_hook(r.ctx, on_start, &s), OMRT_OK);
  CHECK_EQ_INT(omrt_context_set_task_hook(r.ctx, on_end, &s), OMRT_OK);
  int ntasks = omrt_model_num_tasks(r.model);
  for (int run = 0; run < 2; run++) { /* once per task per execute */
    forget(&s);
    CHECK_EQ_INT(omrt_execute(r.ctx, ins, outs), OMRT_OK);
    CHECK_EQ_INT(s.nevents, 2 * ntasks);
    for (int i = 0; i < s.nevents && i < 2 * ntasks; i++)
      CHECKF(s.events[i] == (i % 2 ? 'e' : 's') && s.tasks[i] == i / 2, "  event %d: %c of task %d", i,
             s.events[i], s.tasks[i]);
  }
  test_note("  %d tasks: %d inputs compared, %d from the task that wrote them, %d weights", ntasks,
            s.inputs_checked, s.produced_matched, s.weights_seen);
  CHECK(s.inputs_checked >= 2 && s.weights_seen >= 1);
  CHECK(ntasks < 2 || s.produced_matched >= 1);
  /* a start hook stops the run before its task */
  forget(&s);
  s.stop_at = ntasks - 1;
  CHECK_EQ_INT(omrt_execute(r.ctx, ins, outs), OMRT_ERR_STOPPED);
  char want[64];
  snprintf(want, sizeof want, "before task %d", ntasks - 1);
  CHECKF(strstr(omrt_last_error(), want) != NULL, "  %s", omrt_last_error());
  CHECK(s.nevents > 0 && s.events[s.nevents - 1] == 's');
  /* cleared: nothing is called */
  forget(&s);
  CHECK_EQ_INT(omrt_context_set_task_start_hook(r.ctx, NULL, NULL), OMRT_OK);
  CHECK_EQ_INT(omrt_context_set_task_hook(r.ctx, NULL, NULL), OMRT_OK);
  CHECK_EQ_INT(omrt_execute(r.ctx, ins, outs), OMRT_OK);
  CHECK_EQ_INT(s.nevents, 0);
  mb_run_close(&r);
}

int main(void) {
  run(OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE, "must_keep_origin_dtype");
  run(OM_PRECISION_FORCE_FP16, "force_fp16");
  return test_summary("test_task_hooks");
}
