// Hostile files: random bytes, truncated page files, a newer format version (of the page file
// and of the log), damaged page 0, foreign files (text, an SQLite database, a Keel log in place
// of the page file). Opening must fail with the right code (NOT_A_STORE, UNSUPPORTED_VERSION,
// CORRUPT) and a clear message, and must write nothing: every file keeps its bytes, no file
// appears, and no write, truncate, allocate, rename or remove reaches the file system (I15).
// Each case runs read-write and read-only.

import Testing

@testable import KeelStorage

@Suite("Hostile files: open refuses with a clear error and writes nothing")
struct OpenValidationTests {
    static let logPath = testStorePath + "-wal"
    static let pageSize = 4096

    /// The files of a valid, cleanly closed store of several pages (its log reset, no frames).
    static func validStore() throws -> [String: Bytes] { try validStoreFixture.get() }
    private static let validStoreFixture = Fixture<[String: Bytes]> {
        let memory = InMemoryFileSystem()
        let store = try openTestStore(memory)
        try store.write { txn in
            let tree = try txn.createTree("t")
            for i in 0..<300 { try tree.put(key: numberedKey(i), value: taggedValue(key: numberedKey(i), version: 1, length: 100)) }
        }
        try store.close()
        return files(of: memory)
    }

    static func validPageFile() throws -> Bytes { try #require(try validStore()[testStorePath]) }
    static func validLog() throws -> Bytes { try #require(try validStore()[logPath], "a closed store keeps its log file") }

    /// Page 0 with its checksum recomputed after an edit, so only the edited field is wrong.
    static func resealedPage0(_ file: Bytes, _ edit: (inout Bytes) -> Void) -> Bytes {
        var out = file
        edit(&out)
        let crc = out[4..<pageSize].withUnsafeBytes { CRC32C.checksum($0, continuing: CRC32C.checksum(integer: UInt32(0), continuing: 0)) }
        out.replaceSubrange(0..<4, with: withUnsafeBytes(of: crc.littleEndian) { Array($0) })
        return out
    }

    static func storeUInt32(_ value: UInt32, at offset: Int, in bytes: inout Bytes) {
        bytes.replaceSubrange(offset..<(offset + 4), with: withUnsafeBytes(of: value.littleEndian) { Array($0) })
    }

    /// Opens `files` read-write and read-only; each open must throw one of `codes` and leave every
    /// file as it was. Returns the read-write error.
    @discardableResult
    static func expectRefused(
        _ files: [String: Bytes], _ codes: StorageError.Code..., context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> StorageError? {
        var first: StorageError?
        for readOnly in [false, true] {
            let memory = InMemoryFileSystem(files: files)
            let faults = FaultInjectingFileSystem(wrapping: memory)
            var options = testOptions(faults)
            options.readOnly = readOnly
            let ctx = "\(context) (\(readOnly ? "read-only" : "read-write"))"
            do {
                let store = try Store.open(at: testStorePath, options: options, logger: quietLogger)
                Issue.record("\(ctx): the open succeeded", sourceLocation: sourceLocation)
                try? store.close()
            } catch {
                #expect(codes.contains(error.code), "\(ctx): expected \(codes), got \(error)", sourceLocation: sourceLocation)
                #expect(!error.message.isEmpty && error.path != nil, "\(ctx): the error should say what and where: \(error)",
                        sourceLocation: sourceLocation)
                if !readOnly { first = error }
            }
            let written = [FileOperationKind.write, .truncate, .allocate, .rename, .remove, .syncDirectory]
                .filter { faults.operationCount(of: $0) > 0 }
            #expect(written.isEmpty, "\(ctx): the failed open made \(written) calls (I15)", sourceLocation: sourceLocation)
            #expect(memory.paths == files.keys.sorted(), "\(ctx): files after the open: \(memory.paths) (I15)", sourceLocation: sourceLocation)
            for (path, bytes) in files {
                #expect(memory.contents(of: path) == bytes, "\(ctx): \(path) changed (I15)", sourceLocation: sourceLocation)
            }
        }
        return first
    }

    /// The cases, with and without a (valid, empty) log beside the page file.
    static func withAndWithoutLog(_ pageFile: Bytes) throws -> [(String, [String: Bytes])] {
        [("no log", [testStorePath: pageFile]), ("with its log", [testStorePath: pageFile, logPath: try validLog()])]
    }

    @Test("the valid store opens (the fixture is sound), read-write and read-only")
    func validStoreOpens() throws {
        for (what, files) in try Self.withAndWithoutLog(try Self.validPageFile()) {
            for readOnly in [false, true] {
                var options = testOptions(InMemoryFileSystem(files: files))
                options.readOnly = readOnly
                let store = try Store.open(at: testStorePath, options: options, logger: quietLogger)
                #expect(try contents(of: store)["t"]?.count == 300, "\(what), read-only \(readOnly)")
                try expectVerifies(store, "\(what), read-only \(readOnly)")
                try store.close()
            }
        }
    }

    @Test("I15: random bytes are not a store", arguments: [1, 31, 32, 100, 512, 4096, 8192, 12_345, 65_536])
    func randomBytesFile(length: Int) throws {
        let seed = UInt64(length) &* 0x9E37_79B9_7F4A_7C15
        Self.expectRefused([testStorePath: randomBytes(length, seed: seed)], .notAStore, context: "\(length) random bytes")
        Self.expectRefused(
            [testStorePath: randomBytes(length, seed: seed), Self.logPath: randomBytes(4096, seed: ~seed)], .notAStore,
            context: "\(length) random bytes with a random log")
    }

    @Test("I15: foreign files — empty, text, an SQLite database, a Keel log — are not a store")
    func foreignFiles() throws {
        var sqlite = Array("SQLite format 3\0".utf8) + [0x10, 0x00, 0x01, 0x01, 0x00, 0x40, 0x20, 0x20]
        sqlite += Bytes(repeating: 0, count: 4096 - sqlite.count)
        let text = Array(String(repeating: "This is not a Keel store, just some text.\n", count: 200).utf8)
        let keelLog = try Self.validLog()
        for (what, bytes) in [("an empty file", Bytes()), ("a text file", text), ("an SQLite database", sqlite), ("a Keel log", keelLog)] {
            let error = Self.expectRefused([testStorePath: bytes], .notAStore, context: what)
            #expect(error?.message.contains("not a Keel store") == true || error?.message.contains("too short") == true,
                    "\(what): \(String(describing: error))")
        }
    }

    @Test("I15: a page file cut short inside page 0 or inside a later page is refused",
          arguments: [0, 16, 31, 100, 511, 512, 4095, 4096 + 100, 3 * 4096 + 2_000])
    func truncatedInsideAPage(length: Int) throws {
        let pageFile = Array(try Self.validPageFile().prefix(length))
        try #require(try Self.validPageFile().count > 4 * Self.pageSize, "the fixture should have several pages")
        for (what, files) in try Self.withAndWithoutLog(pageFile) {
            Self.expectRefused(files, length < 32 ? .notAStore : .corrupt, context: "page file cut at \(length) bytes, \(what)")
        }
        let last = Array(try Self.validPageFile().dropLast(1))
        for (what, files) in try Self.withAndWithoutLog(last) {
            Self.expectRefused(files, .corrupt, context: "page file one byte short, \(what)")
        }
    }

    @Test("I3 I15: a page file cut at a page boundary: the open refuses, or every read of a missing page throws CORRUPT")
    func truncatedAtAPageBoundary() throws {
        let pages = try Self.validPageFile().count / Self.pageSize
        for keep in [1, 2, pages / 2, pages - 1] {
            let pageFile = Array(try Self.validPageFile().prefix(keep * Self.pageSize))
            for (what, files) in try Self.withAndWithoutLog(pageFile) {
                let context = "page file cut to \(keep) of \(pages) pages, \(what)"
                let memory = InMemoryFileSystem(files: files)
                let opened = Result { () throws(StorageError) in
                    try Store.open(at: testStorePath, options: testOptions(memory), logger: quietLogger)
                }
                guard case .success(let store) = opened else {
                    if case .failure(let error) = opened {
                        #expect(error.code == .corrupt, "\(context): \(error)")
                        print("[OpenValidationTests] \(context): refused: \(error)")
                    }
                    #expect(Set(memory.paths) == Set(files.keys) && files.allSatisfy { memory.contents(of: $0.key) == $0.value },
                            "\(context): the refused open changed the files (I15)")
                    continue
                }
                // Opened: the missing pages must be reported, never read as something else.
                let report = try store.verify()
                print("[OpenValidationTests] \(context): opened; verify: \(report.faults.count) faults")
                #expect(!report.isClean && report.faults.allSatisfy { $0.page.map { Int($0.rawValue) >= keep } ?? true },
                        "\(context): verify should name the missing pages: \(report)")
                let error = expectStorageError(.corrupt, comment: context) { _ = try contents(of: store) }
                #expect(error?.page.map { Int($0.rawValue) >= keep } == true, "\(context): \(String(describing: error))")
                #expect(files.allSatisfy { memory.contents(of: $0.key) == $0.value } || !files.keys.contains(Self.logPath),
                        "\(context): opening changed a file that existed")
                try? store.close()
            }
        }
    }

    @Test("I15: a newer format version of the page file is refused as UNSUPPORTED_VERSION", arguments: [UInt32(2), 99, 0])
    func newerPageFileVersion(version: UInt32) throws {
        let pageFile = Self.resealedPage0(try Self.validPageFile()) { Self.storeUInt32(version, at: 24, in: &$0) }
        for (what, files) in try Self.withAndWithoutLog(pageFile) {
            let error = Self.expectRefused(files, .unsupportedVersion, context: "format version \(version), \(what)")
            #expect(error?.message.contains("\(version)") == true, "the message names the version: \(String(describing: error))")
        }
    }

    @Test("I15: a newer format version of the log is refused as UNSUPPORTED_VERSION")
    func newerLogVersion() throws {
        var log = try Self.validLog()
        Self.storeUInt32(2, at: 8, in: &log)
        let crc = log[0..<60].withUnsafeBytes { CRC32C.checksum($0) }
        Self.storeUInt32(crc, at: 60, in: &log)
        let error = Self.expectRefused([testStorePath: try Self.validPageFile(), Self.logPath: log], .unsupportedVersion, context: "log version 2")
        #expect(error?.path == Self.logPath, "the error names the log: \(String(describing: error))")
    }

    @Test("I3 I15: a damaged page 0 with no newer copy in the log is refused as CORRUPT naming page 0")
    func damagedPage0() throws {
        var flipped = try Self.validPageFile()
        flipped[100] ^= 0x04
        for (what, files) in try Self.withAndWithoutLog(flipped) {
            let error = Self.expectRefused(files, .corrupt, context: "a bit flipped in page 0, \(what)")
            #expect(error?.page == .meta, "the error names page 0: \(String(describing: error))")
        }
    }

    @Test("I15: page 0 with impossible fields (checksum valid) is refused",
          arguments: [("page count 0", 32, UInt32(0)), ("catalog root beyond the page count", 44, 1_000_000),
                      ("free-list head beyond the page count", 36, 1_000_000), ("page size 1000", 28, 1000),
                      ("page size 8192 on 4096-byte pages", 28, 8192)])
    func impossiblePage0(what: String, offset: Int, value: UInt32) throws {
        let pageFile = Self.resealedPage0(try Self.validPageFile()) { Self.storeUInt32(value, at: offset, in: &$0) }
        for (log, files) in try Self.withAndWithoutLog(pageFile) {
            Self.expectRefused(files, .corrupt, .notAStore, context: "\(what), \(log)")
        }
    }

    @Test("I15: opening a missing store read-only fails and creates nothing")
    func missingReadOnly() {
        let memory = InMemoryFileSystem()
        var options = testOptions(memory)
        options.readOnly = true
        expectStorageError(.io, .notAStore) { _ = try Store.open(at: testStorePath, options: options, logger: quietLogger) }
        #expect(memory.paths.isEmpty)
    }
}
