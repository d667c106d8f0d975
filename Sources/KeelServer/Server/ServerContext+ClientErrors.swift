// What a client is told about a failure: everything but where the daemon keeps its files. An
// I/O or corruption error names the store file it concerns (StorageError's `[path]`, a message
// that quotes it), a BACKUP refusal the backup it would write; a client — another user's process,
// allowed by `allowedUIDs` — gets the name within the data folder (`Default.keel`) or the backup
// folder (`nightly/b1`), as PostgreSQL names relation files relative to its data directory, and
// keeld's log keeps the whole path for the operator.

import Foundation
import KeelModel

extension ServerContext {
    /// The folders (the data folder, the backup folder) as the daemon was given them and as
    /// absolute paths, each with a trailing slash, longest first: a folder inside another is
    /// taken out before its parent.
    static func folderPrefixes(_ folders: String...) -> [String] {
        var prefixes: Set<String> = []
        for folder in folders {
            var trimmed = Substring(folder)
            while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
            guard !trimmed.isEmpty else { continue }  // "/" (or nothing): no folder to leave out
            prefixes.insert(trimmed + "/")
            let absolute = URL(fileURLWithPath: String(trimmed)).standardizedFileURL.path
            if absolute != "/" { prefixes.insert(absolute + "/") }
        }
        return prefixes.sorted { $0.count != $1.count ? $0.count > $1.count : $0 < $1 }
    }

    /// `error` with the data and backup folders' paths taken out of its message and its details'
    /// texts.
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
