/* The dispatch's internal entries (src/dispatch.c), for the tools and tests. */
#ifndef SGLA_DISPATCH_H
#define SGLA_DISPATCH_H

#include "core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sgla_backend_available with the reason: 1 and "available", or 0 and why[0..n)
 * says what is missing.  Leaves sgla_last_error() alone. */
int sgla_backend_probe(sgla_backend b, char *why, size_t n);

#ifdef __cplusplus
}
#endif

#endif
