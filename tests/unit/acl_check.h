/* acl_check.h - the checks the AscendCL unit tests share (header-only,
 * over support.h's CHECK macros).
 *
 *   EXPECT_ACL(call, code, want)  call returns code and aclGetRecentErrMsg()
 *                                 then contains `want`
 *   OK(call)                      call returns ACL_SUCCESS
 */
#ifndef TESTS_UNIT_ACL_CHECK_H
#define TESTS_UNIT_ACL_CHECK_H

#include <string.h>

#include "acl/acl.h"
#include "support.h"

#define EXPECT_ACL(call, code, want)                                                                         \
  do {                                                                                                       \
    CHECK_EQ_INT((call), (code));                                                                            \
    const char *msg_ = aclGetRecentErrMsg();                                                                 \
    CHECK(msg_ &&strstr(msg_, want));                                                                        \
    if (!msg_ || !strstr(msg_, want)) test_note("  message: %s (want '%s')", msg_ ? msg_ : "(none)", want);  \
  } while (0)
#define OK(call) CHECK_EQ_INT((call), ACL_SUCCESS)

#endif
