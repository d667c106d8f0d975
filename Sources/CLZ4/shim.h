#ifndef KEEL_CLZ4_SHIM_H
#define KEEL_CLZ4_SHIM_H
#include <lz4.h>
#endif
