// Where a BACKUP writes: its `path` is a name under the configured backup folder
// (`backupDirectory`), never anything else. Refused with BAD_REQUEST: an empty or absolute name,
// a `.` or `..` component, an empty component, a name whose parent resolves (symbolic links
// followed) outside the backup folder, and a name that already exists (a backup never
// overwrites). The backup folder and the name's parent folders are created when missing.

import Foundation
import KeelModel

struct BackupTarget {
    /// The backup file to write (it does not exist yet).
    let path: String

    init(name: String, folder: String) throws(KeelError) {
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.isEmpty, !name.hasPrefix("/"),
            components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.hasSuffix(".partial") })
        else {
            throw KeelError(
                .badRequest,
                "BACKUP: \"path\" must be a relative name under the backup folder (no \"..\", \".\" or empty components, not ending in .partial), not \"\(name)\"")
        }
        let fm = FileManager.default
        let root = URL(fileURLWithPath: folder).standardizedFileURL
        let target = root.appendingPathComponent(name)
        let parent = target.deletingLastPathComponent()
        do {
            try fm.createDirectory(at: parent, withIntermediateDirectories: true)
        } catch {
            throw KeelError(.io, "BACKUP: could not create \(parent.path): \(error.localizedDescription)")
        }
        let realRoot = root.resolvingSymlinksInPath().path
        let realParent = parent.resolvingSymlinksInPath().path
        guard realParent == realRoot || realParent.hasPrefix(realRoot + "/") else {
            throw KeelError(.badRequest, "BACKUP: \"\(name)\" leads outside the backup folder")
        }
        let path = realParent + "/" + target.lastPathComponent
        guard !fm.fileExists(atPath: path), (try? fm.destinationOfSymbolicLink(atPath: path)) == nil else {
            throw KeelError(.badRequest, "BACKUP: \(path) already exists; a backup never overwrites")
        }
        self.path = path
    }
}
