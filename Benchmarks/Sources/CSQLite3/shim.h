#ifndef KEEL_CSQLITE3_SHIM_H
#define KEEL_CSQLITE3_SHIM_H
#include <sqlite3.h>
#endif
