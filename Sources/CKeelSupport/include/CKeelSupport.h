// CKeelSupport's umbrella header: every header of the module, listed here so that adding one
// changes this file and so invalidates an existing build's module cache (with an umbrella
// directory, a header added later stayed invisible to incremental builds).
#ifndef CKEELSUPPORT_H
#define CKEELSUPPORT_H

#include "keel_crc32c.h"
#include "keel_file.h"
#include "keel_prefetch.h"

#endif
