/* acl_prof.h - AscendCL's profiling calls (libascendcl; see acl.h).
 *
 * Not provided: the software NPU writes no profiling data in AscendCL's
 * format (libomrt's own per-task timing is OMRT_PROFILE, see README). Every
 * call checks aclInit (ACL_ERROR_UNINITIALIZE), then returns
 * ACL_ERROR_FEATURE_UNSUPPORTED with a message (aclprofCreateConfig:
 * NULL), so an application that profiles optionally goes on without it.
 */
#ifndef INC_EXTERNAL_ACL_PROF_H_
#define INC_EXTERNAL_ACL_PROF_H_

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_PROF_ACL_API 0x0001ULL
#define ACL_PROF_TASK_TIME 0x0002ULL
#define ACL_PROF_AICORE_METRICS 0x0004ULL
#define ACL_PROF_AICPU 0x0008ULL
#define ACL_PROF_L2CACHE 0x0010ULL
#define ACL_PROF_HCCL_TRACE 0x0020ULL
#define ACL_PROF_TRAINING_TRACE 0x0040ULL
#define ACL_PROF_MSPROFTX 0x0080ULL
#define ACL_PROF_RUNTIME_API 0x0100ULL

typedef enum {
  ACL_AICORE_ARITHMETIC_UTILIZATION = 0,
  ACL_AICORE_PIPE_UTILIZATION = 1,
  ACL_AICORE_MEMORY_BANDWIDTH = 2,
  ACL_AICORE_L0B_AND_WIDTH = 3,
  ACL_AICORE_RESOURCE_CONFLICT_RATIO = 4,
  ACL_AICORE_NONE = 0xFF,
} aclprofAicoreMetrics;

typedef struct aclprofConfig aclprofConfig;
typedef struct aclprofAicoreEvents aclprofAicoreEvents;

ACL_FUNC_VISIBILITY aclError aclprofInit(const char *profilerResultPath, size_t length);
ACL_FUNC_VISIBILITY aclError aclprofFinalize(void);
ACL_FUNC_VISIBILITY aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
                                                       aclprofAicoreMetrics aicoreMetrics,
                                                       const aclprofAicoreEvents *aicoreEvents,
                                                       uint64_t dataTypeConfig);
ACL_FUNC_VISIBILITY aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig);
ACL_FUNC_VISIBILITY aclError aclprofStart(const aclprofConfig *profilerConfig);
ACL_FUNC_VISIBILITY aclError aclprofStop(const aclprofConfig *profilerConfig);

#ifdef __cplusplus
}
#endif

#endif
