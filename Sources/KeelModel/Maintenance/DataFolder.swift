// A data folder opened by one process: its lock, its model, its object store. The one way a
// data folder is opened, by keeld (KeelServer's start) and by an application that embeds the
// store (KeelClient's `KeelStore.open`), so both refuse and report alike:
//   1. the folder's lock (DataFolderLock): a second holder stops here, before touching anything
//      (`BUSY`);
//   2. the model file (`INVALID_MODEL` with every problem, or `IO`);
//   3. the store files (`MODEL_MISMATCH` for a folder made with another model; `IO`, `CORRUPT`).
// A failure at any step releases what the earlier steps took. `close()` checkpoints, closes the
// store and drops the lock, in that order (keeld's shutdown order).
//
// Every step blocks (file I/O, fsync): call it from a thread that may block, never from an event
// loop or Swift's cooperative pool.

public import Logging

public final class DataFolder: Sendable {
    public let directory: String
    public let model: Model
    public let store: ObjectStore
    private let lock: DataFolderLock

    private init(directory: String, model: Model, store: ObjectStore, lock: DataFolderLock) {
        self.directory = directory
        self.model = model
        self.store = store
        self.lock = lock
    }

    /// Which step of the open failed (for the caller's one-line reason).
    public enum Step: Sendable {
        case lock, model, store
    }

    /// Locks `directory` (created when missing) for `program` (named to the next would-be
    /// holder), loads the model file at `modelPath`, opens the store. Throws the step that failed
    /// and its error.
    public static func open(
        directory: String, modelPath: String, options: ObjectStoreOptions = ObjectStoreOptions(), program: String = "keeld",
        logger: Logger = Logger(label: "keel.objects")
    ) throws(DataFolderError) -> DataFolder {
        try open(directory: directory, options: options, program: program, logger: logger) { () throws(KeelError) in
            try ModelLoader.load(path: modelPath)
        }
    }

    /// As `open(directory:modelPath:…)` with a model already loaded.
    public static func open(
        directory: String, model: Model, options: ObjectStoreOptions = ObjectStoreOptions(), program: String = "keeld",
        logger: Logger = Logger(label: "keel.objects")
    ) throws(DataFolderError) -> DataFolder {
        try open(directory: directory, options: options, program: program, logger: logger) { () throws(KeelError) in model }
    }

    private static func open(
        directory: String, options: ObjectStoreOptions, program: String, logger: Logger, model load: () throws(KeelError) -> Model
    ) throws(DataFolderError) -> DataFolder {
        let lock: DataFolderLock
        do throws(KeelError) {
            lock = try DataFolderLock.acquire(directory: directory, program: program)
        } catch {
            throw DataFolderError(step: .lock, error: error, directory: directory)
        }
        let model: Model
        do throws(KeelError) {
            model = try load()
        } catch {
            lock.release()
            throw DataFolderError(step: .model, error: error, directory: directory)
        }
        do throws(KeelError) {
            let store = try ObjectStore.open(directory: directory, model: model, options: options, logger: logger)
            return DataFolder(directory: directory, model: model, store: store, lock: lock)
        } catch {
            lock.release()
            throw DataFolderError(step: .store, error: error, directory: directory)
        }
    }

    /// Checkpoints (a failure there is returned, not thrown: the store is still closed), closes
    /// the store and releases the lock. Call once, when nothing uses the store any more.
    @discardableResult
    public func close() throws(KeelError) -> KeelError? {
        var checkpointFailure: KeelError?
        do throws(KeelError) {
            try store.checkpoint()
        } catch {
            checkpointFailure = error
        }
        defer { lock.release() }
        try store.close()
        return checkpointFailure
    }
}

/// A data folder that cannot be opened: the step and its error.
public struct DataFolderError: Error, Sendable, CustomStringConvertible {
    public var step: DataFolder.Step
    public var error: KeelError
    public var directory: String

    /// The one-line reason keeld prints (spec/cli.md, "keeld").
    public var message: String {
        switch step {
        case .lock: error.message
        case .model: "the model cannot be loaded: \(error.message)"
        case .store: "the store in \(directory) cannot be opened: \(error.message)"
        }
    }

    /// The error with `message` as its sentence (code, details and cause kept).
    public var keelError: KeelError {
        var described = error
        described.message = message
        return described
    }

    public var description: String { message }
}
