// A data folder held for one offline command: its lock (refused, naming the holder, while a
// keeld or another keelctl has it), the model to open it with, and the store settings.

import Foundation
import KeelModel
import KeelProtocol

final class OfflineFolder: Sendable {
    let directory: String
    let model: Model
    let options: ObjectStoreOptions
    private let lock: DataFolderLock

    private init(directory: String, model: Model, options: ObjectStoreOptions, lock: DataFolderLock) {
        self.directory = directory
        self.model = model
        self.options = options
        self.lock = lock
    }

    /// Takes the folder of `location`. Unless `creating`, the folder must hold store files.
    /// `salvage`: a damaged log is cut before the damage (`keelctl salvage`) instead of refused,
    /// when the folder's model is read and when it is opened.
    static func acquire(_ location: Location, creating: Bool = false, salvage: Bool = false) throws(Failure) -> OfflineFolder {
        let settings = try location.settings()
        let directory = try location.dataDirectory()
        if !creating, !holdsStores(directory) {
            throw Failure("no Keel data folder at \(directory) (no .keel store files in it); give one with --data")
        }
        let lock: DataFolderLock
        do throws(KeelError) {
            lock = try DataFolderLock.acquire(directory: directory, program: "keelctl")
        } catch where error.code == .busy {
            throw Failure("\(error.message): stop it, or work through it with --socket PATH")
        } catch {
            throw Failure(error)
        }
        var options = ObjectStoreOptions(storage: settings.storeOptions)
        options.storage.salvageLog = salvage
        do throws(Failure) {
            let model = try resolveModel(location, settings: settings, directory: directory, options: options)
            return OfflineFolder(directory: directory, model: model, options: options, lock: lock)
        } catch {
            lock.release()
            throw error
        }
    }

    private static func holdsStores(_ directory: String) -> Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.contains { $0.hasSuffix(".keel") }
    }

    /// `--model`, else the configuration's model file when it exists, else the folder's own.
    private static func resolveModel(
        _ location: Location, settings: ServerConfiguration, directory: String, options: ObjectStoreOptions
    ) throws(Failure) -> Model {
        let path = location.model ?? (FileManager.default.fileExists(atPath: settings.modelPath) ? settings.modelPath : nil)
        do throws(KeelError) {
            if let path { return try ModelLoader.load(path: path) }
            return try ObjectStore.storedModel(directory: directory, options: options)
        } catch {
            throw Failure(path.map { "the model \($0) cannot be loaded: \(error.message)" } ?? error.message)
        }
    }

    /// Opens the object store, recovering what a crash left in its logs — or, `readOnly`,
    /// without writing a byte (no recovery of an interrupted multi-store save, no log growth).
    func open(readOnly: Bool = false) throws(Failure) -> ObjectStore {
        var options = self.options
        options.storage.readOnly = readOnly
        do throws(KeelError) {
            return try ObjectStore.open(directory: directory, model: model, options: options)
        } catch {
            throw Failure("the store in \(directory) cannot be opened: \(error.message)")
        }
    }

    func release() { lock.release() }
}
