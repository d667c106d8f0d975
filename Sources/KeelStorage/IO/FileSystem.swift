// The file layer: every byte KeelStorage reads or writes goes through these two protocols, so
// tests can swap the real POSIX files for in-memory, fault-injecting and crash-simulating ones
// (Docs/Reliability.md). Implementations: PosixFileSystem, InMemoryFileSystem,
// FaultInjectingFileSystem, CrashSimulatingFileSystem.

/// How to open a file.
public struct FileOpenOptions: Sendable, Hashable {
    /// Create the file when it does not exist. The caller must `syncDirectory` afterwards for the
    /// creation itself to be durable (Docs/Invariants.md, I9).
    public var create: Bool
    /// Fail with an error if the file exists (with `create`).
    public var exclusive: Bool
    /// Open read-only; writes, truncation and allocation then throw `.readOnly`.
    public var readOnly: Bool

    public init(create: Bool = false, exclusive: Bool = false, readOnly: Bool = false) {
        self.create = create
        self.exclusive = exclusive
        self.readOnly = readOnly
    }
    public static let readWrite = FileOpenOptions()
    public static let createIfNeeded = FileOpenOptions(create: true)
    public static let readOnly = FileOpenOptions(readOnly: true)
}

/// The kinds of file operation, for fault injection and crash points.
public enum FileOperationKind: String, Sendable, Hashable, CaseIterable {
    case open, read, write, sync, truncate, allocate, close, rename, remove, syncDirectory, writeback
}

/// A file system: opening, renaming and removing files, and making directory changes durable.
/// Paths are plain strings; directories must already exist except where `createDirectory` is used.
public protocol FileSystem: Sendable {
    /// Opens (or creates) a file.
    func open(_ path: String, options: FileOpenOptions) throws(StorageError) -> any StorageFile
    /// Whether a file exists at `path`.
    func fileExists(_ path: String) -> Bool
    /// Atomically replaces `to` with `from` (rename(2)). Durable only after `syncDirectory`.
    func rename(_ from: String, to: String) throws(StorageError)
    /// Removes a file. Durable only after `syncDirectory`.
    func remove(_ path: String) throws(StorageError)
    /// Makes creations, renames and removals in `directory` durable (fsync of the directory).
    func syncDirectory(_ directory: String) throws(StorageError)
    /// Creates a directory (and its parents) when missing.
    func createDirectory(_ path: String) throws(StorageError)
    /// Free bytes available to unprivileged writers on the file system holding `path`, when known.
    func availableBytes(at path: String) -> UInt64?
    /// The names of the entries directly in the directory `path` (files and folders, without
    /// `.` and `..`), in no particular order.
    func contentsOfDirectory(_ path: String) throws(StorageError) -> [String]
}

/// The names directly under `directory` among `paths` (a deeper path counts as its first
/// component: the implicit folders of the in-memory file systems).
func childNames(of directory: String, in paths: some Sequence<String>) -> [String] {
    let prefix = directory.hasSuffix("/") ? directory : directory + "/"
    var names: Set<String> = []
    for path in paths where path.hasPrefix(prefix) {
        if let first = path.dropFirst(prefix.count).split(separator: "/").first { names.insert(String(first)) }
    }
    return Array(names)
}

/// One open file. All offsets are absolute (pread/pwrite); there is no file position. Reference
/// type: several threads may read at once; writes to one file come from one thread at a time
/// (the engine's writer), which the engine guarantees.
public protocol StorageFile: AnyObject, Sendable {
    /// The path it was opened with.
    var path: String { get }
    /// Reads up to `buffer.count` bytes at `offset`; returns the count read, short only at end of file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int
    /// Writes `buffer` at `offset`; returns how many bytes were written, which may be fewer than
    /// asked (a short write). Use `writeFully` to loop.
    func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int
    /// Makes every write so far durable (fdatasync). After a failure the file's durable state is
    /// unknown and the engine must fail-stop (Docs/Invariants.md, I6).
    func sync() throws(StorageError)
    /// The file's size in bytes.
    func size() throws(StorageError) -> UInt64
    /// Sets the file's size (ftruncate).
    func truncate(to size: UInt64) throws(StorageError)
    /// Reserves disk space for `[offset, offset + length)` without changing visible contents
    /// (fallocate with FALLOC_FL_KEEP_SIZE off: the size grows to cover the range).
    func allocate(offset: UInt64, length: UInt64) throws(StorageError)
    /// Starts writing back the written, not yet durable bytes of `[offset, offset + length)` and
    /// returns without waiting (Linux sync_file_range, SYNC_FILE_RANGE_WRITE). A hint that lets the
    /// device work while the caller goes on writing, so that the `sync` that follows has less left
    /// to wait for. It makes nothing durable and promises nothing about order: until that `sync`,
    /// any of the range's writes may or may not have reached the disk, as without the hint (the
    /// crash simulation's `torn` mode covers it). A throw means writeback already failed (EIO,
    /// ENOSPC) and is handled like a failed write; files that cannot take the hint ignore it.
    func startWriteback(offset: UInt64, length: UInt64) throws(StorageError)
    /// Closes the file. Further calls throw `.closed`.
    func close() throws(StorageError)
}

extension StorageFile {
    /// In-memory and crash-simulating files: nothing to start (their `sync` does the work).
    public func startWriteback(offset: UInt64, length: UInt64) throws(StorageError) {}
}

extension StorageFile {
    /// Writes all of `buffer` at `offset`, looping over short writes. A write that makes no
    /// progress throws `.io`.
    public func writeFully(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        var done = 0
        while done < buffer.count {
            let rest = UnsafeRawBufferPointer(rebasing: buffer[done...])
            let n = try write(rest, at: offset + UInt64(done))
            if n <= 0 {
                throw StorageError(.io, "write made no progress at offset \(offset + UInt64(done))", path: path)
            }
            done += n
        }
    }

    /// Reads exactly `buffer.count` bytes at `offset`; throws `.corrupt` when the file ends first.
    public func readFully(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) {
        var done = 0
        while done < buffer.count {
            let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[done...])
            let n = try read(into: rest, at: offset + UInt64(done))
            if n == 0 {
                throw StorageError(
                    .corrupt, "file ends at \(offset + UInt64(done)), expected \(buffer.count - done) more bytes",
                    path: path)
            }
            done += n
        }
    }
}

/// Splits a path into its directory ("." when it has none).
public func directoryOf(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    if slash == path.startIndex { return "/" }
    return String(path[..<slash])
}
