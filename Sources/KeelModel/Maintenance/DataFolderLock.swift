// A data folder's exclusive lock (spec/protocol.md, "Security": two daemons never open the
// same data folder; spec/cli.md: offline tools are refused while a daemon holds it).
// `DATA/keeld.lock` is held with `flock(LOCK_EX | LOCK_NB)` for the holder's whole life; the
// kernel drops it when the process dies, even by SIGKILL, so a crash never leaves the folder
// locked. The holder's pid is written into the file for the refusal message.
//
// Lock file layout: the holder's pid in decimal ASCII followed by LF (advisory, for messages
// only; the flock is what excludes). The file stays after release, for the next holder.

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

    /// Creates the folder when missing (0700 for each folder made) and takes its lock. Throws
    /// `BUSY` when another process holds it (naming its pid), `IO` when the lock file cannot be
    /// made.
    public static func acquire(directory: String) throws(KeelError) -> DataFolderLock {
        try FileSystemSupport.makeDirectories(directory, mode: 0o700)
        let path = directory + "/keeld.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw KeelError(.io, "cannot open the lock file \(path): \(FileSystemSupport.errnoText())")
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            let holder = readHolder(fd)
            close(fd)
            if code == EWOULDBLOCK {
                let who = holder.map { "pid \($0): " } ?? ""
                throw KeelError(
                    .busy,
                    "the data folder \(directory) is in use by another process (\(who)a keeld, or an application with the store open embedded)",
                    details: holder.map { ["pid": .int(Int64($0))] })
            }
            throw KeelError(.io, "cannot lock \(path): \(FileSystemSupport.errnoText(code))")
        }
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return DataFolderLock(path: path, descriptor: fd)
    }

    private static func readHolder(_ fd: Int32) -> Int? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        let digits = buffer[..<n].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        return Int(String(decoding: digits, as: UTF8.self))
    }

    /// Drops the lock (the file stays, for the next holder).
    public func release() {
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
