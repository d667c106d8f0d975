// A file system that remembers what a power cut would leave on disk, for crash tests.
//
// THE MODEL
// Files. Each file (an inode, apart from its names) has a durable image and a list of the
// changes made since its last successful `sync()`: writes (offset and bytes) and size changes
// (truncate sets the size; allocate grows it to cover the range). Reads see every change at
// once. A successful `sync()` of any handle on the file makes all of the file's changes so far
// durable, contents and size together (fdatasync). Nothing else makes file contents durable:
// not close, not a sync of another file, not a directory sync.
// Directories. Creating a file (open with `create` when it does not exist), `rename` and
// `remove` change the live names at once, but each becomes durable only when `syncDirectory` is
// called on its directory: the directory of the path for a creation or removal, the directory
// of the destination for a rename (the engine renames within one directory; a cross-directory
// rename is modelled as a change of the destination's directory only). `sync()` of a new file
// does not make its name durable. `createDirectory` does nothing: directories are implicit, as
// in InMemoryFileSystem. Directory paths are compared as strings after trailing slashes are
// dropped ("/s/" is "/s"; "" and a bare file name mean ".").
// The crash. `crash(after: n)` arms the crash at operation n, counted over every
// FileOperationKind call since this file system was made, from 1 (`operationCount` is the count
// so far; failed calls count). Calls 1…n-1 run normally; call n and every later call — on any
// file or handle, including `size()` and `createDirectory` — throw `.io` "simulated crash" and
// change nothing, so the program under test stops exactly there. Asking for a crash at a number
// already passed crashes the next call.
// After the crash. `crashedImage(mode:seed:)` builds what the disk holds, as a fresh
// InMemoryFileSystem; it can be asked without arming (a crash "now") and as often as wanted:
// - `.drop`: only durable state survives: durable names, each with its durable contents.
// - `.keep`: every change survives, as when only the process is killed: the live names and
//   contents.
// - `.torn`: starting from the durable state, each pending directory change, oldest first,
//   survives or not (a coin flip each); then each pending change of each surviving file, oldest
//   first, survives in part: a write is cut at 512-byte sector boundaries of the file (sector k
//   is bytes [512k, 512k+512)) and each piece survives or not; a size change survives or not. A
//   surviving write piece past the end extends the file with zeros. The coins come from
//   `SeededRandom(seed:)`, drawn in a fixed order (changes in order, files by creation order),
//   so a seed always gives the same image. This is harsher than ext4/xfs, whose journals keep
//   directory changes in order; a store that is correct under it is correct there too.

import Glibc
import Synchronization

/// How a crash treats what was not made durable. See the model above.
public enum CrashMode: String, Sendable, Hashable, CaseIterable {
    /// Nothing unsynced survives (power cut with the worst luck).
    case drop
    /// Everything survives (the process was killed; the kernel wrote everything back).
    case keep
    /// Each unsynced 512-byte sector, size change and directory change survives or not, by seed.
    case torn
}

/// Records what is durable at every instant and builds the disk image a crash would leave.
/// Thread-safe.
public final class CrashSimulatingFileSystem: FileSystem {
    /// The size of the unit a torn write keeps or loses.
    public static let sectorSize = 512

    /// Guards all file contents, names, handles, the operation counter and the crash point.
    let state = Mutex(CrashSimulationState())

    /// An empty file system.
    public init() {}

    /// A file system whose files start out durable with the given contents (path → bytes), for
    /// instance a crashed image to crash again while recovering it.
    public convenience init(files: [String: [UInt8]]) {
        self.init()
        state.withLock { s in
            for path in files.keys.sorted() {
                guard let bytes = files[path] else { continue }
                let inode = s.number()
                s.inodes[inode] = CrashSimulationState.Inode(live: FileImage(bytes), durable: FileImage(bytes))
                s.liveNames[path] = inode
                s.durableNames[path] = inode
            }
        }
    }

    /// A file system whose files start out durable with the contents of `image`'s files.
    public convenience init(startingFrom image: InMemoryFileSystem) {
        var files: [String: [UInt8]] = [:]
        for path in image.paths { files[path] = image.contents(of: path) }
        self.init(files: files)
    }

    // MARK: Crash control

    /// How many operations have been made so far (every FileOperationKind call, failed ones too).
    public var operationCount: Int { state.withLock { $0.operations } }

    /// Arms the crash: operation number `n` (counted from 1 since this file system was made)
    /// and every later call throw "simulated crash" and have no effect.
    public func crash(after n: Int) {
        precondition(n >= 1, "operations are counted from 1")
        state.withLock { $0.crashAt = n }
    }

    /// The number of the operation that crashed, or nil while none has.
    public var crashedAtOperation: Int? { state.withLock { $0.crashedAt } }

    /// Whether the crash has happened.
    public var isCrashed: Bool { crashedAtOperation != nil }

    /// The live contents of the file at `path` (what a read sees now), or nil. For tests.
    public func contents(of path: String) -> [UInt8]? {
        state.withLock { s in s.liveNames[path].flatMap { s.inodes[$0]?.live.bytes } }
    }

    // MARK: FileSystem

    public func open(_ path: String, options: FileOpenOptions) throws(StorageError) -> any StorageFile {
        try checkedPath(path)
        let handle = try state.withLock { (s) throws(StorageError) -> Int in
            try s.gate(.open, path: path)
            let inode: Int
            if let existing = s.liveNames[path] {
                if options.create && options.exclusive {
                    throw StorageError.posix(EEXIST, "open", path: path, writing: true)
                }
                inode = existing
            } else {
                guard options.create else {
                    throw StorageError.posix(ENOENT, "open", path: path, writing: !options.readOnly)
                }
                inode = s.number()
                s.inodes[inode] = CrashSimulationState.Inode()
                s.link(path, to: inode)
            }
            let handle = s.number()
            s.handles[handle] = inode
            return handle
        }
        return CrashSimulatingFile(fileSystem: self, handle: handle, path: path, readOnly: options.readOnly)
    }

    public func fileExists(_ path: String) -> Bool {
        state.withLock { s in
            if s.liveNames[path] != nil { return true }
            let directory = path.hasSuffix("/") ? path : path + "/"
            return s.liveNames.keys.contains { $0.hasPrefix(directory) }
        }
    }

    public func rename(_ from: String, to: String) throws(StorageError) {
        try checkedPath(from)
        try checkedPath(to)
        try state.withLock { (s) throws(StorageError) in
            try s.gate(.rename, path: from)
            guard let inode = s.liveNames[from] else {
                throw StorageError.posix(ENOENT, "rename to \(to)", path: from, writing: true)
            }
            if from != to { s.rename(from, to: to, inode: inode) }
        }
    }

    public func remove(_ path: String) throws(StorageError) {
        try checkedPath(path)
        try state.withLock { (s) throws(StorageError) in
            try s.gate(.remove, path: path)
            guard let inode = s.liveNames[path] else {
                throw StorageError.posix(ENOENT, "unlink", path: path, writing: true)
            }
            s.unlink(path, inode: inode)
        }
    }

    public func syncDirectory(_ directory: String) throws(StorageError) {
        try state.withLock { (s) throws(StorageError) in
            try s.gate(.syncDirectory, path: directory)
            s.syncDirectory(directory)
        }
    }

    public func createDirectory(_ path: String) throws(StorageError) {
        try state.withLock { (s) throws(StorageError) in try s.checkNotCrashed("mkdir", path: path) }
    }

    public func availableBytes(at path: String) -> UInt64? { nil }

    public func contentsOfDirectory(_ path: String) throws(StorageError) -> [String] {
        state.withLock { childNames(of: path, in: $0.liveNames.keys) }
    }

    // MARK: Operations of CrashSimulatingFile, by handle

    /// Counts an operation of `kind` on `handle` and runs `body` on its inode, unless the crash
    /// has come or the handle is closed.
    func perform<T>(
        _ kind: FileOperationKind, _ handle: Int, path: String,
        _ body: (inout CrashSimulationState, Int) throws(StorageError) -> T
    ) throws(StorageError) -> T {
        try state.withLock { (s) throws(StorageError) -> T in
            try s.gate(kind, path: path)
            let inode = try s.inode(of: handle, kind.rawValue, path: path)
            return try body(&s, inode)
        }
    }

    /// The size of the file behind `handle` (not a counted operation, but fails after the crash).
    func size(_ handle: Int, path: String) throws(StorageError) -> UInt64 {
        try state.withLock { (s) throws(StorageError) -> UInt64 in
            try s.checkNotCrashed("size", path: path)
            let inode = try s.inode(of: handle, "size", path: path)
            return s.inodes[inode]?.live.size ?? 0
        }
    }

    /// Forgets a handle dropped without `close()`.
    func release(_ handle: Int) {
        state.withLock { _ = $0.handles.removeValue(forKey: handle) }
    }
}
