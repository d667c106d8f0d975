// What a client is told about a failure: everything but where the daemon keeps its files. An
// I/O or corruption error names the store file it concerns (StorageError's `[path]`, a message
// that quotes it); a client — another user's process, allowed by `allowedUIDs` — gets the file's
// name within the data folder (`Default.keel`), as PostgreSQL names relation files relative to its
// data directory, and keeld's log keeps the whole path for the operator.

import Foundation
import KeelModel

extension ServerContext {
    /// The data folder as the daemon opened it and as an absolute path, each with a trailing
    /// slash, longest first.
    static func folderPrefixes(_ dataDirectory: String) -> [String] {
        var trimmed = Substring(dataDirectory)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard !trimmed.isEmpty else { return [] }  // "/" (or nothing): no folder to leave out
        var prefixes: Set<String> = [trimmed + "/"]
        let absolute = URL(fileURLWithPath: String(trimmed)).standardizedFileURL.path
        if absolute != "/" { prefixes.insert(absolute + "/") }
        return prefixes.sorted { $0.count > $1.count }
    }

    /// `error` with the data folder's path taken out of its message and its details' texts.
    func clientFacing(_ error: KeelError) -> KeelError {
        Self.clientFacing(error, prefixes: folderPrefixes)
    }

    static func clientFacing(_ error: KeelError, prefixes: [String]) -> KeelError {
        func strip(_ text: String) -> String {
            var out = text
            for prefix in prefixes where out.contains(prefix) { out = out.replacingOccurrences(of: prefix, with: "") }
            return out
        }
        func strip(_ json: JSON) -> JSON {
            switch json {
            case .string(let s): .string(strip(s))
            case .array(let items): .array(items.map(strip))
            case .object(let members): .object(members.mapValues(strip))
            default: json
            }
        }
        var facing = error
        facing.message = strip(error.message)
        facing.details = error.details.map(strip)
        return facing
    }
}
