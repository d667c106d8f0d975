// Small POSIX helpers for the daemon's start: folders with a mode, errno as text.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

enum FileSystemSupport {
    /// `strerror(code)`.
    static func errnoText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }

    /// Creates `path` and its missing parents, each made with `mode`; existing folders keep
    /// theirs.
    static func makeDirectories(_ path: String, mode: mode_t) throws(StartupFailure) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            if mkdir(prefix, mode) != 0 {
                let code = errno
                var info = stat()
                guard code == EEXIST, stat(prefix, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                    throw StartupFailure("cannot create the folder \(prefix): \(errnoText(code == EEXIST ? ENOTDIR : code))")
                }
            }
        }
    }

    /// The folder part of a path ("." for a bare name).
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
