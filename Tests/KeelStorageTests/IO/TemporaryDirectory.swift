// A unique directory under /tmp for tests that touch real files, removed (with everything in it)
// when the test's closure returns.

import Glibc
import Testing

@testable import KeelStorage

/// Runs `body` with a fresh empty directory under /tmp, then deletes the directory tree.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    var template = Array("/tmp/keel-io-test-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer -> Bool in
        guard let base = buffer.baseAddress else { return false }
        return mkdtemp(base) != nil
    }
    try #require(made, "mkdtemp failed: errno \(errno)")
    let path = template.withUnsafeBufferPointer { buffer in
        String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    defer { removeTree(path) }
    return try body(path)
}

/// Deletes a file or a directory with everything below it; errors are ignored (test cleanup).
func removeTree(_ path: String) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    if (info.st_mode & S_IFMT) == S_IFDIR {
        if let dir = opendir(path) {
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(dir)
            for name in names { removeTree(path + "/" + name) }
        }
        rmdir(path)
    } else {
        unlink(path)
    }
}

extension StorageFile {
    /// Writes `bytes` at `offset` in full.
    func write(bytes: [UInt8], at offset: UInt64) throws {
        try bytes.withUnsafeBytes { try writeFully($0, at: offset) }
    }

    /// Reads up to `count` bytes at `offset`; the result is short only at end of file.
    func read(count: Int, at offset: UInt64) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = try buffer.withUnsafeMutableBytes { try read(into: $0, at: offset) }
        return Array(buffer.prefix(n))
    }

    /// The whole file.
    func readAll() throws -> [UInt8] {
        try read(count: Int(try size()), at: 0)
    }
}
