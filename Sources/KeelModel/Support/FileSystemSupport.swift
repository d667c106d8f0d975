// Small POSIX helpers for opening data folders and sockets: folders with a mode, errno as text.
// Shared by the data-folder lock (here) and keeld's socket preparation (KeelServer).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

public enum FileSystemSupport {
    /// `strerror(code)` (of `errno` when nil).
    public static func errnoText(_ code: Int32? = nil) -> String {
        String(cString: strerror(code ?? errno))
    }

    /// Creates `path` and its missing parents, each made with `mode`; existing folders keep
    /// theirs. Throws `IO` naming the folder that cannot be made.
    public static func makeDirectories(_ path: String, mode: UInt32) throws(KeelError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            if mkdir(prefix, mode_t(mode)) != 0 {
                let code = errno
                var info = stat()
                guard code == EEXIST, stat(prefix, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                    throw KeelError(.io, "cannot create the folder \(prefix): \(errnoText(code == EEXIST ? ENOTDIR : code))")
                }
            }
        }
    }

    /// The folder part of a path ("." for a bare name).
    public static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
