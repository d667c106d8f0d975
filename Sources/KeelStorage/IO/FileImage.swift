// The contents of a file held in memory, with POSIX semantics: reads are short at the end,
// writes past the end zero-fill the gap, resizing cuts or zero-extends. Shared by
// InMemoryFileSystem (the live files) and CrashSimulatingFileSystem (live and durable images).

import Glibc

/// A file's bytes in memory.
struct FileImage: Sendable, Equatable {
    /// The largest file an in-memory file system accepts (4 GiB): a write or resize beyond it
    /// throws EFBIG instead of trying to allocate the memory, so an engine bug that computes a
    /// wild offset fails the test rather than the machine.
    static let maximumSize: UInt64 = 1 << 32

    var bytes: [UInt8]

    init(_ bytes: [UInt8] = []) { self.bytes = bytes }

    var size: UInt64 { UInt64(bytes.count) }

    /// The size after writing `count` bytes at `offset`, or EFBIG when it exceeds `maximumSize`.
    static func end(offset: UInt64, count: Int, path: String) throws(StorageError) -> UInt64 {
        let (end, overflow) = offset.addingReportingOverflow(UInt64(count))
        if overflow || end > maximumSize {
            throw StorageError(
                .io, "in-memory file would grow past \(maximumSize) bytes (offset \(offset))", path: path, errno: EFBIG)
        }
        return end
    }

    /// Copies up to `buffer.count` bytes at `offset` into `buffer`; returns the count, short only
    /// at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Int {
        guard offset < size, buffer.count > 0 else { return 0 }
        let start = Int(offset)
        let count = min(buffer.count, bytes.count - start)
        bytes.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<(start + count)]))
        }
        return count
    }

    /// Writes `source` at `offset`, zero-filling any gap past the end. The caller has checked
    /// the end with `end(offset:count:path:)`.
    mutating func write(_ source: UnsafeRawBufferPointer, at offset: UInt64) {
        guard source.count > 0 else { return }
        let start = Int(offset)
        let end = start + source.count
        if end > bytes.count { bytes.append(contentsOf: repeatElement(0, count: end - bytes.count)) }
        bytes.withUnsafeMutableBytes { target in
            UnsafeMutableRawBufferPointer(rebasing: target[start..<end]).copyMemory(from: source)
        }
    }

    /// Writes `source` at `offset`.
    mutating func write(_ source: [UInt8], at offset: UInt64) {
        source.withUnsafeBytes { write($0, at: offset) }
    }

    /// Cuts the file to `newSize` bytes or extends it with zeros.
    mutating func resize(to newSize: UInt64) {
        let target = Int(newSize)
        if target < bytes.count {
            bytes.removeSubrange(target...)
        } else if target > bytes.count {
            bytes.append(contentsOf: repeatElement(0, count: target - bytes.count))
        }
    }
}
