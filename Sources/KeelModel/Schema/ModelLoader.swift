// Loading a model file (spec/model.md; Docs/Model.md is the long form): JSON → a validated,
// resolved `Model`. The loader checks every rule of the spec and reports every problem at once,
// each as `<JSON path>: <sentence>`, in one `KeelError(.invalidModel)` whose
// `details.problems` lists them all. Problems that do not refuse the model (a relationship
// without an inverse) become `Model.warnings`.
//
// Three passes, each in its own file:
// 1. reading (ModelLoader+Reading.swift): shapes, key names and value kinds, name patterns,
//    attribute values decoded with the value codec → `RawModel`;
// 2. checking (ModelLoader+Checking.swift): rules across entities — inheritance, uniqueness along
//    the chain, destinations, inverses, configurations, index and constraint columns;
// 3. building (ModelLoader+Building.swift): entity ids, families, field numbers, inherited
//    indexes; then the canonical form and the hash (Model+Canonical.swift);
// 4. fetched properties' predicates (ModelLoader+FetchedPredicates.swift): each bound against the
//    built model as a read of the property binds it.
// Pass 2 runs over whatever pass 1 could read (a piece it could not read is left out, so it
// causes no echoes), so one load reports the problems of both; passes 3 and 4 run only on a
// model without problems (a predicate needs the built model's fields to be bound).

import Foundation

public enum ModelLoader {
    /// Loads a model from its parsed JSON.
    public static func load(json: JSON) throws(KeelError) -> Model {
        var problems = ProblemList()
        guard let raw = readModel(json, &problems) else { throw problems.error() }
        let resolution = check(raw, &problems)
        guard problems.isEmpty else { throw problems.error() }
        let model = build(raw, resolution, warnings: problems.warnings)
        checkFetchedPredicates(raw, model, &problems)
        guard problems.isEmpty else { throw problems.error() }
        return model
    }

    /// Loads a model from the text of a model file.
    public static func load(text: String) throws(KeelError) -> Model {
        try load(json: JSON.parse(text))
    }

    /// Loads a model file.
    public static func load(path: String) throws(KeelError) -> Model {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw KeelError(.io, "cannot read the model file \(path): there is no such file")
        }
        guard !isDirectory.boolValue else {
            throw KeelError(.io, "cannot read the model file \(path): it is a folder, not a file")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
            let reason = underlying.map { FileSystemSupport.errnoText(Int32($0.code)) } ?? error.localizedDescription
            throw KeelError(.io, "cannot read the model file \(path): \(reason)")
        }
        do {
            return try load(json: JSON.parse([UInt8](data)))
        } catch {
            var located = error
            located.message = "\(path): \(error.message)"
            throw located
        }
    }
}

/// Problems found so far, each `path: sentence`, in the order found (file order within a pass),
/// each once.
struct ProblemList {
    private(set) var items: [String] = []
    private var seen: Set<String> = []
    private(set) var warnings: [String] = []

    var isEmpty: Bool { items.isEmpty }

    mutating func add(_ path: String, _ sentence: String) {
        let item = path.isEmpty ? sentence : "\(path): \(sentence)"
        if seen.insert(item).inserted { items.append(item) }
    }

    mutating func warn(_ path: String, _ sentence: String) {
        warnings.append(path.isEmpty ? sentence : "\(path): \(sentence)")
    }

    /// The one error that carries them (ProblemReport: the first ones in the message, up to
    /// `ProblemReport.detailLimit` in `details.problems`, the total in `details.problemCount`).
    func error() -> KeelError {
        var report = ProblemReport()
        for item in items { report.add(item) }
        let count = items.count == 1 ? "1 problem" : "\(items.count) problems"
        return KeelError(.invalidModel, "the model has \(count): \(report.listing())", details: report.details())
    }
}
