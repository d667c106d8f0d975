// Opening a store: creating a new one crash-safely, validating an existing one without writing
// to it (I15), refusing a log that belongs to another store file (I17), and recovering committed
// transactions from the log (I2).

import Logging

extension Pager {
    /// Opens (or creates) the store at `path`. `newStoreIdentity`: the store identity to give a
    /// store this open creates (compaction's new page file keeps the old one's); 0 draws a fresh one.
    static func open(path: String, options: StoreOptions, logger: Logger, newStoreIdentity: UInt64 = 0) throws(StorageError) -> Pager {
        let fs = options.fileSystem
        let logPath = path + "-wal"
        guard MetaPage.isValidPageSize(options.pageSize) else {
            throw StorageError(.invalidArgument, "page size must be a power of two from 4096 to 65536, not \(options.pageSize)")
        }
        if !fs.fileExists(path) {
            // A log holding frames but no page file: the page file was removed or lost, and a
            // new store would silently stand in for it (its log is reset by `create`). A log of
            // just a header is what a crash during `create` leaves: that one is made anew.
            if fs.fileExists(logPath) {
                let log = try fs.open(logPath, options: .readOnly)
                defer { try? log.close() }
                var head = [UInt8](repeating: 0, count: LogFormat.headerSize + LogFormat.frameHeaderSize)
                let got = try head.withMutableBytes { (b) throws(StorageError) in try log.read(into: b, at: 0) }
                let holdsFrames = got == head.count && head.withUnsafeBytes { b in
                    // A damaged header under the magic is damage too (an open with the page file
                    // refuses it as well).
                    guard case .valid(let header) = LogFormat.Header.decode(UnsafeRawBufferPointer(rebasing: b[..<LogFormat.headerSize]))
                    else { return b.prefix(8).elementsEqual(LogFormat.magic) }
                    return LogFormat.FrameHeader.decode(UnsafeRawBufferPointer(rebasing: b[LogFormat.headerSize...])).salt == header.salt
                }
                if holdsFrames {
                    throw StorageError(
                        .corrupt, "the store's log holds transactions but its page file is missing: it was removed or lost. Restore it from a backup (or move the log aside to start an empty store)",
                        path: path)
                }
            }
            guard !options.readOnly else {
                throw StorageError(.io, "no store at this path (opened read-only, so none is created)", path: path)
            }
            try create(
                path: path, logPath: logPath, options: options,
                identity: newStoreIdentity != 0 ? newStoreIdentity : MetaPage.newStoreIdentity())
        }

        // Validate the page file before touching anything else.
        let pageFile = try fs.open(path, options: options.readOnly ? .readOnly : .readWrite)
        var opened = false
        defer { if !opened { try? pageFile.close() } }
        let fileSize = try pageFile.size()
        var prefix = [UInt8](repeating: 0, count: 512)
        let got = try prefix.withMutableBytes { (b) throws(StorageError) in try pageFile.read(into: b, at: 0) }
        let pageSize: Int
        let pageFileIdentity: UInt64
        switch prefix.withUnsafeBytes({ MetaPage.identify(UnsafeRawBufferPointer(rebasing: $0[0..<got])) }) {
        case .notAStore(let why): throw StorageError(.notAStore, why, path: path)
        case .unsupportedVersion(let v):
            throw StorageError(
                .unsupportedVersion, "the store was written by format version \(v); this build reads version \(MetaPage.formatVersion)",
                path: path)
        case .store(let size, let identity):
            pageSize = size
            pageFileIdentity = identity
        }
        // A page file that ends inside a page is legitimate only after a crash during a checkpoint
        // that grew the file: its writes past the old end are torn at sector boundaries, and the
        // log (not yet reset, I8) still holds every page it was copying. Checked against the log
        // below; without a log nothing can explain it, so refuse before creating one (I15).
        let partialPage = fileSize % UInt64(pageSize) != 0 ? PageNumber(UInt32(fileSize / UInt64(pageSize))) : nil
        func partialPageError() -> StorageError {
            StorageError(
                .corrupt, "the page file is \(fileSize) bytes, not a whole number of \(pageSize)-byte pages, and the log holds no copy of its last page",
                page: partialPage, path: path)
        }
        guard fileSize >= UInt64(pageSize) else {
            throw StorageError(.corrupt, "the page file is \(fileSize) bytes, shorter than one \(pageSize)-byte page", path: path)
        }
        if partialPage != nil, !fs.fileExists(logPath) { throw partialPageError() }

        // The log: scanned read-only first; only a valid store gets its log (re)initialised.
        let logFile: any StorageFile
        if fs.fileExists(logPath) {
            logFile = try fs.open(logPath, options: options.readOnly ? .readOnly : .readWrite)
        } else if options.readOnly {
            logFile = try InMemoryFileSystem().open(logPath, options: .createIfNeeded)
        } else {
            // No log: the page file alone is the store, so its page 0 must be sound before the
            // log is created (I15: a refused open writes nothing).
            _ = try readMeta(try readMetaFromFile(pageFile, pageSize: pageSize, path: path), path: path)
            logFile = try fs.open(logPath, options: .createIfNeeded)
            try fs.syncDirectory(directoryOf(logPath))
        }
        var logOpened = false
        defer { if !logOpened { try? logFile.close() } }
        // A log of another store file (its header names another store identity) is refused here,
        // before a frame of it is read (I17) — as damage to page 0 when that fails its checksum,
        // since the identity read from it may be the damage.
        let scan = try LogScanner.scan(
            logFile, pageSize: pageSize, pageFile: (path, pageFileIdentity),
            pageZeroIsSound: { (try? readMetaFromFile(pageFile, pageSize: pageSize, path: path)) != nil },
            salvage: options.salvageLog)
        // Every page a committed transaction names exists in the page file or in the log: a
        // page count past both is damage (and would size the page table by it).
        if let count = scan.pageCountAfterLastCommit, UInt64(count) > fileSize / UInt64(pageSize) + UInt64(scan.frames.count) {
            throw StorageError(
                .corrupt,
                "the log's last transaction gives the store \(count) pages, more than the page file (\(fileSize / UInt64(pageSize))) and the log (\(scan.frames.count) frames) hold",
                logPosition: scan.end, path: logPath)
        }
        if let partialPage, !scan.frames.contains(where: { $0.page == partialPage }) { throw partialPageError() }
        if scan.damage != nil, !options.readOnly {
            // Salvaged: the frames past the damage go before anything is written, or a commit
            // made now would end where they begin and the next open would find them again.
            try logFile.truncate(to: scan.end.rawValue)
            try logFile.sync()
        }

        var header: LogFormat.Header
        if let h = scan.header {
            header = h
        } else {
            // No valid log header: the page file alone is the store. Start a fresh generation, the
            // header carrying the page file's store identity (I17).
            let page0 = try readMetaFromFile(pageFile, pageSize: pageSize, path: path)
            let meta = try readMeta(page0, path: path)  // sound before the fresh header is written (I15)
            header = LogFormat.Header(
                pageSize: UInt32(pageSize), generation: 1, salt: UInt32.random(in: 1...UInt32.max),
                baseSequence: FrameSequence(1), baseTransaction: page0.transactionID, storeIdentity: meta.storeIdentity)
            if !options.readOnly {
                try header.encode().withBytes { (b) throws(StorageError) in try logFile.writeFully(b, at: 0) }
                if options.syncMode != .off { try logFile.sync() }
            }
        }
        let log = try WriteAheadLog(
            file: logFile, header: header, end: scan.header == nil ? LogPosition(UInt64(LogFormat.headerSize)) : scan.end,
            lastChecksum: scan.header == nil ? header.checksum : scan.lastChecksum,
            nextSequence: scan.header == nil ? header.baseSequence : scan.nextSequence,
            compress: options.compressLog, preallocationBytes: options.logPreallocationBytes,
            startsWriteback: options.syncMode != .off)

        var table = PageTable(budgetBytes: max(options.cacheSizeBytes, 16 * pageSize), pageSize: pageSize)
        for frame in scan.frames {
            table.addRecoveredVersion(frame.page, sequence: frame.sequence, frame: frame.reference)
        }
        let lastSequence = FrameSequence(log.nextSequence.rawValue - 1)
        let lastTransaction = scan.header == nil ? header.baseTransaction : scan.lastTransaction
        var state = PagerState(table: table, published: lastSequence, publishedTransaction: lastTransaction)
        state.backfilled = FrameSequence(header.baseSequence.rawValue - 1)

        // Page 0 as of the newest commit (the log's version when it has one).
        let meta0: MetaPage
        if let e = state.table.logEntry(0), let newest = e.versions.last {
            let buffer = PageBuffer.zeroed(size: pageSize)
            try log.readPage(.meta, at: newest.frame, into: buffer)
            guard buffer.isValid(as: .meta) else { throw StorageError.corrupt("page 0 in the log fails its checksum", page: .meta) }
            meta0 = try readMeta(buffer, path: path)
        } else {
            meta0 = try readMeta(try readMetaFromFile(pageFile, pageSize: pageSize, path: path), path: path)
        }
        if let count = scan.pageCountAfterLastCommit, count != meta0.pageCount {
            throw StorageError(.corrupt, "the last commit's page count \(count) disagrees with page 0 (\(meta0.pageCount))", page: .meta)
        }
        let writer = WriterState(lastTransaction: lastTransaction, sequence: lastSequence, meta: meta0)
        let pager = Pager(
            options: options, path: path, logPath: logPath, pageFile: pageFile, log: log, writer: writer, state: state,
            logDamage: scan.damage, logger: logger)
        opened = true
        logOpened = true
        if let damage = scan.damage, !options.readOnly {
            logger.warning(
                "salvaged a damaged log: the transactions after the damage are lost",
                metadata: ["store.path": "\(path)", "log.damage": "\(damage.message)"])
        } else if !scan.frames.isEmpty {
            logger.info(
                "recovered the log", metadata: ["store.path": "\(path)", "log.frames": "\(scan.frames.count)", "log.stop": "\(scan.stopReason)"])
        }
        return pager
    }

    /// Page 0 as stored in the page file, checksum-verified.
    /// The fields of a checksum-verified page 0; an error names the store's path.
    private static func readMeta(_ page0: PageBuffer, path: String) throws(StorageError) -> MetaPage {
        do { return try MetaPage.read(from: page0) } catch {
            var named = error
            if named.path == nil { named.path = path }
            throw named
        }
    }

    private static func readMetaFromFile(_ file: any StorageFile, pageSize: Int, path: String) throws(StorageError) -> PageBuffer {
        let buffer = PageBuffer.zeroed(size: pageSize)
        try file.readFully(into: buffer.bytes, at: 0)
        guard buffer.isValid(as: .meta) else {
            throw StorageError(.corrupt, "page 0 fails its checksum and the log holds no newer copy", page: .meta, path: path)
        }
        return buffer
    }

    /// Creates a new, empty store: a fresh log, then page 0 written to a temporary file, fsynced,
    /// renamed into place, directory fsynced (I9). A crash at any point leaves either no store or
    /// a complete empty one. The catalog's root page is created by the first transaction. The log
    /// header and page 0 both carry `identity` (I17); a crash before the rename leaves a log of
    /// just a header and no page file, which the next open makes anew.
    private static func create(path: String, logPath: String, options: StoreOptions, identity: UInt64) throws(StorageError) {
        let fs = options.fileSystem
        let directory = directoryOf(path)
        try fs.createDirectory(directory)
        // A log left behind by a removed store must never be replayed onto the new one.
        let logFile = try fs.open(logPath, options: .createIfNeeded)
        do {
            try logFile.truncate(to: 0)
            let header = LogFormat.Header(
                pageSize: UInt32(options.pageSize), generation: 1, salt: UInt32.random(in: 1...UInt32.max),
                baseSequence: FrameSequence(1), baseTransaction: TransactionID(0), storeIdentity: identity)
            try header.encode().withBytes { (b) throws(StorageError) in try logFile.writeFully(b, at: 0) }
            try logFile.sync()
            try logFile.close()
        } catch {
            try? logFile.close()
            throw error
        }

        let temporary = path + ".creating"
        let file = try fs.open(temporary, options: .createIfNeeded)
        do {
            try file.truncate(to: 0)
            let page0 = PageBuffer.zeroed(size: options.pageSize)
            let meta = MetaPage(
                pageSize: UInt32(options.pageSize), pageCount: 1, freeListHead: PageNumber(0), freePageCount: 0,
                catalogRoot: PageNumber(0), createdAt: UInt64(currentUnixTime()), storeIdentity: identity)
            meta.write(into: page0)
            page0.seal(as: .meta)
            try file.writeFully(page0.readOnlyBytes, at: 0)
            try file.sync()
            try file.close()
        } catch {
            try? file.close()
            throw error
        }
        try fs.rename(temporary, to: path)
        try fs.syncDirectory(directory)
    }
}
