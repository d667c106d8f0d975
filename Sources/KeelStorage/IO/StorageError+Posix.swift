// Turning a failed system call into a StorageError, and retrying calls interrupted by a signal.
// Used by PosixFileSystem and PosixFile only.

import Glibc

extension StorageError {
    /// The error for a system call that failed with `code` (an errno value) while doing
    /// `operation` on `path`. `writing` says whether the operation modifies the file or the
    /// directory (open for writing, write, truncate, allocate, rename, remove, mkdir): only then is
    /// EACCES reported as `.readOnly`.
    ///
    /// Mapping: ENOSPC, EDQUOT → `.diskFull`; EROFS → `.readOnly`; EACCES, EPERM → `.readOnly`
    /// when `writing`; everything else → `.io`. ENOENT reads "no such file". `errno`, `path` and
    /// a message with strerror's text are always filled in.
    static func posix(_ code: Int32, _ operation: String, path: String, writing: Bool) -> StorageError {
        let reason = String(cString: strerror(code))
        let kind: Code
        switch code {
        case ENOSPC, EDQUOT: kind = .diskFull
        case EROFS: kind = .readOnly
        case EACCES where writing, EPERM where writing: kind = .readOnly
        default: kind = .io
        }
        let message: String
        switch code {
        case ENOENT: message = "\(operation): no such file (\(reason))"
        case EEXIST: message = "\(operation): file exists (\(reason))"
        default: message = "\(operation) failed: \(reason)"
        }
        return StorageError(kind, message, path: path, errno: code)
    }

    /// The error for an operation on a file handle that was already closed.
    static func closedFile(_ operation: String, path: String) -> StorageError {
        StorageError(.closed, "\(operation) on a closed file", path: path)
    }

    /// The error for a modifying operation on a file opened read-only.
    static func readOnlyFile(_ operation: String, path: String) -> StorageError {
        StorageError(.readOnly, "\(operation) refused: the file was opened read-only", path: path)
    }
}

/// Runs a system call that returns -1 and sets errno on failure, retrying while it fails with
/// EINTR. Returns the call's result and 0, or -1 and the errno it failed with.
@inline(__always)
func retryingOnInterrupt<T: FixedWidthInteger & SignedInteger>(_ call: () -> T) -> (result: T, errno: Int32) {
    while true {
        let result = call()
        if result >= 0 { return (result, 0) }
        let code = errno
        if code != EINTR { return (result, code) }
    }
}

/// Refuses paths the C API would silently cut short: a path with a NUL byte names another file.
func checkedPath(_ path: String) throws(StorageError) {
    if path.isEmpty || path.utf8.contains(0) {
        throw StorageError(.invalidArgument, "invalid path \(path.debugDescription)", path: path)
    }
}

/// Converts a file offset to off_t, refusing offsets the kernel cannot represent.
func fileOffset(_ offset: UInt64, path: String) throws(StorageError) -> off_t {
    guard let value = off_t(exactly: offset) else {
        throw StorageError(.invalidArgument, "offset \(offset) is out of range", path: path)
    }
    return value
}
