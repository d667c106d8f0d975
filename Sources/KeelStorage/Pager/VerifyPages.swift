// A page source for verify: every page read straight from disk (the log frame or the page file
// that holds its version at the snapshot), checksum-checked, never from or into the cache, so a
// damaged page on disk is found even while a good copy sits in memory.

final class VerifyPages: PageSource {
    let pager: Pager
    let snapshot: FrameSequence
    var pageSize: Int { pager.pageSize }
    var changeCount: UInt64 { 0 }
    /// Pages read, for the report.
    private(set) var pagesRead = 0

    init(pager: Pager, snapshot: FrameSequence) {
        self.pager = pager
        self.snapshot = snapshot
    }

    func page(_ number: PageNumber) throws(StorageError) -> PageBuffer {
        pagesRead += 1
        while true {
            let (frame, generation, cutOff): (LogFrameReference?, UInt64, Bool) = pager.state.withLock { s in
                guard let e = s.table.logEntry(number.rawValue), let i = e.versionIndex(at: snapshot) else {
                    return (nil, s.logGeneration, snapshot < s.revokedBelow)
                }
                return (e.versions[i].frame, s.logGeneration, snapshot < s.revokedBelow)
            }
            if cutOff { throw StorageError(.snapshotTooOld, "verify's snapshot was cut off by a checkpoint; run verify again") }
            guard let frame else { break }
            // Not cached: verify reads what is on disk. nil: the log was reset under the read.
            if let buffer = try pager.readLogVersion(number, at: frame, generation: generation, snapshot: snapshot, caching: nil) {
                return buffer
            }
        }
        let buffer = try pager.readFromPageFile(number)
        guard buffer.isValid(as: number) else {
            throw StorageError(.corrupt, "page checksum mismatch", page: number, path: pager.path)
        }
        return buffer
    }
}
