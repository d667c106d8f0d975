// A handle on a file of an InMemoryFileSystem. Every call goes through the file system's lock,
// so handles are safe to use from several threads at once.

/// An open file of an `InMemoryFileSystem`. Made by `InMemoryFileSystem.open`.
public final class InMemoryFile: StorageFile {
    public let path: String
    /// Whether the file was opened read-only: writes, truncation and allocation throw `.readOnly`.
    public let isReadOnly: Bool
    private let fileSystem: InMemoryFileSystem
    /// This handle's number in the file system's table of open handles.
    private let handle: Int

    init(fileSystem: InMemoryFileSystem, handle: Int, path: String, readOnly: Bool) {
        self.fileSystem = fileSystem
        self.handle = handle
        self.path = path
        self.isReadOnly = readOnly
    }

    deinit {
        // A handle dropped without close() releases its file (a removed file is then freed).
        try? fileSystem.close(handle, path: path)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try fileSystem.read(handle, path: path, into: buffer, at: offset)
    }

    public func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        if isReadOnly { throw StorageError.readOnlyFile("write", path: path) }
        return try fileSystem.write(handle, path: path, buffer, at: offset)
    }

    public func sync() throws(StorageError) {
        // Everything is durable at once; only a closed handle fails.
        _ = try fileSystem.size(handle, path: path)
    }

    public func size() throws(StorageError) -> UInt64 {
        try fileSystem.size(handle, path: path)
    }

    public func truncate(to size: UInt64) throws(StorageError) {
        if isReadOnly { throw StorageError.readOnlyFile("truncate", path: path) }
        try fileSystem.truncate(handle, path: path, to: size)
    }

    public func allocate(offset: UInt64, length: UInt64) throws(StorageError) {
        if isReadOnly { throw StorageError.readOnlyFile("allocate", path: path) }
        try fileSystem.allocate(handle, path: path, offset: offset, length: length)
    }

    public func close() throws(StorageError) {
        try fileSystem.close(handle, path: path)
    }
}
