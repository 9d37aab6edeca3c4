/* version.c - omrt_version(): the library's own version, from the
 * OMRT_VERSION_* macros of the omrt.h it was built with, so an application
 * can tell the header it compiled against from the library it runs with. */
#include "omrt.h"

#define OMRT_STR_(x) #x
#define OMRT_STR(x) OMRT_STR_(x)

const char *omrt_version(void) {
  return OMRT_STR(OMRT_VERSION_MAJOR) "." OMRT_STR(OMRT_VERSION_MINOR) "." OMRT_STR(OMRT_VERSION_PATCH);
}
