#ifndef KEEL_FILE_H
#define KEEL_FILE_H
#include <stdint.h>

/// fallocate(fd, 0, offset, length): reserves disk space for [offset, offset + length), growing
/// the file size to cover it. Returns 0, or -1 with errno set (EOPNOTSUPP when the file system
/// cannot, and always EOPNOTSUPP where fallocate does not exist). A C shim because glibc declares
/// fallocate only under _GNU_SOURCE, which Swift's Glibc module does not see.
int keel_fallocate(int fd, int64_t offset, int64_t length);

#endif
