// The data folder's exclusive lock (spec/protocol.md, "Security": two daemons never open the
// same data folder; spec/cli.md: keelctl's offline commands are refused while a daemon holds the
// folder). `DATA/keeld.lock` is held with `flock(LOCK_EX | LOCK_NB)` for the holder's whole
// life — keeld for as long as it serves, keelctl for one offline command — and the kernel drops
// it when the process dies, even by SIGKILL, so a crash never leaves the folder locked.
//
// The file holds one line, `PID PROGRAM` (`12345 keeld`), written after the lock is taken, for
// the refusal message; a file holding only a pid (written by an older keeld) reads as keeld.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

public final class DataFolderLock: Sendable {
    public let path: String
    /// The open lock file; immutable, closed by `release()` (which is called once, at exit).
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// The lock file of a data folder.
    public static func lockPath(of directory: String) -> String { directory + "/keeld.lock" }

    /// Creates the folder when missing (0700 for each folder made) and takes its lock for
    /// `program`, or throws: `BUSY` with the one-line reason ("the data folder DIR is in use by
    /// another keeld (pid N)") when another process holds it, `IO` when the folder or the file
    /// cannot be made.
    public static func acquire(directory: String, program: String = "keeld") throws(KeelError) -> DataFolderLock {
        try FileSystemSupport.makeDirectories(directory, mode: 0o700)
        let path = lockPath(of: directory)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw KeelError(.io, "cannot open the lock file \(path): \(FileSystemSupport.errnoText())")
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            let holder = readHolder(fd)
            close(fd)
            if code == EWOULDBLOCK {
                let who = holder.map { "another \($0.program) (pid \($0.pid))" } ?? "another process"
                throw KeelError(
                    .busy, "the data folder \(directory) is in use by \(who)",
                    details: holder.map { ["pid": .int(Int64($0.pid)), "program": .string($0.program)] })
            }
            throw KeelError(.io, "cannot lock \(path): \(FileSystemSupport.errnoText(code))")
        }
        let text = Array("\(getpid()) \(program)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return DataFolderLock(path: path, descriptor: fd)
    }

    private static func readHolder(_ fd: Int32) -> (pid: Int, program: String)? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        let line = String(decoding: buffer[..<n].prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        let parts = line.split(separator: " ", maxSplits: 1)
        guard let first = parts.first, let pid = Int(first) else { return nil }
        let program = parts.count > 1 ? String(parts[1]) : "keeld"
        return (pid, program)
    }

    /// Drops the lock (the file stays, for the next holder).
    public func release() {
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
