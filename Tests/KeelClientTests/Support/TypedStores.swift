// Stores for the typed-operation suite, one per backend: the suite is written once and runs on
// each (`@Test(arguments: BackendKind.allCases)`) — embedded (`KeelStore.open`, contexts in this
// process) and over the socket (`KeelStore.connect` to a real keeld started for the test,
// KeelTestSupport's `Keeld`). Each test gets a fresh data folder; at the end the store is closed
// (the daemon stopped) and the folder opened again offline and verified (every page, index and
// inverse) before it is removed.

import Foundation
import KeelClient
import KeelTestSupport
import Testing

enum BackendKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case embedded
    case daemon

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
    let dataPath: String
    let store: KeelStore
    /// The daemon serving the folder, for `.daemon`.
    let keeld: Keeld?

    private init(kind: BackendKind, folder: String, dataPath: String, store: KeelStore, keeld: Keeld?) {
        self.kind = kind
        self.folder = folder
        self.dataPath = dataPath
        self.store = store
        self.keeld = keeld
    }

    /// `options` is the embedded store's; a daemon is configured with its `historyRetention`.
    static func open(_ kind: BackendKind, options: EmbeddedStoreOptions = EmbeddedStoreOptions()) async throws -> TypedStore {
        switch kind {
        case .embedded:
            let folder = try TestPaths.temporaryFolder()
            let store = try await KeelStore.open(dataFolder: folder + "/data", model: TestPaths.model, options: options)
            return TypedStore(kind: kind, folder: folder, dataPath: folder + "/data", store: store, keeld: nil)
        case .daemon:
            let keeld = try Keeld()
            do {
                // The store settings a daemon takes from its configuration, as the embedded one has them.
                if let retention = options.store.historyRetention { try keeld.configure(["historyRetention": retention]) }
                try keeld.start()
                let store = try await KeelStore.connect(socket: keeld.socketPath, clientName: "KeelClientTests")
                return TypedStore(kind: kind, folder: keeld.folder, dataPath: keeld.dataPath, store: store, keeld: keeld)
            } catch {
                keeld.cleanUp()
                throw error
            }
        }
    }

    /// Closes the store (and stops the daemon), verifies the data folder offline (no faults) and
    /// removes it.
    func finish() async throws {
        try await store.close()
        if let keeld {
            #expect(keeld.stop() == 0, "keeld did not stop cleanly: \(keeld.stderr)")
        }
        let folder = try DataFolder.open(directory: dataPath, modelPath: TestPaths.model)
        let faults = try folder.store.verify()
        try folder.close()
        #expect(faults.isEmpty, "the store has faults: \(faults)")
        if let keeld { keeld.cleanUp() } else { try? FileManager.default.removeItem(atPath: self.folder) }
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
