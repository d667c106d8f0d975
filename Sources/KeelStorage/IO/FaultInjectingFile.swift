// A handle of a FaultInjectingFileSystem: asks the file system whether each operation fails, is
// shortened or proceeds, then calls the wrapped file (see FaultInjectingFileSystem for the rules).

import Glibc

/// An open file of a `FaultInjectingFileSystem`.
public final class FaultInjectingFile: StorageFile {
    /// The wrapped file.
    public let base: any StorageFile
    private let injector: FaultInjectingFileSystem

    init(base: any StorageFile, injector: FaultInjectingFileSystem) {
        self.base = base
        self.injector = injector
    }

    public var path: String { base.path }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try injector.check(.read, paths: [path], operation: "read at \(offset)")
        injector.beforeRead?(path)
        return try base.read(into: buffer, at: offset)
    }

    public func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        switch injector.decide(.write, paths: [path], operation: "write at \(offset)") {
        case .proceed:
            return try base.write(buffer, at: offset)
        case .fail(let error):
            throw error
        case .shortWrite(let bytes):
            let count = min(bytes ?? (buffer.count + 1) / 2, buffer.count)
            if count == 0 { return 0 }
            return try base.write(UnsafeRawBufferPointer(rebasing: buffer[..<count]), at: offset)
        }
    }

    public func sync() throws(StorageError) {
        try injector.check(.sync, paths: [path], operation: "fdatasync")
        if injector.syncLatency > .zero { Self.sleep(injector.syncLatency) }
        try base.sync()
    }

    public func size() throws(StorageError) -> UInt64 {
        try base.size()
    }

    public func truncate(to size: UInt64) throws(StorageError) {
        try injector.check(.truncate, paths: [path], operation: "ftruncate to \(size)")
        try base.truncate(to: size)
    }

    public func allocate(offset: UInt64, length: UInt64) throws(StorageError) {
        try injector.check(.allocate, paths: [path], operation: "fallocate \(offset)+\(length)")
        try base.allocate(offset: offset, length: length)
    }

    public func startWriteback(offset: UInt64, length: UInt64) throws(StorageError) {
        try injector.check(.writeback, paths: [path], operation: "sync_file_range \(offset)+\(length)")
        try base.startWriteback(offset: offset, length: length)
    }

    public func close() throws(StorageError) {
        // close(2) releases the descriptor even when it fails: close the wrapped file, then report.
        let decision = injector.decide(.close, paths: [path], operation: "close")
        try base.close()
        if case .fail(let error) = decision { throw error }
    }
}

extension FaultInjectingFile {
    /// Blocks the calling thread for `duration` (a slow disk's sync; nanosleep, not the
    /// cooperative pool).
    static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }
}
