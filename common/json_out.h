/* json_out.h - JSON text for the tools' reports (omrun's profile and layer
 * dump, atc's precheck report). */
#ifndef COMMON_JSON_OUT_H
#define COMMON_JSON_OUT_H

#include <stdio.h>

/* Writes s as a JSON string, quoted and escaped ("null" for NULL). */
void json_str(FILE *f, const char *s);

#endif
