/* acl_dump.h - AscendCL's dump callback (libascendcl): with a callback
 * registered (flag 0, the only value: nothing is written to disk), the
 * dump's files (aclmdlInitDump, acl_mdl.h) go to messageCallback instead,
 * each in chunks of at most 1 MiB in order: fileName the file's path,
 * offset the chunk's place in it, isLastChunk 1 on its last; the second
 * argument is the chunk's bytes with its header. The callback runs on the
 * thread running the model, during the execution. An aclmdlInitDump with
 * a callback and no aclmdlSetDump dumps the outputs of every model loaded
 * after it. acldumpUnregCallback: files again.
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
