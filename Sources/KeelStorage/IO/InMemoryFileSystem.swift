// A file system in memory, for tests: files are byte arrays with POSIX semantics.
//
// - Files have an identity apart from their names (like inodes): an open handle keeps working
//   after its file is renamed, and a removed file stays readable and writable through handles
//   opened before, until the last one closes.
// - Writes past the end zero-fill the gap; reads are short at the end of the file.
// - Directories are implicit: any path prefix exists, so opening "a/b/c" never fails for a
//   missing "a/b"; `createDirectory` and `syncDirectory` do nothing and succeed; `fileExists`
//   is true for a file and for any prefix directory of a file. Paths are compared as plain
//   strings (no normalisation of "//" or "./").
// - Nothing is ever lost: every operation is durable at once (CrashSimulatingFileSystem models
//   what a crash loses).
// - Capacity: with `capacity` set, every byte of every file counts against it, and a write,
//   truncate or allocate that would need more space fails with `.diskFull` (ENOSPC) and changes
//   nothing. `availableBytes` is the capacity minus what is used, or nil when unlimited.
// - Errors carry the errno a POSIX file system would give (ENOENT, EEXIST, ENOSPC), built by the
//   same mapping as PosixFileSystem, so code and tests see the same error either way.

import Glibc
import Synchronization

/// Files in memory. A reference type: every `open` shares the one set of files.
public final class InMemoryFileSystem: FileSystem {
    /// A file's contents and how many names and handles refer to it.
    struct Node {
        var image = FileImage()
        /// Whether a name refers to the node (a removed or replaced file is unlinked).
        var linked = true
        /// Handles open on the node. An unlinked node is freed when this drops to zero.
        var handles = 0
    }

    struct State {
        /// Path → node number.
        var names: [String: Int] = [:]
        var nodes: [Int: Node] = [:]
        /// Open handle number → node number. A closed handle is absent.
        var handles: [Int: Int] = [:]
        var nextNumber = 1
        var capacity: UInt64?
        /// The sum of the sizes of all nodes (named or still open).
        var used: UInt64 = 0

        mutating func number() -> Int {
            defer { nextNumber += 1 }
            return nextNumber
        }

        /// Frees a node nobody refers to any more.
        mutating func collect(_ node: Int) {
            guard let n = nodes[node], !n.linked, n.handles == 0 else { return }
            used -= n.image.size
            nodes[node] = nil
        }

        /// Detaches `path` from its node, if any.
        mutating func unlink(_ path: String) {
            guard let node = names.removeValue(forKey: path) else { return }
            nodes[node]?.linked = false
            collect(node)
        }

        /// Throws ENOSPC when growing by `growth` bytes would pass the capacity.
        func reserve(_ growth: UInt64, path: String) throws(StorageError) {
            guard let capacity, growth > 0 else { return }
            if used > capacity || growth > capacity - used {
                throw StorageError.posix(ENOSPC, "write of \(growth) more bytes", path: path, writing: true)
            }
        }
    }

    /// Guards every file, name and open handle, and the capacity accounting.
    let state: Mutex<State>

    /// An empty file system; `capacity` limits the total bytes of all files (nil: unlimited).
    public init(capacity: UInt64? = nil) {
        state = Mutex(State(capacity: capacity))
    }

    /// A file system holding `files` (path → contents).
    public convenience init(files: [String: [UInt8]], capacity: UInt64? = nil) {
        self.init(capacity: capacity)
        for path in files.keys.sorted() {
            if let bytes = files[path] { setContents(bytes, of: path) }
        }
    }

    /// The total bytes files may hold, nil for unlimited. Lowering it below what is used makes
    /// every growing write fail until files shrink.
    public var capacity: UInt64? {
        get { state.withLock { $0.capacity } }
        set { state.withLock { $0.capacity = newValue } }
    }

    /// Bytes held by all files, including removed files still open.
    public var usedBytes: UInt64 { state.withLock { $0.used } }

    /// Every file's path, sorted.
    public var paths: [String] { state.withLock { $0.names.keys.sorted() } }

    /// The contents of the file at `path`, or nil when there is none. For tests.
    public func contents(of path: String) -> [UInt8]? {
        state.withLock { s in s.names[path].flatMap { s.nodes[$0]?.image.bytes } }
    }

    /// Replaces the contents of the file at `path`, creating it when missing; handles open on it
    /// see the new bytes. Ignores the capacity. For tests: bit flips, truncation, planted files.
    public func setContents(_ bytes: [UInt8], of path: String) {
        state.withLock { s in
            let node: Int
            if let existing = s.names[path] {
                node = existing
            } else {
                node = s.number()
                s.nodes[node] = Node()
                s.names[path] = node
            }
            let old = s.nodes[node]?.image.size ?? 0
            s.nodes[node]?.image = FileImage(bytes)
            s.used = s.used - old + UInt64(bytes.count)
        }
    }

    // MARK: FileSystem

    public func open(_ path: String, options: FileOpenOptions) throws(StorageError) -> any StorageFile {
        try checkedPath(path)
        let handle = try state.withLock { (s) throws(StorageError) -> Int in
            let node: Int
            if let existing = s.names[path] {
                if options.create && options.exclusive {
                    throw StorageError.posix(EEXIST, "open", path: path, writing: true)
                }
                node = existing
            } else {
                guard options.create else {
                    throw StorageError.posix(ENOENT, "open", path: path, writing: !options.readOnly)
                }
                node = s.number()
                s.nodes[node] = Node()
                s.names[path] = node
            }
            s.nodes[node]?.handles += 1
            let handle = s.number()
            s.handles[handle] = node
            return handle
        }
        return InMemoryFile(fileSystem: self, handle: handle, path: path, readOnly: options.readOnly)
    }

    public func fileExists(_ path: String) -> Bool {
        state.withLock { s in
            if s.names[path] != nil { return true }
            let directory = path.hasSuffix("/") ? path : path + "/"
            return s.names.keys.contains { $0.hasPrefix(directory) }
        }
    }

    public func rename(_ from: String, to: String) throws(StorageError) {
        try checkedPath(from)
        try checkedPath(to)
        try state.withLock { (s) throws(StorageError) in
            guard let node = s.names[from] else {
                throw StorageError.posix(ENOENT, "rename to \(to)", path: from, writing: true)
            }
            if from == to { return }
            s.unlink(to)
            s.names[from] = nil
            s.names[to] = node
        }
    }

    public func remove(_ path: String) throws(StorageError) {
        try checkedPath(path)
        try state.withLock { (s) throws(StorageError) in
            guard s.names[path] != nil else { throw StorageError.posix(ENOENT, "unlink", path: path, writing: true) }
            s.unlink(path)
        }
    }

    public func syncDirectory(_ directory: String) throws(StorageError) {}

    public func createDirectory(_ path: String) throws(StorageError) {}

    public func contentsOfDirectory(_ path: String) throws(StorageError) -> [String] {
        state.withLock { childNames(of: path, in: $0.names.keys) }
    }

    public func availableBytes(at path: String) -> UInt64? {
        state.withLock { s in s.capacity.map { $0 > s.used ? $0 - s.used : 0 } }
    }

    // MARK: Operations of InMemoryFile, by handle

    /// Runs `body` on the node behind `handle`, or throws `.closed`.
    func withNode<T>(
        _ handle: Int, _ operation: String, path: String,
        _ body: (inout State, Int) throws(StorageError) -> T
    ) throws(StorageError) -> T {
        try state.withLock { (s) throws(StorageError) -> T in
            guard let node = s.handles[handle] else { throw StorageError.closedFile(operation, path: path) }
            return try body(&s, node)
        }
    }

    func read(_ handle: Int, path: String, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64)
        throws(StorageError) -> Int
    {
        try withNode(handle, "read", path: path) { s, node in s.nodes[node]?.image.read(into: buffer, at: offset) ?? 0 }
    }

    func write(_ handle: Int, path: String, _ buffer: UnsafeRawBufferPointer, at offset: UInt64)
        throws(StorageError) -> Int
    {
        try withNode(handle, "write", path: path) { (s, node) throws(StorageError) -> Int in
            guard buffer.count > 0 else { return 0 }
            let end = try FileImage.end(offset: offset, count: buffer.count, path: path)
            try resize(&s, node, toAtLeast: end, path: path)
            s.nodes[node]?.image.write(buffer, at: offset)
            return buffer.count
        }
    }

    func size(_ handle: Int, path: String) throws(StorageError) -> UInt64 {
        try withNode(handle, "size", path: path) { s, node in s.nodes[node]?.image.size ?? 0 }
    }

    func truncate(_ handle: Int, path: String, to size: UInt64) throws(StorageError) {
        try withNode(handle, "truncate", path: path) { (s, node) throws(StorageError) in
            let end = try FileImage.end(offset: size, count: 0, path: path)
            let old = s.nodes[node]?.image.size ?? 0
            if end > old {
                try resize(&s, node, toAtLeast: end, path: path)
            } else {
                s.nodes[node]?.image.resize(to: end)
                s.used -= old - end
            }
        }
    }

    func allocate(_ handle: Int, path: String, offset: UInt64, length: UInt64) throws(StorageError) {
        try withNode(handle, "allocate", path: path) { (s, node) throws(StorageError) in
            guard length > 0 else { return }
            guard let count = Int(exactly: length) else {
                throw StorageError(.invalidArgument, "allocation length \(length) is out of range", path: path)
            }
            let end = try FileImage.end(offset: offset, count: count, path: path)
            try resize(&s, node, toAtLeast: end, path: path)
        }
    }

    func close(_ handle: Int, path: String) throws(StorageError) {
        try withNode(handle, "close", path: path) { s, node in
            s.handles[handle] = nil
            s.nodes[node]?.handles -= 1
            s.collect(node)
        }
    }

    /// Grows a node to `end` bytes when it is smaller, charging the growth to the capacity.
    private func resize(_ s: inout State, _ node: Int, toAtLeast end: UInt64, path: String) throws(StorageError) {
        let old = s.nodes[node]?.image.size ?? 0
        guard end > old else { return }
        try s.reserve(end - old, path: path)
        s.nodes[node]?.image.resize(to: end)
        s.used += end - old
    }
}
