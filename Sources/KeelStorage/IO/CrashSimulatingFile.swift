// A handle of a CrashSimulatingFileSystem. Each call is one counted operation on the file
// system's state (see the model in CrashSimulatingFileSystem.swift); after the crash every call
// throws "simulated crash".

/// An open file of a `CrashSimulatingFileSystem`.
public final class CrashSimulatingFile: StorageFile {
    public let path: String
    /// Whether the file was opened read-only: writes, truncation and allocation throw `.readOnly`.
    public let isReadOnly: Bool
    private let fileSystem: CrashSimulatingFileSystem
    /// This handle's number in the file system's table of open handles.
    private let handle: Int

    init(fileSystem: CrashSimulatingFileSystem, handle: Int, path: String, readOnly: Bool) {
        self.fileSystem = fileSystem
        self.handle = handle
        self.path = path
        self.isReadOnly = readOnly
    }

    deinit {
        // A handle dropped without close() leaves the table (not a counted operation).
        fileSystem.release(handle)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try fileSystem.perform(.read, handle, path: path) { s, inode in
            s.inodes[inode]?.live.read(into: buffer, at: offset) ?? 0
        }
    }

    public func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try fileSystem.perform(.write, handle, path: path) { (s, inode) throws(StorageError) -> Int in
            if isReadOnly { throw StorageError.readOnlyFile("write", path: path) }
            try s.write(inode, buffer, at: offset, path: path)
            return buffer.count
        }
    }

    public func sync() throws(StorageError) {
        try fileSystem.perform(.sync, handle, path: path) { s, inode in s.sync(inode) }
    }

    public func size() throws(StorageError) -> UInt64 {
        try fileSystem.size(handle, path: path)
    }

    public func truncate(to size: UInt64) throws(StorageError) {
        try fileSystem.perform(.truncate, handle, path: path) { (s, inode) throws(StorageError) in
            if isReadOnly { throw StorageError.readOnlyFile("truncate", path: path) }
            try s.resize(inode, to: size, path: path)
        }
    }

    public func allocate(offset: UInt64, length: UInt64) throws(StorageError) {
        try fileSystem.perform(.allocate, handle, path: path) { (s, inode) throws(StorageError) in
            if isReadOnly { throw StorageError.readOnlyFile("allocate", path: path) }
            guard length > 0, let count = Int(exactly: length) else { return }
            let end = try FileImage.end(offset: offset, count: count, path: path)
            if end > s.inodes[inode]?.live.size ?? 0 { try s.resize(inode, to: end, path: path) }
        }
    }

    public func close() throws(StorageError) {
        try fileSystem.perform(.close, handle, path: path) { s, _ in s.handles[handle] = nil }
    }
}
