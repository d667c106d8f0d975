#ifndef KEEL_FILE_H
#define KEEL_FILE_H
#include <stdint.h>

/// fallocate(fd, 0, offset, length): reserves disk space for [offset, offset + length), growing
/// the file size to cover it. Returns 0, or -1 with errno set (EOPNOTSUPP when the file system
/// cannot, and always EOPNOTSUPP where fallocate does not exist). A C shim because glibc declares
/// fallocate only under _GNU_SOURCE, which Swift's Glibc module does not see.
int keel_fallocate(int fd, int64_t offset, int64_t length);

/// sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE): starts writeback of the dirty
/// pages of [offset, offset + length) and returns without waiting for it. Makes nothing durable
/// (no metadata, no device cache flush): a later fdatasync still does that, with less left to
/// wait for. Returns 0, or -1 with errno set (ENOSYS where sync_file_range does not exist).
int keel_start_writeback(int fd, int64_t offset, int64_t length);

#endif
