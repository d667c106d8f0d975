// A real file: pread/pwrite/fdatasync/ftruncate/fallocate on a file descriptor, every call
// retried on EINTR, every failure a StorageError carrying errno, path and strerror's text.
//
// Closing while other threads still use the handle: the descriptor is closed when the last call
// in flight returns, never under a running call, so a number the kernel reuses for another file
// can never receive this handle's reads or writes.

import CKeelSupport
import Glibc
import Synchronization

/// An open file on a POSIX file system. Made by `PosixFileSystem.open`.
public final class PosixFile: StorageFile {
    public let path: String
    /// Whether the file was opened read-only: writes, truncation and allocation throw `.readOnly`.
    public let isReadOnly: Bool

    /// The descriptor and its users.
    private struct Descriptor {
        /// The file descriptor, -1 once it has been closed.
        var fd: Int32
        /// Set by `close()`; no new call may start after it.
        var closed = false
        /// Calls in flight that use `fd`. The last one to leave closes a descriptor marked closed.
        var users = 0
    }

    /// Guards the descriptor number, the closed flag and the count of calls using the descriptor.
    /// Held only to take or return the descriptor, never across a system call.
    private let descriptor: Mutex<Descriptor>

    /// The size of each zero-filled write when `allocate` falls back from fallocate.
    static let zeroFillChunk = 1 << 20

    init(fd: Int32, path: String, readOnly: Bool) {
        self.path = path
        self.isReadOnly = readOnly
        self.descriptor = Mutex(Descriptor(fd: fd))
    }

    deinit {
        // A handle dropped without close(): release the descriptor. No call can be in flight.
        let fd = descriptor.withLock { $0.fd }
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let start = try fileOffset(offset, path: path)
        return try withDescriptor("read") { (fd) throws(StorageError) -> Int in
            // pread may return fewer bytes than asked before the end of file; loop until the
            // buffer is full or the file ends, so a short count means end of file.
            var done = 0
            while done < buffer.count {
                let (n, code) = retryingOnInterrupt {
                    pread(fd, base + done, buffer.count - done, start + off_t(done))
                }
                if n < 0 { throw StorageError.posix(code, "read at \(offset + UInt64(done))", path: path, writing: false) }
                if n == 0 { break }
                done += n
            }
            return done
        }
    }

    public func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        if isReadOnly { throw StorageError.readOnlyFile("write", path: path) }
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let start = try fileOffset(offset, path: path)
        return try withDescriptor("write") { (fd) throws(StorageError) -> Int in
            let (n, code) = retryingOnInterrupt { pwrite(fd, base, buffer.count, start) }
            if n < 0 { throw StorageError.posix(code, "write at \(offset)", path: path, writing: true) }
            return n
        }
    }

    public func sync() throws(StorageError) {
        try withDescriptor("sync") { (fd) throws(StorageError) in
            // Only EINTR is retried: a real failure means the kernel may have dropped the dirty
            // pages, and the caller must fail-stop (Docs/Invariants.md, I6).
            let (r, code) = retryingOnInterrupt { fdatasync(fd) }
            if r < 0 { throw StorageError.posix(code, "fdatasync", path: path, writing: true) }
        }
    }

    public func size() throws(StorageError) -> UInt64 {
        try withDescriptor("size") { (fd) throws(StorageError) -> UInt64 in
            var info = stat()
            let (r, code) = retryingOnInterrupt { fstat(fd, &info) }
            if r < 0 { throw StorageError.posix(code, "fstat", path: path, writing: false) }
            return UInt64(clamping: info.st_size)
        }
    }

    public func truncate(to size: UInt64) throws(StorageError) {
        if isReadOnly { throw StorageError.readOnlyFile("truncate", path: path) }
        let length = try fileOffset(size, path: path)
        try withDescriptor("truncate") { (fd) throws(StorageError) in
            let (r, code) = retryingOnInterrupt { ftruncate(fd, length) }
            if r < 0 { throw StorageError.posix(code, "ftruncate to \(size)", path: path, writing: true) }
        }
    }

    public func allocate(offset: UInt64, length: UInt64) throws(StorageError) {
        if isReadOnly { throw StorageError.readOnlyFile("allocate", path: path) }
        if length == 0 { return }
        let (end, overflow) = offset.addingReportingOverflow(length)
        let start = try fileOffset(offset, path: path)
        let count = try fileOffset(length, path: path)
        if overflow || off_t(exactly: end) == nil {
            throw StorageError(.invalidArgument, "allocation \(offset)+\(length) is out of range", path: path)
        }
        try withDescriptor("allocate") { (fd) throws(StorageError) in
            let (r, code) = retryingOnInterrupt { keel_fallocate(fd, Int64(start), Int64(count)) }
            if r == 0 { return }
            if code == EOPNOTSUPP {
                try zeroFill(fd: fd, from: offset, to: end)
                return
            }
            throw StorageError.posix(code, "fallocate \(offset)+\(length)", path: path, writing: true)
        }
    }

    public func startWriteback(offset: UInt64, length: UInt64) throws(StorageError) {
        if isReadOnly || length == 0 { return }
        let start = try fileOffset(offset, path: path)
        let count = try fileOffset(length, path: path)
        try withDescriptor("writeback") { (fd) throws(StorageError) in
            let (r, code) = retryingOnInterrupt { keel_start_writeback(fd, Int64(start), Int64(count)) }
            // A hint: where the kernel or the file has no sync_file_range, the later fdatasync
            // does all the work, as before. Anything else (EIO, ENOSPC: writeback already failed)
            // is the caller's to handle like a failed write.
            if r == 0 || code == ENOSYS || code == EINVAL || code == ESPIPE || code == EOPNOTSUPP { return }
            throw StorageError.posix(code, "sync_file_range \(offset)+\(length)", path: path, writing: true)
        }
    }

    /// The fallback for file systems without fallocate: writes zeros over the part of
    /// `[offset, end)` that lies past the current end of file, in 1 MiB chunks. Bytes already in
    /// the file are left alone, so the visible contents never change.
    func zeroFill(fd: Int32, from offset: UInt64, to end: UInt64) throws(StorageError) {
        var info = stat()
        let (r, code) = retryingOnInterrupt { fstat(fd, &info) }
        if r < 0 { throw StorageError.posix(code, "fstat", path: path, writing: false) }
        var position = max(offset, UInt64(clamping: info.st_size))
        if position >= end { return }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.zeroFillChunk, alignment: 16)
        defer { chunk.deallocate() }
        guard let base = chunk.baseAddress else { return }
        base.initializeMemory(as: UInt8.self, repeating: 0, count: chunk.count)
        while position < end {
            let want = Int(min(UInt64(chunk.count), end - position))
            let at = try fileOffset(position, path: path)
            let (n, code) = retryingOnInterrupt { pwrite(fd, base, want, at) }
            if n < 0 { throw StorageError.posix(code, "zero-fill at \(position)", path: path, writing: true) }
            if n == 0 { throw StorageError(.io, "zero-fill made no progress at \(position)", path: path) }
            position += UInt64(n)
        }
    }

    /// Runs `allocate`'s zero-fill fallback directly, for tests (the file systems here all
    /// support fallocate, so the fallback is otherwise hard to reach).
    func allocateByZeroFill(offset: UInt64, length: UInt64) throws(StorageError) {
        if isReadOnly { throw StorageError.readOnlyFile("allocate", path: path) }
        try withDescriptor("allocate") { (fd) throws(StorageError) in
            try zeroFill(fd: fd, from: offset, to: offset + length)
        }
    }

    public func close() throws(StorageError) {
        let fd = try descriptor.withLock { (d) throws(StorageError) -> Int32 in
            if d.closed { throw StorageError.closedFile("close", path: path) }
            d.closed = true
            if d.users > 0 { return -1 }  // the last call in flight closes it
            let fd = d.fd
            d.fd = -1
            return fd
        }
        if fd < 0 { return }
        // Never retried: on Linux the descriptor is released even when close reports EINTR.
        if Glibc.close(fd) < 0 {
            let code = errno
            if code != EINTR { throw StorageError.posix(code, "close", path: path, writing: false) }
        }
    }

    /// Whether the descriptor is still open (it outlives `close()` while calls are in flight).
    var isDescriptorOpen: Bool { descriptor.withLock { $0.fd >= 0 } }

    /// Runs `body` with the descriptor, which stays open until `body` returns.
    func withDescriptor<T>(
        _ operation: String, _ body: (Int32) throws(StorageError) -> T
    ) throws(StorageError) -> T {
        let fd = try descriptor.withLock { (d) throws(StorageError) -> Int32 in
            if d.closed { throw StorageError.closedFile(operation, path: path) }
            d.users += 1
            return d.fd
        }
        defer {
            let deferred = descriptor.withLock { (d) -> Int32 in
                d.users -= 1
                guard d.closed, d.users == 0, d.fd >= 0 else { return -1 }
                let fd = d.fd
                d.fd = -1
                return fd
            }
            if deferred >= 0 { _ = Glibc.close(deferred) }
        }
        return try body(fd)
    }
}
