// A data folder opened in this process for embedded contexts (no daemon): the same open keeld
// does (KeelModel's DataFolder: lock, model file, store files, refused alike), shared by every
// embedded context of the process, and the names of the contexts open on it (as a keeld
// connection has them: `main` always, each other name once).

public import KeelModel
import KeelProtocol
public import Logging
import Synchronization

/// Settings of an embedded store.
public struct EmbeddedStoreOptions: Sendable {
    /// The object store's settings (sync mode, page cache, history retention…).
    public var store = ObjectStoreOptions()
    /// The most pending objects a context may hold (keeld's `pendingObjectsPerContext`); nil: no
    /// limit.
    public var pendingObjectLimit: Int? = nil
    /// Rows an embedded FETCH hands ahead of its reader before it waits for it.
    public var fetchBufferRows = 256
    public var logger = Logger(label: "keel.embedded")

    public init() {}
}

final class EmbeddedStore: Sendable {
    /// How the data folder's lock names an embedded holder to a keeld or keelctl it refuses.
    static let program = "application (KeelClient, embedded)"

    let folder: DataFolder
    let options: EmbeddedStoreOptions

    private struct Registry {
        var names: Set<String> = ["main"]
        var closed = false
    }

    /// Guards the open context names and whether the store is closed.
    private let registry = Mutex(Registry())

    init(folder: DataFolder, options: EmbeddedStoreOptions) {
        self.folder = folder
        self.options = options
    }

    /// A store dropped without `closeStore()` (no context of it is left): closed here, so the
    /// data folder is not left locked for the rest of the process.
    deinit {
        if markClosed() {
            do throws(KeelError) {
                if let failure = try folder.close() {
                    options.logger.error("checkpoint at close failed", metadata: ["error": "\(failure)"])
                }
            } catch {
                options.logger.error("closing the store failed", metadata: ["error": "\(error)"])
            }
        }
    }

    var model: Model { folder.model }

    /// Throws once the store is closed.
    func checkOpen() throws(KeelError) {
        if registry.withLock({ $0.closed }) {
            throw KeelError(.readOnly, "the embedded store in \(folder.directory) is closed")
        }
    }

    /// Takes a context name (refused when another open context has it, as keeld refuses it).
    func claim(_ name: String) throws(KeelError) {
        try ContextTerms.checkContextName(name)
        let taken = registry.withLock { r -> Bool? in
            if r.closed { return nil }
            return !r.names.insert(name).inserted
        }
        guard let taken else { throw KeelError(.readOnly, "the embedded store in \(folder.directory) is closed") }
        if taken { throw KeelError(.badRequest, "a context named \"\(name)\" is already open on this store") }
    }

    func release(_ name: String) {
        _ = registry.withLock { $0.names.remove(name) }
    }

    /// Marks the store closed (later calls fail); true the first time.
    func markClosed() -> Bool {
        registry.withLock { r in
            defer { r.closed = true }
            return !r.closed
        }
    }
}
