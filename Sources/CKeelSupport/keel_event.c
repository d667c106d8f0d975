#include "keel_event.h"

#include <sys/eventfd.h>

int keel_eventfd_semaphore(void) {
    return eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
}
