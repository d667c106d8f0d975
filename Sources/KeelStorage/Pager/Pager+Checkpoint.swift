// Checkpoints: copying committed page versions from the log into the page file, then resetting
// the log once all of it is copied.
//
// Order, and why a crash at any instant recovers (I7, I8):
//   0. A store whose page 0 names no store identity (made before identities) gains one (I17): a
//      commit of page 0 with a fresh identity, through the log like any change. The steps below
//      copy it into the page file and the reset (5) writes it into the log header, so the header
//      names it only once the page file does. A crash before that leaves a header naming none
//      (0, not known: no check) and the identity in the log or the page file; the next reset
//      writes it.
//   1. Make the log durable (sync modes full and normal). Every frame to be copied is now safe in
//      the log, so from here on the log alone can rebuild whatever the page file loses.
//   2. Choose the target: the newest commit, but no newer than the oldest live reader's snapshot
//      (the page file must keep what that reader may still read from it). If the log is past
//      `maxLogBytes`, or the checkpoint was asked to finish (close, compaction), readers older
//      than the newest commit are cut off instead (snapshot too old).
//   3. Write the newest version ≤ target of every page changed since the last checkpoint into the
//      page file, in page order. A crash here leaves some pages new and some old: harmless, the
//      log still holds every one of them and recovery reads the log's copy.
//   4. fsync the page file.
//   5. If everything in the log was copied: rewrite the log header with a new salt (a new
//      generation) and fsync it. Old frames no longer verify, so they are never replayed again.
//      A crash before this leaves the old header: the frames are replayed over pages that already
//      hold them, which changes nothing.
// Sync mode off skips the fsyncs (and with them the guarantee).

extension Pager {
    enum CheckpointMode {
        /// Copy what live readers allow; reset the log only if everything was copied.
        case passive
        /// Copy everything, cutting off readers that hold older snapshots, and reset the log.
        case complete
    }

    /// What a checkpoint did.
    struct CheckpointResult {
        var pagesWritten: Int
        var logReset: Bool
        var readersCutOff: Int
    }

    /// Runs a checkpoint. Takes the writer lock, so no commit runs meanwhile.
    @discardableResult
    func checkpoint(_ mode: CheckpointMode) throws(StorageError) -> CheckpointResult {
        try writer.withLock { (w: inout WriterState) throws(StorageError) -> CheckpointResult in
            try checkpointLocked(mode, writer: &w)
        }
    }

    /// The automatic checkpoint: runs only if it is still needed once the writer lock is held
    /// (committers that saw the log past the threshold together run one checkpoint, not one each),
    /// and never once the pager is retired (closed or replaced by compaction: a background
    /// checkpoint that waited for the lock while the store closed does nothing).
    func checkpointIfNeeded() throws(StorageError) {
        try writer.withLock { (w: inout WriterState) throws(StorageError) in
            guard !w.retired, needsCheckpoint else { return }
            _ = try checkpointLocked(.passive, writer: &w)
        }
    }

    /// The automatic checkpoint as a committer or the background checkpointer runs it: a failure
    /// is logged, not thrown (the commit that asked for it is durable; a failed page-file write
    /// has fail-stopped the store, I6).
    func runAutomaticCheckpoint() {
        do throws(StorageError) {
            try checkpointIfNeeded()
        } catch {
            logger.error("automatic checkpoint failed", metadata: ["store.path": "\(path)", "error": "\(error)"])
        }
    }

    func checkpointLocked(_ mode: CheckpointMode, writer w: inout WriterState) throws(StorageError) -> CheckpointResult {
        if options.readOnly { return CheckpointResult(pagesWritten: 0, logReset: false, readersCutOff: 0) }
        if let stop = groupCommit.stopReason { throw stop }
        // 0. A store identity for a store without one.
        if w.meta.storeIdentity == 0 { try assignStoreIdentity(writer: &w) }
        // 1. The log is durable.
        switch options.syncMode {
        case .full:
            try groupCommit.syncAll()
        case .normal:
            do throws(StorageError) { try log.sync() } catch {
                let stop = StorageError(.readOnly, "fdatasync of the log failed during a checkpoint (\(error.message)); the store is read-only (fail-stop)", cause: error)
                groupCommit.stop(stop)
                throw stop
            }
        case .off:
            break
        }
        let latest = w.sequence
        let overLimit = log.frameBytes > options.maxLogBytes
        // 2. Target and work list.
        let (target, work, cutOff): (FrameSequence, [CheckpointPage], Int) = state.withLock { s in
            let oldest = s.readers.values.min() ?? latest
            var target = min(latest, oldest)
            var cutOff = 0
            if target < latest, mode == .complete || overLimit {
                cutOff = s.readers.values.filter { $0 < latest }.count
                s.revokedBelow = latest
                s.revokedReaderCount += UInt64(cutOff)
                target = latest
            }
            guard target > s.backfilled else { return (target, [], cutOff) }
            // The work list names cached buffers without holding them: the sweep keeps every log
            // version's buffer until this checkpoint ends (PageTable.checkpointWork).
            let work = s.table.checkpointWork(target: target, backfilled: s.backfilled)
            if !work.isEmpty { s.table.logVersionsPinned = true }
            return (target, work, cutOff)
        }
        defer { if !work.isEmpty { state.withLock { $0.table.logVersionsPinned = false } } }
        if cutOff > 0 {
            logger.warning(
                "cut off readers holding old snapshots so the log can be checkpointed",
                metadata: ["store.path": "\(path)", "readers": "\(cutOff)", "log.bytes": "\(log.frameBytes)"])
        }
        // 3. Copy, in page order (nothing to copy: no write and no fsync): `PageTable.checkpointWork`
        // lists its pages in ascending order.
        assert(work.indices.dropFirst().allSatisfy { work[$0 - 1].page < work[$0].page }, "checkpoint work out of page order")
        if !work.isEmpty { do throws(StorageError) {
            // Runs of consecutive pages go out in one gathered write of up to 1 MiB, straight from
            // the pages' own buffers (StorageFile.writeFully(gathering:at:)); a page without a
            // neighbour (most of them after random updates) in a plain write. A version not cached
            // is read from the log into a buffer held until its run is written.
            let runLimit = (1 << 20) / pageSize
            var pieces: [UnsafeRawBufferPointer] = []
            pieces.reserveCapacity(runLimit)
            var read: [PageBuffer] = []
            var runStart: UInt32 = 0
            func flush() throws(StorageError) {
                let at = UInt64(runStart) * UInt64(pageSize)
                if pieces.count == 1 {
                    try pageFile.writeFully(pieces[0], at: at)
                } else if pieces.count > 1 {
                    try pageFile.writeFully(gathering: pieces, at: at)
                }
                pieces.removeAll(keepingCapacity: true)
                read.removeAll(keepingCapacity: true)
            }
            for item in work {
                let page = item.page
                let contiguous = !pieces.isEmpty && page.rawValue == runStart + UInt32(pieces.count)
                if !contiguous || pieces.count + 1 > runLimit {
                    try flush()
                    runStart = page.rawValue
                }
                let bytes: UnsafeRawPointer
                if let cached = item.bytes {
                    bytes = cached
                } else {
                    let buffer = PageBuffer.zeroed(size: pageSize)
                    try log.readPage(page, at: item.frame, into: buffer)
                    guard buffer.isValid(as: page) else {
                        throw StorageError(.corrupt, "page checksum mismatch in a log frame", page: page, logPosition: item.frame.offset)
                    }
                    read.append(buffer)  // held until its run is written (flush)
                    bytes = UnsafeRawPointer(buffer.pointer)
                }
                pieces.append(UnsafeRawBufferPointer(start: bytes, count: pageSize))
            }
            try flush()
            // 4. The page file is durable.
            if options.syncMode != .off { try pageFile.sync() }
        } catch {
            // The log still holds everything; but after a failed write or fsync of the page file we
            // cannot know what it holds, so stop writing until the store is reopened (I6).
            let stop = StorageError(.readOnly, "a checkpoint could not write the page file (\(error.message)); the store is read-only until reopened", cause: error)
            groupCommit.stop(stop)
            throw stop
        } }
        // 5. Reset the log when all of it is in the page file. Readers stop finding pages in the
        // log before it is rewritten: every version is in the page file now (3, 4), so the table
        // forgets the log, and a reader that found a frame before this and reads it during or
        // after the reset looks the page up again (`logGeneration`, Pager.readLogVersion). No
        // commit runs meanwhile (writer lock). The collapse makes each copied page's newest
        // version its page-file copy, so it replaces forgetting the stale copies (`dropBase`),
        // which a checkpoint that leaves part of the log does instead.
        let collapses = target == latest
        state.withLock { s in
            s.backfilled = max(s.backfilled, target)
            s.epoch &+= 1
            if collapses {
                s.table.collapseLog()
                s.logGeneration &+= 1
            } else {
                s.table.dropBase(of: work.map(\.page))
            }
        }
        var reset = false
        if collapses {
            do throws(StorageError) {
                // The header takes the writer's page 0 identity, which the page file now holds
                // (every version was copied, 3, 4): the pair names one store (I17).
                try log.reset(
                    baseTransaction: w.lastTransaction, storeIdentity: w.meta.storeIdentity,
                    salt: UInt32.random(in: 1...UInt32.max), sync: options.syncMode != .off)
                try log.shrinkIfLarger(than: max(options.logPreallocationBytes, options.checkpointThresholdBytes) * 2,
                                       to: options.logPreallocationBytes)
            } catch {
                let stop = StorageError(.readOnly, "resetting the log failed (\(error.message)); the store is read-only until reopened", cause: error)
                groupCommit.stop(stop)
                throw stop
            }
            logFrameBytes.store(0, ordering: .relaxed)
            reset = true
        }
        checkpointRetryBytes.store(reset ? 0 : log.frameBytes + options.checkpointThresholdBytes / 4, ordering: .relaxed)
        checkpointCount.add(1, ordering: .relaxed)
        return CheckpointResult(pagesWritten: work.count, logReset: reset, readersCutOff: cutOff)
    }

    /// Step 0 of a checkpoint: commits page 0 with a fresh store identity (a store made before
    /// identities names none). With the writer lock held; the checkpoint that follows makes the
    /// commit durable (its step 1) and copies it into the page file.
    private func assignStoreIdentity(writer w: inout WriterState) throws(StorageError) {
        let pages = WritePages(pager: self, base: w.sequence, meta: w.meta)
        pages.meta.storeIdentity = MetaPage.newStoreIdentity()
        _ = try commit(pages, writer: &w)
        logger.info(
            "gave the store an identity, which ties its page file to its log",
            metadata: ["store.path": "\(path)", "store.identity": "\(LogScanner.hexIdentity(w.meta.storeIdentity))"])
    }
}
