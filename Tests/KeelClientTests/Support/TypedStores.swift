// Stores for the typed-operation suite, one per backend: the suite is written once and runs on
// each (`@Test(arguments: BackendKind.allCases)`). Each test gets a fresh data folder; at the end
// the store is closed and the folder opened again offline and verified (every page, index and
// inverse) before it is removed.

import Foundation
import KeelClient
import Testing

enum BackendKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case embedded

    var testDescription: String { rawValue }
}

enum TestPaths {
    /// The repository root, from this file's path.
    static let root: String = {
        let path = #filePath
        guard let range = path.range(of: "/Tests/KeelClientTests/") else { return FileManager.default.currentDirectoryPath }
        return String(path[..<range.lowerBound])
    }()

    static var model: String { root + "/config/model.json" }

    /// A fresh temporary folder (short, so a socket path in it fits sun_path).
    static func temporaryFolder() throws -> String {
        var template = Array("/tmp/keel-c-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw KeelError(.io, "mkdtemp failed") }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A store of one backend kind on a fresh data folder.
final class TypedStore {
    let kind: BackendKind
    let folder: String
    let store: KeelStore

    private init(kind: BackendKind, folder: String, store: KeelStore) {
        self.kind = kind
        self.folder = folder
        self.store = store
    }

    var dataPath: String { folder + "/data" }

    static func open(_ kind: BackendKind, options: EmbeddedStoreOptions = EmbeddedStoreOptions()) async throws -> TypedStore {
        let folder = try TestPaths.temporaryFolder()
        switch kind {
        case .embedded:
            let store = try await KeelStore.open(dataFolder: folder + "/data", model: TestPaths.model, options: options)
            return TypedStore(kind: kind, folder: folder, store: store)
        }
    }

    /// Closes the store, verifies the data folder offline (no faults) and removes it.
    func finish() async throws {
        try await store.close()
        let folder = try DataFolder.open(directory: dataPath, modelPath: TestPaths.model)
        let faults = try folder.store.verify()
        try folder.close()
        #expect(faults.isEmpty, "the store has faults: \(faults)")
        try? FileManager.default.removeItem(atPath: self.folder)
    }
}

/// Runs `body` with a fresh store of `kind`, then closes and verifies it (also when `body` throws).
func withStore(
    _ kind: BackendKind, options: EmbeddedStoreOptions = EmbeddedStoreOptions(), isolation: isolated (any Actor)? = #isolation,
    _ body: (KeelStore) async throws -> Void
) async throws {
    let fixture = try await TypedStore.open(kind, options: options)
    do {
        try await body(fixture.store)
    } catch {
        try? await fixture.finish()
        throw error
    }
    try await fixture.finish()
}
