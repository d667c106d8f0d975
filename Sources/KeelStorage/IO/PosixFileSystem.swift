// The real file system: open(2) with O_CLOEXEC, rename(2), unlink(2), fsync of directories,
// mkdir -p and statvfs. Files are PosixFile. Errors map errno as StorageError.posix describes:
// ENOSPC/EDQUOT → .diskFull, EROFS (and EACCES/EPERM on modifying calls) → .readOnly, the rest
// → .io, always with errno, path and strerror's text.

import Glibc

/// The file system of the machine, through POSIX calls. Stateless, so freely shared.
public struct PosixFileSystem: FileSystem {
    /// Permission bits of created files (before the umask).
    static let fileMode: mode_t = 0o644
    /// Permission bits of created directories (before the umask).
    static let directoryMode: mode_t = 0o755

    public init() {}

    public func open(_ path: String, options: FileOpenOptions) throws(StorageError) -> any StorageFile {
        try openFile(path, options: options)
    }

    /// `open` with the concrete type, for callers that want `PosixFile`'s extras.
    public func openFile(_ path: String, options: FileOpenOptions) throws(StorageError) -> PosixFile {
        try checkedPath(path)
        var flags = O_CLOEXEC | (options.readOnly ? O_RDONLY : O_RDWR)
        if options.create {
            flags |= O_CREAT
            if options.exclusive { flags |= O_EXCL }
        }
        let (fd, code) = retryingOnInterrupt { Glibc.open(path, flags, Self.fileMode) }
        if fd < 0 { throw StorageError.posix(code, "open", path: path, writing: !options.readOnly) }
        return PosixFile(fd: fd, path: path, readOnly: options.readOnly)
    }

    public func fileExists(_ path: String) -> Bool {
        guard !path.isEmpty, !path.utf8.contains(0) else { return false }
        return access(path, F_OK) == 0
    }

    public func rename(_ from: String, to: String) throws(StorageError) {
        try checkedPath(from)
        try checkedPath(to)
        let (r, code) = retryingOnInterrupt { Glibc.rename(from, to) }
        if r < 0 { throw StorageError.posix(code, "rename to \(to)", path: from, writing: true) }
    }

    public func remove(_ path: String) throws(StorageError) {
        try checkedPath(path)
        let (r, code) = retryingOnInterrupt { unlink(path) }
        if r < 0 { throw StorageError.posix(code, "unlink", path: path, writing: true) }
    }

    public func syncDirectory(_ directory: String) throws(StorageError) {
        let path = directory.isEmpty ? "." : directory
        try checkedPath(path)
        let (fd, openCode) = retryingOnInterrupt { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        if fd < 0 { throw StorageError.posix(openCode, "open directory", path: path, writing: false) }
        defer { _ = Glibc.close(fd) }
        // As with files, a failed directory fsync is never retried as if it had worked.
        let (r, code) = retryingOnInterrupt { fsync(fd) }
        if r < 0 { throw StorageError.posix(code, "fsync directory", path: path, writing: true) }
    }

    public func createDirectory(_ path: String) throws(StorageError) {
        try checkedPath(path)
        if isDirectory(path) { return }
        // mkdir -p: create each missing prefix in turn, from the root down.
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += prefix.isEmpty || prefix.hasSuffix("/") ? String(component) : "/" + component
            if component == "." || component == ".." { continue }
            let (r, code) = retryingOnInterrupt { mkdir(prefix, Self.directoryMode) }
            if r == 0 { continue }
            if code == EEXIST && isDirectory(prefix) { continue }
            if code == EEXIST {
                throw StorageError(.io, "mkdir: \(prefix) exists and is not a directory", path: path, errno: ENOTDIR)
            }
            throw StorageError.posix(code, "mkdir \(prefix)", path: path, writing: true)
        }
    }

    public func availableBytes(at path: String) -> UInt64? {
        // The path itself may not exist yet (a file about to be created): ask its directory.
        for candidate in [path, directoryOf(path)] where !candidate.isEmpty && !candidate.utf8.contains(0) {
            var info = statvfs()
            if statvfs(candidate, &info) == 0 {
                return UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize)).partialValue
            }
        }
        return nil
    }

    public func contentsOfDirectory(_ path: String) throws(StorageError) -> [String] {
        try checkedPath(path)
        guard let stream = opendir(path) else { throw StorageError.posix(errno, "opendir", path: path, writing: false) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Whether `path` names a directory (following symbolic links).
    func isDirectory(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFDIR
    }
}
