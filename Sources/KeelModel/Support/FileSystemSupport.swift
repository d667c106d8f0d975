// Small POSIX helpers shared by the programs' start-up code (keeld's socket and data folder,
// keelctl's data folder): folders made with a mode, errno as text, a path's parent.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

package enum FileSystemSupport {
    /// `strerror(code)`.
    package static func errnoText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }

    /// Creates `path` and its missing parents, each made with `mode`; existing folders keep
    /// theirs. Throws `IO` naming the folder that could not be made.
    package static func makeDirectories(_ path: String, mode: UInt32) throws(KeelError) {
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
    package static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
