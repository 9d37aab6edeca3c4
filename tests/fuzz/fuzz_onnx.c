/* fuzz_onnx.c - target `onnx`: raw bytes into the ONNX frontend and the IR
 * verifier (fuzz_targets.h).
 *
 * The bytes are a ModelProto as a file would hold it; there is no model
 * directory, so external data is refused (its rules are unit-tested on real
 * files). A model the frontend accepts goes through ir_verify, the contract
 * every pass relies on. Both rejections are recorded in fuzz_last with the
 * label in front, as atc_compile reports them.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz_targets.h"

#include "common/status.h"
#include "frontend/onnx_import.h"
#include "ir/ir.h"

_Thread_local fuzz_outcome fuzz_last;

int fuzz_onnx(const uint8_t *data, size_t size) {
  diag d;
  diag_init(&d);
  fuzz_last.rejected = 0;
  fuzz_last.msg[0] = '\0';
  ir_graph *g = NULL;
  status s = onnx_load_memory(data, size, NULL, FUZZ_ONNX_LABEL, NULL, &g, &d);
  if (s == ST_OK) {
    s = ir_verify(g, &d);
    if (s != ST_OK && !strstr(d.msg, FUZZ_ONNX_LABEL)) diag_prefix(&d, "%s", FUZZ_ONNX_LABEL);
  }
  ir_graph_free(g);
  if (s != ST_OK) {
    fuzz_last.rejected = 1;
    snprintf(fuzz_last.msg, sizeof fuzz_last.msg, "%s", d.msg);
  }
  return 0;
}
