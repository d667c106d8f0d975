// The state behind CrashSimulatingFileSystem: for each file its live bytes (what the running
// program sees), its durable bytes (what the disk holds for sure) and the changes in between;
// the live and durable directory entries and the directory changes in between; the operation
// counter and the crash point. The model itself is described in CrashSimulatingFileSystem.swift.

import Glibc

/// Everything a CrashSimulatingFileSystem knows. Mutated only under its lock.
struct CrashSimulationState {
    /// A change to a file's contents not yet made durable by a sync.
    enum Change {
        /// Bytes written at an offset (the file grows to cover them).
        case write(offset: UInt64, bytes: [UInt8])
        /// The size set by truncate or grown by allocate.
        case resize(UInt64)
    }

    /// A directory change not yet made durable by a sync of its directory.
    enum DirectoryChange {
        /// A file was created under `name`.
        case link(name: String, inode: Int)
        /// `inode` was renamed from `from` to `to`, replacing whatever `to` named.
        case rename(from: String, to: String, inode: Int)
        /// `name`, which named `inode`, was removed.
        case unlink(name: String, inode: Int)
    }

    /// One file, apart from its names (an inode).
    struct Inode {
        var live = FileImage()
        var durable = FileImage()
        /// Changes since the last successful sync, oldest first. live = durable + pending.
        var pending: [Change] = []
    }

    var inodes: [Int: Inode] = [:]
    /// Path → inode, as the running program sees it.
    var liveNames: [String: Int] = [:]
    /// Path → inode, as the disk holds it for sure.
    var durableNames: [String: Int] = [:]
    /// Directory changes not yet made durable, oldest first, each with the directory whose sync
    /// makes it durable.
    var pendingDirectoryChanges: [(directory: String, change: DirectoryChange)] = []
    /// Open handle → inode. A closed handle is absent.
    var handles: [Int: Int] = [:]
    var nextNumber = 1
    /// Operations counted so far (every FileOperationKind call, including failed ones).
    var operations = 0
    /// The number of the operation that crashes, when armed.
    var crashAt: Int?
    /// The operation that crashed, once one has.
    var crashedAt: Int?

    mutating func number() -> Int {
        defer { nextNumber += 1 }
        return nextNumber
    }

    /// Counts one operation; throws the simulated crash when it is the armed one or comes after.
    mutating func gate(_ kind: FileOperationKind, path: String) throws(StorageError) {
        operations += 1
        if crashedAt == nil, let crashAt, operations >= crashAt { crashedAt = operations }
        try checkNotCrashed(kind.rawValue, path: path)
    }

    /// Throws the simulated crash when one has happened (for calls that are not counted).
    func checkNotCrashed(_ operation: String, path: String) throws(StorageError) {
        if let crashedAt {
            throw StorageError(
                .io, "\(operation) failed: simulated crash (at operation #\(crashedAt))", path: path, errno: EIO)
        }
    }

    /// The inode behind an open handle, or `.closed`.
    func inode(of handle: Int, _ operation: String, path: String) throws(StorageError) -> Int {
        guard let inode = handles[handle] else { throw StorageError.closedFile(operation, path: path) }
        return inode
    }

    // MARK: Live changes, each recorded as pending

    mutating func write(_ inode: Int, _ buffer: UnsafeRawBufferPointer, at offset: UInt64, path: String)
        throws(StorageError)
    {
        guard buffer.count > 0 else { return }
        _ = try FileImage.end(offset: offset, count: buffer.count, path: path)
        inodes[inode]?.live.write(buffer, at: offset)
        inodes[inode]?.pending.append(.write(offset: offset, bytes: Array(buffer)))
    }

    mutating func resize(_ inode: Int, to size: UInt64, path: String) throws(StorageError) {
        _ = try FileImage.end(offset: size, count: 0, path: path)
        inodes[inode]?.live.resize(to: size)
        inodes[inode]?.pending.append(.resize(size))
    }

    /// A successful sync: everything written to the file so far is durable.
    mutating func sync(_ inode: Int) {
        guard var node = inodes[inode] else { return }
        node.durable = node.live
        node.pending.removeAll()
        inodes[inode] = node
    }

    mutating func link(_ path: String, to inode: Int) {
        liveNames[path] = inode
        pendingDirectoryChanges.append((Self.directory(of: path), .link(name: path, inode: inode)))
    }

    mutating func rename(_ from: String, to: String, inode: Int) {
        liveNames[from] = nil
        liveNames[to] = inode
        pendingDirectoryChanges.append((Self.directory(of: to), .rename(from: from, to: to, inode: inode)))
    }

    mutating func unlink(_ path: String, inode: Int) {
        liveNames[path] = nil
        pendingDirectoryChanges.append((Self.directory(of: path), .unlink(name: path, inode: inode)))
    }

    /// A successful directory sync: the directory's pending changes become durable, in order.
    mutating func syncDirectory(_ directory: String) {
        let key = Self.normalizedDirectory(directory)
        var rest: [(directory: String, change: DirectoryChange)] = []
        for entry in pendingDirectoryChanges {
            if entry.directory == key {
                Self.apply(entry.change, to: &durableNames)
            } else {
                rest.append(entry)
            }
        }
        pendingDirectoryChanges = rest
    }

    /// Applies one directory change to a table of names.
    static func apply(_ change: DirectoryChange, to names: inout [String: Int]) {
        switch change {
        case .link(let name, let inode):
            names[name] = inode
        case .rename(let from, let to, let inode):
            if names[from] == inode { names[from] = nil }
            names[to] = inode
        case .unlink(let name, let inode):
            if names[name] == inode { names[name] = nil }
        }
    }

    /// The directory whose sync makes a change to `path` durable.
    static func directory(of path: String) -> String {
        normalizedDirectory(directoryOf(path))
    }

    /// A directory path without trailing slashes ("/" stays "/", "" becomes ".").
    static func normalizedDirectory(_ directory: String) -> String {
        var d = Substring(directory)
        while d.count > 1 && d.hasSuffix("/") { d = d.dropLast() }
        return d.isEmpty ? "." : String(d)
    }
}
