// File-layer system calls Swift's Glibc module does not expose (see keel_file.h).
#define _GNU_SOURCE
#include "keel_file.h"
#include <errno.h>
#include <fcntl.h>

int keel_fallocate(int fd, int64_t offset, int64_t length) {
#if defined(__linux__)
    return fallocate(fd, 0, (off_t)offset, (off_t)length);
#else
    (void)fd; (void)offset; (void)length;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int keel_start_writeback(int fd, int64_t offset, int64_t length) {
#if defined(__linux__)
    return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)offset; (void)length;
    errno = ENOSYS;
    return -1;
#endif
}
