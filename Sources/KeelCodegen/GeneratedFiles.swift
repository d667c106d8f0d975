// Writing generated files into a folder: each file written whole (to a temporary name, then
// renamed over the old one), a file left unchanged when its bytes are the same (so builds do not
// recompile it), and generated files of entities the model no longer has removed — only files
// whose first line is the generator's marker; nothing else in the folder is touched.

import Foundation
public import KeelModel

public enum GeneratedFiles {
    /// What `write` did.
    public struct Report: Sendable, Hashable {
        public var written: [String] = []
        public var unchanged: [String] = []
        public var removed: [String] = []
    }

    /// Writes `files` into `folder` (created when missing). `IO` when the folder or a file
    /// cannot be written.
    public static func write(_ files: [GeneratedFile], to folder: String) throws(KeelError) -> Report {
        let manager = FileManager.default
        var report = Report()
        do {
            try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let keep = Set(files.map(\.name))
            for name in try manager.contentsOfDirectory(atPath: folder).sorted() where name.hasSuffix(".swift") && !keep.contains(name) {
                let path = folder + "/" + name
                guard let handle = FileHandle(forReadingAtPath: path) else { continue }
                let start = String(decoding: handle.readData(ofLength: SwiftGenerator.marker.utf8.count), as: UTF8.self)
                try handle.close()
                if start == SwiftGenerator.marker {
                    try manager.removeItem(atPath: path)
                    report.removed.append(name)
                }
            }
            for file in files {
                let path = folder + "/" + file.name
                let bytes = Data(file.contents.utf8)
                if manager.contents(atPath: path) == bytes {
                    report.unchanged.append(file.name)
                    continue
                }
                try bytes.write(to: URL(fileURLWithPath: path), options: .atomic)
                report.written.append(file.name)
            }
        } catch {
            throw KeelError(.io, "cannot write the generated files into \(folder): \(error.localizedDescription)")
        }
        return report
    }
}
