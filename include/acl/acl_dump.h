/* acl_dump.h - AscendCL's dump callbacks (libascendcl): dump (the
 * operators' tensors written out as a model runs) is not provided, as
 * aclmdlInitDump says; acldumpRegCallback returns
 * ACL_ERROR_FEATURE_UNSUPPORTED with the reason in aclGetRecentErrMsg, and
 * acldumpUnregCallback does nothing. omrun --dump writes every task's
 * tensors instead.
 */
#ifndef INC_EXTERNAL_ACL_DUMP_H_
#define INC_EXTERNAL_ACL_DUMP_H_

#include <stdint.h>

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_DUMP_MAX_FILE_PATH_LENGTH 4096
typedef struct acldumpChunk {
  char fileName[ACL_DUMP_MAX_FILE_PATH_LENGTH]; /* absolute path */
  uint32_t bufLen;                              /* dataBuf's bytes */
  uint32_t isLastChunk;                         /* 1: the file's last chunk */
  int64_t offset;                               /* in the file; -1: append */
  int32_t flag;
  uint8_t dataBuf[];
} acldumpChunk;

ACL_FUNC_VISIBILITY aclError acldumpRegCallback(int32_t (*const messageCallback)(const acldumpChunk *,
                                                                                 int32_t),
                                                int32_t flag);
ACL_FUNC_VISIBILITY void acldumpUnregCallback(void);

#ifdef __cplusplus
}
#endif

#endif
