// Getting the socket path ready before bind (spec/protocol.md, "Security"):
// - its folder is created 0700 when missing (only its owner can list it);
// - a file already at the path is a socket left by a crashed daemon only if nobody listens on
//   it: connect(2) answering ECONNREFUSED proves that and it is replaced; a live listener, or
//   anything that is not a socket, refuses the start;
// - the socket is created by bind(2) under a umask that yields the configured mode, so there is
//   no moment where it exists with wider permissions (never chmod after bind).

import KeelModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

enum SocketPreparation {
    /// What is at the socket path now.
    enum Existing: Equatable {
        case nothing
        /// A socket file nobody listens on: to be replaced.
        case stale
    }

    /// Longest socket path bind(2) takes (sun_path less its NUL).
    static let maximumPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    static func prepare(path: String) throws(StartupFailure) -> Existing {
        guard path.utf8.count <= maximumPathBytes else {
            throw StartupFailure("the socket path \(path) is longer than \(maximumPathBytes) bytes")
        }
        do throws(KeelError) {
            try FileSystemSupport.makeDirectories(FileSystemSupport.parent(of: path), mode: 0o700)
        } catch {
            throw StartupFailure(error.message)
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return .nothing }
            throw StartupFailure("cannot examine the socket path \(path): \(FileSystemSupport.errnoText())")
        }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw StartupFailure("\(path) exists and is not a socket; refusing to replace it")
        }
        switch probe(path) {
        case 0:
            throw StartupFailure("another daemon is listening on \(path)")
        case ECONNREFUSED:
            return .stale
        case let code:
            throw StartupFailure("cannot tell whether a daemon listens on \(path): \(FileSystemSupport.errnoText(code))")
        }
    }

    /// connect(2) to `path`: 0 when something accepts, else the errno.
    static func probe(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 ? 0 : errno
    }

    /// Runs `body` (the bind) under the umask that gives new files `mode`, then restores the
    /// previous umask. The umask is process-wide: nothing else creates files while it runs.
    static func withUmask<T>(for mode: UInt32, _ body: () async throws -> T) async rethrows -> T {
        let previous = umask(mode_t(0o777 & ~mode))
        defer { umask(previous) }
        return try await body()
    }

    /// The socket file's inode, to remove only our own file at exit.
    static func inode(of path: String) -> UInt64? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }
}
